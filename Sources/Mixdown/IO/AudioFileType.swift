import CSndFile
import Foundation

/// The container types Mixdown writes: libsndfile's, and (with the `FFmpeg` trait) the
/// MP4 family and Matroska through FFmpeg's libraries.
public enum AudioFileType: String, Sendable, CaseIterable, Codable {
    case wav, aiff, flac, caf, ogg, opus, mp3, w64, rf64
    /// MPEG-4 audio (iTunes' flavour, AVAssetExportPresetAppleM4A's type): AAC or ALAC.
    case m4a
    /// MPEG-4 / QuickTime, with `--video-from` holding a copied video stream too.
    case mp4, mov
    /// Matroska and WebM: Opus (or AAC in Matroska).
    case mkv, webm

    /// The type a file name's extension implies, or nil.
    public init?(pathExtension ext: String) {
        switch ext.lowercased() {
        case "wav", "wave": self = .wav
        case "aif", "aiff", "aifc": self = .aiff
        case "flac": self = .flac
        case "caf": self = .caf
        case "ogg", "oga": self = .ogg
        case "opus": self = .opus
        case "mp3": self = .mp3
        case "w64": self = .w64
        case "rf64": self = .rf64
        case "m4a", "m4b": self = .m4a
        case "mp4": self = .mp4
        case "mov", "qt": self = .mov
        case "mkv", "mka": self = .mkv
        case "webm", "weba": self = .webm
        default: return nil
        }
    }

