import Foundation
import MixdownKernels
import Synchronization

/// How a recording maps onto a reference recording of the same event: REC's time t (its
/// own clock, seconds) is REF's time `offsetSeconds + ratio · t`. Measured, with the
/// evidence: the lag found in each analysis window and how far it lies from the fit.
public struct DriftEstimate: Sendable, Codable, Equatable {
    public struct Window: Sendable, Codable, Equatable {
        /// Centre of the window on REC's clock, seconds.
        public let recordingTime: Double
        /// REF time minus REC time at the centre, seconds (nil when nothing was found).
        public let lag: Double?
        /// Peak normalised cross-correlation, 0 to 1.
        public let correlation: Double
        /// Lag minus the fit, seconds (nil for windows not used).
        public let residual: Double?
        /// used, silent (no signal in REC), weak (no clear match in REF), ambiguous (another
        /// place within the fine search matches about as well: a drone, a hum), outlier (off
        /// the line), outside (the line puts it outside REF: nothing to match).
        public let status: String

        /// Lags and residuals to 1 µs (a twentieth of a frame at 48 kHz; a window's lag is
        /// good to tens of µs at best) and correlations to 3 decimals: a long event has
        /// thousands of windows per recording, and the digits past these are noise, not data.
        public func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            func rounded(_ v: Double, _ scale: Double) -> Double { v.isFinite ? (v * scale).rounded() / scale + 0 : v }
            try c.encode(recordingTime, forKey: .recordingTime)
            try c.encodeIfPresent(lag.map { rounded($0, 1e6) }, forKey: .lag)
            try c.encode(rounded(correlation, 1e3), forKey: .correlation)
            try c.encodeIfPresent(residual.map { rounded($0, 1e6) }, forKey: .residual)
            try c.encode(status, forKey: .status)
        }
    }

    /// A stretch of REC with one offset and ratio (`--piecewise`).
    public struct Segment: Sendable, Codable, Equatable {
        /// Where it starts and ends on REC's clock, seconds.
        public let start: Double
        public let end: Double
        public let offsetSeconds: Double
        public let ratio: Double
        public let ppm: Double
        /// With jumps: the stretch's own clock map, when its clock wanders (else its line).
        public var map: ClockMap? = nil

        /// REF's time (seconds) at REC's time `t` (seconds) by the stretch's map where it
        /// has one, else its line.
        func referenceSeconds(atRecordingSeconds t: Double) -> Double {
            map?.referenceSeconds(atRecordingSeconds: t) ?? offsetSeconds + ratio * t
        }
    }

    /// Where REC jumped on REF's clock (a recorder that paused, or restarted).
    public struct Jump: Sendable, Codable, Equatable {
        /// REC's time of the jump, seconds: the last sample before it is REC's last
        /// before the pause.
        public let recordingTime: Double
        /// How far REF's time jumps there, seconds (positive: REC missed this much of the event).
        public let seconds: Double
        /// How wide the stretch of REC is where the jump may lie, seconds: one analysis
        /// sample (0.125 ms) where REC sounds on both sides; where it is silent on one side
        /// (a pause that began in a word's tail) the silence's width, the audio there being
        /// unable to say where REC stopped. `recordingTime` is its middle.
        public var uncertaintySeconds: Double = 0
    }

    public internal(set) var reference: String
    public internal(set) var recording: String
    /// REF time at which REC's time 0 lands, seconds.
    public internal(set) var offsetSeconds: Double
    /// REC's duration × ratio = its duration on REF's clock.
    public internal(set) var ratio: Double
    /// (ratio − 1) × 1e6.
    public internal(set) var ppm: Double
    /// 0 to 1: the share of windows with signal that agree with the fit, weighted by how
    /// clearly they matched.
    public internal(set) var confidence: Double
    public internal(set) var windowsUsed: Int
    public internal(set) var windowsRejected: Int
    public internal(set) var residualRMSMilliseconds: Double
    public internal(set) var residualMaxMilliseconds: Double
    /// Present with `piecewise`: one entry per stretch of constant drift.
    public internal(set) var segments: [Segment]?
    /// Present when REC's clock wanders: the map from REC's frames to REF's time that the
    /// windows follow (`offsetSeconds` and `ratio` are then the best single line through
    /// it, and the residuals are against the map). nil for a steady clock.
    public internal(set) var map: ClockMap?
    /// With a map: the most (ms) the best single line departs from it at any window used,
    /// which a render at one ratio would be off.
    public internal(set) var lineDepartureMilliseconds: Double?
    /// How far (ms) the windows' matches move when their spectra are tilted up by 6 dB an
    /// octave (the median over the windows used): a material whose bands disagree on the
    /// timing (low drones through a minimum-phase filter on one side) cannot be placed more
    /// closely than this, and the confidence says so. nil when not measured.
    public internal(set) var bandDisagreementMilliseconds: Double? = nil
    /// Present when REC jumped (it paused, or restarted): every jump, and `segments` then
    /// holds the stretches between them, each with its own offset, ratio and map.
    /// `offsetSeconds` and `ratio` are the first stretch's.
    public internal(set) var jumps: [Jump]? = nil
    public internal(set) var windows: [Window]
    /// The offsets searched: ±this many seconds (`--max-offset`, else 60 s for a pair, the
    /// whole reference for a clip). nil where the estimate was not made by a search.
    public internal(set) var searchedOffsetSeconds: Double? = nil
    /// Set when the estimate was made above this frequency (Hz): the full band's was in
    /// doubt (its bands disagreed on the timing, or it was not confident), and the files
    /// matched better through a high-pass.
    public internal(set) var highPassHz: Double? = nil
    public let seconds: Double
    /// Which coarse strategy placed the windows: "envelope" (100 Hz energy envelopes) or
    /// "signal" (GCC-PHAT of excerpts, for material whose envelope is flat).
    public let coarse: String
    /// 1, or −1 when REC's polarity is inverted against REF's (a microphone wired the other
    /// way, an inverting preamp or filter): its matches are negative correlations.
    public internal(set) var polarity: Int
    /// Set when another offset (this one, seconds) fits about as well: the material repeats
    /// (a repeated bar, a steady tone) and the estimate is refused.
    public internal(set) var rivalOffsetSeconds: Double?

    /// Throws `ambiguousAlignment` when a rival offset fits about as well, `lowConfidence`
    /// when too few windows agree.
    public func requireConfidence(_ minimum: Double) throws(MixdownError) {
        guard minimum >= 0 && minimum <= 1 else {
            throw .invalidParameter(name: "minimum confidence", value: "\(minimum)", reason: "must lie between 0 and 1")
        }
        guard confidence >= minimum else {
            let silent = windows.filter { $0.status == "silent" }.count
            let ambiguous = windows.filter { $0.status == "ambiguous" }.count
            let reason: String
            if silent == windows.count {
                reason = "'\(recording)' is silent: there is nothing to match"
            } else if silent * 2 > windows.count && windowsUsed < 3 {
                reason = "\(silent) of \(windows.count) windows of '\(recording)' are silent and the rest were not found in '\(reference)'"
            } else if 2 * ambiguous > windows.count - silent {
                reason = "the material repeats (a drone, a hum, a repeated bar): \(ambiguous) of \(windows.count - silent) windows match several places about as well"
            } else if windowsUsed < 3 {
                if let searched = searchedOffsetSeconds {
                    // The search is bounded: what lies further away was not looked at.
                    let span = searched.rounded() == searched ? "\(Int(searched)) s" : String(format: "%.3f s", searched)
                    reason = "no stretch of '\(recording)' was found in '\(reference)' with the two starts at most \(span) apart (--max-offset): if they start further apart, give a larger --max-offset; else they are not recordings of the same event"
                } else {
                    reason = "no stretch of '\(recording)' was found in '\(reference)'; are they recordings of the same event?"
                }
            } else {
                reason = "only \(windowsUsed) of \(windowsUsed + windowsRejected) windows agree on one offset and drift"
            }
            throw .lowConfidence(reference: reference, recording: recording, confidence: confidence, minimum: minimum, reason: reason)
        }
        if let rival = rivalOffsetSeconds {
            throw .ambiguousAlignment(reference: reference, recording: recording, offsets: [offsetSeconds, rival],
                                      reason: "the material repeats (a repeated bar, a steady tone), so no offset can be trusted")
        }
    }

    /// REF's time (seconds) at REC's time `t` (seconds) by the estimate's map where it has
    /// one, else its line.
    func referenceSeconds(atRecordingSeconds t: Double) -> Double {
        map?.referenceSeconds(atRecordingSeconds: t) ?? offsetSeconds + ratio * t
    }

    /// REF − REC lag (seconds) of the estimate's model at REC's time `t` (seconds): its map
    /// where it has one, else its line.
    func modelLag(atRecordingSeconds t: Double) -> Double {
        map.map { $0.referenceSeconds(atRecordingSeconds: t) - t } ?? offsetSeconds + (ratio - 1) * t
    }

    /// Throws `notOneLine` when one offset and one ratio do not describe REC: its clock
    /// wanders so that the best line leaves the map by more than `maximumDeparture`
    /// (seconds), or it jumped. For callers that can take only a line (the C API's and
    /// Python's drift estimate): the line alone would be silently off.
    public func requireOneLine(maximumDeparture: Double = 0.000_25) throws(MixdownError) {
        if let jumps, let first = jumps.first {
            throw .notOneLine(reference: reference, recording: recording,
                              reason: String(format: "REC jumped by %+.6f s at %.3f s of it (%d jump(s)): no single offset places it; align it with `mixdown stretch --align` or render the document of `mixdown sync --doc`",
                                             first.seconds, first.recordingTime, jumps.count))
        }
        if map != nil, let departure = lineDepartureMilliseconds, departure > maximumDeparture * 1000 {
            throw .notOneLine(reference: reference, recording: recording,
                              reason: String(format: "REC's clock wanders: the best single offset and ratio are %.3f ms off it somewhere (a map of %d knots follows it); align it with `mixdown stretch --align` or render the document of `mixdown sync --doc`",
                                             departure, map!.knots.count))
        }
    }

    /// One line a person reads.
    public var summary: String {
        let sign = offsetSeconds >= 0 ? "+" : "-"
        let at = MediaTime(value: Int64((abs(offsetSeconds) * 1e6).rounded()), timescale: 1_000_000).clockDescription
        // ratio > 1: a second of REC lasts longer than a second of REF, so REC's clock is slow.
        let speed = ppm >= 0 ? "slow" : "fast"
        var s = String(format: "REC's time 0 is REF's %@%@; REC's clock runs %.3f ppm %@ (stretch it by %.9f); %d of %d windows agree (confidence %.2f), residual %.3f ms rms, %.3f ms max",
                       sign, at, abs(ppm), speed, ratio, windowsUsed, windowsUsed + windowsRejected, confidence,
                       residualRMSMilliseconds, residualMaxMilliseconds)
        if polarity < 0 { s += "; REC's polarity is inverted" }
        if let highPassHz { s += String(format: "; matched above %.0f Hz (below it the full band's match was in doubt: a filter on one side turns the low band's phase)", highPassHz) }
        if let band = bandDisagreementMilliseconds, band > 0.25 {
            s += String(format: "; its bands disagree on the timing by %.3f ms (a filter on one side moves the low ones): no closer than that", band)
        }
        if let map, let departure = lineDepartureMilliseconds {
            s += String(format: "; REC's clock wanders: it follows a map of %d knots (one ratio would leave it %.3f ms off)", map.knots.count, departure)
        }
        if let jumps {
            s += "; REC jumped: " + jumps.map { j in
                String(format: "at %.3f s by %+.6f s", j.recordingTime, j.seconds)
                    + (j.uncertaintySeconds > 0.001 ? String(format: " (somewhere within ±%.1f ms: REC is silent there)", j.uncertaintySeconds * 500) : "")
            }.joined(separator: ", ")
            s += " (" + (segments ?? []).map { String(format: "%.1f-%.1f s: REF's %+.6f s, %+.3f ppm", $0.start, $0.end, $0.offsetSeconds, $0.ppm) }.joined(separator: "; ") + ")"
        } else if let segments, segments.count > 1 {
            s += "; the drift changes: " + segments.map { String(format: "%.1f-%.1f s: %+.3f ppm", $0.start, $0.end, $0.ppm) }.joined(separator: ", ")
        }
        return s
    }
}

