import Foundation

/// The second pass of `DriftEstimator` over REF and the fits that follow it: fine
/// searches around predicted lags, in one forward read of REF, and the estimate of each
/// strategy's matches. Serves the first pass's strategies and a strategy found after it
/// (the windows after a pause).
struct StrategyFitter {
    let ref: RecordingAnalysis
    let rec: RecordingAnalysis
    let grid: AnalysisGrid
    let silent: [Bool]
    let piecewise: Bool
    /// Seconds per second.
    let maxDrift: Double
    let cancellation: CancellationToken?
    let stopwatch: Stopwatch

    /// One fine search: REC's window `window` around the REF analysis sample `refStart`
    /// where its start is predicted to land, ± `search` samples; `slot`: whose match it is.
    struct Request { let slot: Int; let window: Int; let refStart: Double; let search: Int }

    /// The search for window `k` around a predicted lag (seconds) and width (seconds).
    func request(slot: Int, window k: Int, prediction p: (lag: Double, search: Double)) -> Request {
        Request(slot: slot, window: k, refStart: (rec.times[k] + p.lag) * grid.rate - Double(grid.windowLength) / 2,
                search: Int((p.search * grid.rate).rounded()))
    }

    /// Every request, in one pass over REF in order of where each search starts: per slot
    /// and window, the candidate places (lag seconds, correlation) and the lag of the tilted
    /// match (`FineAligner.emphasisPosition`).
    func match(_ requests: [Request], slots: Int, measure: FineAligner.Measure, progress: ((Double) -> Void)?) throws(MixdownError)
        -> (found: [[[(lag: Double, correlation: Double)]]], emphasis: [[Double?]]) {
        let rate = grid.rate, times = rec.times, half = Double(grid.windowLength) / 2
        let ordered = requests.sorted { FineAligner.searchStart($0.refStart, search: $0.search) < FineAligner.searchStart($1.refStart, search: $1.search) }
        let stream = try AnalysisStream(path: ref.path, rate: grid.sampleRate, decimation: grid.decimation, highPass: grid.highPassHz)
        let fine = FineAligner(stream: stream, windowLength: grid.windowLength, rate: rate, measure: measure)
        var found = [[[(lag: Double, correlation: Double)]]](repeating: [[(lag: Double, correlation: Double)]](repeating: [], count: times.count),
                                                             count: slots)
        var emphasis = [[Double?]](repeating: [Double?](repeating: nil, count: times.count), count: slots)
        for (done, r) in ordered.enumerated() {
            if cancellation?.isCancelled == true { throw .cancelled }
            found[r.slot][r.window] = try fine.match(rec.window(r.window), at: r.refStart, search: r.search).map {
                (($0.position + half) / rate - times[r.window], $0.correlation)
            }
            emphasis[r.slot][r.window] = fine.emphasisPosition.map { ($0 + half) / rate - times[r.window] }
            if done % 16 == 0 { progress?(Double(done) / Double(ordered.count)) }
        }
        return (found, emphasis)
    }

    /// The estimate from one slot's matches (`Fit.estimate`; the line chosen across windows
    /// with the line-clipped measure).
    func estimate(_ found: [[(lag: Double, correlation: Double)]], emphasis: [Double?], measure: FineAligner.Measure, name: String) -> DriftEstimate {
        let times = rec.times
        return Fit.estimate(reference: ref.path, recording: rec.path, windows: times.indices.map { (times[$0], silent[$0], found[$0]) },
                            jointly: measure == .lineClipped, piecewise: piecewise, minimumCorrelation: DriftEstimator.minimumCorrelation,
                            duration: rec.duration, referenceDuration: ref.duration, maxSlope: maxDrift,
                            seconds: stopwatch.seconds, coarse: name,
                            clock: (rec.info.sampleRate, ref.info.sampleRate, rec.info.frames), emphasis: emphasis)
    }

    /// One strategy's predictions (a lag and a search width per window, or none), refined
    /// in a pass of their own over REF and fitted.
    func fit(_ strategy: [(lag: Double, search: Double)?], name: String) throws(MixdownError) -> DriftEstimate {
        let requests = rec.times.indices.compactMap { k in silent[k] ? nil : strategy[k].map { request(slot: 0, window: k, prediction: $0) } }
        let (found, emphasis) = try match(requests, slots: 1, measure: .plain, progress: nil)
        return estimate(found[0], emphasis: emphasis[0], measure: .plain, name: name)
    }
}

