import Foundation
import Synchronization

/// One extra thread that runs a fixed job on request, for nodes that split a block between
/// two cores. A render asks for the job block after block, so the helper spins for a
/// short while (by default about 0.2 ms) after each job before it sleeps: waking a
/// sleeping thread costs tens of microseconds on a virtual machine, as much as the half
/// block it would save. Handing over a job allocates nothing, so the render loop stays allocation-free.
final class HelperThread: @unchecked Sendable {
    private let requested = Atomic<Int>(0)
    private let completed = Atomic<Int>(0)
    private let sleeping = Atomic<Bool>(false)
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let job: () -> Void
    private let spins: Int
    private var generation = 0

    /// `job` runs on the helper thread each time `start()` is called. After each job the
    /// helper checks for the next `spins` times before it sleeps.
    init(name: String, spins: Int = 20_000, job: @escaping () -> Void) {
        self.job = job
        self.spins = spins
        let thread = Thread { [self] in loop() }
        thread.name = name
        thread.start()
    }

    private func loop() {
        var seen = 0
        while true {
            var spins = 0
            while requested.load(ordering: .acquiring) == seen && !stopping.load(ordering: .relaxed) {
                spins += 1
                if spins > self.spins {
                    // Sleep; re-check after announcing it, so a request is never missed.
                    sleeping.store(true, ordering: .sequentiallyConsistent)
                    if requested.load(ordering: .sequentiallyConsistent) == seen && !stopping.load(ordering: .sequentiallyConsistent) {
                        wake.wait()
                    }
                    sleeping.store(false, ordering: .sequentiallyConsistent)
                    spins = 0
                }
            }
            if stopping.load(ordering: .acquiring) { return }
            seen = requested.load(ordering: .acquiring)
            job()
            completed.store(seen, ordering: .releasing)
        }
    }

    /// Runs the job once on the helper thread; pair with `wait()`.
    func start() {
        generation += 1
        requested.store(generation, ordering: .sequentiallyConsistent)
        if sleeping.load(ordering: .sequentiallyConsistent) { wake.signal() }
    }

    /// Waits until the job started by `start()` has finished. The caller has just done the
    /// other half of the same work, so the wait is usually short: spin, without system
    /// calls; past a few microseconds, yield the core between checks (the file writer's
    /// thread may need it).
    func wait() {
        var spins = 0
        while completed.load(ordering: .acquiring) != generation {
            spins += 1
            if spins > 2_000 { sched_yield() }
        }
    }

    /// Ends the thread. Call once, when the owner is done with it.
    func stop() {
        stopping.store(true, ordering: .sequentiallyConsistent)
        wake.signal()
    }
}