/// Estimates the offset and drift of a recording against a reference (`mixdown sync`).
///
/// Both files are mixed to mono, brought to the reference's rate (the recording through
/// the resampler if its rate differs) and averaged down to about 8 kHz. A first
/// pass (both files at once, one per core) keeps a 100 Hz energy envelope of each and the
/// recording's one-second analysis windows, every `tuning.windowSpacing` seconds. Two coarse
/// strategies then predict each window's lag: the envelopes (the search widening with
/// `tuning.maxDriftPPM` until enough windows agree), and the signal itself (GCC-PHAT of a few
/// excerpts, `SignalAligner`), for material whose envelope is flat. A second pass over the
/// reference refines every prediction by normalised cross-correlation at the analysis
/// rate, with parabolic interpolation of the peak, and a robust line (Theil–Sen, then
/// least squares on the windows within 4 median deviations and 2 ms) through each
/// strategy's lags gives an offset and a ratio; the strategy whose fit has the higher
/// confidence wins (the envelope's on a tie). Where that estimate is refused, has a rival,
/// or is below 0.8 confidence (a steady tone that matches every period), a second look
/// reads REF again with `LineClippedCorrelation` and chooses the line across windows
/// (`Fit.select`); the more confident estimate is kept. Silent windows and windows without
/// a clear match are rejected and reported. Memory: the envelopes and the windows (about 32 KB
/// per window), never the files.
public struct DriftEstimator: Sendable {
    public var reference: String
    public var recording: String
    /// The search (`maxOffset` nil: ±60 s), the drift range and the window spacing; its
    /// `minimumConfidence` is the caller's to apply (`DriftEstimate.requireConfidence`).
    public var tuning = SyncTuning()
    /// Find where the drift changes (a device that re-synced its clock).
    public var piecewise = false

