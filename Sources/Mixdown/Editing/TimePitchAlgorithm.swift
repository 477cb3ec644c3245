/// How an export stretches a scaled segment (AVAudioTimePitchAlgorithm).
public enum TimePitchAlgorithm: String, Sendable, CaseIterable, Codable {
    /// Resampling (libsamplerate): pitch follows speed.
    case varispeed
    /// WSOLA, Mixdown's time-domain stretcher: keeps pitch.
    case timeDomain
    /// Rubber Band: keeps pitch (needs the `RubberBand` trait).
    case spectral

    /// AVAssetExportSession's default, spectral, when Rubber Band is built in; else timeDomain.
    public static var defaultAlgorithm: TimePitchAlgorithm { TimeScaleAlgorithm.rubberband.isAvailable ? .spectral : .timeDomain }

    public var isAvailable: Bool { self != .spectral || TimeScaleAlgorithm.rubberband.isAvailable }
}
