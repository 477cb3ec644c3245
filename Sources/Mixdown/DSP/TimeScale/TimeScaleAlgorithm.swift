/// How a stretch changes duration: the one choice behind `mixdown stretch --algorithm`, a
/// composition's scaled ranges and `ExportSession.audioTimePitchAlgorithm`
/// (AVAudioTimePitchAlgorithm's choices, under their AVFoundation names too).
public enum TimeScaleAlgorithm: String, Sendable, CaseIterable, Codable {
    /// Varispeed below 5 cents of pitch change (|R − 1| < 0.0029, judged on the exact
    /// ratio), the pitch-keeping stretcher from there (`pitchKeeping`: spectral).
    case auto
    /// Resampling: pitch follows speed. Exact and click-free at any ratio.
    case varispeed
    /// Waveform-similarity overlap-add: keeps pitch, time domain (AVFoundation's `timeDomain`).
    case wsola
    /// Rubber Band's spectral stretcher: keeps pitch (GPL; the `RubberBand` trait).
    case rubberband
    /// Mixdown's own spectral stretcher (`SpectralStretch`): keeps pitch, in every build
    /// (AVFoundation's `spectral`).
    case spectral
    /// Splicing (`SpliceStretch`): keeps pitch and passes the input through untouched but
    /// for a few crossfaded splices, placed in quiet or where the audio repeats, its time
    /// map within 10 ms of the ratio's. By name only: `auto` took it near 1 until the
    /// spectral stretch led every peer there on the bench's music too (docs/splice.md).
    case splice

    /// AVAudioTimePitchAlgorithm's spelling of `wsola`.
    public static var timeDomain: TimeScaleAlgorithm { .wsola }
    /// The algorithm called `name`: Mixdown's names, or AVFoundation's (`timeDomain`,
    /// `spectral`, `varispeed`).
    public init?(name: String) {
        switch name {
        case "timeDomain": self = .wsola
        default: self.init(rawValue: name)
        }
    }

    /// Every name `init(name:)` takes, for messages.
    public static let names = allCases.map(\.rawValue) + ["timeDomain"]

    /// Mixdown's spectral stretcher: the pitch-keeping stretcher `auto` chooses, and a
    /// composition's default (as AVAssetExportSession's is spectral). The same in every
    /// build; measured against Rubber Band R3 (docs/performance.md, "Stretch quality") level
    /// or better on round-trip PESQ and ViSQOL at 0.5-2, and about 7x faster.
    public static var pitchKeeping: TimeScaleAlgorithm { .spectral }

    /// The largest |R − 1| for which `auto` chooses varispeed: 29/10000 (5 cents).
    public static let varispeedLimit = (numerator: Int64(29), denominator: Int64(10_000))

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

    /// A rough wall-time estimate of a whole-file stretch, seconds: the single-core cost per
    /// second of output per channel at 48 kHz, measured on the reference machine (2 vCPUs:
    /// `mixdown stretch` of a 3-minute stereo file by 1.003 with each algorithm), scaled by
    /// rate and channels. For telling a user that a
    /// render will take long, never for a decision that changes output.
    public func estimatedSeconds(outputFrames: Int64, sampleRate: Int, channels: Int, quality: ResamplerQuality) -> Double {
        let perChannelSecond: Double
        switch self {
        case .auto, .varispeed: perChannelSecond = 0.000_25
        case .wsola: perChannelSecond = 0.001_5
        case .spectral: perChannelSecond = 0.003   // 1.07 s of CPU for 3 minutes of stereo by 1.003, one thread (2026-12-04)
        case .splice: perChannelSecond = 0.001
        case .rubberband: perChannelSecond = quality == .best ? 0.11 : 0.018
        }
        let seconds = Double(outputFrames) / Double(max(sampleRate, 1))
        return perChannelSecond * seconds * Double(channels) * Double(sampleRate) / 48_000
    }

    /// What `auto` becomes for `ratio`, decided exactly for R = p/q: varispeed when
    /// |p − q| · 10000 < 29 · q, else `pitchKeeping`. Other cases are themselves.
    ///
    /// From 0.99 to 1.01 the spectral stretch, not the splice: on the bench's full set
    /// (docs/spectral.md, "Two and three bins away, near 1") it leads Signalsmith Stretch
    /// and Bungee on music's round trip at 0.99, 0.995, 1.003 and 1.01 (0.76 dB against
    /// 0.88 at 1.003), where the splice's time map, within its 10 ms bound, read as 0.67 to
    /// 1.51 dB with intervals reaching 0.4 to 0.6 dB below Signalsmith's; and the spectral
    /// stretch's time map is the ratio's, where the splice's wanders by up to 10 ms.
    public func resolved(for ratio: StretchRatio) -> TimeScaleAlgorithm {
        guard self == .auto else { return self }
        let deviation = (Int128(ratio.numerator) - Int128(ratio.denominator)).magnitude
        let q = UInt128(ratio.denominator)
        let limit = Self.varispeedLimit
        if deviation * UInt128(limit.denominator) < UInt128(limit.numerator) * q {
            return .varispeed
        }
        return Self.pitchKeeping
    }
}

/// AVFoundation's name for the same choice.
public typealias TimePitchAlgorithm = TimeScaleAlgorithm
