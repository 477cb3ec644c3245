import Foundation

/// Stretches a whole file to an exact length: the drift-correction job.
///
/// The output has exactly `round(N · R)` frames (N the input's frames, R the ratio,
/// half away from zero), or the exact target when one is given as frames, a duration or a
/// reference file; R is then target / N exactly. Whatever the algorithm, the tail is
/// flushed and the result trimmed or padded to that count.
public struct FileStretch: Sendable {
    /// What the output's length is set by.
    public enum Target: Sendable, Equatable {
        /// Output length / input length.
        case ratio(StretchRatio)
        /// An exact output frame count.
        case frames(Int64)
        /// An exact output duration (frames rounded half away from zero at the input rate).
        case duration(MediaTime)
        /// The exact duration of another file.
        case match(path: String)
    }

    public var input: String
    /// The input's audio stream (the container's index); nil: its first audio stream.
    public var stream: Int?
    public var output: String
    public var target: Target
    public var algorithm: TimeScaleAlgorithm = .auto
    public var quality: ResamplerQuality = .best
    public var resampler: ResamplerEngine = .auto
    /// How the file is written (a nil sample format keeps the input's precision).
    public var settings = OutputSettings()

    public init(input: String, output: String, target: Target) {
        self.input = input
        self.output = output
        self.target = target
    }

    public struct Report: Sendable, Codable, Equatable {
        public let input: String
        public let output: String
        public let algorithm: TimeScaleAlgorithm
        public let resampler: ResamplerEngine?
        /// Exact ratio "numerator/denominator", and its value.
        public let ratio: String
        public let ratioValue: Double
        public let inputFrames: Int64
        public let outputFrames: Int64
        public let sampleRate: Int
        public let channels: Int
        public let type: AudioFileType
        public let sampleFormat: SampleFormat?
        /// With `.match`: which stream of the reference gave the duration, and the duration.
        public let matched: String?
        public let seconds: Double
        /// Input duration / wall time.
        public let realtimeFactor: Double
        /// Temporary files of the destination that dead runs had left, removed by this one.
        public var removedStaleTemporaryFiles: [String] = []
        /// How the output was brought to `settings.loudness` (nil without one).
        public var loudness: OutputJob.LoudnessReport? = nil
        /// The input's rate when the output was resampled to `sampleRate` (`--rate`, or an
        /// Opus output of a rate Opus does not take); nil when it kept it.
        public var resampledFrom: Int? = nil
    }

    /// What the job will do, known before it starts.
    public struct Plan: Sendable, Equatable {
        public let ratio: StretchRatio
        public let outputFrames: Int64
        /// The algorithm that runs: `auto` resolved for `ratio`.
        public let algorithm: TimeScaleAlgorithm
        /// A rough estimate of the wall time, seconds (`TimeScaleAlgorithm.estimatedSeconds`).
        public let estimatedSeconds: Double
        /// Set when `auto` chose a pitch-keeping algorithm that will take long: what it chose,
        /// why, about how long, and the faster choice. Nil when the algorithm was chosen by name.
        public let notice: String?
    }

    /// The estimate above which `plan()` gives a notice, seconds.
    public static let slowNoticeSeconds = 10.0

    /// Opens the input (and a `.match` reference) and says what `run` will do.
    public func plan() throws(MixdownError) -> Plan {
        let info = try AudioFileInfo.read(path: input, stream: stream)
        let (ratio, frames) = try plan(for: info)
        let chosen = algorithm.resolved(for: ratio)
        let estimate = chosen.estimatedSeconds(outputFrames: frames, sampleRate: info.sampleRate,
                                               channels: info.channelCount, quality: quality)
        var notice: String?
        if algorithm == .auto, chosen != .varispeed, estimate >= Self.slowNoticeSeconds {
            let cents = 1200 * log2(ratio.doubleValue)
            let fast = TimeScaleAlgorithm.varispeed.estimatedSeconds(outputFrames: frames, sampleRate: info.sampleRate,
                                                                     channels: info.channelCount, quality: quality)
            let deviation = String(format: "%.3g", abs(ratio.doubleValue - 1) * 100)
            notice = "auto chose \(chosen.rawValue) to keep the pitch (the ratio \(String(format: "%.7g", ratio.doubleValue)) changes the length by \(deviation) %, "
                + "5 cents or more): \(Self.roughSeconds(estimate)) for \(info.duration.clockDescription) of \(info.channelCount) channel\(info.channelCount == 1 ? "" : "s"). "
                + "--algorithm varispeed takes \(Self.roughSeconds(fast)) and moves the pitch by \(String(format: "%+.1f", -cents)) cents; "
                + "--algorithm wsola is faster than \(chosen.rawValue) and keeps the pitch"
        }
        return Plan(ratio: ratio, outputFrames: frames, algorithm: chosen, estimatedSeconds: estimate, notice: notice)
    }

