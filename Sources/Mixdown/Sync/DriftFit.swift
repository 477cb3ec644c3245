import Foundation

/// Line fits through per-window lags.
enum Fit {
    typealias Line = (slope: Double, intercept: Double)

    static func leastSquares(_ p: [(Double, Double)]) -> Line? {
        let n = Double(p.count)
        guard p.count >= 2 else { return nil }
        let mt = p.reduce(0) { $0 + $1.0 } / n, ml = p.reduce(0) { $0 + $1.1 } / n
        var stt = 0.0, stl = 0.0
        for (t, l) in p { stt += (t - mt) * (t - mt); stl += (t - mt) * (l - ml) }
        guard stt > 0 else { return nil }
        let slope = stl / stt
        return (slope, ml - slope * mt)
    }

    static func median(_ v: [Double]) -> Double {
        let s = v.sorted()
        return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
    }

    /// Theil–Sen: the median of the pairwise slopes, then the median intercept.
    static func theilSen(_ p: [(Double, Double)]) -> Line? {
        guard p.count >= 2 else { return nil }
        var slopes: [Double] = []
        slopes.reserveCapacity(p.count * (p.count - 1) / 2)
        for i in 0..<p.count {
            for j in (i + 1)..<p.count where p[j].0 != p[i].0 { slopes.append((p[j].1 - p[i].1) / (p[j].0 - p[i].0)) }
        }
        guard !slopes.isEmpty else { return nil }
        let slope = median(slopes)
        return (slope, median(p.map { $0.1 - slope * $0.0 }))
    }

    /// A window farther than this from the line does not agree with it, however scattered
    /// the others are: a true match lies within a fraction of a millisecond, and a line
    /// through lags scattered by more is no estimate.
    static let agreement = 0.002

    /// A candidate this close (seconds) to a line chosen across windows lies on it. Much
    /// tighter than `agreement`: the line runs through matches themselves (a true match
    /// lies within a few hundredths of a millisecond of it), and a window's 4 candidates
    /// within a ±50 ms search then fall on a wrong line by chance about 4 % of the time,
    /// not 16 %.
    static let lineAgreement = 0.0005

    /// Robust line: Theil–Sen, then least squares on the points within 4 median absolute
    /// deviations (at least 0.2 ms, at most `agreement`), twice. Returns the line and which
    /// points it kept.
    static func robust(_ p: [(Double, Double)]) -> (line: Line, inliers: [Bool])? {
        guard var line = theilSen(p) else { return nil }
        var keep = [Bool](repeating: true, count: p.count)
        for _ in 0..<2 {
            let residuals = p.map { abs($0.1 - (line.intercept + line.slope * $0.0)) }
            let limit = min(max(4 * 1.4826 * median(residuals), 0.0002), agreement)
            keep = residuals.map { $0 <= limit }
            guard let refit = leastSquares(zip(p, keep).filter { $0.1 }.map { $0.0 }) else { break }
            line = refit
        }
        return (line, keep)
    }

    /// Splits time-ordered points where one line stops fitting: the split that most
    /// reduces the squared error, kept when it removes 95% of it; then each side again.
    static func segments(_ p: [(Double, Double)], depth: Int = 3) -> [[(Double, Double)]] {
        let n = p.count
        guard depth > 0, n >= 16, let whole = leastSquares(p) else { return [p] }
        let sse = { (q: ArraySlice<(Double, Double)>) -> Double in
            guard let l = leastSquares(Array(q)) else { return 0 }
            return q.reduce(0) { $0 + pow($1.1 - (l.intercept + l.slope * $1.0), 2) }
        }
        let total = p.reduce(0) { $0 + pow($1.1 - (whole.intercept + whole.slope * $1.0), 2) }
        // Below 0.1 ms rms the line already fits: nothing to split.
        guard total / Double(n) > 1e-8 else { return [p] }
        var best = (index: 0, error: Double.infinity)
        for j in 8...(n - 8) {
            let e = sse(p[..<j]) + sse(p[j...])
            if e < best.error { best = (j, e) }
        }
        guard best.error < 0.05 * total else { return [p] }
        return segments(Array(p[..<best.index]), depth: depth - 1) + segments(Array(p[best.index...]), depth: depth - 1)
    }

