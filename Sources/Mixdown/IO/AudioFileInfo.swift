import CSndFile
import Foundation

/// What a readable audio file holds, as libsndfile reports it.
public struct AudioFileInfo: Sendable, Equatable, Codable {
    public let path: String
    /// Container name: "wav", "aiff", "flac", "ogg", "mp3", ...
    public let type: String
    /// Encoding: "pcm_16", "pcm_24", "float", "vorbis", "opus", "mp3", ...
    public let sampleFormat: String
    /// Frames per second.
    public let sampleRate: Int
    public let channelCount: Int
    /// Frames in the file (one frame = one sample of every channel).
    public let frames: Int64

    /// The exact duration: `frames / sampleRate` seconds.
    public var duration: MediaTime { MediaTime(frames: frames, sampleRate: sampleRate) }
    public var format: AudioFormat { AudioFormat(sampleRate: sampleRate, channelCount: channelCount) }

    /// The PCM sample format that keeps this file's precision when written as `type`:
    /// 24/32-bit integers give s24, float gives f32 (s24 for FLAC, which has no float),
    /// anything else s16. Nil for lossy output types, which take no sample format.
    public func naturalSampleFormat(for type: AudioFileType) -> SampleFormat? {
        if type.isLossy { return nil }
        switch sampleFormat {
        case "pcm_24", "pcm_32": return .s24
        case "float", "double": return type.supportedSampleFormats.contains(.f32) ? .f32 : .s24
        default: return .s16
        }
    }

    /// Reads the header of the file at `path`.
    public static func read(path: String) throws(MixdownError) -> AudioFileInfo {
        let file = try SndFileReader(path: path)
        return file.info
    }
}

/// An open libsndfile handle for reading, closed on deinit.
final class SndFileReader {
    let info: AudioFileInfo
    let handle: OpaquePointer

    init(path: String) throws(MixdownError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .fileNotFound(path: path) }
            throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG || (st.st_mode & S_IFMT) == S_IFIFO else {
            throw .notAFile(path: path)
        }
        if (st.st_mode & S_IFMT) == S_IFREG && st.st_size == 0 { throw .emptyFile(path: path) }
        var sfinfo = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &sfinfo) else {
            let reason = String(cString: sf_strerror(nil))
            if access(path, R_OK) != 0 {
                throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
            }
            throw .unreadableFile(path: path, reason: reason)
        }
        guard sfinfo.frames > 0, sfinfo.frames != Int64.max else {
            sf_close(h)
            throw .emptyFile(path: path)
        }
        guard sfinfo.samplerate > 0, sfinfo.channels > 0 else {
            sf_close(h)
            throw .unreadableFile(path: path, reason: "the header gives \(sfinfo.samplerate) Hz and \(sfinfo.channels) channels")
        }
        if let promised = Self.promisedFrames(h, sfinfo), promised > sfinfo.frames {
            sf_close(h)
            throw .truncatedAudio(path: path, expectedFrames: promised, readFrames: sfinfo.frames)
        }
        handle = h
        info = AudioFileInfo(path: path, type: Self.majorName(sfinfo.format), sampleFormat: Self.subtypeName(sfinfo.format),
                             sampleRate: Int(sfinfo.samplerate), channelCount: Int(sfinfo.channels), frames: sfinfo.frames)
    }

    deinit { sf_close(handle) }

    /// The frame count a PCM file's header promised, when libsndfile's header log says the
    /// data chunk is longer than the file ("data : 576000 (should be 199908)"): libsndfile
    /// then quietly plays what is there, and Mixdown calls the file truncated instead.
    static func promisedFrames(_ h: OpaquePointer, _ sfinfo: SF_INFO) -> Int64? {
        var log = [CChar](repeating: 0, count: 16_384)
        sf_command(h, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("data :") || t.hasPrefix("SSND :"), let open = t.range(of: "(should be ") else { continue }
            let declared = t[t.index(t.startIndex, offsetBy: 6)..<open.lowerBound].trimmingCharacters(in: .whitespaces)
            let actual = t[open.upperBound...].prefix { $0.isNumber }
            guard let d = Int64(declared), let a = Int64(actual), d > a else { continue }
            let bytesPerSample: Int64 = switch sfinfo.format & Int32(SF_FORMAT_SUBMASK) {
            case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW): 1
            case Int32(SF_FORMAT_PCM_16): 2
            case Int32(SF_FORMAT_PCM_24): 3
            case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT): 4
            case Int32(SF_FORMAT_DOUBLE): 8
            default: 0
            }
            guard bytesPerSample > 0 else { return sfinfo.frames + 1 }
            return sfinfo.frames + (d - a) / (bytesPerSample * Int64(sfinfo.channels))
        }
        return nil
    }

    static func majorName(_ format: Int32) -> String {
        switch format & Int32(SF_FORMAT_TYPEMASK) {
        case Int32(SF_FORMAT_WAV): return "wav"
        case Int32(SF_FORMAT_AIFF): return "aiff"
        case Int32(SF_FORMAT_FLAC): return "flac"
        case Int32(SF_FORMAT_CAF): return "caf"
        case Int32(SF_FORMAT_OGG): return "ogg"
        case Int32(SF_FORMAT_W64): return "w64"
        case Int32(SF_FORMAT_RF64): return "rf64"
        case Int32(SF_FORMAT_MPEG): return "mpeg"
        case Int32(SF_FORMAT_AU): return "au"
        case Int32(SF_FORMAT_RAW): return "raw"
        default: return String(format: "sndfile-0x%06x", format & Int32(SF_FORMAT_TYPEMASK))
        }
    }

    static func subtypeName(_ format: Int32) -> String {
        switch format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8): return "pcm_s8"
        case Int32(SF_FORMAT_PCM_U8): return "pcm_u8"
        case Int32(SF_FORMAT_PCM_16): return "pcm_16"
        case Int32(SF_FORMAT_PCM_24): return "pcm_24"
        case Int32(SF_FORMAT_PCM_32): return "pcm_32"
        case Int32(SF_FORMAT_FLOAT): return "float"
        case Int32(SF_FORMAT_DOUBLE): return "double"
        case Int32(SF_FORMAT_ULAW): return "ulaw"
        case Int32(SF_FORMAT_ALAW): return "alaw"
        case Int32(SF_FORMAT_VORBIS): return "vorbis"
        case Int32(SF_FORMAT_OPUS): return "opus"
        case Int32(SF_FORMAT_MPEG_LAYER_I): return "mp1"
        case Int32(SF_FORMAT_MPEG_LAYER_II): return "mp2"
        case Int32(SF_FORMAT_MPEG_LAYER_III): return "mp3"
        default: return String(format: "sndfile-0x%04x", format & Int32(SF_FORMAT_SUBMASK))
        }
    }
}