/// A recorder that paused (or restarted): the windows on one side of the pause lie on the
/// estimate's line, those on the other side on a line of their own, a jump away.
///
/// When at least `minimumWindows` windows with signal at the end (or the start) of REC,
/// three quarters of those there, do not agree with the estimate, their stretch of REC's
/// envelope (up to two minutes) is searched for again over the whole pair search (the
/// search's ±offset, widened by the drift), and the windows are refined and fitted around
/// that lag in a pass of their own over REF. A line through at least three of them, all in
/// that stretch, and more than `Fit.agreement` × 2 from the estimate's there, is a second
/// stretch of REC: the jump lies between the two stretches' nearest windows, where the
/// recording's samples stop matching REF along the first line and start matching it
/// along the second (`cut`). Up to `maximumJumps` jumps, one side at a time.
struct JumpSearch {
    let fitter: StrategyFitter
    let coarse: CoarseAligner
    /// The pair search (seconds).
    let maxOffset: Double

    static let minimumWindows = 3
    static let maximumJumps = 4

    /// One stretch of REC on REF's clock: its windows' range and its estimate.
    private struct Stretch {
        var first: Int
        var last: Int
        var estimate: DriftEstimate
    }

    /// `e` split at the jumps found, or nil when there is none.
    func split(_ e: DriftEstimate) throws(MixdownError) -> DriftEstimate? {
        guard e.windowsUsed >= 3 else { return nil }
        let used = { (x: DriftEstimate) in x.windows.indices.filter { x.windows[$0].status == "used" } }
        var stretches = [Stretch(first: used(e).first!, last: used(e).last!, estimate: e)]
        for _ in 0..<Self.maximumJumps {
            // The windows past the last stretch, or before the first, that no line explains.
            let lastEnd = stretches.last!.last, firstStart = stretches.first!.first
            var found = false
            for side in [1, -1] {
                let run = side > 0 ? Array((lastEnd + 1)..<e.windows.count) : Array(0..<firstStart)
                let owner = side > 0 ? stretches.last!.estimate : stretches.first!.estimate
                guard let next = try stretch(run, owner: owner) else { continue }
                if side > 0 { stretches.append(next) } else { stretches.insert(next, at: 0) }
                found = true
                break
            }
            if !found { break }
        }
        guard stretches.count > 1 else { return nil }
        return try combine(e, stretches)
    }

    /// A line through the windows of `run` (indices into the windows), a jump away from
    /// `owner`'s, or nil.
    private func stretch(_ run: [Int], owner: DriftEstimate) throws(MixdownError) -> Stretch? {
        let w = owner.windows
        let unexplained = run.filter { ["weak", "outlier", "ambiguous"].contains(w[$0].status) }
        let audible = run.filter { w[$0].status != "silent" }
        guard unexplained.count >= Self.minimumWindows, 4 * unexplained.count >= 3 * audible.count,
              let a = unexplained.first, let b = unexplained.last else { return nil }
        let times = fitter.rec.times
        let start = times[a] - 0.5, end = times[b] + 0.5
        let span = maxOffset + fitter.maxDrift * end + 1
        guard let c = coarse.lag(from: start, to: end, around: 0, span: span) else { return nil }
        var strategy = [(lag: Double, search: Double)?](repeating: nil, count: times.count)
        for k in run { strategy[k] = (c.lag + (owner.ratio - 1) * (times[k] - start), FineAligner.defaultSearch) }
        let fit = try fitter.fit(strategy, name: owner.coarse)
        let mine = fit.windows.indices.filter { fit.windows[$0].status == "used" }
        guard mine.count >= 3, let first = mine.first, let last = mine.last, run.contains(first), run.contains(last) else { return nil }
        let t = times[first]
        let apart = abs((fit.offsetSeconds + (fit.ratio - 1) * t) - (owner.offsetSeconds + (owner.ratio - 1) * t))
        guard apart > 2 * Fit.agreement else { return nil }
        return Stretch(first: first, last: last, estimate: fit)
    }

