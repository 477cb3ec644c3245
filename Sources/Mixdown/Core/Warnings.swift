import Synchronization

/// What the library says that is not an error: an output that had to clip. Delivered to
/// the handler an embedder sets (the command prints them on standard error, as sox prints
/// its clipping counts); without one, dropped. Called on the thread that wrote the file.
public enum Warnings {
    private static let handler = Mutex<(@Sendable (String) -> Void)?>(nil)

    /// Sets (or, with nil, removes) the handler.
    public static func setHandler(_ h: (@Sendable (String) -> Void)?) {
        handler.withLock { $0 = h }
    }

    static func emit(_ message: String) {
        let h = handler.withLock { $0 }
        h?(message)
    }
}
