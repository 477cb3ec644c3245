import Foundation

/// The one sequence every file job runs: the output's type is resolved first (before any
/// input is opened, so a bad path fails at once), then the encoding for the exact frame
/// count, then an atomic `AudioFileWriter`, then `Renderer.render`, then the timing.
/// The file appears complete at `path`, or, on any error or cancellation, not at all.
public struct OutputJob: Sendable {
    public let path: String
    public let settings: OutputSettings
    /// The container written: `settings.type`, else the one the path's extension implies.
    public let type: AudioFileType
    private let stopwatch = Stopwatch()

    /// Resolves the output's type; starts the job's clock.
    public init(path: String, settings: OutputSettings) throws(MixdownError) {
        self.path = path
        self.settings = settings
        type = try AudioFileType.forOutput(path, explicit: settings.type)
    }

    private init(settings: OutputSettings, path: String, type: AudioFileType) {
        self.path = path
        self.settings = settings
        self.type = type
    }

    /// The encoding for `frames` frames of `channels` channels: `settings.sampleFormat`,
    /// else `natural` (the job's own precision; nil for types that take none).
    public func encoding(frames: Int64, channels: Int, natural: SampleFormat?) throws(MixdownError) -> OutputEncoding {
        try OutputEncoding.resolve(path: path, type: type, sampleFormat: settings.sampleFormat ?? natural,
                                   frames: frames, channels: channels, encoder: settings.encoder)
    }

    /// Wall time since the job began, in seconds (for reports).
    public var seconds: Double { stopwatch.seconds }

    /// The precision an input of `info` keeps in this job's type and codec.
    public func naturalSampleFormat(of info: AudioFileInfo) -> SampleFormat? {
        info.naturalSampleFormat(for: type, codec: settings.encoder.codec)
    }

    /// What a write did.
    public struct Outcome: Sendable {
        /// Wall time since the job began, in seconds (for reports).
        public let seconds: Double
        /// Temporary files of the destination that dead runs had left, removed by this one.
        public let removedStaleTemporaryFiles: [String]
        /// How a normalised job reached its loudness (nil when `settings.loudness` is nil).
        public var loudness: LoudnessReport? = nil
    }

    /// How a job with a `LoudnessTarget` reached it: what was measured, the gain applied,
    /// and the output as measured on what was written.
    public struct LoudnessReport: Sendable, Codable, Equatable {
        public let target: LoudnessTarget
        /// What the gain was computed from: "render" (a first pass over the job's render,
        /// nothing encoded or written) or "input" (the input file, for a varispeed of at
        /// most 0.1 %, whose loudness it keeps to 0.05 LU).
        public let measuredOn: String
        /// The render's (or input's) loudness before the gain.
        public let input: LoudnessMeasurement
        /// The gain applied to every frame, dB.
        public let gainDb: Double
        /// True when the gain that reaches the target would lift the true peak over the
        /// ceiling and was lowered to the ceiling instead: the output is quieter than the target.
        public let limitedByTruePeak: Bool
        /// True when the look-ahead true-peak limiter ran (`--limit`, and peaks to hold).
        public let limiter: Bool
        /// The output's loudness as written: measured on the samples handed to the encoder
        /// for lossless types (the file holds them to within its quantisation), on the
        /// decoded file for lossy ones.
        public let output: LoudnessMeasurement
        /// "rendered samples" or "decoded file".
        public let outputMeasuredOn: String
        /// Wall time of the measuring passes, seconds.
        public let measuringSeconds: Double
        /// Passes over the render before the write: 1, or more through the limiter.
        public let passes: Int
        /// Times the output was encoded: 2 when a lossy codec's loss was corrected.
        public let encodes: Int
    }