    public init(reference: String, recording: String) {
        self.reference = reference
        self.recording = recording
    }

    /// The confidence the estimator's own choices (a second, denser look; the plain or the
    /// line-clipped fit) treat as trusted. Fixed, not the caller's `minimumConfidence`: a
    /// threshold decides acceptance only, and `--min-confidence 0` must not change the
    /// estimate it accepts (it once skipped the second look: 6 windows at 0.01 instead of
    /// 15 at 0.36 on the same pair).
    static let trustedConfidence = 0.5

    /// A plain-correlation estimate at least this confident is kept without a second look.
    static let clearConfidence = 0.8

    /// The grid of a short clip (`seconds` long, holding fewer than three windows at `spacing`):
    /// `clipWindows` one-second windows across it, the first at its first sample; nil for a
    /// longer recording. Throws for a clip shorter than `shortestClip`, naming it.
    static func clipGrid(sampleRate: Int, recording: String, seconds: Double, spacing: Double) throws(MixdownError) -> AnalysisGrid? {
        // A clip is what the spacing's grid places fewer than three whole windows in (3 s at
        // a 1 s spacing holds two: centres at 0.5 and 1.5 s, the next window would end at 3.0).
        guard AnalysisGrid(sampleRate: sampleRate, spacing: spacing).centres(duration: seconds).count < 3 else { return nil }
        guard seconds >= shortestClip else {
            throw .invalidParameter(name: "recording", value: "'\(recording)'",
                                    reason: String(format: "is %.3f s long: a clip of at least %.0f s is needed to place it", seconds, shortestClip))
        }
        return AnalysisGrid(sampleRate: sampleRate, spacing: (seconds - AnalysisGrid.windowSeconds) / Double(clipWindows - 1) - 1e-9,
                            firstCentre: AnalysisGrid.windowSeconds / 2)
    }

