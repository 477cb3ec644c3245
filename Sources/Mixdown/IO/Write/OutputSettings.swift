import Foundation

/// How a job writes its file: everything about the output except what is rendered into
/// it. Every file job (`FileExport`, `FileStretch`, `FileAlign`, `CompositionRender`) holds
/// one and hands it to `OutputJob`, which runs the write in one way for all of them.
public struct OutputSettings: Sendable, Equatable {
    /// The container; nil takes it from the output path's extension.
    public var type: AudioFileType?
    /// The PCM sample format; nil: the job's natural precision (its inputs', where the type allows).
    public var sampleFormat: SampleFormat?
    /// Codec and bitrate for compressed outputs.
    public var encoder = EncoderSettings()
    /// Replace an existing file (otherwise an existing destination is refused before any work).
    public var overwrite = false
    /// Also fsync the file and its directory, so the output survives a power cut (slower).
    public var durable = false
    public var metadata = AudioMetadata()
    /// MP4/MOV only: copy this file's video stream beside the audio (no re-encode); the
    /// audio's frame 0 lands where that file's audio starts.
    public var videoFrom: String?
    /// Bring the output to this loudness (a measuring pass, then the write with one gain);
    /// nil writes the render as it is.
    public var loudness: LoudnessTarget?
    /// With `loudness`: also write an HTML page of how the output reached it
    /// (`OutputLoudnessReportPage`), here: the output's loudness and true peak over time, and
    /// the limiter's gain reduction over time when it ran. Replaced only with `overwrite`;
    /// written after the output, and when it cannot be, neither stays.
    public var loudnessReport: String?
    /// The rate the output is written at, Hz (`--rate`; `export` and `stretch`): nil keeps
    /// the render's rate, except for an Opus output of a rate Opus does not take (it takes
    /// 8, 12, 16, 24 and 48 kHz), which is written at 48 kHz. A different rate goes through
    /// Mixdown's resampler at its best quality.
    public var sampleRate: Int?
    /// Block sizes the render cycles through, in frames (one size is the usual case).
    public var blockSizes: [Int]
    /// Cores a render may use (1 or 2).
    public var threads: Int
    /// AAC and Opus outputs: encoders at once, on chunks of the stream. Nil: one per core,
    /// or 1 (the serial encoder) when `threads` is 1.
    public var encoders: Int?

    /// The encoders a write uses.
    var encoderCount: Int { max(1, encoders ?? (threads == 1 ? 1 : AvailableCores.count)) }

    /// The block a file render asks for by default, in frames. Large, so that the hand-offs
    /// between the reading, rendering and writing threads and the writes themselves are
    /// few: the 1-hour varispeed job on WAV took 1.8-2.5 s at 16,384 and 1.6-1.9 s at
    /// 65,536 (half the system time); 131,072 was no faster (the blocks leave the cache).
    public static let defaultBlock = 65_536

    public init(blockSizes: [Int] = [defaultBlock], threads: Int = min(2, ProcessInfo.processInfo.activeProcessorCount)) {
        self.blockSizes = blockSizes
        self.threads = threads
    }

    /// `preset`'s type, sample format, bitrate and codec, each replaced by the one given here
    /// when it is not nil.
    public init(preset: ExportPreset?, type: AudioFileType? = nil, sampleFormat: SampleFormat? = nil,
                bitrate: Int? = nil, codec: AudioCodec? = nil, blockSizes: [Int] = [defaultBlock]) {
        self.init(blockSizes: blockSizes)
        self.type = type ?? preset?.type
        self.sampleFormat = sampleFormat ?? preset?.sampleFormat
        encoder = EncoderSettings(bitrate: bitrate ?? preset?.bitrate, codec: codec ?? preset?.codec)
    }

    /// The largest block a render asks for.
    var maximumBlock: Int { blockSizes.max() ?? 4096 }
}
