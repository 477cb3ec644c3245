import Synchronization

/// A flag that any thread may set to stop a render at its next block boundary.
public final class CancellationToken: Sendable {
    private let flag = Atomic<Bool>(false)
    public init() {}
    public func cancel() { flag.store(true, ordering: .relaxed) }
    public var isCancelled: Bool { flag.load(ordering: .relaxed) }
}