    /// The shortest recording placed (seconds), and the windows a short clip is read in.
    static let shortestClip = 2.0
    static let clipWindows = 8

    /// A window whose best normalised correlation is below this is "weak".
    static let minimumCorrelation = 0.2

    func validate() throws(MixdownError) { try tuning.validate() }

    /// The corner (Hz) of the high-pass a doubtful estimate is made again through.
    static let highBandHz = 300.0

    /// Estimates REC against REF. When the estimate is in doubt (confidence under
    /// `clearConfidence`, REC found inverted, or its bands disagree on the timing by more
    /// than 0.1 ms: a drone
    /// or hum seen through a minimum-phase filter on one side, whose phase turns by 80-130°
    /// and sends the low band's match milliseconds away, or onto the drone's aliases), both
    /// files are analysed again above `highBandHz`, where the filter leaves the phase
    /// alone, and the better estimate is kept: the more confident; as confident, the one
    /// whose bands agree; the high band's when it finds the other polarity.
    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> DriftEstimate {
        let full = try run(highPass: nil, progress: progress, cancellation: cancellation)
        guard Self.inDoubt(full) else { return full }
        return Self.better(full: full, high: try run(highPass: Self.highBandHz, progress: nil, cancellation: cancellation))
    }

    /// Whether `e` is made again through the high band: not clearly confident, REC found
    /// inverted, or its bands disagreeing by more than 0.1 ms.
    static func inDoubt(_ e: DriftEstimate) -> Bool {
        e.confidence < clearConfidence || (e.bandDisagreementMilliseconds ?? 0) > 0.1 || e.polarity < 0
    }