    private func combine(_ e: DriftEstimate, _ stretches: [Stretch]) throws(MixdownError) -> DriftEstimate {
        let rec = fitter.rec
        let recRate = rec.info.sampleRate, refRate = fitter.ref.info.sampleRate
        // Cuts between neighbouring stretches, REC seconds.
        var cuts: [Double] = [], widths: [Double] = []
        for (x, y) in zip(stretches, stretches.dropFirst()) {
            let found = try cut(from: rec.times[x.last], to: rec.times[y.first], before: x.estimate, after: y.estimate)
            cuts.append(found.time)
            widths.append(found.width)
        }
        var combined = e
        var windows = e.windows
        var segments: [DriftEstimate.Segment] = []
        var jumps: [DriftEstimate.Jump] = []
        let bounds = [0.0] + cuts + [rec.duration]
        for (i, s) in stretches.enumerated() {
            for k in windows.indices where rec.times[k] >= bounds[i] && rec.times[k] < bounds[i + 1] { windows[k] = s.estimate.windows[k] }
            let from = Int64((bounds[i] * Double(recRate)).rounded()), to = i + 1 == stretches.count ? rec.info.frames : Int64((bounds[i + 1] * Double(recRate)).rounded())
            var knots: [ClockMap.Knot] = []
            func knot(_ f: Int64) -> ClockMap.Knot {
                let t = Double(f) / Double(recRate)
                return ClockMap.Knot(recordingFrame: f, referenceSeconds: t + s.estimate.modelLag(atRecordingSeconds: t), referenceRate: refRate)
            }
            knots.append(knot(from))
            for k in s.estimate.map?.knots ?? [] where k.recordingFrame > from && k.recordingFrame < to { knots.append(k) }
            knots.append(knot(to))
            var segment = DriftEstimate.Segment(start: bounds[i], end: bounds[i + 1], offsetSeconds: s.estimate.offsetSeconds,
                                                ratio: s.estimate.ratio, ppm: s.estimate.ppm)
            segment.map = try ClockMap(recordingRate: recRate, referenceRate: refRate, knots: knots, parameter: "the map of REC from \(bounds[i]) s")
            segments.append(segment)
            if i > 0 {
                let t = cuts[i - 1]
                jumps.append(.init(recordingTime: t, seconds: s.estimate.modelLag(atRecordingSeconds: t) - stretches[i - 1].estimate.modelLag(atRecordingSeconds: t),
                                   uncertaintySeconds: widths[i - 1]))
            }
        }
        // The confidence of the stretches together: every line is two numbers.
        let status = windows.map(\.status)
        let usedWindows = windows.filter { $0.status == "used" }
        let residuals = usedWindows.compactMap { $0.residual.map(abs) }
        let inside = Fit.inside(status, used: usedWindows.count, lines: stretches.count, maxResidual: residuals.max() ?? 0)
        let maxResidual = residuals.max() ?? 0
        combined.windows = windows
        combined.windowsUsed = usedWindows.count
        combined.windowsRejected = windows.count - usedWindows.count
        combined.residualMaxMilliseconds = maxResidual * 1000
        combined.residualRMSMilliseconds = residuals.isEmpty ? 0 : (residuals.reduce(0) { $0 + $1 * $1 } / Double(residuals.count)).squareRoot() * 1000
        combined.confidence = Fit.confidence(used: usedWindows.count, inside: inside, lines: stretches.count,
                                             correlations: usedWindows.map(\.correlation), maxResidual: maxResidual)
            * Fit.modelAgreement((e.bandDisagreementMilliseconds ?? 0) / 1000)
        let first = stretches[0].estimate
        (combined.offsetSeconds, combined.ratio, combined.ppm) = (first.offsetSeconds, first.ratio, first.ppm)
        combined.segments = segments
        combined.jumps = jumps
        combined.map = nil
        combined.lineDepartureMilliseconds = nil
        // The rival was the other stretch's line.
        combined.rivalOffsetSeconds = nil
        return combined
    }

