import Foundation

/// Puts a recording on a reference's clock (`mixdown stretch REC OUT --align REF`):
/// estimates the offset and drift (`DriftEstimator`), refuses an estimate below
/// `tuning.minimumConfidence` (nothing is written), then renders REC so that its time t lands on
/// output time offset + ratio · t: the start is padded with silence or trimmed, the rest
/// stretched, and the output ends at the reference's exact length, at the reference's
/// rate, with REC's channels. Then it measures the output against the reference and
/// reports the largest lag left.
///
/// Frames: output frame n is REF time n / R_ref, hence REC frame (n / R_ref − offset) ·
/// R_rec / ratio. The first output frame with REC time ≥ 0 starts REC at the nearest whole
/// input frame (an error under half an input frame); varispeed then keeps the exact
/// rational frame ratio ratio · R_ref / R_rec from there.
public struct FileAlign: Sendable {
    public var input: String
    public var reference: String
    public var output: String
    /// varispeed (default: |drift| is tiny), wsola or rubberband.
    public var algorithm: TimeScaleAlgorithm = .auto
    public var quality: ResamplerQuality = .best
    /// Which resampler runs the varispeed and rate changes.
    public var resampler: ResamplerEngine = .auto
    /// The estimate's search (`maxOffset` nil: ±60 s), drift range, spacing, and the
    /// confidence below which it is refused.
    public var tuning = SyncTuning()
    /// How the file is written (a nil sample format keeps the recording's precision).
    public var settings = OutputSettings()
    /// An estimate already made (`mixdown sync --stems`): applied as it is, not measured again.
    public var estimate: DriftEstimate?
    /// Measure the output against the reference afterwards (a second read of both).
    public var verify = true
    /// Write the recording with its polarity as recorded. Without it, a recording whose
    /// polarity the estimate found inverted against REF's is turned over (every sample
    /// negated, exactly), so that it sums with REF instead of cancelling it.
    public var keepPolarity = false

    /// The most (seconds) the check may find the output off REF: its fitted offset, drift
    /// or map anywhere (a true alignment leaves a few hundredths of a millisecond), and any
    /// one window's own lag (noisier: a window of noisy material scatters by tenths).
    public static let maximumModelLag = 0.000_25
    public static let maximumResidualLag = 0.001

    public init(input: String, reference: String, output: String) {
        self.input = input
        self.reference = reference
        self.output = output
    }

    public struct Report: Sendable, Codable, Equatable {
        public let input: String
        public let reference: String
        public let output: String
        public let algorithm: TimeScaleAlgorithm
        /// The estimate applied.
        public let offsetSeconds: Double
        public let ratio: Double
        public let ppm: Double
        public let confidence: Double
        /// Knots of the clock map the render followed (nil: one ratio, a steady clock).
        public var mapKnots: Int? = nil
        /// The output's samples were negated: the recording's polarity was inverted against
        /// the reference's and `keepPolarity` was off.
        public let polarityCorrected: Bool
        public let outputFrames: Int64
        public let sampleRate: Int
        public let channels: Int
        /// The output measured against the reference: its offset and drift (ideally 0) and
        /// the largest lag of any window, milliseconds.
        /// nil without `verify`.
        public let residualOffsetMilliseconds: Double?
        public let residualPPM: Double?
        public let residualMaxLagMilliseconds: Double?
        public let seconds: Double
        /// Temporary files of the destination that dead runs had left, removed by this one.
        public var removedStaleTemporaryFiles: [String] = []
        /// How the output was brought to `settings.loudness` (nil without one).
        public var loudness: OutputJob.LoudnessReport? = nil
    }