    /// One window's evidence: its centre (REC seconds), whether it holds signal, and the
    /// places it matched (lag in seconds, signed correlation), the clearest first.
    typealias WindowMatches = (t: Double, silent: Bool, candidates: [(lag: Double, correlation: Double)])

    /// A line through the windows' candidates: REF − REC lag = intercept + slope · t, the
    /// polarity its matches share, and its support (the sum of |correlation| of each
    /// window's clearest candidate of that polarity within `lineAgreement` of it).
    struct Selection {
        var line: Line
        var polarity: Int
        var support: Double
    }

    /// The clearest of `candidates` (a window's, at REC time `t`) of `polarity` within
    /// `lineAgreement` of `line`: the window's place on that line, if it has one.
    static func clearest(_ candidates: [(lag: Double, correlation: Double)], on line: Line, polarity: Int, at t: Double) -> (lag: Double, correlation: Double)? {
        let at = line.intercept + line.slope * t
        return candidates.filter { sign($0.correlation) == polarity && abs($0.lag - at) <= lineAgreement }
            .max { abs($0.correlation) < abs($1.correlation) }
    }

    /// -1 for a negative correlation (inverted polarity), else 1.
    static func sign(_ correlation: Double) -> Int { correlation < 0 ? -1 : 1 }

    /// The line that the most windows support, and the best other line (more than
    /// 2 × `agreement` away at the first or last window) with its support. Each window may sit on several lines (its candidates: a tone's neighbouring
    /// periods), but the content that does not repeat supports one line only: deciding
    /// across windows finds it where a window alone cannot. Hypotheses: lines through two
    /// candidates of windows far apart (every pair for few windows, else strides of a half,
    /// a third and a quarter of them), no steeper than `maxSlope`; the best is refitted by
    /// least squares on its support, twice.
    static func select(_ w: [WindowMatches], maxSlope: Double) -> (best: Selection, rival: Selection?)? {
        let usable = w.indices.filter { !w[$0].candidates.isEmpty }
        guard usable.count >= 2 else { return nil }
        let first = w[usable.first!].t, last = w[usable.last!].t
        func support(_ line: Line, _ polarity: Int) -> Double {
            usable.reduce(0) { total, k in total + (clearest(w[k].candidates, on: line, polarity: polarity, at: w[k].t).map { abs($0.correlation) } ?? 0) }
        }
        /// Least squares through each window's best candidate on the line.
        func refit(_ s: Selection) -> Selection {
            var s = s
            for _ in 0..<2 {
                var points: [(Double, Double)] = []
                for k in usable {
                    if let c = clearest(w[k].candidates, on: s.line, polarity: s.polarity, at: w[k].t) { points.append((w[k].t, c.lag)) }
                }
                guard let line = points.count >= 2 ? leastSquares(points) : nil, abs(line.slope) <= maxSlope else { break }
                let refitted = Selection(line: line, polarity: s.polarity, support: support(line, s.polarity))
                guard refitted.support >= s.support else { break }
                s = refitted
            }
            return s
        }
        var pairs: [(Int, Int)] = []
        let m = usable.count
        if m <= 40 {
            for i in 0..<m { for j in (i + 1)..<m { pairs.append((usable[i], usable[j])) } }
        } else {
            for i in 0..<m { for step in [m / 2, m / 3, m / 4] where i + step < m { pairs.append((usable[i], usable[i + step])) } }
        }
        var hypotheses: [Selection] = []
        for (i, j) in pairs where w[j].t > w[i].t {
            // The candidates that could be the window's: at least half as clear as its best.
            let ci = w[i].candidates.filter { abs($0.correlation) >= 0.5 * abs(w[i].candidates[0].correlation) }
            let cj = w[j].candidates.filter { abs($0.correlation) >= 0.5 * abs(w[j].candidates[0].correlation) }
            for a in ci {
                for b in cj where (a.correlation < 0) == (b.correlation < 0) {
                    let slope = (b.lag - a.lag) / (w[j].t - w[i].t)
                    guard abs(slope) <= maxSlope else { continue }
                    let line = (slope: slope, intercept: a.lag - slope * w[i].t)
                    let polarity = sign(a.correlation)
                    hypotheses.append(Selection(line: line, polarity: polarity, support: support(line, polarity)))
                }
            }
        }
        guard let top = hypotheses.max(by: { $0.support < $1.support }) else { return nil }
        let best = refit(top)
        func distinct(_ s: Selection) -> Bool {
            let apart = { (t: Double) -> Bool in
                abs((s.line.intercept + s.line.slope * t) - (best.line.intercept + best.line.slope * t)) > 2 * agreement
            }
            return apart(first) || apart(last)
        }
        let rival = hypotheses.filter(distinct).max(by: { $0.support < $1.support }).map(refit)
        return (best, rival.flatMap { distinct($0) ? $0 : nil })
    }

