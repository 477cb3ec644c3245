import CSndFile
import Foundation

/// The container types Mixdown writes (all through libsndfile).
public enum AudioFileType: String, Sendable, CaseIterable, Codable {
    case wav, aiff, flac, caf, ogg, opus, mp3, w64, rf64

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
        default: return nil
        }
    }

    /// The type to write `path` as: `explicit` when given, else the one its extension implies.
    public static func forOutput(_ path: String, explicit: AudioFileType?) throws(MixdownError) -> AudioFileType {
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

    /// The sample formats this type stores.
    public var supportedSampleFormats: [SampleFormat] {
        switch self {
        case .wav, .aiff, .caf, .w64, .rf64: return [.s16, .s24, .f32]
        case .flac: return [.s16, .s24]
        case .ogg, .opus, .mp3: return []
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
    /// Bitrate for lossy types.
    public var encoder = EncoderSettings()

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
                               frames: Int64, channels: Int) throws(MixdownError) -> OutputEncoding {
        if type.isLossy {
            if let f = sampleFormat {
                throw .unsupportedOutput(path: path, reason: "--format \(f.rawValue) does not apply to \(type.rawValue), a lossy type")
            }
            return OutputEncoding(type: type, sampleFormat: nil, dataBytes: nil)
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
        return OutputEncoding(type: resolved, sampleFormat: format, dataBytes: type == .flac ? nil : bytes)
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
