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

    /// The estimate from the windows (time order). Confidence: the share of the windows
    /// with signal, not ambiguous, that the line puts inside REF which agree with it, times how clearly
    /// they matched (median correlation / 0.5, at most 1).
    static func estimate(reference: String, recording: String, windows w: [(t: Double, lag: Double?, correlation: Double, silent: Bool, ambiguous: Bool)],
                         piecewise: Bool, minimumCorrelation: Double, duration: Double, referenceDuration: Double,
                         maxSlope: Double = .infinity, seconds: Double, coarse: String) -> DriftEstimate {
        let candidates = w.indices.filter { !w[$0].silent && w[$0].lag != nil && w[$0].correlation >= minimumCorrelation }
        let audible = w.filter { !$0.silent }.count
        var status = w.map { $0.silent ? "silent" : $0.ambiguous ? "ambiguous" : "weak" }
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
            let keptSet = Set(kept)
            for i in candidates where !keptSet.contains(i) { status[i] = "outlier" }
        }
        var fitted: [(indices: [Int], line: Fit.Line)] = []
        for g in groups {
            guard let r = robust(g.map { (w[$0].t, w[$0].lag!) }) else { continue }
            for (j, i) in g.enumerated() {
                residual[i] = w[i].lag! - (r.line.intercept + r.line.slope * w[i].t)
                status[i] = r.inliers[j] ? "used" : "outlier"
            }
            fitted.append((g, r.line))
        }
        // Windows the line puts outside REF (a recording that starts before it or runs on
        // after it) had nothing to match: they count neither for nor against the estimate.
        if let line = fitted.first?.line {
            for i in w.indices where status[i] != "used" && !w[i].silent {
                let at = w[i].t + line.intercept + line.slope * w[i].t
                if at < -0.5 || at > referenceDuration + 0.5 { status[i] = "outside" }
            }
        }
        let used = w.indices.filter { status[$0] == "used" }
        let usedResiduals = used.compactMap { residual[$0] }
        let rms = usedResiduals.isEmpty ? 0 : (usedResiduals.reduce(0) { $0 + $1 * $1 } / Double(usedResiduals.count)).squareRoot()
        let maxResidual = usedResiduals.map(abs).max() ?? 0
        var confidence = 0.0
        // Ambiguous windows (a drone's neighbouring period matched as well) are no evidence
        // either way: they do not count against the line.
        let inside = audible - status.filter { $0 == "outside" || $0 == "ambiguous" }.count
        // A line steeper than the drift searched was not searched for: it is no estimate.
        let steep = fitted.contains { abs($0.line.slope) > maxSlope }
        if used.count >= 3 && inside > 0 && !steep {
            let clarity = min(1, median(used.map { w[$0].correlation }) / 0.5)
            confidence = Double(used.count) / Double(inside) * clarity
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
        let windows = w.indices.map { i in
            DriftEstimate.Window(recordingTime: w[i].t, lag: w[i].lag, correlation: w[i].correlation, residual: residual[i], status: status[i])
        }
        return DriftEstimate(reference: reference, recording: recording, offsetSeconds: offset, ratio: ratio,
                             ppm: (ratio - 1) * 1e6, confidence: confidence, windowsUsed: used.count,
                             windowsRejected: w.count - used.count, residualRMSMilliseconds: rms * 1000,
                             residualMaxMilliseconds: maxResidual * 1000, segments: piecewise ? segs : nil,
                             windows: windows, seconds: seconds, coarse: coarse, rivalOffsetSeconds: nil)
    }

    private static func boundary(_ a: Line, _ b: Line, after: Double, before: Double) -> Double {
        if a.slope != b.slope {
            let x = (b.intercept - a.intercept) / (a.slope - b.slope)
            if x >= after - (before - after) && x <= before + (before - after) { return x }
        }
        return (after + before) / 2
    }
}