    /// REC on REF's clock along `map`, as a track's items: knots k and k+1 (REC frames
    /// n_k, REF frames J_k) give output frames J_k ..< J_{k+1} from input positions
    /// n_k + (j − J_k) · (n_{k+1} − n_k) / (J_{k+1} − J_k), exactly; the position is
    /// continuous across knots and each piece's resampler reads the input on both sides
    /// of its first position, so pieces join without a seam. Output frames outside
    /// 0 ..< `referenceFrames` are not rendered (the player pads them with silence).
    static func mapItems(_ map: ClockMap, path: String, recordingFrames: Int64, referenceFrames: Int64, quality: ResamplerQuality,
                         threads: Int, invert: Bool) throws(MixdownError) -> [TrackPlayer.Item] {
        guard map.knots.last!.recordingFrame <= recordingFrames else {
            throw .invalidParameter(name: "clock map", value: "\(map.knots.last!.recordingFrame) frames",
                                    reason: "runs past the end of '\(path)' (\(recordingFrames) frames)")
        }
        var items: [TrackPlayer.Item] = []
        for (a, b) in zip(map.knots, map.knots.dropFirst()) {
            let j0 = a.referenceTime.frames(atRate: map.referenceRate), j1 = b.referenceTime.frames(atRate: map.referenceRate)
            let from = max(j0, 0), to = min(j1, referenceFrames)
            guard from < to else { continue }
            let ratio = StretchRatio(j1 - j0, b.recordingFrame - a.recordingFrame)
            try ratio.validate(limit: StretchRatio.rateConversionLimit, parameter: "clock map piece \(a.recordingFrame)..<\(b.recordingFrame)")
            let skip = from - j0, offset = a.recordingFrame
            let origin = Resampler.inputStart(forOutput: skip, ratio: ratio, quality: quality, inputOffset: offset)
            let rate = map.referenceRate
            items.append(TrackPlayer.Item(frames: from..<to) { () throws(MixdownError) -> AudioNode in
                let source = ReadAhead(input: try FileSource(path: path, range: origin..<recordingFrames))
                let node = try Resampler(input: source, ratio: ratio, outputRate: rate, quality: quality, inputFrames: recordingFrames,
                                         outputFrames: to - j0, startingAt: skip, inputOffset: offset, threads: threads)
                return invert ? GainAutomation(input: node, envelope: .inverted) : node
            })
        }
        return items
    }

    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Report {
        // A bad output is refused before any input is read.
        var job = try OutputJob(path: output, settings: settings)
        try settings.checkLoudnessReport(output: output, inputs: [input, reference])
        let ref = try AudioFileInfo.read(path: reference)
        if let r = settings.sampleRate, r != ref.sampleRate {
            throw .invalidParameter(name: "--rate", value: "\(r)", reason: "an aligned output is at its reference's rate (\(ref.sampleRate) Hz)")
        }
        // The output is on REF's clock from REF's first frame: it keeps REF's start timecode.
        if settings.metadata.timeReference == nil, let reference = ref.timeReference {
            var withReference = settings
            withReference.metadata.timeReference = reference
            job = try OutputJob(path: output, settings: withReference)
        }
        let estimate: DriftEstimate
        if let given = self.estimate {
            estimate = given
        } else {
            var estimator = DriftEstimator(reference: reference, recording: input)
            estimator.tuning = tuning
            estimate = try estimator.run(progress: { progress?(0.3 * $0) }, cancellation: cancellation)
            try estimate.requireConfidence(tuning.minimumConfidence)
        }
        // Progress: the estimate 30 %, the write, the check 30 %; without an estimate to
        // make or a check to run, the write takes their share.
        let before = self.estimate == nil ? 0.3 : 0.0, after = verify ? 0.3 : 0.0
        let during = 1 - before - after

        let rec = try AudioFileInfo.read(path: input)
        let format = AudioFormat(sampleRate: ref.sampleRate, channelCount: rec.channelCount)
        let r = estimate.ratio, t0 = estimate.offsetSeconds
        let fRef = Double(ref.sampleRate), fRec = Double(rec.sampleRate)
        let chosen = algorithm.resolved(for: StretchRatio(exactly: r))
        guard chosen.isAvailable else {
            throw .invalidParameter(name: "--algorithm", value: chosen.rawValue, reason: "is not built into this Mixdown (the RubberBand trait is off)")
        }
        // The first output frame whose REC time is not negative, and where REC starts there.
        let first = max(0, Int64((t0 * fRef).rounded(.up)))
        let recStart = max(0, Int64(((Double(first) / fRef - t0) * fRec / r).rounded()))
        let frameRatio = r * fRef / fRec
        let available = Double(rec.frames - recStart) * frameRatio
        let last = min(ref.frames, first + Int64(available.rounded(.down)))
        var items: [TrackPlayer.Item] = []
        let invert = estimate.polarity < 0 && !keepPolarity
        // A map (a clock that wanders) or stretches (a recorder that paused) are followed by
        // the resampler alone.
        if estimate.map != nil || estimate.jumps != nil, chosen != .varispeed && chosen != .auto {
            let what = estimate.jumps.map { "across its \($0.count) jump(s)" } ?? "along its wandering clock (a map of \(estimate.map!.knots.count) knots)"
            throw .invalidParameter(name: "--algorithm", value: chosen.rawValue, reason: "cannot follow '\(input)' \(what); varispeed does")
        }
        if estimate.jumps != nil, let segments = estimate.segments {
            // A recording that paused: each stretch on REF's clock along its own map, silence
            // for what REC missed.
            for segment in segments {
                guard let map = segment.map else {
                    throw .invalidParameter(name: "estimate", value: String(format: "stretch %.3f-%.3f s", segment.start, segment.end),
                                            reason: "of a recording that jumped has no map to render it by")
                }
                let more = try Self.mapItems(map, path: input, recordingFrames: rec.frames, referenceFrames: ref.frames,
                                             quality: quality, threads: settings.threads, invert: invert)
                if let last = items.last, let next = more.first, next.frames.lowerBound < last.frames.upperBound {
                    throw .unsupportedInput(path: input,
                                            reason: String(format: "jumps back on '%@''s clock at %.3f s of it: its stretches would overlap", reference, segment.start))
                }
                items += more
            }
        } else if let map = estimate.map {
            // A clock that wanders: the resampler follows the map, one exact ratio per piece.
            items = try Self.mapItems(map, path: input, recordingFrames: rec.frames, referenceFrames: ref.frames,
                                      quality: quality, threads: settings.threads, invert: invert)
        } else if last > first && recStart < rec.frames {
            let count = last - first, path = input, quality = self.quality, threads = settings.threads, engine = resampler
            let range = recStart..<rec.frames
            // The recording on REF's clock, before any polarity correction.
            @Sendable func makeNode() throws(MixdownError) -> AudioNode {
                let source = ReadAhead(input: try FileSource(path: path, range: range))
                switch chosen {
                case .varispeed, .auto:
                    let ratio = StretchRatio(exactly: frameRatio)
                    return try engine.makeNode(input: source, ratio: ratio, outputRate: ref.sampleRate, quality: quality,
                                               outputFrames: count, threads: threads)
                case .wsola, .rubberband, .spectral, .splice:
                    let atRate: () throws(MixdownError) -> AudioNode = { () throws(MixdownError) in
                        let s = try FileSource(path: path, range: range)
                        return rec.sampleRate == ref.sampleRate ? s
                            : try engine.makeNode(input: s, ratio: StretchRatio(Int64(ref.sampleRate), Int64(rec.sampleRate)),
                                                  outputRate: ref.sampleRate, quality: quality, threads: threads)
                    }
                    let base = try atRate()
                    let ratio = StretchRatio(count, base.length!)
                    switch chosen {
                    case .wsola: return try WSOLAStretch(input: base, ratio: ratio, outputFrames: count)
                    case .splice: return try SpliceStretch.guarded(input: base, ratio: ratio, outputFrames: count)
                    case .spectral: return try SpectralStretch.guarded(input: base, ratio: ratio, outputFrames: count, threads: threads)
                    default: return try FileStretch.rubberBand(makeInput: atRate, ratio: ratio, outputFrames: count, quality: quality)
                    }
                }
            }
            items.append(TrackPlayer.Item(frames: first..<last) { () throws(MixdownError) -> AudioNode in
                let node = try makeNode()
                return invert ? GainAutomation(input: node, envelope: .inverted) : node
            })
        }
        let player = TrackPlayer(format: format, length: ref.frames, items: items, label: "'\(input)'")
        let encoding = try job.encoding(frames: ref.frames, channels: format.channelCount, natural: job.naturalSampleFormat(of: rec))
        let done = try job.write(player, frames: ref.frames, encoding: encoding, remake: { () throws(MixdownError) in
            TrackPlayer(format: format, length: ref.frames, items: items, label: "'\(input)'")
        }, inputName: input, progress: { progress?(before + during * $0) }, cancellation: cancellation)

        // The proof: the output against the reference.
        var check: DriftEstimate?
        // The seconds of the output the check's model is judged over, from `checkStart`.
        var checkStart = 0.0, checkSpan = Double(ref.frames) / fRef
        if verify {
            let checkProgress: (Double) -> Void = { progress?(1 - after + after * $0) }
            // An output the check could not run on is not the job's output either.
            do {
            if try DriftEstimator.clipGrid(sampleRate: ref.sampleRate, recording: input, seconds: rec.duration.approximateSeconds,
                                           spacing: tuning.windowSpacing) != nil {
                // A clip: the output is the reference's length and silent outside the clip,
                // where no window can match. The check places the stretch that holds the
                // clip in the reference, as the estimate placed the clip, and must find it
                // where it was written.
                // At least the shortest clip placed, widened evenly into the output's silence
                // (a 2 s clip stretched by a few ppm can round to a frame under 2 s).
                let least = Int64((DriftEstimator.shortestClip * fRef).rounded(.up)) + 2
                var span = first..<last
                if Int64(span.count) < least {
                    let lower = max(0, min(first - (least - Int64(span.count) + 1) / 2, ref.frames - least))
                    span = lower..<min(ref.frames, lower + least)
                }
                checkStart = Double(span.lowerBound) / fRef
                checkSpan = Double(span.count) / fRef
                check = try Self.checkExcerpt(of: output, frames: span, sampleRate: ref.sampleRate, against: reference,
                                              tuning: tuning, progress: checkProgress, cancellation: cancellation)
            } else {
                check = try DriftEstimator(reference: reference, recording: output).run(progress: checkProgress, cancellation: cancellation)
            }
            } catch {
                unlink(output)
                throw error
            }
        }
        let used = check.map { c in c.windows.filter { $0.status == "used" && $0.lag != nil } } ?? []
        let worstWindow = used.max { abs($0.lag!) < abs($1.lag!) }
        let worst = check.map { _ in worstWindow.map { abs($0.lag!) } ?? .nan }
        // A check that cannot measure fails: no window of the output matched REF, or its
        // fit is not a number (a reversed or silent recording with --min-confidence 0).
        if let c = check, worstWindow == nil || !c.offsetSeconds.isFinite || !c.ratio.isFinite {
            unlink(output)
            throw .notOneLine(reference: reference, recording: output,
                              reason: "the check of the aligned output could not measure it (\(used.count) of \(c.windows.count) analysis windows matched the reference): it cannot be shown aligned; nothing was written")
        }
        // A check that places the output less confidently than the estimate had to be
        // placed shows nothing: it fails too, rather than pass unexamined.
        if let c = check, c.confidence < tuning.minimumConfidence {
            unlink(output)
            throw .notOneLine(reference: reference, recording: output, reason: String(
                format: "the check of the aligned output placed it with confidence %.2f, below the %.2f asked of the estimate (%d of %d analysis windows matched the reference): it cannot be shown aligned; nothing was written",
                c.confidence, tuning.minimumConfidence, used.count, c.windows.count))
        }
        // What was written is measured: an output the check places confidently but finds
        // off REF somewhere (its fitted model by more than `maximumModelLag`, or one window by
        // more than `maximumResidualLag`) is not the job's output.
        if let c = check, c.confidence >= tuning.minimumConfidence {
            let end = checkSpan
            var model: (lag: Double, at: Double) = abs(c.offsetSeconds) >= abs(c.offsetSeconds + (c.ratio - 1) * end)
                ? (c.offsetSeconds, checkStart) : (c.offsetSeconds + (c.ratio - 1) * end, checkStart + end)
            if let m = c.map {
                for k in m.knots {
                    let t = Double(k.recordingFrame) / Double(m.recordingRate)
                    let lag = k.referenceTime.approximateSeconds - t
                    if abs(lag) > abs(model.lag) { model = (lag, t) }
                }
            }
            var failed: (lag: Double, at: Double, limit: Double)?
            if abs(model.lag) > Self.maximumModelLag {
                failed = (model.lag, model.at, Self.maximumModelLag)
            } else if let w = worstWindow, abs(w.lag!) > Self.maximumResidualLag {
                failed = (w.lag!, checkStart + w.recordingTime, Self.maximumResidualLag)
            }
            if let failed {
                unlink(output)
                throw .misaligned(output: output, reference: reference, worstMilliseconds: abs(failed.lag) * 1000,
                                  atSeconds: failed.at, limitMilliseconds: failed.limit * 1000)
            }
        }
        var report = Report(input: input, reference: reference, output: output, algorithm: chosen, offsetSeconds: t0, ratio: r,
                      ppm: estimate.ppm, confidence: estimate.confidence, polarityCorrected: invert, outputFrames: ref.frames, sampleRate: ref.sampleRate,
                      channels: format.channelCount, residualOffsetMilliseconds: check.map { $0.offsetSeconds * 1000 },
                      residualPPM: check?.ppm, residualMaxLagMilliseconds: worst.map { $0 * 1000 }, seconds: job.seconds)
        report.removedStaleTemporaryFiles = done.removedStaleTemporaryFiles
        report.mapKnots = estimate.map?.knots.count
        report.loudness = done.loudness
        return report
    }

