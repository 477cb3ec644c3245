/// Wall-clock time since it was made, for reports and progress only (never for media time).
public struct Stopwatch: Sendable {
    private let began = ContinuousClock.now

    public init() {}

    /// Seconds since the stopwatch was made.
    public var seconds: Double {
        let d = ContinuousClock.now - began
        return Double(d.components.seconds) + Double(d.components.attoseconds) * 1e-18
    }
}