    /// A rival line with at least this share of the best line's support matches about as
    /// well: the material repeats and no offset can be trusted.
    static let rivalShare = 0.9

    /// The estimate from the windows (time order). `jointly` (and not `piecewise`): the line
    /// is chosen across windows (`select`) and each window takes its candidate on it;
    /// otherwise each window takes its clearest candidate, and a window whose next candidate
    /// is about as clear (95 %) is ambiguous. Confidence: the share of the windows with signal, not
    /// ambiguous, that the line puts inside REF which agree with it, times how clearly
    /// they matched (median |correlation| / 0.5, at most 1).
    static func estimate(reference: String, recording: String, windows all: [WindowMatches],
                         jointly: Bool, piecewise: Bool, minimumCorrelation: Double, duration: Double, referenceDuration: Double,
                         maxSlope: Double = .infinity, seconds: Double, coarse: String,
                         clock: (recordingRate: Int, referenceRate: Int, recordingFrames: Int64)? = nil,
                         emphasis: [Double?]? = nil) -> DriftEstimate {
        // Only clear candidates count.
        let all: [WindowMatches] = all.map { m in
            let clear = m.silent ? [] : m.candidates.filter { abs($0.correlation) >= minimumCorrelation }
            return (m.t, m.silent, clear)
        }
        let selection = jointly && !piecewise ? select(all, maxSlope: maxSlope) : nil
        // Each window's lag: its candidate on the chosen line, else its clearest.
        var w: [(t: Double, lag: Double?, correlation: Double, silent: Bool, ambiguous: Bool)] = all.map { m in
            guard let top = m.candidates.first else { return (m.t, nil, 0, m.silent, false) }
            let ambiguous = m.candidates.count > 1 && abs(m.candidates[1].correlation) >= 0.95 * abs(top.correlation)
            if let s = selection?.best {
                if let c = clearest(m.candidates, on: s.line, polarity: s.polarity, at: m.t) { return (m.t, c.lag, abs(c.correlation), false, false) }
                return (m.t, top.lag, abs(top.correlation), false, ambiguous)
            }
            return (m.t, ambiguous ? nil : top.lag, abs(top.correlation), false, ambiguous)
        }
        let polarity: Int
        if let s = selection?.best {
            polarity = s.polarity
        } else {
            let signed = all.compactMap { $0.candidates.first?.correlation }
            polarity = signed.filter { $0 < 0 }.count * 2 > signed.count ? -1 : 1
        }
        // Windows off the chosen line do not enter the fit.
        let onLine: (Int) -> Bool = { i in
            guard let s = selection?.best, let lag = w[i].lag else { return true }
            return abs(lag - (s.line.intercept + s.line.slope * w[i].t)) <= lineAgreement
        }
        let candidates = w.indices.filter { !w[$0].silent && w[$0].lag != nil && !w[$0].ambiguous && onLine($0) }
        let audible = w.filter { !$0.silent }.count
        var status = w.map { $0.silent ? "silent" : $0.ambiguous ? "ambiguous" : $0.lag == nil ? "weak" : "outlier" }
        var residual = [Double?](repeating: nil, count: w.count)
        var groups: [[Int]] = [candidates]
        if piecewise && candidates.count >= 16 {
            // Drop gross outliers against a running median first: they would pull a split.
            let lags = candidates.map { w[$0].lag! }
            let kept = candidates.indices.filter { i in
                let lo = max(0, i - 5), hi = min(lags.count, i + 6)
                return abs(lags[i] - median(Array(lags[lo..<hi]))) < 0.002
            }.map { candidates[$0] }
            let pieces = segments(kept.map { (w[$0].t, w[$0].lag!) })
            var start = 0
            groups = pieces.map { piece in
                defer { start += piece.count }
                return Array(kept[start..<(start + piece.count)])
            }
        }
        var fitted: [(indices: [Int], line: Fit.Line)] = []
        // A clock that wanders: a smooth map, where it explains the windows better than
        // any line does (chosen by held-out windows; a steady clock keeps its line).
        let smooth = !jointly ? ClockMapFit.fit(candidates.map { (w[$0].t, w[$0].lag!) }) : nil
        let map = piecewise ? nil : smooth
        if let map {
            for (j, i) in candidates.enumerated() {
                residual[i] = w[i].lag! - map.fitted[j]
                status[i] = map.inliers[j] ? "used" : "outlier"
            }
            // The line reported beside it: the best single offset and ratio through the map.
            let kept = candidates.indices.filter { map.inliers[$0] }.map { (w[candidates[$0]].t, map.fitted[$0]) }
            if let line = leastSquares(kept) { fitted.append((candidates, line)) }
            groups = []
        }
        for g in groups {
            guard let r = robust(g.map { (w[$0].t, w[$0].lag!) }) else { continue }
            for (j, i) in g.enumerated() {
                residual[i] = w[i].lag! - (r.line.intercept + r.line.slope * w[i].t)
                status[i] = r.inliers[j] ? "used" : "outlier"
            }
            fitted.append((g, r.line))
        }
        if map == nil, let line = fitted.first?.line {
            for i in w.indices where status[i] == "outlier" { residual[i] = w[i].lag.map { $0 - (line.intercept + line.slope * w[i].t) } }
        }
        // Windows the line puts outside REF (a recording that starts before it or runs on
        // after it) had nothing to match: they count neither for nor against the estimate.
        if let line = fitted.first?.line {
            for i in w.indices where status[i] != "used" && !w[i].silent {
                let at = w[i].t + (map.map { ClockMapFit.lag(at: w[i].t, knots: $0.knots) } ?? line.intercept + line.slope * w[i].t)
                if at < -0.5 || at > referenceDuration + 0.5 { status[i] = "outside" }
            }
        }
        let used = w.indices.filter { status[$0] == "used" }
        let usedResiduals = used.compactMap { residual[$0] }
        let rms = usedResiduals.isEmpty ? 0 : (usedResiduals.reduce(0) { $0 + $1 * $1 } / Double(usedResiduals.count)).squareRoot()
        let maxResidual = usedResiduals.map(abs).max() ?? 0
        var confidence = 0.0
        let inside = Self.inside(status, used: used.count, maxResidual: maxResidual)
        // A line steeper than the drift searched was not searched for: it is no estimate.
        let steep = fitted.contains { abs($0.line.slope) > maxSlope }
        // A line is two numbers: any two windows fit one, so only the others are evidence
        // for it (with few windows, a drone's periods line up by chance).
        if !steep {
            confidence = Self.confidence(used: used.count, inside: inside, lines: 1, correlations: used.map { w[$0].correlation },
                                         maxResidual: maxResidual)
        }
        // Bands that disagree on the timing: the windows' matches with their spectra tilted
        // up by 6 dB an octave, against their plain matches (each window's clearest place).
        var disagreement: Double?
        if let emphasis {
            let moves = used.compactMap { i -> Double? in
                guard let e = emphasis[i], let lag = w[i].lag, let top = all[i].candidates.first, abs(top.lag - lag) < 1e-9 else { return nil }
                return e - lag
            }
            if moves.count >= 3 {
                disagreement = abs(median(moves))
                confidence *= modelAgreement(disagreement!)
            }
        }
        // Straight pieces through a clock that curves: the windows they drop as outliers do
        // not show how far off they are, the smooth map through all of them does.
        var piecesDeparture = 0.0
        if piecewise, let smooth, !fitted.isEmpty {
            for (j, i) in candidates.enumerated() where smooth.inliers[j] {
                let line = fitted.last { w[$0.indices.first!].t <= w[i].t }?.line ?? fitted[0].line
                piecesDeparture = max(piecesDeparture, abs(line.intercept + line.slope * w[i].t - smooth.fitted[j]))
            }
            confidence *= modelAgreement(piecesDeparture)
        }
        // Segments: boundaries where neighbouring lines cross, else half-way between windows.
        var segs: [DriftEstimate.Segment] = []
        for (k, f) in fitted.enumerated() {
            var start = 0.0, end = duration
            if k > 0 {
                let prev = fitted[k - 1]
                start = boundary(prev.line, f.line, after: w[prev.indices.last!].t, before: w[f.indices.first!].t)
            }
            if k + 1 < fitted.count {
                let next = fitted[k + 1]
                end = boundary(f.line, next.line, after: w[f.indices.last!].t, before: w[next.indices.first!].t)
            }
            segs.append(.init(start: start, end: end, offsetSeconds: f.line.intercept, ratio: 1 + f.line.slope, ppm: f.line.slope * 1e6))
        }
        // The whole file: one line, or for piecewise the first piece's offset and the mean ratio.
        var offset = segs.first?.offsetSeconds ?? 0, ratio = segs.first?.ratio ?? 1
        if segs.count > 1, let last = segs.last, duration > 0 {
            let refEnd = last.offsetSeconds + last.ratio * duration
            ratio = (refEnd - offset) / duration
        }
        if !piecewise, let f = fitted.first { offset = f.line.intercept; ratio = 1 + f.line.slope }
        var clockMap: ClockMap?
        var departure: Double?
        if let map, let clock, let line = fitted.first?.line {
            clockMap = try? ClockMap(fitted: map.knots, recordingRate: clock.recordingRate, referenceRate: clock.referenceRate,
                                     recordingFrames: clock.recordingFrames)
            departure = candidates.indices.filter { map.inliers[$0] }
                .map { abs(map.fitted[$0] - (line.intercept + line.slope * w[candidates[$0]].t)) }.max().map { $0 * 1000 }
        }
        let windows = w.indices.map { i in
            DriftEstimate.Window(recordingTime: w[i].t, lag: w[i].lag, correlation: w[i].correlation, residual: residual[i], status: status[i])
        }
        var estimate = DriftEstimate(reference: reference, recording: recording, offsetSeconds: offset, ratio: ratio,
                             ppm: (ratio - 1) * 1e6, confidence: confidence, windowsUsed: used.count,
                             windowsRejected: w.count - used.count, residualRMSMilliseconds: rms * 1000,
                             residualMaxMilliseconds: maxResidual * 1000, segments: piecewise ? segs : nil,
                             map: clockMap, lineDepartureMilliseconds: departure,
                             windows: windows, seconds: seconds, coarse: coarse, polarity: polarity,
                             rivalOffsetSeconds: selection.flatMap { s in
                                 s.rival.flatMap { $0.support >= rivalShare * s.best.support ? $0.line.intercept : nil }
                             })
        estimate.bandDisagreementMilliseconds = disagreement.map { $0 * 1000 }
        return estimate
    }