    /// The check of a clip's output: frames `frames` of `output` (where the clip was
    /// written) copied to a temporary float WAV and placed in `reference` as a clip is
    /// (the whole reference searched); its offset and its windows' lags are given from the
    /// excerpt's start, so that 0 means "where it was written". The temporary file is
    /// removed whatever happens.
    static func checkExcerpt(of output: String, frames: Range<Int64>, sampleRate: Int, against reference: String,
                             tuning: SyncTuning, progress: @escaping (Double) -> Void,
                             cancellation: CancellationToken?) throws(MixdownError) -> DriftEstimate {
        let excerpt = (NSTemporaryDirectory() as NSString).appendingPathComponent(
            "mixdown-check-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).wav")
        defer { unlink(excerpt) }
        var cut = FileExport(input: output, output: excerpt)
        cut.start = MediaTime(frames: frames.lowerBound, sampleRate: sampleRate)
        cut.duration = MediaTime(frames: Int64(frames.count), sampleRate: sampleRate)
        cut.settings.sampleFormat = .f32
        _ = try cut.run(cancellation: cancellation)
        var estimator = DriftEstimator(reference: reference, recording: excerpt)
        estimator.tuning = tuning
        estimator.tuning.maxOffset = nil
        var check: DriftEstimate
        do { check = try estimator.run(progress: progress, cancellation: cancellation) } catch {
            if case .cancelled = error { throw error }
            // The excerpt is the check's own file: the refusal names the output.
            throw .notOneLine(reference: reference, recording: output,
                              reason: "the check of the aligned clip could not place the \(String(format: "%.3f", Double(frames.count) / Double(sampleRate))) s that hold it (\(error)): it cannot be shown aligned; nothing was written")
        }
        let shift = Double(frames.lowerBound) / Double(sampleRate)
        check.recording = output
        check.offsetSeconds -= shift
        check.windows = check.windows.map { w in
            DriftEstimate.Window(recordingTime: w.recordingTime, lag: w.lag.map { $0 - shift }, correlation: w.correlation,
                                 residual: w.residual, status: w.status)
        }
        // Its map, if it drew one, is on the excerpt's clock and over a few seconds: the
        // windows and the line judge a clip.
        check.map = nil
        return check
    }

}