    /// The estimate kept of the full band's and the high band's: the more confident; as
    /// confident, the one whose bands agree; the high band's when it finds the other
    /// polarity (the full band's was the low band's phase, turned by a filter, not a
    /// microphone wired the other way).
    static func better(full: DriftEstimate, high found: DriftEstimate) -> DriftEstimate {
        var high = found
        high.highPassHz = highBandHz
        let disagreement = full.bandDisagreementMilliseconds ?? 0, highDisagreement = high.bandDisagreementMilliseconds ?? 0
        let turned = high.polarity != full.polarity && high.confidence >= trustedConfidence && high.rivalOffsetSeconds == nil
        if turned || high.confidence > full.confidence + 0.02
            || (high.confidence >= full.confidence - 0.05 && highDisagreement + 0.05 < disagreement && high.rivalOffsetSeconds == nil) {
            return high
        }
        return full
    }

    private func run(highPass: Double?, progress: ((Double) -> Void)?, cancellation: CancellationToken?) throws(MixdownError) -> DriftEstimate {
        let stopwatch = Stopwatch()
        let refInfo = try AudioFileInfo.read(path: reference)
        let recInfo = try AudioFileInfo.read(path: recording)
        try validate()
        var grid = AnalysisGrid(sampleRate: refInfo.sampleRate, spacing: tuning.windowSpacing)
        grid.highPassHz = highPass
        // A short clip (fewer than three windows at the spacing): eight one-second windows
        // across it, and without a --max-offset the whole of REF searched.
        var job = self
        let recSeconds = recInfo.duration.approximateSeconds
        if let clip = try Self.clipGrid(sampleRate: refInfo.sampleRate, recording: recording, seconds: recSeconds, spacing: tuning.windowSpacing) {
            grid = clip
            grid.highPassHz = highPass
            if job.tuning.maxOffset == nil { job.tuning.maxOffset = refInfo.duration + MediaTime(seconds: 1) }
        }
        let files = try RecordingAnalysis.run(paths: [reference, recording], grid: grid, parallel: 2,
                                              cancellation: cancellation) { progress?(0.7 * $0) }
        let first = try job.estimate(files[0], files[1], grid: grid, cancellation: cancellation,
                                     progress: { progress?(0.7 + 0.3 * $0) }, started: stopwatch)
        if grid.firstCentre != nil { return first }
        // A mostly silent REC: too few windows held signal to agree on a line with
        // confidence. Look again
        // with a window every spacing / 5 s (at least 1 s); only REC is read again, and the
        // progress bar, already full, stays so.
        let silent = first.windows.filter { $0.status == "silent" }.count
        let finer = max(1, tuning.windowSpacing / 5)
        guard first.windowsUsed < 3 || first.confidence < Self.trustedConfidence, 2 * silent > first.windows.count,
              finer < tuning.windowSpacing else { return first }
        var denser = AnalysisGrid(sampleRate: refInfo.sampleRate, spacing: finer)
        denser.highPassHz = highPass
        let rec = try RecordingAnalysis(path: recording, grid: denser, cancellation: cancellation) { _ in }
        let second = try estimate(files[0], rec, grid: denser, cancellation: cancellation, progress: nil, started: stopwatch)
        return second.confidence > first.confidence ? second : first
    }

    /// The estimate of `rec` against `ref` from their first passes: the coarse strategies,
    /// the second pass over `ref`, the fits.
    func estimate(_ ref: RecordingAnalysis, _ rec: RecordingAnalysis, grid: AnalysisGrid, cancellation: CancellationToken?,
                  progress: ((Double) -> Void)?, started stopwatch: Stopwatch) throws(MixdownError) -> DriftEstimate {
        var found = try fittedEstimate(ref, rec, grid: grid, cancellation: cancellation, progress: progress, started: stopwatch)
        found.searchedOffsetSeconds = tuning.pairSearch.approximateSeconds
        return found
    }