    static func roughSeconds(_ s: Double) -> String {
        s < 1 ? "under a second" : s < 120 ? "about \(Int(s.rounded())) s" : "about \(Int((s / 60).rounded())) min"
    }

    /// The ratio and output length this job will use, for an input of `info`.
    public func plan(for info: AudioFileInfo) throws(MixdownError) -> (ratio: StretchRatio, outputFrames: Int64) {
        let p = try planWithReference(for: info)
        return (p.ratio, p.outputFrames)
    }

    /// `plan(for:)`, and with `.match` which stream of the reference gave the duration (for
    /// the report), from one opening of the reference.
    private func planWithReference(for info: AudioFileInfo) throws(MixdownError) -> (ratio: StretchRatio, outputFrames: Int64, matched: String?) {
        let n = info.frames
        func exact(_ frames: Int64, _ what: String, _ value: String) throws(MixdownError) -> (StretchRatio, Int64) {
            guard frames > 0 else { throw .invalidParameter(name: what, value: value, reason: "gives an output of zero frames") }
            let r = StretchRatio(frames, n)
            // The value the user gave is named; the ratio it implies is what is out of range.
            guard r.isWithinStretchLimit else {
                throw .invalidParameter(name: what, value: value, reason: "gives \(frames) frames from \(n), a ratio (output / input) of \(String(format: "%.6g", r.doubleValue)); the ratio must lie between 0.25 and 4")
            }
            return (r, frames)
        }
        switch target {
        case .ratio(let r):
            try r.validate()
            let frames = r.outputFrames(forInput: n)
            guard frames > 0 else {
                throw .unsupportedInput(path: input, reason: "its \(n) frame(s) stretched by \(r.doubleValue) give an output of zero frames; nothing was written")
            }
            return (r, frames, nil)
        case .frames(let f):
            let (r, frames) = try exact(f, "--to-frames", "\(f)")
            return (r, frames, nil)
        case .duration(let d):
            guard try d.checked("--to-duration") > .zero else {
                throw .invalidParameter(name: "--to-duration", value: d.clockDescription, reason: "must be longer than 0")
            }
            let (r, frames) = try exact(d.frames(atRate: info.sampleRate), "--to-duration", d.clockDescription)
            return (r, frames, nil)
        case .match(let path):
            let (ref, source) = try MediaFileStreams.referenceDuration(path: path)
            let (r, frames) = try exact(ref.frames(atRate: info.sampleRate), "--match", "'\(path)' (\(ref.clockDescription))")
            return (r, frames, "'\(path)' \(source): \(ref.clockDescription) (\(ref.reduced) s)")
        }
    }

    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Report {
        var job = try OutputJob(path: output, settings: settings)
        var reads = [input]
        if case .match(let path) = target { reads.append(path) }
        try settings.checkLoudnessReport(output: output, inputs: reads)
        let graph = try makeGraph()
        let info = graph.info
        // The output's rate: the input's, unless asked otherwise or Opus cannot take it; at
        // another rate the stretch's exact length is converted once, half away from zero.
        let rate = info.sampleRate, outRate = try job.outputRate(forRenderAt: rate)
        let outFrames = OutputJob.frames(graph.outputFrames, from: rate, to: outRate)
        // Frame 0 stays where it was: the output starts at the input's start timecode.
        if settings.metadata.timeReference == nil, let reference = info.timeReference {
            var kept = settings
            kept.metadata.timeReference = OutputJob.frames(reference, from: rate, to: outRate)
            job = try OutputJob(path: output, settings: kept)
        }
        let encoding = try job.encoding(frames: outFrames, channels: info.channelCount, natural: job.naturalSampleFormat(of: info))
        // A varispeed of at most 0.1 % keeps the input's loudness (to 0.05 LU: the tests
        // measure 0.034 on noise that reaches 24 kHz, whose top the resampler's low-pass
        // trims): the input is measured, faster than a pass over the stretch.
        let keepsLoudness = (graph.algorithm == .varispeed || graph.algorithm == .auto) && abs(graph.ratio.doubleValue - 1) <= 0.001
        let input = self.input, stream = self.stream, threads = settings.threads
        let stretched = graph.outputFrames
        let done = try job.write(try OutputJob.converted(graph.node, from: rate, to: outRate, frames: stretched),
                                 frames: outFrames, encoding: encoding, remake: { () throws(MixdownError) in
            try OutputJob.converted(try makeGraph().node, from: rate, to: outRate, frames: stretched)
        }, measureInput: keepsLoudness ? { (token) throws(MixdownError) in
            var meter = FileLoudness(input: input, stream: stream)
            meter.threads = threads
            meter.finePeak = true
            return try meter.run(cancellation: token).loudness
        } : nil, inputName: input, progress: progress, cancellation: cancellation)
        let seconds = done.seconds
        let inSeconds = info.duration.approximateSeconds
        var report = Report(input: input, output: output, algorithm: graph.algorithm, resampler: graph.engine,
                            ratio: graph.ratio.description, ratioValue: graph.ratio.doubleValue, inputFrames: info.frames,
                            outputFrames: outFrames, sampleRate: outRate, channels: info.channelCount,
                            type: encoding.type, sampleFormat: encoding.sampleFormat, matched: graph.matched, seconds: seconds,
                            realtimeFactor: seconds > 0 ? inSeconds / seconds : 0)
        report.removedStaleTemporaryFiles = done.removedStaleTemporaryFiles
        report.loudness = done.loudness
        report.resampledFrom = rate == outRate ? nil : rate
        return report
    }

