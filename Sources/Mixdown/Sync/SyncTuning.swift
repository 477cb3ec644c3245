/// How far a sync searches and what it accepts: the one home of the knobs that
/// `DriftEstimator`, `EventSync`, `SyncJob` and `FileAlign` share (`mixdown sync`'s
/// `--max-offset`, `--max-drift`, `--spacing` and `--min-confidence`).
public struct SyncTuning: Sendable, Equatable {
    /// The largest |offset| searched between two recordings. nil: 60 s for a pair
    /// (`pairMaxOffset`); for an event, 60 s first and then any offset at which two
    /// recordings overlap at all, for the recordings the first round did not place.
    public var maxOffset: MediaTime?
    /// The largest |drift| searched, parts per million (above 0, at most 10,000).
    public var maxDriftPPM = 1000.0
    /// Seconds of a recording's own clock between analysis windows (at least 1).
    public var windowSpacing = 10.0
    /// An estimate below this confidence (0 to 1) is refused.
    public var minimumConfidence = 0.5

    /// The search of a pair when `maxOffset` is nil.
    public static let pairMaxOffset = MediaTime(seconds: 60)

    public init() {}

    /// The search of a pair: `maxOffset`, or 60 s.
    public var pairSearch: MediaTime { maxOffset ?? Self.pairMaxOffset }

    /// Throws `invalidParameter` naming the option at fault.
    public func validate() throws(MixdownError) {
        if let maxOffset {
            guard maxOffset.isNumeric, maxOffset >= .zero else {
                throw .invalidParameter(name: "--max-offset", value: maxOffset.clockDescription, reason: "must be a time of 0 or more")
            }
        }
        guard maxDriftPPM.isFinite, maxDriftPPM > 0, maxDriftPPM <= 10_000 else {
            throw .invalidParameter(name: "--max-drift", value: "\(maxDriftPPM)", reason: "must lie above 0 and at most 10000 ppm")
        }
        guard windowSpacing.isFinite, windowSpacing >= 1 else {
            throw .invalidParameter(name: "--spacing", value: "\(windowSpacing)", reason: "must be at least 1 second")
        }
        guard minimumConfidence >= 0 && minimumConfidence <= 1 else {
            throw .invalidParameter(name: "minimum confidence", value: "\(minimumConfidence)", reason: "must lie between 0 and 1")
        }
    }
}
