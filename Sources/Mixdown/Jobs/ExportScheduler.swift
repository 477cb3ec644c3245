import Foundation
import Synchronization

/// Admits at most `slots` exports at a time (one per core); the others wait in order.
final class ExportScheduler: Sendable {
    static let shared = ExportScheduler(slots: ProcessInfo.processInfo.activeProcessorCount)

    private struct State {
        var free: Int
        var waiters: [(token: CancellationToken, resume: CheckedContinuation<Bool, Never>)] = []
    }
    private let state: Mutex<State>

    init(slots: Int) { state = Mutex(State(free: max(1, slots))) }

    /// Whether a slot is free right now (no waiting would happen).
    var hasFreeSlot: Bool { state.withLock { $0.free > 0 } }

    /// Waits for a slot. Returns false, without a slot, when `token` is cancelled first.
    func acquire(_ token: CancellationToken) async -> Bool {
        await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
            let granted: Bool? = state.withLock { s in
                if token.isCancelled { return false }
                if s.free > 0 { s.free -= 1; return true }
                s.waiters.append((token, c))
                return nil
            }
            if let granted { c.resume(returning: granted) }
        }
    }

    /// Gives a slot back: to the first waiter, or to the pool.
    func release() {
        let next: CheckedContinuation<Bool, Never>? = state.withLock { s in
            if s.waiters.isEmpty { s.free += 1; return nil }
            return s.waiters.removeFirst().resume
        }
        next?.resume(returning: true)
    }

    /// Wakes the waiter holding `token` (already cancelled) without a slot.
    func withdraw(_ token: CancellationToken) {
        let c: CheckedContinuation<Bool, Never>? = state.withLock { s in
            guard let i = s.waiters.firstIndex(where: { $0.token === token }) else { return nil }
            return s.waiters.remove(at: i).resume
        }
        c?.resume(returning: false)
    }
}
