import Foundation

/// Exports part of one file, with optional fades: Apple's QA1730 job.
///
/// Frames are computed at the input's rate with the documented rule
/// (`FrameRounding.standard`, round half away from zero):
/// - the output covers input frames a..<b, a = round(start * R), b = round((start + duration) * R);
/// - a fade-in of T rises linearly from 0 at output frame 0 to 1 at frame N = round(T * R),
///   and holds 1 after it;
/// - a fade-out of T falls linearly from 1 at frame L - 1 - N to exactly 0 at the last
///   frame L - 1, with N = round(T * R).
public struct FileExport: Sendable {
    public var input: String
    /// The input's audio stream (the container's index); nil: its first audio stream.
    public var stream: Int?
    public var output: String
    /// Where the part starts in the input (default 0).
    public var start: MediaTime?
    /// How long the part is (default: to the end of the input).
    public var duration: MediaTime?
    public var fadeIn: MediaTime?
    public var fadeOut: MediaTime?
    /// How the file is written; a nil sample format keeps the input's precision (16, 24 or
    /// float) where the type allows.
    public var settings = OutputSettings(blockSizes: [4096])

    public init(input: String, output: String) {
        self.input = input
        self.output = output
    }

    /// What an export did.
    public struct Report: Sendable, Codable, Equatable {
        public let input: String
        public let output: String
        public let type: AudioFileType
        public let sampleFormat: SampleFormat?
        public let sampleRate: Int
        public let channels: Int
        /// The input frames exported, start inclusive, end exclusive.
        public let sourceStartFrame: Int64
        public let sourceEndFrame: Int64
        public let frames: Int64
        /// Exact duration of the output, "value/timescale".
        public let duration: MediaTime
        public let durationSeconds: Double
        public let seconds: Double
        public let realtimeFactor: Double
        /// Temporary files of the destination that dead runs had left, removed by this one.
        public var removedStaleTemporaryFiles: [String] = []
        /// How the output was brought to `settings.loudness` (nil without one).
        public var loudness: OutputJob.LoudnessReport? = nil
        /// The input's rate when the output was resampled to `sampleRate` (`--rate`, or an
        /// Opus output of a rate Opus does not take); nil when it kept it.
        public var resampledFrom: Int? = nil
    }

