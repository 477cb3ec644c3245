/// A span of time, `start` inclusive to `start + duration` exclusive, like CMTimeRange.
public struct MediaTimeRange: Sendable, Hashable, CustomStringConvertible {
    public var start: MediaTime
    public var duration: MediaTime

    public init(start: MediaTime, duration: MediaTime) {
        self.start = start
        self.duration = duration
    }

    public init(start: MediaTime, end: MediaTime) {
        self.init(start: start, duration: end - start)
    }

    /// `start + duration`, exact where the timescales allow (see `MediaTime.+`).
    public var end: MediaTime { start + duration }

    /// Numeric start and numeric, non-negative duration.
    public var isValid: Bool { start.isNumeric && duration.isNumeric && duration >= .zero }

    /// The frames this range covers at `sampleRate`: start and end are each rounded by
    /// `rounding`, so adjacent ranges give adjacent frame ranges.
    public func frames(atRate sampleRate: Int, rounding: FrameRounding = .standard) -> Range<Int64> {
        let a = start.frames(atRate: sampleRate, rounding: rounding)
        let b = end.frames(atRate: sampleRate, rounding: rounding)
        return a..<max(a, b)
    }

    public func contains(_ t: MediaTime) -> Bool { t >= start && t < end }

    public var description: String { "[\(start), \(end))" }
}