    /// Where REC jumps between REC times `from` and `to` (seconds): the sample after which
    /// REC is explained by REF along `after`'s line rather than `before`'s. Both are read at
    /// the analysis rate; the cut minimises the squared error of REC against REF, scaled by
    /// REC's gain g, along each line: Σ_{i<c} (x_i − g·a_i)² + Σ_{i≥c} (x_i − g·b_i)² (x:
    /// REC, a and b: REF along each line, linearly interpolated, signed by the polarity). A
    /// cumulative sum, to the analysis sample (0.125 ms at 8 kHz).
    ///
    /// The error, not the correlation alone: where REC is silent and one line's REF sounds,
    /// that line is wrong there, which a correlation (zero against silence either way) cannot
    /// see; on a pause that began in a word's tail it cut 400 ms late. g is REC's gain found
    /// by least squares about the correlation's own cut (0, and the correlation alone, when
    /// REC does not follow REF with a positive gain).
    ///
    /// Where REC and both lines' REF are silent beside the cut the error is flat there and
    /// its minimum says nothing. Every cut whose error is within `indistinct` typical
    /// samples' worth of the best (REC's mean energy per analysis sample over the search) is
    /// as good: the cut is the middle of the span they cover, and `width` that span (one
    /// analysis sample where REC sounds on both sides).
    func cut(from: Double, to: Double, before a: DriftEstimate, after b: DriftEstimate) throws(MixdownError) -> (time: Double, width: Double) {
        let rec = fitter.rec, ref = fitter.ref, grid = fitter.grid
        let recRate = Double(rec.info.sampleRate), refRate = Double(ref.info.sampleRate), ra = grid.rate
        let f0 = max(0, Int64((from * recRate).rounded(.down))), f1 = min(rec.info.frames, Int64((to * recRate).rounded(.up)))
        guard f1 > f0 + 2 else { return ((from + to) / 2, to - from) }
        let x = try SignalAligner.read(AnalysisStream(path: rec.path, rate: grid.sampleRate, decimation: grid.decimation, range: f0..<f1, highPass: grid.highPassHz))
        let t0 = Double(f0) / recRate
        /// REF along `e` for every REC sample.
        func along(_ e: DriftEstimate) throws(MixdownError) -> [Float] {
            let lo = t0 + e.modelLag(atRecordingSeconds: t0) - 0.1, hi = Double(f1) / recRate + e.modelLag(atRecordingSeconds: Double(f1) / recRate) + 0.1
            let g0 = max(0, Int64((lo * refRate).rounded(.down))), g1 = min(ref.info.frames, Int64((hi * refRate).rounded(.up)))
            guard g1 > g0 + 2 else { return [Float](repeating: 0, count: x.count) }
            let y = try SignalAligner.read(AnalysisStream(path: ref.path, rate: grid.sampleRate, decimation: grid.decimation, range: g0..<g1, highPass: grid.highPassHz))
            let r0 = Double(g0) / refRate
            return x.indices.map { i in
                let t = t0 + Double(i) / ra
                let p = (t + e.modelLag(atRecordingSeconds: t) - r0) * ra
                let j = Int(p.rounded(.down))
                guard j >= 0, j + 1 < y.count else { return 0 }
                let f = Float(p - Double(j))
                return y[j] + f * (y[j + 1] - y[j])
            }
        }
        let ya = try along(a), yb = try along(b)
        let pa = Double(a.polarity), pb = Double(b.polarity)
        let energy = x.reduce(0.0) { $0 + Double($1) * Double($1) }
        /// sums[c] = Σ_{i<c} d(i) for every cut c, and the c that maximises it (the first of equals).
        func best(_ d: (Int) -> Double) -> (index: Int, sums: [Double]) {
            var sums = [Double](repeating: 0, count: x.count + 1)
            for i in x.indices { sums[i + 1] = sums[i] + d(i) }
            return (sums.indices.max { sums[$0] < sums[$1] || (sums[$0] == sums[$1] && $0 > $1) }!, sums)
        }
        // The correlation's cut, for REC's gain about it.
        let correlation = best { i in Double(x[i]) * (pa * Double(ya[i]) - pb * Double(yb[i])) }
        var follow = 0.0, power = 0.0
        for i in x.indices {
            let y = i < correlation.index ? pa * Double(ya[i]) : pb * Double(yb[i])
            follow += Double(x[i]) * y
            power += y * y
        }
        let g = power > 0 && follow > 0 ? follow / power : 0
        // sums[c]: minus half the squared error over g with the cut before sample c, less a
        // constant (each term of the error is x² − 2g·x·y + g²·y²).
        let chosen = g > 0
            ? best { i in
                let ai = pa * Double(ya[i]), bi = pb * Double(yb[i]), xi = Double(x[i])
                return xi * (ai - bi) - g / 2 * (ai * ai - bi * bi)
            }
            : correlation
        let sums = chosen.sums, top = chosen.index
        // Typical samples' worth of the squared error, in the sums' units (over 2g).
        let tolerance = Self.indistinct * energy / Double(x.count) / (g > 0 ? 2 * g : 1)
        var lo = top, hi = top
        while lo > 0 && sums[lo - 1] >= sums[top] - tolerance { lo -= 1 }
        while hi < x.count && sums[hi + 1] >= sums[top] - tolerance { hi += 1 }
        return (t0 + (Double(lo) + Double(hi)) / 2 / ra, Double(hi - lo + 1) / ra)
    }

    /// Typical samples' worth of the objective within which two cuts are as good.
    static let indistinct = 2.0
}