    /// Checks everything, then renders. Nothing is written unless every check passes; on
    /// any error or cancellation no file is left at `output` and no temporary file stays.
    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Report {
        var job = try OutputJob(path: output, settings: settings)
        try settings.checkLoudnessReport(output: output, inputs: [input])
        let reader = try AudioFileProbe.open(path: input, stream: stream)
        let info = reader.info
        let rate = info.sampleRate

        let startTime = try (start ?? .zero).checked("--start")
        _ = try duration?.checked("--duration")
        _ = try fadeIn?.checked("--fade-in")
        _ = try fadeOut?.checked("--fade-out")
        guard startTime >= .zero else {
            throw .invalidParameter(name: "--start", value: startTime.description, reason: "must be a time at or after 0")
        }
        let a = startTime.frames(atRate: rate)
        guard a < info.frames else {
            throw .rangeOutsideSource(path: input, requested: "start \(startTime.clockDescription)",
                                      available: "\(info.duration.clockDescription) long (\(info.frames) frames)")
        }
        var b = info.frames
        if let duration {
            guard duration.isNumeric, duration > .zero else {
                throw .invalidParameter(name: "--duration", value: duration.clockDescription, reason: "must be longer than 0")
            }
            b = MediaTimeRange(start: startTime, duration: duration).frames(atRate: rate).upperBound
            guard b <= info.frames else {
                throw .rangeOutsideSource(path: input,
                                          requested: "\(startTime.clockDescription) to \((startTime + duration).clockDescription)",
                                          available: "\(info.duration.clockDescription) long (\(info.frames) frames)")
            }
            guard b > a else {
                throw .invalidParameter(name: "--duration", value: duration.clockDescription, reason: "is shorter than one frame at \(rate) Hz")
            }
        }
        let length = b - a
        let outDuration = MediaTime(frames: length, sampleRate: rate)

        var automation = VolumeAutomation()
        var fadeInFrames: Int64 = 0
        if let fadeIn {
            guard fadeIn.isNumeric, fadeIn >= .zero else {
                throw .invalidParameter(name: "--fade-in", value: fadeIn.clockDescription, reason: "must not be negative")
            }
            fadeInFrames = fadeIn.frames(atRate: rate)
            guard fadeInFrames <= length else {
                throw .invalidParameter(name: "--fade-in", value: fadeIn.clockDescription,
                                        reason: "is longer than the output (\(outDuration.clockDescription))")
            }
            if fadeInFrames > 0 {
                try automation.setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(
                    start: .zero, duration: MediaTime(frames: fadeInFrames, sampleRate: rate)))
            }
        }
        if let fadeOut {
            guard fadeOut.isNumeric, fadeOut >= .zero else {
                throw .invalidParameter(name: "--fade-out", value: fadeOut.clockDescription, reason: "must not be negative")
            }
            let n = fadeOut.frames(atRate: rate)
            guard n < length else {
                throw .invalidParameter(name: "--fade-out", value: fadeOut.clockDescription,
                                        reason: "is not shorter than the output (\(outDuration.clockDescription)): it must end on the last frame")
            }
            guard fadeInFrames <= length - 1 - n else {
                throw .invalidParameter(name: "--fade-out", value: fadeOut.clockDescription,
                                        reason: "overlaps --fade-in: together they are longer than the output (\(outDuration.clockDescription))")
            }
            if n > 0 {
                try automation.setVolumeRamp(from: 1, to: 0, timeRange: MediaTimeRange(
                    start: MediaTime(frames: length - 1 - n, sampleRate: rate),
                    end: MediaTime(frames: length - 1, sampleRate: rate)))
            }
        }
        let envelope = try automation.envelope(sampleRate: rate)

        // The output's rate: the input's, unless asked otherwise or Opus cannot take it.
        let outRate = try job.outputRate(forRenderAt: rate)
        let outFrames = OutputJob.frames(length, from: rate, to: outRate)
        // The part keeps its place on the recorder's clock: its start timecode is the
        // input's plus where the part starts (written where the type holds one: WAV, RF64, W64).
        if settings.metadata.timeReference == nil, let reference = info.timeReference {
            var kept = settings
            kept.metadata.timeReference = OutputJob.frames(reference + a, from: rate, to: outRate)
            job = try OutputJob(path: output, settings: kept)
        }
        let encoding = try job.encoding(frames: outFrames, channels: info.channelCount, natural: job.naturalSampleFormat(of: info))
        let input = self.input, stream = self.stream
        let graph = try OutputJob.converted(GainAutomation(input: ReadAhead(input: try FileSource(decoder: reader, range: a..<b)), envelope: envelope),
                                            from: rate, to: outRate, frames: length)
        let done = try job.write(graph, frames: outFrames, encoding: encoding, remake: { () throws(MixdownError) in
            try OutputJob.converted(GainAutomation(input: ReadAhead(input: try FileSource(path: input, range: a..<b, stream: stream)), envelope: envelope),
                                    from: rate, to: outRate, frames: length)
        }, inputName: input, progress: progress, cancellation: cancellation)
        let seconds = done.seconds
        let written = rate == outRate ? outDuration : MediaTime(frames: outFrames, sampleRate: outRate)
        var report = Report(input: input, output: output, type: encoding.type, sampleFormat: encoding.sampleFormat,
                      sampleRate: outRate, channels: info.channelCount, sourceStartFrame: a, sourceEndFrame: b,
                      frames: outFrames, duration: written, durationSeconds: written.approximateSeconds,
                      seconds: seconds, realtimeFactor: seconds > 0 ? written.approximateSeconds / seconds : 0)
        report.resampledFrom = rate == outRate ? nil : rate
        report.removedStaleTemporaryFiles = done.removedStaleTemporaryFiles
        report.loudness = done.loudness
        return report
    }
}