    /// The stretch's render graph, not yet prepared, and what it was made from.
    struct Graph {
        /// Produces output frames `startFrame + skip ..< outputFrames`, after its first
        /// `skip` frames (which the caller drops: the stretchers that cannot start inside
        /// the stream render from 0 and are skipped through).
        let node: AudioNode
        let skip: Int64
        let info: AudioFileInfo
        let ratio: StretchRatio
        let outputFrames: Int64
        let algorithm: TimeScaleAlgorithm
        let engine: ResamplerEngine?
        let matched: String?
    }

    /// The graph that renders output frames `startFrame..<outputFrames` (with `Graph.skip`).
    /// Mixdown's resampler starts exactly at `startFrame`, reading from the first input
    /// frame it needs; libsamplerate, WSOLA and Rubber Band render from frame 0.
    func makeGraph(startingAt startFrame: Int64 = 0) throws(MixdownError) -> Graph {
        let reader = try AudioFileProbe.open(path: input, stream: stream)
        let info = reader.info
        let (ratio, outFrames, matched) = try planWithReference(for: info)
        guard startFrame >= 0 && startFrame <= outFrames else {
            throw .invalidParameter(name: "start frame", value: "\(startFrame)", reason: "must lie in 0...\(outFrames)")
        }
        let chosen = algorithm.resolved(for: ratio)
        guard chosen.isAvailable else {
            throw .invalidParameter(name: "--algorithm", value: chosen.rawValue, reason: "is not built into this Mixdown (the RubberBand trait is off)")
        }
        let engine: ResamplerEngine?
        let node: AudioNode
        var skip = startFrame
        switch chosen {
        case .varispeed, .auto:
            engine = resampler.resolved
            if engine == .polyphase {
                // Decoding runs ahead on its own thread, overlapping with the stretch.
                let first = Resampler.inputStart(forOutput: startFrame, ratio: ratio, quality: quality)
                let source = ReadAhead(input: try FileSource(decoder: reader, range: first == 0 ? nil : first..<info.frames))
                node = try Resampler(input: source, ratio: ratio, quality: quality, inputFrames: info.frames,
                                     outputFrames: outFrames, startingAt: startFrame, threads: settings.threads)
                skip = 0
            } else {
                let source = ReadAhead(input: try FileSource(decoder: reader, range: nil))
                node = try resampler.makeNode(input: source, ratio: ratio, quality: quality, outputFrames: outFrames, threads: settings.threads)
            }
        case .wsola:
            engine = nil
            node = try WSOLAStretch(input: ReadAhead(input: try FileSource(decoder: reader, range: nil)), ratio: ratio, outputFrames: outFrames)
        case .splice:
            engine = nil
            node = try SpliceStretch.guarded(input: ReadAhead(input: try FileSource(decoder: reader, range: nil)), ratio: ratio, outputFrames: outFrames)
        case .spectral:
            engine = nil
            node = try SpectralStretch.guarded(input: ReadAhead(input: try FileSource(decoder: reader, range: nil)), ratio: ratio, outputFrames: outFrames,
                                       threads: settings.threads)
        case .rubberband:
            engine = nil
            let path = input, stream = self.stream
            node = try Self.rubberBand(makeInput: { () throws(MixdownError) in ReadAhead(input: try FileSource(path: path, stream: stream)) },
                                       ratio: ratio, outputFrames: outFrames, quality: quality)
        }
        return Graph(node: node, skip: skip, info: info, ratio: ratio, outputFrames: outFrames, algorithm: chosen,
                     engine: engine, matched: matched)
    }

    static func rubberBand(makeInput: @escaping () throws(MixdownError) -> AudioNode, ratio: StretchRatio,
                           outputFrames: Int64, quality: ResamplerQuality) throws(MixdownError) -> AudioNode {
        #if RubberBand
        return try RubberBandStretch(makeInput: makeInput, ratio: ratio, outputFrames: outputFrames,
                                     engine: quality == .best ? .finer : .faster)
        #else
        throw .invalidParameter(name: "--algorithm", value: "rubberband", reason: "is not built into this Mixdown (the RubberBand trait is off)")
        #endif
    }
}
