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

    /// The rate a render at `rate` is written at: `settings.sampleRate`, else `rate`, else
    /// (an Opus output of a rate Opus does not take) 48 kHz. Throws for a rate outside
    /// 8000...768000 Hz.
    public func outputRate(forRenderAt rate: Int) throws(MixdownError) -> Int {
        let opus = type == .opus || (type.isFFmpegContainer && (settings.encoder.codec ?? type.defaultCodec) == .opus)
        if let r = settings.sampleRate {
            guard r >= 8000 && r <= 768_000 else {
                throw .invalidParameter(name: "--rate", value: "\(r)", reason: "must be a sample rate from 8000 to 768000 Hz")
            }
            // Asked for: refused before anything is opened, not moved to a rate Opus takes.
            guard !opus || AudioCodec.opusRates.contains(r) else {
                throw .invalidParameter(name: "--rate", value: "\(r)", reason: "Opus ('\(path)') takes 8000, 12000, 16000, 24000 or 48000 Hz; leave --rate out to write 48000 Hz")
            }
            return r
        }
        return opus && !AudioCodec.opusRates.contains(rate) ? 48_000 : rate
    }

    /// `frames` frames (or a timecode in samples) at `rate`, counted at `outputRate`:
    /// round(frames x outputRate / rate), half away from zero; unchanged at the same rate.
    public static func frames(_ frames: Int64, from rate: Int, to outputRate: Int) -> Int64 {
        rate == outputRate ? frames : StretchRatio(Int64(outputRate), Int64(rate)).outputFrames(forInput: frames)
    }

    /// `node`, a render of `frames` frames at `rate`, at `outputRate`: unchanged when the
    /// rates are equal, else through Mixdown's resampler (best quality) to
    /// `Self.frames(frames, from: rate, to: outputRate)` frames.
    public static func converted(_ node: AudioNode, from rate: Int, to outputRate: Int, frames: Int64) throws(MixdownError) -> AudioNode {
        guard rate != outputRate else { return node }
        return try Resampler(input: node, ratio: StretchRatio(Int64(outputRate), Int64(rate)), outputRate: outputRate, quality: .best,
                             inputFrames: frames, outputFrames: Self.frames(frames, from: rate, to: outputRate))
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
        /// The ceiling the limiter held, dBTP: the target's, or lower when a lossy codec
        /// lifted the decoded peaks over it. Nil without the limiter.
        public let limiterCeiling: Double?
        /// The output's loudness as written: measured on the samples handed to the encoder
        /// for lossless types (the file holds them to within its quantisation), on the
        /// decoded file for lossy ones.
        public let output: LoudnessMeasurement
        /// "rendered samples" or "decoded file".
        public let outputMeasuredOn: String
        /// Wall time of the measuring passes, seconds.
        public let measuringSeconds: Double
        /// Passes over the render before the write: 1, or more through the limiter (a lossless
        /// output's first pass through the limiter is the write, and is not counted when it
        /// lands).
        public let passes: Int
        /// Times the output was encoded: up to 3 when a lossy codec's loss or overshoot was
        /// corrected.
        public let encodes: Int
        /// With `settings.loudnessReport`: the output's loudness over time, measured where
        /// `output` was.
        public var timeline: LoudnessTimeline? = nil
        /// With `settings.loudnessReport` and the limiter: its gain reduction over time, in
        /// the write that became the output.
        public var limiterTimeline: LimiterTimeline? = nil
    }

    /// Renders `node` to the file: exactly `frames` frames (a stream that ends short or
    /// runs past is an error), in `encoding`.
    ///
    /// With `settings.loudness`, `node` is rendered first into a loudness meter (nothing
    /// is encoded or written), or, when `measureInput` is given, the input is measured
    /// instead and `node` is not pulled for it; then `remake` makes the graph again (not
    /// needed with `measureInput`) and it is written with the gain that reaches the target.
    /// `inputName` names the measured input in messages (a silent input).
    public func write(_ node: AudioNode, frames: Int64, encoding: OutputEncoding,
                      remake: (() throws(MixdownError) -> AudioNode)? = nil,
                      measureInput: ((CancellationToken?) throws(MixdownError) -> LoudnessMeasurement)? = nil,
                      inputName: String? = nil,
                      progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Outcome {
        guard let target = settings.loudness else {
            return try render(node, frames: frames, encoding: encoding, meter: nil, progress: progress, cancellation: cancellation)
        }
        try target.validate()
        let outcome = try normalisedWrite(node, target: target, frames: frames, encoding: encoding, remake: remake, measureInput: measureInput,
                                          inputName: inputName, progress: progress, cancellation: cancellation)
        guard let page = settings.loudnessReport, let loudness = outcome.loudness else { return outcome }
        do {
            try OutputLoudnessReportPage(output: path, loudness: loudness).write(to: page, overwrite: settings.overwrite)
        } catch {
            // The page is one of the job's outputs: without it, the job did not complete.
            unlink(path)
            throw error
        }
        // The job's time includes the page's.
        return Outcome(seconds: stopwatch.seconds, removedStaleTemporaryFiles: outcome.removedStaleTemporaryFiles, loudness: loudness)
    }

    /// `write` with `target`: the measuring pass, the gain (and the limiter's passes), the
    /// write, and the check of what was written.
    private func normalisedWrite(_ node: AudioNode, target: LoudnessTarget, frames: Int64, encoding: OutputEncoding,
                                 remake: (() throws(MixdownError) -> AudioNode)?,
                                 measureInput: ((CancellationToken?) throws(MixdownError) -> LoudnessMeasurement)?,
                                 inputName: String?, progress: ((Double) -> Void)?,
                                 cancellation: CancellationToken?) throws(MixdownError) -> Outcome {
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
            measured = try LoudnessPass.measure(node, expectedFrames: frames, threads: settings.threads, finePeak: true,
                                                progress: progress.map { p in { p($0 * share) } }, cancellation: cancellation)
        }
        guard measured.gain(reaching: target.integrated) != nil else {
            // The input is named first: it is what the user must change (a silent, 1-sample or
            // 300 ms file), the output only says which job.
            throw .silentAudio(what: measureInput != nil ? "the input\(inputName.map { " '\($0)'" } ?? "")"
                                   : inputName.map { "'\($0)' (rendered for '\(path)')" } ?? "the render for '\(path)'",
                               target: "\(target.integrated) LUFS")
        }
        // `node` serves the first pass that has not pulled it; every later one is made again.
        var unused: AudioNode? = measureInput != nil ? node : nil
        func graph() throws(MixdownError) -> AudioNode {
            if let n = unused { unused = nil; return n }
            guard let remake else { preconditionFailure("a second pass over the graph needs remake") }
            return try remake()
        }
        // A refusal of a target the limiter cannot reach: its reason, given the target it
        // suggests (nil: none), and the suggestion.
        var unreachable: (reason: (Double?) -> String, suggestion: Double)? = nil
        /// One normalised write of `target` to `path` (the job's, or a trial's).
        func land(_ target: LoudnessTarget, at path: String, reporting: Bool) throws(MixdownError) -> Outcome {
            let shown = reporting ? progress : nil
            // The page's data over time: for the job's output, not for a suggestion's trial.
            let overTime = reporting && settings.loudnessReport != nil
            var gain = measured.gain(reaching: target.integrated)!
            // The ceiling is judged by the fine reading, held `fineAllowance` under it (so that
            // other meters agree); the input's peak, measured before a varispeed, is given 0.02 dB
            // for the resampling.
            let held = target.truePeak - TruePeakInterpolator.fineAllowance
            let inputPeak = (measured.truePeakFine ?? measured.truePeak) + (measureInput != nil ? 0.02 : 0)
            var limitedByPeak = false, limiter = false
            if inputPeak + gain > held {
                if target.limit { limiter = true } else {
                    gain = held - inputPeak
                    limitedByPeak = true
                }
            }
            var passes = 1
            // Where the write's share of the progress starts: after the measuring pass, and the
            // limiter's passes when it runs.
            let start = limiter ? min(2 * share, 0.67) : share
            // Passes through the limiter until the loudness lands (LimiterGainSearch), aiming at
            // `aim` under `ceiling`: pass k of a search takes the k-th half of what is left of
            // its share of the progress (a lossy output's later searches report none).
            // A lossless output's first pass through the limiter is the write itself, metered:
            // when it lands (the usual case) it is the output, and the search stops there, one
            // whole pass sooner; when it does not, the search goes on measuring and the output
            // is written again at the gain found.
            /// With a report, the limiter's trace of the last write (the one that stands).
            var trace: LimiterGainTrace? = nil
            /// The output written at `gain` (through the limiter at `ceiling` when it runs),
            /// metered as it goes to the encoder for a lossless type (nil: a lossy one, measured
            /// decoded).
            func writeOutput(gain: Double, ceiling: Double, overwrite: Bool,
                             progress: ((Double) -> Void)?) throws(MixdownError) -> (outcome: Outcome, meter: LoudnessMeter?) {
                let meter = lossless ? try LoudnessMeter(sampleRate: node.format.sampleRate, channelCount: node.format.channelCount,
                                                         maximumFrames: settings.maximumBlock, finePeak: true, timeline: overTime) : nil
                var write = settings
                if overwrite { write.overwrite = true }
                trace = overTime && limiter ? LimiterGainTrace(sampleRate: node.format.sampleRate) : nil
                let outcome = try OutputJob(settings: write, path: path, type: type).render(
                    try Self.normalised(try graph(), gain: gain, ceiling: ceiling, limit: limiter, trace: trace), frames: frames,
                    encoding: encoding, meter: meter, progress: progress, cancellation: cancellation)
                return (outcome, meter)
            }
            var written: (gain: Double, outcome: Outcome, measurement: LoudnessMeasurement, timeline: LoudnessTimeline?, seconds: Double)? = nil
            func writeFirst(_ g: Double, ceiling: Double, progress: ((Double) -> Void)?) throws(MixdownError) -> Double {
                let writing = Stopwatch()
                let (outcome, meter) = try writeOutput(gain: g, ceiling: ceiling, overwrite: false, progress: progress)
                let measurement = meter!.measurement   // writingFirst: lossless only
                written = (g, outcome, measurement, meter!.timeline(), writing.seconds)
                return measurement.integrated
            }
            func solve(aim: Double, ceiling: Double, reporting: Bool, writingFirst: Bool = false) throws(MixdownError) -> Double {
                var pass = 0
                // The deepest drive: the gain that brings the peaks to this ceiling, plus the
                // limiting allowed. A gain, whatever the target: a suggestion lands when asked.
                let deepest = ceiling - TruePeakInterpolator.fineAllowance - inputPeak + LimiterGainSearch.maximumLimiting
                let search = LimiterGainSearch(target: aim, start: gain, deepest: deepest)
                let found = try search.run { (g: Double) throws(MixdownError) -> Double in
                    let from = 1 - pow(0.5, Double(pass)), width = pow(0.5, Double(pass + 1))
                    pass += 1
                    let passProgress = reporting ? shown.map { p in { p(share + (start - share) * (from + width * $0)) } } : nil
                    if writingFirst && pass == 1 { return try writeFirst(g, ceiling: ceiling, progress: passProgress) }
                    return try LoudnessPass.measure(try Self.normalised(try graph(), gain: g, ceiling: ceiling, limit: true),
                                                    expectedFrames: frames, threads: settings.threads,
                                                    progress: passProgress, cancellation: cancellation).integrated
                }
                passes += found.passes
                guard found.reachable else {
                    let reason = { (suggestion: Double?) -> String in
                        String(format: "the true-peak limiter cannot bring this audio to %.1f LUFS under %.1f dBTP: at its deepest drive (%+.1f dB of gain, %.0f dB of limiting) it reached %.2f LUFS",
                               target.integrated, ceiling, found.gain, LimiterGainSearch.maximumLimiting, found.reached)
                        + (ceiling < target.truePeak ? String(format: " (the ceiling was lowered from %.1f dBTP for the codec's overshoot of the decoded peaks)", target.truePeak) : "")
                        + (suggestion.map { String(format: "; ask for %.1f LUFS or less (tried: it lands), or a higher --true-peak", $0) } ?? "")
                    }
                    unreachable = (reason, (found.reached * 10).rounded(.down) / 10)
                    throw .loudnessMissed(output: path, reason: reason(nil))
                }
                return found.gain
            }
            if limiter {
                do { gain = try solve(aim: target.integrated, ceiling: target.truePeak, reporting: true, writingFirst: lossless) } catch {
                    // The first pass's file is not the job's output: nothing stays.
                    if written != nil { unlink(path) }
                    throw error
                }
            }
            // The first pass landed: it is the output, metered as it was written (neither a
            // measuring pass nor its time).
            let landedWhileWriting = written.map { $0.gain == gain } ?? false
            if landedWhileWriting { passes -= 1 }
            let measuringSeconds = clock.seconds - (landedWhileWriting ? written!.seconds : 0)
            var output: LoudnessMeasurement
            var timeline: LoudnessTimeline? = nil
            var outcome: Outcome
            var attempt = 0
            // dB the limiter's ceiling is lowered under the target's, for a lossy codec's overshoot,
            // and the loudness its search aims at, moved by the codec's loss.
            var ceilingOffset = 0.0
            var aim = target.integrated
            if let first = written, landedWhileWriting {
                output = first.measurement
                timeline = first.timeline
                outcome = first.outcome
                // Its progress ran within the search's share: the job is done.
                shown?(1)
            } else {
                while true {
                    let meter: LoudnessMeter?
                    do {
                        (outcome, meter) = try writeOutput(gain: gain, ceiling: target.truePeak - ceilingOffset, overwrite: attempt > 0 || written != nil,
                                                           progress: shown.map { p in { p(start + $0 * (1 - start)) } })
                    } catch {
                        // The first encode (or the first pass's file), already in place, is not the
                        // job's output: nothing stays.
                        if attempt > 0 || written != nil { unlink(path) }
                        throw error
                    }
                    if let meter {
                        output = meter.measurement
                        timeline = meter.timeline()
                    } else {
                        do {
                            var decoded = FileLoudness(input: path)
                            decoded.finePeak = true
                            decoded.overTime = overTime
                            let report = try decoded.run()
                            output = report.loudness
                            timeline = report.timeline
                        } catch {
                            // An output that cannot be measured is not reported as done: nothing stays.
                            unlink(path)
                            throw error
                        }
                    }
                    // A lossy codec drops what it cannot hear (the top octave first), which the meter
                    // weighs, and lifts peaks (FFmpeg's AAC encoder lifts full-band noise bursts by 2
                    // to 5 dB, whatever their level): when the decoded file misses the target by more
                    // than 0.1 LU or reads over the ceiling, it is encoded again (at most twice): with
                    // the limiter, its ceiling lowered by the overshoot and the gain searched again;
                    // without it, the gain lowered by the overshoot, or corrected by the miss.
                    guard !lossless, attempt < 2 else { break }
                    let over = (output.truePeakFine ?? output.truePeak) - held
                    let miss = target.integrated - output.integrated
                    guard over > Self.peakTolerance || (!limitedByPeak && abs(miss) > 0.1) else { break }
                    if limiter {
                        // The limiter's ceiling lowered by the codec's overshoot (and a little more:
                        // the overshoot varies with what the codec is given), its aim moved by the
                        // codec's loss, and the gain searched again under them.
                        if over > Self.peakTolerance { ceilingOffset += over + 0.1 }
                        aim += miss
                        do { gain = try solve(aim: aim, ceiling: target.truePeak - ceilingOffset, reporting: false) } catch {
                            // The encode already in place is not the job's output: nothing stays.
                            unlink(path)
                            throw error
                        }
                    } else if over > Self.peakTolerance {
                        gain -= over + 0.1
                        limitedByPeak = true
                    } else {
                        gain += miss
                    }
                    attempt += 1
                }
            }
            // The check of what was written: under the ceiling by the fine reading, and on the
            // target (unless the ceiling, without the limiter, had to win).
            let peak = output.truePeakFine ?? output.truePeak
            let codec = lossless ? "" : String(format: " (the decoded file, after %d encodes)", attempt + 1)
            if peak > held + Self.peakTolerance {
                unlink(path)
                throw .loudnessMissed(output: path, reason: String(
                    format: "its true peak reads %.2f dBTP (8x), over the %.1f dBTP ceiling less the %.1f dB other meters may read higher",
                    peak, target.truePeak, TruePeakInterpolator.fineAllowance) + codec)
            }
            if !limitedByPeak && abs(target.integrated - output.integrated) > Self.loudnessTolerance {
                unlink(path)
                throw .loudnessMissed(output: path, reason: String(
                    format: "it measures %.2f LUFS, %.2f LU from the %.1f LUFS target (at most %.1f is accepted)",
                    output.integrated, output.integrated - target.integrated, target.integrated, Self.loudnessTolerance)
                    + (limiter ? String(format: " through the limiter at %+.1f dB of gain", gain) : "") + codec)
            }
            outcome = Outcome(seconds: stopwatch.seconds, removedStaleTemporaryFiles: outcome.removedStaleTemporaryFiles)
            outcome.loudness = LoudnessReport(target: target, measuredOn: measureInput != nil ? "input" : "render", input: measured,
                                              gainDb: gain, limitedByTruePeak: limitedByPeak, limiter: limiter,
                                              limiterCeiling: limiter ? target.truePeak - ceilingOffset : nil, output: output,
                                              outputMeasuredOn: lossless ? "rendered samples" : "decoded file",
                                              measuringSeconds: measuringSeconds, passes: passes, encodes: attempt + 1)
            outcome.loudness?.timeline = timeline
            outcome.loudness?.limiterTimeline = trace?.timeline()
            return outcome
        }

        do {
            return try land(target, at: path, reporting: true)
        } catch {
            guard let refusal = unreachable else { throw error }
            // A suggestion is a promise: it is tried first (the same passes, and for a lossy
            // type the same encodes, into a temporary file), and only one that lands is given.
            func refusalWithout(_ trialError: MixdownError) -> MixdownError {
                if case .cancelled = trialError { return trialError }
                return .loudnessMissed(output: path, reason: refusal.reason(nil))
            }
            var candidate = refusal.suggestion
            var triedTargets: [Double] = []
            let trialPath = (NSTemporaryDirectory() as NSString).appendingPathComponent(
                "mixdown-trial-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).\((path as NSString).pathExtension)")
            for _ in 0..<3 {
                if let cancellation, cancellation.isCancelled { throw .cancelled }
                triedTargets.append(candidate)
                unreachable = nil
                var trial = target
                trial.integrated = candidate
                let landed: Bool
                do {
                    _ = try land(trial, at: trialPath, reporting: false)
                    landed = true
                } catch {
                    // A trial that is not refused for its loudness (cancelled, no room for a
                    // temporary file) ends the trials: the refusal stands, with no suggestion.
                    guard case .loudnessMissed = error else { unlink(trialPath); throw refusalWithout(error) }
                    landed = false
                }
                unlink(trialPath)
                if landed {
                    let missed = triedTargets.dropLast().map { String(format: "%.1f", $0) }.joined(separator: " and ")
                    throw .loudnessMissed(output: path, reason: refusal.reason(candidate)
                        + (missed.isEmpty ? "" : " (\(missed), tried first, did not land\(lossless ? "" : " through the codec"))"))
                }
                candidate = min(candidate - 0.5, unreachable?.suggestion ?? candidate - 0.5)
            }
            throw .loudnessMissed(output: path, reason: refusal.reason(nil) + String(
                format: "; %@ LUFS, tried, did not land either: lower the target, or raise --true-peak",
                triedTargets.map { String(format: "%.1f", $0) }.joined(separator: ", ")))
        }
    }

    /// dB over the held ceiling the written output's fine peak may read (rounding, dither,
    /// the limiter's gain curve).
    static let peakTolerance = 0.01
    /// LU from the target the written output may measure.
    static let loudnessTolerance = 0.2

    /// `node` with one gain of `gain` dB on every frame, then (with `limit`) the true-peak
    /// limiter holding `ceiling` dBTP.
    static func normalised(_ node: AudioNode, gain: Double, ceiling: Double, limit: Bool,
                           trace: LimiterGainTrace? = nil) throws(MixdownError) -> AudioNode {
        let linear = pow(10, gain / 20)
        let gained = GainAutomation(input: node, envelope: GainEnvelope(segments: [.init(start: 0, end: .max, startGain: linear, step: 0)]))
        return limit ? try TruePeakLimiter(input: gained, ceiling: ceiling, trace: trace) : gained
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