    /// The type to write `path` as: `explicit` when given, else the one its extension implies.
    public static func forOutput(_ path: String, explicit: AudioFileType?) throws(MixdownError) -> AudioFileType {
        if path.isEmpty || path.hasSuffix("/") || path.hasSuffix("/.") || path.hasSuffix("/..") || path == "." || path == ".." {
            throw .outputNotWritable(path: path, reason: "it names a directory, not a file (give a file name after the last '/')")
        }
        if let explicit { return explicit }
        let ext = (path as NSString).pathExtension
        guard let t = AudioFileType(pathExtension: ext) else {
            throw .unsupportedOutput(path: path, reason: ext.isEmpty
                ? "no extension to tell the output type from; pass --type"
                : "unknown extension '.\(ext)'; pass --type (\(AudioFileType.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return t
    }

    /// Lossy types encode from float and take no PCM sample format.
    public var isLossy: Bool { self == .ogg || self == .opus || self == .mp3 }

    /// Whether a PCM sample format applies: not to lossy types or lossy codecs.
    public func takesSampleFormat(codec: AudioCodec?) -> Bool {
        if isFFmpegContainer { return !(codec ?? defaultCodec!).isLossy }
        return !isLossy
    }

    /// Written through FFmpeg's libraries (the `FFmpeg` trait); the codec decides the rest.
    public var isFFmpegContainer: Bool { [.m4a, .mp4, .mov, .mkv, .webm].contains(self) }

    /// The codec a container type gets when none is asked for (nil: libsndfile's types).
    public var defaultCodec: AudioCodec? {
        switch self {
        case .m4a, .mp4, .mov: return .aac
        case .mkv, .webm: return .opus
        default: return nil
        }
    }

    /// The codecs a container type holds.
    public var codecs: [AudioCodec] {
        switch self {
        case .m4a, .mp4, .mov: return [.aac, .alac]
        case .mkv: return [.opus, .aac]
        case .webm: return [.opus]
        default: return []
        }
    }

    /// The sample formats this type stores (for the MP4 family: with ALAC).
    public var supportedSampleFormats: [SampleFormat] {
        switch self {
        case .wav, .aiff, .caf, .w64, .rf64: return [.s16, .s24, .f32]
        case .flac, .m4a, .mp4, .mov: return [.s16, .s24]
        case .ogg, .opus, .mp3, .mkv, .webm: return []
        }
    }

    /// Whether the container's size fields are 32-bit: at most 4 GiB in all.
    var has32BitSizes: Bool { self == .wav || self == .aiff }

    var sndfileMajor: Int32 {
        switch self {
        case .wav: return Int32(SF_FORMAT_WAV)
        case .aiff: return Int32(SF_FORMAT_AIFF)
        case .flac: return Int32(SF_FORMAT_FLAC)
        case .caf: return Int32(SF_FORMAT_CAF)
        case .ogg, .opus: return Int32(SF_FORMAT_OGG)
        case .mp3: return Int32(SF_FORMAT_MPEG)
        case .w64: return Int32(SF_FORMAT_W64)
        case .rf64: return Int32(SF_FORMAT_RF64)
        case .m4a, .mp4, .mov, .mkv, .webm: return 0
        }
    }
}

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

/// How samples are stored in an output file.
public enum SampleFormat: String, Sendable, CaseIterable, Codable {
    /// Signed 16-bit integer; float x becomes round(x * 32768), clipped.
    case s16
    /// Signed 24-bit integer; float x becomes round(x * 8388608), clipped.
    case s24
    /// 32-bit IEEE float, written as is (no clipping).
    case f32

    public var bytesPerSample: Int {
        switch self { case .s16: return 2; case .s24: return 3; case .f32: return 4 }
    }

    var sndfileSubtype: Int32 {
        switch self {
        case .s16: return Int32(SF_FORMAT_PCM_16)
        case .s24: return Int32(SF_FORMAT_PCM_24)
        case .f32: return Int32(SF_FORMAT_FLOAT)
        }
    }
}

/// The container and encoding an output will really use, decided before a byte is written.
public struct OutputEncoding: Sendable, Equatable {
    /// The container written: `.rf64` when a `.wav` request would pass 4 GiB.
    public let type: AudioFileType
    /// The PCM sample format, or nil for lossy types.
    public let sampleFormat: SampleFormat?
    /// The exact size of the audio data in bytes, for PCM types.
    public let dataBytes: Int64?
    /// Bitrate for lossy types, and the codec for FFmpeg's containers.
    public var encoder = EncoderSettings()
    /// MP4 family: write the priming and valid length as an edit list (off only to test
    /// that readers fall back on iTunSMPB).
    var writesEditList = true

    init(type: AudioFileType, sampleFormat: SampleFormat?, dataBytes: Int64?) {
        self.type = type
        self.sampleFormat = sampleFormat
        self.dataBytes = dataBytes
    }

    /// Room left for headers and metadata chunks below the 4 GiB limit of WAV and AIFF.
    static let headerAllowance: Int64 = 64 * 1024

    /// Resolves a requested type and sample format for `frames` frames of `channels`
    /// channels. A WAV past 4 GiB becomes RF64; an AIFF past 4 GiB is refused (no type
    /// holds it under that name). A sample format the type does not store is an error,
    /// never quietly replaced.
    public static func resolve(path: String, type: AudioFileType, sampleFormat: SampleFormat?,
                               frames: Int64, channels: Int, encoder: EncoderSettings = EncoderSettings()) throws(MixdownError) -> OutputEncoding {
        if type.isFFmpegContainer {
            guard AudioFileProbe.readsContainers else {
                throw .unsupportedOutput(path: path, reason: "\(type.rawValue) is written through FFmpeg's libraries, and this Mixdown was built without the FFmpeg trait")
            }
            let codec = encoder.codec ?? type.defaultCodec!
            guard type.codecs.contains(codec) else {
                throw .unsupportedOutput(path: path, reason: "\(type.rawValue) does not hold \(codec.rawValue) (it holds \(type.codecs.map(\.rawValue).joined(separator: ", ")))")
            }
            var resolvedFormat: SampleFormat?
            if codec.isLossy {
                if let f = sampleFormat {
                    throw .unsupportedOutput(path: path, reason: "--format \(f.rawValue) does not apply to \(codec.rawValue), a lossy codec")
                }
            } else {
                let f = sampleFormat ?? .s16
                guard f != .f32 else { throw .unsupportedOutput(path: path, reason: "\(codec.rawValue) stores s16 or s24 samples, not f32") }
                resolvedFormat = f
            }
            if let bitrate = encoder.bitrate {
                guard let range = codec.bitrateRange(channels: channels) else {
                    throw .unsupportedOutput(path: path, reason: "a bitrate does not apply to \(codec.rawValue), which is lossless")
                }
                guard range.contains(bitrate) else {
                    throw .unsupportedOutput(path: path, reason: "a bitrate of \(bitrate / 1000) kbps is outside \(codec.rawValue)'s \(range.lowerBound / 1000)…\(range.upperBound / 1000) kbps for \(channels) channels")
                }
            }
            var e = OutputEncoding(type: type, sampleFormat: resolvedFormat, dataBytes: nil)
            e.encoder = encoder
            e.encoder.codec = codec
            return e
        }
        if let codec = encoder.codec {
            throw .unsupportedOutput(path: path, reason: "--codec \(codec.rawValue) applies to m4a, mp4, mov, mkv and webm, not \(type.rawValue)")
        }
        if type.isLossy {
            if let f = sampleFormat {
                throw .unsupportedOutput(path: path, reason: "--format \(f.rawValue) does not apply to \(type.rawValue), a lossy type")
            }
            var e = OutputEncoding(type: type, sampleFormat: nil, dataBytes: nil)
            e.encoder = encoder
            return e
        }
        let format = sampleFormat ?? .s16
        guard type.supportedSampleFormats.contains(format) else {
            let names = type.supportedSampleFormats.map(\.rawValue).joined(separator: ", ")
            throw .unsupportedOutput(path: path, reason: "\(type.rawValue) does not store \(format.rawValue) samples (it stores \(names))")
        }
        let bytes = frames * Int64(channels) * Int64(format.bytesPerSample)
        var resolved = type
        if type.has32BitSizes && bytes + headerAllowance > Int64(UInt32.max) {
            guard type == .wav else {
                throw .outputTooLarge(path: path, bytes: bytes,
                                      reason: "AIFF holds at most 4 GiB; use .caf, .w64 or .rf64")
            }
            resolved = .rf64
        }
        var e = OutputEncoding(type: resolved, sampleFormat: format, dataBytes: type == .flac ? nil : bytes)
        e.encoder = encoder
        return e
    }

    var sndfileFormat: Int32 {
        switch type {
        case .ogg: return type.sndfileMajor | Int32(SF_FORMAT_VORBIS)
        case .opus: return type.sndfileMajor | Int32(SF_FORMAT_OPUS)
        case .mp3: return type.sndfileMajor | Int32(SF_FORMAT_MPEG_LAYER_III)
        default: return type.sndfileMajor | (sampleFormat ?? .s16).sndfileSubtype
        }
    }
}