    /// `estimate` before it records the search it was made in.
    private func fittedEstimate(_ ref: RecordingAnalysis, _ rec: RecordingAnalysis, grid: AnalysisGrid, cancellation: CancellationToken?,
                  progress: ((Double) -> Void)?, started stopwatch: Stopwatch) throws(MixdownError) -> DriftEstimate {
        let times = rec.times
        guard times.count >= 3 else {
            // The input's fault, not the command line's: a refusal (exit 1), naming the file.
            throw .unsupportedInput(path: rec.path, reason: "is too short to estimate a drift: at least \(Int(3 * grid.spacing)) s are needed")
        }
        let maxDrift = tuning.maxDriftPPM * 1e-6

        // Strategy 1: lags from the envelopes.
        let coarse = CoarseAligner(ref: ref.envelope, rec: rec.envelope, rate: grid.envelopeRate,
                                   maxOffset: tuning.pairSearch.approximateSeconds, maxDrift: maxDrift)
        /// Every window's envelope lag, tracking the line that starts at `start`.
        func envelopeLags(from start: Double) -> [(lag: Double, search: Double)?] {
            var lags: [(lag: Double, search: Double)?] = []
            var agreed: [(t: Double, lag: Double)] = []
            for c in times {
                // Until enough windows agree, search the whole drift range; then around the line.
                var centre = start
                var span = maxDrift * rec.duration + 0.25
                if agreed.count >= 8, let line = Fit.theilSen(agreed.suffix(48).map { ($0.t, $0.lag) }) {
                    centre = line.intercept + line.slope * c
                    span = 0.25
                }
                let found = coarse.lag(at: c, around: centre, span: span)
                lags.append(found.map { ($0.lag, FineAligner.defaultSearch) })
                if let f = found, f.correlation >= 0.3, abs(f.lag - centre) < span { agreed.append((c, f.lag)) }
            }
            return lags
        }
        let starts = coarse.globalOffsets()
        let byEnvelope = envelopeLags(from: starts.best)

        // Strategy 2: lags from the signal (GCC-PHAT of a few excerpts); and its rival, the
        // same line moved to the excerpts' second-best match, which the winner must beat.
        let signal = SignalAligner(reference: ref, recording: rec, grid: grid, maxOffset: tuning.pairSearch.approximateSeconds, maxDrift: maxDrift)
        let bySignal = signal.predictions(try signal.measure(cancellation: cancellation), times: times)
        var strategies = [byEnvelope, bySignal.best, bySignal.rival]
        var names = ["envelope", "signal", "signal"]
        // A second place where REC's envelope matches as well: a rival the winner must beat.
        if let other = starts.rival {
            strategies.append(envelopeLags(from: other))
            names.append("envelope")
        }

        var silent = [Bool](repeating: false, count: times.count)
        for k in times.indices where rec.isSilent(k) { silent[k] = true }
        let fitter = StrategyFitter(ref: ref, rec: rec, grid: grid, silent: silent, piecewise: piecewise, maxDrift: maxDrift,
                                    cancellation: cancellation, stopwatch: stopwatch)

        // Pass 2: refine every prediction against REF, streamed once, in order of where
        // each search starts. A prediction within 2 ms of an earlier strategy's shares its match.
        func shared(_ s: Int, _ k: Int) -> Int? {
            guard let p = strategies[s][k] else { return nil }
            return (0..<s).first { e in strategies[e][k].map { abs($0.lag - p.lag) < 0.002 && p.search <= $0.search } ?? false }
        }
        var requests: [StrategyFitter.Request] = []
        for k in times.indices where !silent[k] {
            for s in strategies.indices {
                guard let p = strategies[s][k], shared(s, k) == nil else { continue }
                requests.append(fitter.request(slot: s, window: k, prediction: p))
            }
        }

        /// Pass 2 with one measure: every strategy's fit.
        func refine(_ measure: FineAligner.Measure, progress: ((Double) -> Void)?) throws(MixdownError) -> [DriftEstimate] {
            var (found, emphasis) = try fitter.match(requests, slots: strategies.count, measure: measure, progress: progress)
            for s in strategies.indices {
                for k in times.indices { if let e = shared(s, k) { found[s][k] = found[e][k]; emphasis[s][k] = emphasis[e][k] } }
            }
            return strategies.indices.map { fitter.estimate(found[$0], emphasis: emphasis[$0], measure: measure, name: names[$0]) }
        }
        /// The most confident fit (the earlier strategy on a tie), with a rival line when
        /// another fits about as well.
        func choose(_ fits: [DriftEstimate]) -> DriftEstimate {
            // The envelope's second start is only ever a rival: it never wins.
            let winner = fits.indices.prefix(3).max { fits[$0].confidence < fits[$1].confidence || (fits[$0].confidence == fits[$1].confidence && $0 > $1) }!
            var chosen = fits[winner]
            chosen.rivalOffsetSeconds = chosen.rivalOffsetSeconds ?? Self.rival(of: winner, among: fits)
            return chosen
        }
        func accepted(_ e: DriftEstimate) -> Bool { e.confidence >= Self.trustedConfidence && e.rivalOffsetSeconds == nil }

        // The plain correlation first: the most precise wherever it finds one answer. Where it
        // does not, or only barely (a steady tone that matches every period about as well), the
        // line-clipped measure, with the line chosen across windows, reads REF again, and the
        // more confident of the two is kept.
        // The progress bar, full after the first, stays so through the second.
        var plain = choose(try refine(.plain, progress: progress))
        progress?(1)
        // A recorder that paused: the windows after (or before) the pause lie on a line of
        // their own, a jump away.
        if !piecewise, let split = try JumpSearch(fitter: fitter, coarse: coarse, maxOffset: tuning.pairSearch.approximateSeconds).split(plain) {
            plain = split
        }
        if (accepted(plain) && plain.confidence >= Self.clearConfidence) || piecewise || plain.jumps != nil { return plain }
        let clipped = choose(try refine(.lineClipped, progress: nil))
        if accepted(clipped) && (!accepted(plain) || clipped.confidence > plain.confidence) { return clipped }
        if accepted(plain) { return plain }
        // Neither is trusted: the refusal that says most (a rival offset, else the higher confidence).
        if clipped.rivalOffsetSeconds != nil && plain.rivalOffsetSeconds == nil && plain.confidence < Self.trustedConfidence { return clipped }
        return plain.confidence >= clipped.confidence || plain.rivalOffsetSeconds != nil ? plain : clipped
    }

