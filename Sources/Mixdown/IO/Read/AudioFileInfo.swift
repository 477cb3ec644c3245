import CSndFile
import Foundation

/// What a readable audio file holds: the audio stream Mixdown plays, and every stream of
/// the container.
public struct AudioFileInfo: Sendable, Equatable, Codable {
    public let path: String
    /// Container name: "wav", "aiff", "flac", "ogg", "mpeg" (libsndfile); "m4a", "mp4",
    /// "mov", "matroska", "webm" (FFmpeg).
    public let type: String
    /// Encoding: "pcm_16", "pcm_24", "float", "vorbis", "opus", "mp3" (libsndfile); the
    /// codec's name for FFmpeg's formats: "aac", "alac", "opus", "pcm_s16le", ...
    public let sampleFormat: String
    /// Frames per second.
    public let sampleRate: Int
    public let channelCount: Int
    /// Frames in the stream (one frame = one sample of every channel): the valid frames,
    /// after the encoder's priming and before its padding, where the container says them.
    public let frames: Int64
    /// The container's index of the audio stream played (0 for libsndfile's formats).
    public let stream: Int
    /// Where `frames` comes from.
    public let lengthSource: LengthSource
    /// Encoder priming skipped at the start, in frames (0 when none is declared).
    public let priming: Int64
    /// Bits per decoded sample where the codec says it (16 or 24 for PCM, ALAC, FLAC).
    public let bitsPerSample: Int?
    /// Every stream of the container, in its order.
    public let streams: [MediaStreamInfo]
    /// Where the file starts on its recorder's clock, frames since midnight at its own
    /// rate: a Broadcast WAV's `bext` TimeReference, a QuickTime/MP4 `tmcd` track, a video
    /// stream's or the container's `timecode` (see `timeReferenceSource`). nil when the file
    /// has none. Timelines
    /// (EDLs, AAFs) address such media by this clock: 10:00:00:00 is the file's start when
    /// it was recorded at ten o'clock.
    public internal(set) var timeReference: Int64?
    /// What gave `timeReference`: "bext TimeReference", "tmcd track", "video timecode" or
    /// "timecode tag" (a stream's or the container's `timecode`).
    public internal(set) var timeReferenceSource: String?

    public init(path: String, type: String, sampleFormat: String, sampleRate: Int, channelCount: Int, frames: Int64,
                stream: Int = 0, lengthSource: LengthSource = .header, priming: Int64 = 0, bitsPerSample: Int? = nil,
                streams: [MediaStreamInfo]? = nil) {
        self.path = path; self.type = type; self.sampleFormat = sampleFormat
        self.sampleRate = sampleRate; self.channelCount = channelCount; self.frames = frames
        self.stream = stream; self.lengthSource = lengthSource; self.priming = priming; self.bitsPerSample = bitsPerSample
        self.streams = streams ?? [MediaStreamInfo(index: 0, kind: .audio, codec: sampleFormat, sampleRate: sampleRate,
                                                   channelCount: channelCount, frames: frames,
                                                   duration: MediaTime(frames: frames, sampleRate: sampleRate))]
    }

    /// The exact duration: `frames / sampleRate` seconds.
    public var duration: MediaTime { MediaTime(frames: frames, sampleRate: sampleRate) }
    public var format: AudioFormat { AudioFormat(sampleRate: sampleRate, channelCount: channelCount) }

    /// The PCM sample format that keeps this file's precision when written as `type`:
    /// 24/32-bit integers give s24, float gives f32 (s24 for FLAC, which has no float),
    /// anything else s16. Nil for lossy output types, which take no sample format.
    public func naturalSampleFormat(for type: AudioFileType, codec: AudioCodec? = nil) -> SampleFormat? {
        if !type.takesSampleFormat(codec: codec) { return nil }
        if let bits = bitsPerSample, bits > 16, sampleFormat != "float", sampleFormat != "double" { return .s24 }
        switch sampleFormat {
        case "pcm_24", "pcm_32": return .s24
        case "float", "double": return type.supportedSampleFormats.contains(.f32) ? .f32 : .s24
        default: return .s16
        }
    }

    /// Reads the header of the file at `path` (its first audio stream, or `stream`: the
    /// container's stream index, as `mixdown info` lists it).
    public static func read(path: String, stream: Int? = nil) throws(MixdownError) -> AudioFileInfo {
        try AudioFileProbe.open(path: path, stream: stream).info
    }
}

/// Where an audio stream's frame count comes from.
public enum LengthSource: String, Sendable, Codable {
    /// The file's header (libsndfile: WAV, AIFF, FLAC, Ogg granule positions, MP3's
    /// LAME/Xing gapless header).
    case header
    /// The streamed WAV's size fields were 0xFFFFFFFF: the length came from the file's size.
    case fileSize = "file size"
    /// An MP4/MOV edit list (`elst`): priming skipped, valid length declared.
    case editList = "edit list"
    /// An MP4/MOV track's sample table (no edit list): every decoded frame is valid.
    case sampleTable = "sample table"
    /// iTunes' `iTunSMPB` tag: priming, padding and valid length.
    case iTunSMPB
    /// Matroska/WebM: the packets' durations less CodecDelay (or Opus pre-skip) at the
    /// start and DiscardPadding at the end.
    case codecDelayAndPadding = "codec delay and discard padding"
    /// The container declares no length: the frames a decode gives, counted when opened.
    case decoded = "not declared (counted by decoding)"
    /// Ogg: the last page's granule position, where the decode ends, where libsndfile's
    /// count (from a negative first granule position) runs past it.
    case lastGranule = "the last page's granule position"
}
