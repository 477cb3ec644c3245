import Foundation
import Synchronization

/// Runs `count` independent jobs on at most `parallel` threads: each thread takes the next
/// job index until none remain. For analysis jobs of seconds each (one per file or pair of
/// files), not for render blocks. Results come back in index order; a job's error is its
/// own result and does not stop the others.
enum ParallelMap {
    static func run<T: Sendable>(count: Int, parallel: Int, _ job: @escaping @Sendable (Int) throws(MixdownError) -> T) -> [Result<T, MixdownError>] {
        guard count > 0 else { return [] }
        let box = Box<T>(count: count)
        let threads = max(1, min(parallel, count))
        let done = DispatchSemaphore(value: 0)
        for t in 0..<threads {
            let thread = Thread {
                while true {
                    let i = box.next.add(1, ordering: .relaxed).oldValue
                    guard i < count else { break }
                    let r = Result { () throws(MixdownError) -> T in try job(i) }
                    box.results.withLock { $0[i] = r }
                }
                done.signal()
            }
            thread.name = "mixdown.analysis.\(t)"
            thread.start()
        }
        for _ in 0..<threads { done.wait() }
        return box.results.withLock { $0.map { $0! } }
    }

    private final class Box<T: Sendable>: @unchecked Sendable {
        let next = Atomic<Int>(0)
        let results: Mutex<[Result<T, MixdownError>?]>
        init(count: Int) { results = Mutex([Result<T, MixdownError>?](repeating: nil, count: count)) }
    }
}

/// Progress of several jobs running at once, reported as the mean of their fractions.
final class ProgressShares: @unchecked Sendable {
    private let fractions: Mutex<[Double]>
    private let report: ((Double) -> Void)?

    init(count: Int, report: ((Double) -> Void)?) {
        fractions = Mutex([Double](repeating: 0, count: max(1, count)))
        self.report = report
    }

    func set(_ i: Int, _ fraction: Double) {
        guard let report else { return }
        // Reported under the lock: the callback never runs on two threads at once.
        fractions.withLock { f in
            f[i] = fraction
            report(f.reduce(0, +) / Double(f.count))
        }
    }
}