    /// The windows that count as evidence for or against `lines` lines that `used` windows
    /// agree on (within `maxResidual` seconds): those with signal that the lines put inside
    /// REF, less the ambiguous ones (a drone's neighbouring period matched as well), but
    /// never fewer than half of them: when most windows match several places, the few that
    /// match one may be matching a repeat too, and the rest count against them.
    ///
    /// Weak windows (no clear match anywhere) count against the lines too, unless the lines
    /// are established beyond chance (ten or more windows beyond two per line agree, over
    /// ten times what chance would put within `maxResidual`): then a weak window says
    /// nothing of where REC lies, and is no evidence either way, up to half as well. A
    /// distant microphone in a reverberant room, its direct sound 17 dB under the
    /// reverberation, was refused at 0.44 with its estimate 0.1 ms from the truth; a
    /// recording of another event, whose few chance agreements are no such evidence,
    /// stays refused.
    static func inside(_ status: [String], used: Int, lines: Int = 1, maxResidual: Double) -> Int {
        let audible = status.filter { $0 != "silent" }.count
        let outside = status.filter { $0 == "outside" }.count
        let ambiguous = status.filter { $0 == "ambiguous" }.count, weak = status.filter { $0 == "weak" }.count
        let floor = (audible - outside + 1) / 2
        let strict = max(audible - outside - ambiguous, floor)
        let lenient = max(audible - outside - ambiguous - weak, floor)
        return beyondChance(used: used, inside: lenient, lines: lines, maxResidual: maxResidual) ? lenient : strict
    }

