/// How a stretch changes duration (AVAudioTimePitchAlgorithm's choices).
public enum TimeScaleAlgorithm: String, Sendable, CaseIterable, Codable {
    /// Varispeed below 5 cents of pitch change (|R − 1| < 0.0029), a pitch-keeping
    /// stretcher above it (Rubber Band when built in, else WSOLA).
    case auto
    /// Resampling: pitch follows speed. Exact and click-free at any ratio.
    case varispeed
    /// Waveform-similarity overlap-add: keeps pitch, time domain.
    case wsola
    /// Rubber Band's spectral stretcher: keeps pitch (GPL; the `RubberBand` trait).
    case rubberband

    /// The largest |R − 1| for which `auto` chooses varispeed (5 cents).
    public static let varispeedLimit = 0.0029

    /// Whether this build includes the algorithm.
    public var isAvailable: Bool {
        switch self {
        case .rubberband:
            #if RubberBand
            return true
            #else
            return false
            #endif
        default: return true
        }
    }

    /// What `auto` becomes for `ratio`.
    public func resolved(for ratio: StretchRatio) -> TimeScaleAlgorithm {
        guard self == .auto else { return self }
        if abs(ratio.doubleValue - 1) < Self.varispeedLimit { return .varispeed }
        return TimeScaleAlgorithm.rubberband.isAvailable ? .rubberband : .wsola
    }
}
