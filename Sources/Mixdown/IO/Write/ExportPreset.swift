/// A named bundle of output settings (AVAssetExportSession's presets).
public struct ExportPreset: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    /// Nil: the input's own type (passthrough).
    public let type: AudioFileType?
    /// Nil: the inputs' precision (or the input's own format, for passthrough).
    public let sampleFormat: SampleFormat?
    /// Bits per second for lossy types.
    public let bitrate: Int?
    /// Forced output rate and channel count, when the preset has one.
    public let sampleRate: Int?
    public let channels: Int?
    /// The codec, for m4a, mp4, mov, mkv and webm presets.
    public let codec: AudioCodec?

    /// 16-bit WAV.
    public static let wav16 = ExportPreset(name: "wav16", type: .wav, sampleFormat: .s16, bitrate: nil, sampleRate: nil, channels: nil)
    /// 24-bit WAV.
    public static let wav24 = ExportPreset(name: "wav24", type: .wav, sampleFormat: .s24, bitrate: nil, sampleRate: nil, channels: nil)
    /// FLAC at the inputs' precision (24-bit if any input has more than 16 bits).
    public static let flac = ExportPreset(name: "flac", type: .flac, sampleFormat: nil, bitrate: nil, sampleRate: nil, channels: nil)
    /// MP3 at a constant 192 kbps.
    public static let mp3_192 = ExportPreset(name: "mp3-192", type: .mp3, sampleFormat: nil, bitrate: 192_000, sampleRate: nil, channels: nil)
    /// Ogg Opus for speech: mono, 48 kHz, 32 kbps.
    public static let opusVoice = ExportPreset(name: "opus-voice", type: .opus, sampleFormat: nil, bitrate: 32_000, sampleRate: 48_000, channels: 1)
    /// AAC-LC in M4A at 256 kbps stereo (AVAssetExportPresetAppleM4A's counterpart), with
    /// the priming and valid length in an edit list and iTunSMPB. Needs the FFmpeg trait.
    public static let m4aAAC = ExportPreset(name: "m4a-aac", type: .m4a, sampleFormat: nil, bitrate: 256_000, sampleRate: nil, channels: nil, codec: .aac)
    /// Apple Lossless in M4A, at the inputs' precision (16 or 24 bits). Needs the FFmpeg trait.
    public static let m4aALAC = ExportPreset(name: "m4a-alac", type: .m4a, sampleFormat: nil, bitrate: nil, sampleRate: nil, channels: nil, codec: .alac)
    /// The input's own type, sample format, rate and channels: a single-file asset only.
    public static let passthrough = ExportPreset(name: "passthrough", type: nil, sampleFormat: nil, bitrate: nil, sampleRate: nil, channels: nil)

    public static let all: [ExportPreset] = [.wav16, .wav24, .flac, .mp3_192, .opusVoice, .m4aAAC, .m4aALAC, .passthrough]

    /// The preset called `name`, or nil.
    public init?(name: String) {
        guard let p = Self.all.first(where: { $0.name == name }) else { return nil }
        self = p
    }

    private init(name: String, type: AudioFileType?, sampleFormat: SampleFormat?, bitrate: Int?, sampleRate: Int?, channels: Int?,
                 codec: AudioCodec? = nil) {
        self.codec = codec
        self.name = name
        self.type = type
        self.sampleFormat = sampleFormat
        self.bitrate = bitrate
        self.sampleRate = sampleRate
        self.channels = channels
    }

    public var description: String { name }
}