    /// Whether `used` windows agreeing within `maxResidual` seconds establish `lines`
    /// lines beyond chance among `inside`: a window matched at random in its ±50 ms search
    /// lands within the largest residual with probability residual / 50 ms; ten or more
    /// agreeing windows beyond two per line, over ten times the number chance would give.
    static func beyondChance(used: Int, inside: Int, lines: Int, maxResidual: Double) -> Bool {
        let given = 2 * lines
        let chance = Double(max(0, inside - given)) * max(maxResidual, 0.000_05) / FineAligner.defaultSearch
        return used - given >= 10 && Double(used - given) > 10 * chance
    }

    /// (windows used − 2 per line) / (windows inside REF − 2 per line) × min(1, median
    /// |correlation| / 0.5) × `modelAgreement`: a line is two numbers, so any two windows fit
    /// one and only the others are evidence for it. 0 with fewer than 3 windows per line.
    static func confidence(used: Int, inside: Int, lines: Int, correlations: [Double], maxResidual: Double) -> Double {
        let given = 2 * lines
        guard used >= 3 * lines, inside > given, !correlations.isEmpty else { return 0 }
        var clarity = min(1, median(correlations) / 0.5)
        // Windows that agree far beyond chance establish the line however faint their
        // matches (a distant microphone in a reverberant room): a window matched at random
        // in its ±50 ms search lands within the largest residual of the line with
        // probability residual / 50 ms; ten or more agreeing windows, over ten times the
        // number chance would give, leave no doubt.
        if beyondChance(used: used, inside: inside, lines: lines, maxResidual: maxResidual) { clarity = 1 }
        return min(1, Double(used - given) / Double(inside - given)) * clarity * modelAgreement(maxResidual)
    }

    /// How far the model may leave a window it uses before the estimate stops being
    /// confident: 1 up to 0.25 ms, falling linearly to 0 at 0.6 ms (0.29 at 0.5 ms). A
    /// true match lies within a few hundredths of a millisecond of a model that fits; a
    /// window left more than half a millisecond off says the model is wrong (a clock that
    /// wanders, fitted with straight pieces), however many windows lie near it.
    static func modelAgreement(_ maxResidual: Double) -> Double {
        min(1, max(0, (0.000_6 - maxResidual) / 0.000_35))
    }

    private static func boundary(_ a: Line, _ b: Line, after: Double, before: Double) -> Double {
        if a.slope != b.slope {
            let x = (b.intercept - a.intercept) / (a.slope - b.slope)
            if x >= after - (before - after) && x <= before + (before - after) { return x }
        }
        return (after + before) / 2
    }
}