    /// Renders `node` to the file: exactly `frames` frames (a stream that ends short or
    /// runs past is an error), in `encoding`.
    ///
    /// With `settings.loudness`, `node` is rendered first into a loudness meter (nothing
    /// is encoded or written), or, when `measureInput` is given, the input is measured
    /// instead and `node` is not pulled for it; then `remake` makes the graph again (not
    /// needed with `measureInput`) and it is written with the gain that reaches the target.
    public func write(_ node: AudioNode, frames: Int64, encoding: OutputEncoding,
                      remake: (() throws(MixdownError) -> AudioNode)? = nil,
                      measureInput: ((CancellationToken?) throws(MixdownError) -> LoudnessMeasurement)? = nil,
                      progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Outcome {
        guard let target = settings.loudness else {
            return try render(node, frames: frames, encoding: encoding, meter: nil, progress: progress, cancellation: cancellation)
        }
        try target.validate()
        precondition(remake != nil || (measureInput != nil && !target.limit),
                     "a normalised write needs the graph made again, or the input measured")
        let lossless = encoding.sampleFormat != nil
        // The measuring pass's share of the progress: a render is about half of a PCM job,
        // a tenth of a lossy one (the encoder dominates).
        let share = measureInput != nil ? 0.05 : lossless ? 0.5 : 0.1
        let clock = Stopwatch()
        let measured: LoudnessMeasurement
        if let measureInput {
            measured = try measureInput(cancellation)
        } else {
            measured = try LoudnessPass.measure(node, expectedFrames: frames, threads: settings.threads,
                                                progress: progress.map { p in { p($0 * share) } }, cancellation: cancellation)
        }
        guard var gain = measured.gain(reaching: target.integrated) else {
            throw .silentAudio(what: measureInput != nil ? "the input" : "the render for '\(path)'",
                               target: "\(target.integrated) LUFS")
        }
        var limitedByPeak = false, limiter = false
        if measured.truePeak + gain > target.truePeak {
            if target.limit { limiter = true } else {
                gain = target.truePeak - measured.truePeak
                limitedByPeak = true
            }
        }
        // `node` serves the first pass that has not pulled it; every later one is made again.
        var unused: AudioNode? = measureInput != nil ? node : nil
        func graph() throws(MixdownError) -> AudioNode {
            if let n = unused { unused = nil; return n }
            guard let remake else { preconditionFailure("a second pass over the graph needs remake") }
            return try remake()
        }
        var passes = 1
        // Where the write's share of the progress starts: after the measuring pass, and the
        // limiter's passes when it runs.
        let start = limiter ? min(2 * share, 0.67) : share
        if limiter {
            // The limiter takes loudness from the peaks it holds, the more the louder it is
            // driven: measuring passes through it, each correcting the gain by the secant
            // of the last two (the first by the miss itself), until within 0.05 LU (at
            // most four passes; moderate limiting needs one).
            var last: (gain: Double, lufs: Double) = (gain - target.integrated + measured.integrated, measured.integrated)
            for pass in 0..<4 {
                let through = try LoudnessPass.measure(try Self.normalised(try graph(), gain: gain, ceiling: target.truePeak, limit: true),
                                                       expectedFrames: frames, threads: settings.threads,
                                                       progress: progress.map { p in { p(share + (start - share) * (Double(pass) + $0) / 4) } },
                                                       cancellation: cancellation)
                passes += 1
                guard through.integrated.isFinite else { break }
                let miss = target.integrated - through.integrated
                if abs(miss) <= 0.05 { break }
                let slope = gain != last.gain ? (through.integrated - last.lufs) / (gain - last.gain) : 1
                last = (gain, through.integrated)
                gain += miss / min(1, max(0.05, slope))
            }
        }
        let measuringSeconds = clock.seconds
        var output: LoudnessMeasurement
        var outcome: Outcome
        var attempt = 0
        while true {
            let final = try Self.normalised(try graph(), gain: gain, ceiling: target.truePeak, limit: limiter)
            let meter = lossless ? try LoudnessMeter(sampleRate: node.format.sampleRate, channelCount: node.format.channelCount,
                                                     maximumFrames: settings.maximumBlock) : nil
            var write = settings
            if attempt > 0 { write.overwrite = true }
            do {
                outcome = try OutputJob(settings: write, path: path, type: type).render(
                    final, frames: frames, encoding: encoding, meter: meter,
                    progress: progress.map { p in { p(start + $0 * (1 - start)) } }, cancellation: cancellation)
            } catch {
                // The first encode, already in place, is not the job's output: nothing stays.
                if attempt > 0 { unlink(path) }
                throw error
            }
            if let meter { output = meter.measurement } else {
                do { output = try FileLoudness(input: path).run().loudness } catch {
                    // An output that cannot be measured is not reported as done: nothing stays.
                    unlink(path)
                    throw error
                }
            }
            // A lossy codec drops what it cannot hear (the top octave first), which the meter
            // weighs: when the decoded file misses the target by more than 0.1 LU, it is
            // encoded once more with the gain corrected by the miss. Its peaks are not
            // corrected: a codec's overshoot does not scale with the gain (FFmpeg's AAC
            // encoder lifts full-band noise bursts by 2 to 5 dB whatever their level); the
            // report gives the decoded true peak.
            let miss = limitedByPeak ? 0 : target.integrated - output.integrated
            guard !lossless, attempt == 0, abs(miss) > 0.1 else { break }
            gain += miss
            attempt += 1
        }
        outcome = Outcome(seconds: stopwatch.seconds, removedStaleTemporaryFiles: outcome.removedStaleTemporaryFiles)
        outcome.loudness = LoudnessReport(target: target, measuredOn: measureInput != nil ? "input" : "render", input: measured,
                                          gainDb: gain, limitedByTruePeak: limitedByPeak, limiter: limiter, output: output,
                                          outputMeasuredOn: lossless ? "rendered samples" : "decoded file",
                                          measuringSeconds: measuringSeconds, passes: passes, encodes: attempt + 1)
        return outcome
    }

    /// `node` with one gain of `gain` dB on every frame, then (with `limit`) the true-peak
    /// limiter holding `ceiling` dBTP.
    static func normalised(_ node: AudioNode, gain: Double, ceiling: Double, limit: Bool) throws(MixdownError) -> AudioNode {
        let linear = pow(10, gain / 20)
        let gained = GainAutomation(input: node, envelope: GainEnvelope(segments: [.init(start: 0, end: .max, startGain: linear, step: 0)]))
        return limit ? try TruePeakLimiter(input: gained, ceiling: ceiling) : gained
    }

    private func render(_ node: AudioNode, frames: Int64, encoding: OutputEncoding, meter: LoudnessMeter?,
                        progress: ((Double) -> Void)?, cancellation: CancellationToken?) throws(MixdownError) -> Outcome {
        var encoding = encoding
        encoding.encoderThreads = settings.encoderCount
        let writer = try AudioFileWriter(destination: path, encoding: encoding, format: node.format,
                                         maximumFrames: settings.maximumBlock, overwrite: settings.overwrite,
                                         metadata: settings.metadata, durable: settings.durable, videoFrom: settings.videoFrom)
        try Renderer.render(node, to: writer, blockSizes: settings.blockSizes, expectedFrames: frames, meter: meter,
                            progress: progress, cancellation: cancellation)
        return Outcome(seconds: stopwatch.seconds, removedStaleTemporaryFiles: writer.removedStaleTemporaryFiles)
    }
}