    /// The offset of another fit that matches about as well as the winner: a different line
    /// (more than 2 ms away somewhere on REC) with at least half its confidence, which the
    /// winner's windows do not beat in three quarters of the windows both matched, or whose
    /// correlations there add up to `Fit.rivalShare` of the winner's (an exact loop, where
    /// every bar matches as well and the winner's lead is a matter of rounding); or which
    /// places another part of REC, at least half as many windows, about as confidently (a
    /// recording of REF looped twice fits both copies). Periodic
    /// material (a repeated bar, a steady tone) leaves one; anything else, none.
    static func rival(of winner: Int, among fits: [DriftEstimate]) -> Double? {
        let w = fits[winner]
        guard w.windowsUsed >= 3 else { return nil }
        for (s, f) in fits.enumerated() where s != winner && f.windowsUsed >= 3 && f.confidence >= 0.5 * w.confidence {
            let ends = [0.0, w.windows.last?.recordingTime ?? 0]
            guard ends.contains(where: { abs((f.offsetSeconds + (f.ratio - 1) * $0) - (w.offsetSeconds + (w.ratio - 1) * $0)) > 2 * Fit.agreement }) else { continue }
            var compared = 0, beaten = 0, winnerSum = 0.0, rivalSum = 0.0
            for (a, b) in zip(w.windows, f.windows) where a.lag != nil && b.lag != nil {
                compared += 1
                winnerSum += a.correlation
                rivalSum += b.correlation
                if a.correlation > b.correlation { beaten += 1 }
            }
            if compared >= 3 && (4 * beaten < 3 * compared || rivalSum >= Fit.rivalShare * winnerSum) { return f.offsetSeconds }
            // Another part of REC matches elsewhere as well as the winner's part matches:
            // REC holds the sound twice (REF looped).
            if 2 * compared < min(w.windowsUsed, f.windowsUsed) && 2 * f.windowsUsed >= w.windowsUsed
                && f.confidence >= Fit.rivalShare * w.confidence { return f.offsetSeconds }
        }
        return nil
    }
}
