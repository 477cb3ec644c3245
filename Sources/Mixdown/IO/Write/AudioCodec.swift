/// The codecs Mixdown writes into the MP4 family and Matroska, with FFmpeg's encoders.
public enum AudioCodec: String, Sendable, CaseIterable, Codable {
    /// AAC-LC, FFmpeg's native `aac` encoder (1024 frames of priming).
    case aac
    /// Apple Lossless, 16- or 24-bit.
    case alac
    /// Opus through libopus (48 kHz and its divisors only; 312 frames of pre-skip).
    case opus

    /// FFmpeg's encoder name.
    var encoderName: String {
        switch self { case .aac: return "aac"; case .alac: return "alac"; case .opus: return "libopus" }
    }

    public var isLossy: Bool { self != .alac }

    /// The rates Opus takes (48 kHz and its divisors), in an Ogg file or a container.
    public static let opusRates: Set<Int> = [8_000, 12_000, 16_000, 24_000, 48_000]

    /// The bitrates this codec takes, in bits per second, for `channels` channels.
    func bitrateRange(channels: Int) -> ClosedRange<Int>? {
        switch self {
        case .aac: return 16_000 * channels...320_000 * channels
        case .opus: return 6_000 * channels...256_000 * channels
        case .alac: return nil
        }
    }

    /// The default bitrate: 96 kbps per channel for AAC, 64 for Opus.
    func defaultBitrate(channels: Int) -> Int? {
        switch self {
        case .aac: return 96_000 * min(channels, 2) + 64_000 * max(0, channels - 2)
        case .opus: return 64_000 * channels
        case .alac: return nil
        }
    }
}
