import Foundation

/// Settings for lossy encoders.
public struct EncoderSettings: Sendable, Equatable, Codable {
    /// Target bitrate in bits per second (all channels together): constant for MP3,
    /// the encoder's target for Opus. Nil: libsndfile's default quality.
    public var bitrate: Int?
    /// The codec for m4a, mp4, mov, mkv and webm outputs; nil: the type's default (AAC
    /// for the MP4 family, Opus for Matroska). Other types refuse one.
    public var codec: AudioCodec?

    public init(bitrate: Int? = nil, codec: AudioCodec? = nil) { self.bitrate = bitrate; self.codec = codec }

    /// libsndfile's compression level (0 best quality … 1 smallest) that gives `bitrate`
    /// for `type` at `format`, from libsndfile's own mappings: MP3 ≥ 32 kHz spans
    /// 320…32 kbps, 16–32 kHz 160…8, below 64…8; Opus spans 256…6 kbps per channel.
    /// "128 kbps", or "1500 bit/s" for a figure that is no whole kbps.
    static func describe(bitrate: Int) -> String {
        bitrate % 1000 == 0 ? "\(bitrate / 1000) kbps" : "\(bitrate) bit/s"
    }

    func compressionLevel(for type: AudioFileType, format: AudioFormat, path: String) throws(MixdownError) -> Double? {
        guard let bitrate else { return nil }
        let (top, bottom): (Double, Double)
        switch type {
        case .mp3:
            (top, bottom) = format.sampleRate >= 32_000 ? (320_000, 32_000) : format.sampleRate >= 16_000 ? (160_000, 8_000) : (64_000, 8_000)
        case .opus:
            (top, bottom) = (256_000 * Double(format.channelCount), 6_000 * Double(format.channelCount))
        default:
            throw .unsupportedOutput(path: path, reason: "a bitrate applies to mp3 and opus outputs, not \(type.rawValue)")
        }
        let b = Double(bitrate)
        guard b >= bottom, b <= top else {
            throw .unsupportedOutput(path: path, reason: "a bitrate of \(EncoderSettings.describe(bitrate: bitrate)) is outside \(type.rawValue)'s \(Int(bottom) / 1000)…\(Int(top) / 1000) kbps at \(format)")
        }
        // Half a kbps of headroom: libsndfile truncates the bitrate it computes to an integer.
        return Swift.min(1, Swift.max(0, (top - b - (type == .mp3 ? 500 : 0)) / (top - bottom)))
    }
}
