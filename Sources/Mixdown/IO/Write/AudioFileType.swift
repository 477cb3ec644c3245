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
