import Foundation

/// A smooth map through the windows' lags, for a recorder whose clock wanders (a crystal
/// warming up, or carried from indoors to outdoors): REF − REC lag as a function of REC's
/// time, fitted where one straight line does not explain the windows.
///
/// The fit is a Whittaker smoother with a knot at every window: it minimises
/// Σ w_i (y_i − z_i)² + λ Σ (D z)², D the third divided difference scaled by the mean
/// spacing (a quadratic costs nothing: a rate that ramps steadily). The
/// stiffness λ is chosen by 5-fold cross-validation on held-out windows (every fifth
/// window held out in turn), never by hand; the stiffest λ whose held-out error is within
/// 5 % of the best is taken. The map replaces the line only when the line's held-out error
/// is more than 1.5 times the map's and more than `minimumDeparture`: on a steady clock
/// the line wins, and the estimate is exactly the line's.
///
/// Outliers: first a running median of the residuals from a Theil–Sen line (11 windows)
/// drops windows more than `Fit.agreement` off their neighbours; then, twice, windows
/// farther from the map than 4 median absolute deviations (at least 0.2 ms, at most
/// `Fit.agreement`) are dropped and the map refitted.
enum ClockMapFit {
    struct Result {
        /// The map's lag (seconds) at each point given, in order (outliers included).
        let fitted: [Double]
        /// Which points the map kept.
        let inliers: [Bool]
        /// The polyline: (REC seconds, lag seconds), simplified to within `knotTolerance`.
        let knots: [(t: Double, lag: Double)]
        /// λ, and the held-out rms error of the map and of the line, seconds.
        let stiffness: Double
        let heldOutRMS: Double
        let lineHeldOutRMS: Double
    }

    /// Below this held-out rms error (seconds) the line is kept whatever the map does: a
    /// departure this small changes no sample that matters.
    static let minimumDeparture = 0.000_02
    /// The knots kept reproduce the smoothed lags to within this (seconds).
    static let knotTolerance = 0.000_001
    /// λ tried, from supple to stiff (the line is the limit).
    static let stiffnesses: [Double] = (-4...18).map { pow(10, Double($0) / 2) }

    /// The map through `points` (REC seconds, lag seconds; sorted by time), or nil when
    /// the straight line explains them as well (a steady clock) or there are too few.
    static func fit(_ points: [(Double, Double)]) -> Result? {
        let n = points.count
        guard n >= 12, let base = Fit.theilSen(points) else { return nil }
        let t = points.map(\.0)
        // Residuals from the robust line, in milliseconds: the smoother works on small numbers.
        let y = points.map { ($0.1 - (base.intercept + base.slope * $0.0)) * 1000 }
        var keep = [Bool](repeating: true, count: n)
        for i in 0..<n {
            let lo = max(0, i - 5), hi = min(n, i + 6)
            if abs(y[i] - Fit.median(Array(y[lo..<hi]))) > Fit.agreement * 1000 { keep[i] = false }
        }
        var chosen = 0.0, heldOut = 0.0, lineHeldOut = 0.0
        var z = y
        for _ in 0..<3 {
            guard keep.filter({ $0 }).count >= 12 else { return nil }
            (chosen, heldOut) = crossValidate(t: t, y: y, keep: keep)
            lineHeldOut = lineCrossValidation(t: t, y: y, keep: keep)
            guard let s = smooth(t: t, y: y, weights: keep.map { $0 ? 1 : 0 }, stiffness: chosen) else { return nil }
            z = s
            let residuals = (0..<n).filter { keep[$0] }.map { abs(y[$0] - z[$0]) }
            let limit = min(max(4 * 1.4826 * Fit.median(residuals), 0.2), Fit.agreement * 1000)
            let next = (0..<n).map { abs(y[$0] - z[$0]) <= limit }
            if next == keep { break }
            keep = next
        }
        guard lineHeldOut > 1.5 * heldOut, lineHeldOut > minimumDeparture * 1000 else { return nil }
        // The smoother's value at a dropped window is its neighbours' line: z is defined everywhere.
        let fitted = (0..<n).map { base.intercept + base.slope * t[$0] + z[$0] / 1000 }
        let kept = (0..<n).filter { keep[$0] }.map { (t: t[$0], lag: fitted[$0]) }
        return Result(fitted: fitted, inliers: keep, knots: simplify(kept, tolerance: knotTolerance),
                      stiffness: chosen, heldOutRMS: heldOut / 1000, lineHeldOutRMS: lineHeldOut / 1000)
    }

    /// The stiffest λ of `stiffnesses` whose 5-fold held-out rms error is within 5 % of the
    /// best, and that error (the units of y).
    static func crossValidate(t: [Double], y: [Double], keep: [Bool]) -> (stiffness: Double, rms: Double) {
        let kept = (0..<t.count).filter { keep[$0] }
        var errors: [Double] = []
        for lambda in stiffnesses {
            var sum = 0.0, count = 0
            for fold in 0..<5 {
                var w = keep.map { $0 ? 1.0 : 0.0 }
                let held = kept.enumerated().filter { $0.offset % 5 == fold }.map(\.element)
                for i in held { w[i] = 0 }
                guard let z = smooth(t: t, y: y, weights: w, stiffness: lambda) else { sum = .infinity; break }
                for i in held { sum += (y[i] - z[i]) * (y[i] - z[i]); count += 1 }
            }
            errors.append(count > 0 ? (sum / Double(count)).squareRoot() : .infinity)
        }
        let best = errors.min() ?? .infinity
        let k = errors.indices.last { errors[$0] <= 1.05 * best } ?? 0
        return (stiffnesses[k], errors[k])
    }

    /// The 5-fold held-out rms error of the least-squares line (the same folds).
    static func lineCrossValidation(t: [Double], y: [Double], keep: [Bool]) -> Double {
        let kept = (0..<t.count).filter { keep[$0] }
        var sum = 0.0, count = 0
        for fold in 0..<5 {
            let train = kept.enumerated().filter { $0.offset % 5 != fold }.map { (t[$0.element], y[$0.element]) }
            guard let line = Fit.leastSquares(train) else { return .infinity }
            for (j, i) in kept.enumerated() where j % 5 == fold {
                let e = y[i] - (line.intercept + line.slope * t[i])
                sum += e * e
                count += 1
            }
        }
        return count > 0 ? (sum / Double(count)).squareRoot() : .infinity
    }

    /// The order of the differences penalised: 3, the change of the rate's change. Its
    /// free curves are quadratics (a rate that ramps steadily costs nothing), so the fit
    /// does not straighten a curving clock at the ends of the recording as a penalty on
    /// curvature would.
    static let order = 3

    /// The Whittaker smoother's values at every point (weights 0 leave a point out: its
    /// value is the curve through its neighbours), or nil when too few points weigh.
    /// Penalty: the `order`-th divided differences times the mean spacing to that power.
    /// Solves the symmetric banded system (W + λ DᵀD) z = W y by LDLᵀ, O(n).
    static func smooth(t: [Double], y: [Double], weights w: [Double], stiffness lambda: Double) -> [Double]? {
        let n = t.count, m = order
        guard n > m, w.filter({ $0 > 0 }).count > m else { return nil }
        let mean = (t[n - 1] - t[0]) / Double(n - 1)
        // band[g][i] = A[i][i − g].
        var band = [[Double]](repeating: [Double](repeating: 0, count: n), count: m + 1)
        band[0] = w
        for i in 0..<(n - m) {
            var c = [Double](repeating: 1, count: m + 1)
            for j in 0...m {
                for k in 0...m where k != j {
                    let h = (t[i + j] - t[i + k]) / mean
                    guard h != 0 else { return nil }
                    c[j] /= h
                }
            }
            for p in 0...m {
                for q in p...m { band[q - p][i + q] += lambda * c[p] * c[q] }
            }
        }
        // LDLᵀ: l[g][i] = L[i][i − g].
        var d = [Double](repeating: 0, count: n)
        var l = [[Double]](repeating: [Double](repeating: 0, count: n), count: m + 1)
        for i in 0..<n {
            for g in stride(from: min(m, i), through: 1, by: -1) {
                let j = i - g
                var v = band[g][i]
                for k in 1...m where j - k >= 0 && g + k <= m { v -= l[g + k][i] * d[j - k] * l[k][j] }
                l[g][i] = v / d[j]
            }
            var v = band[0][i]
            for g in 1...m where i - g >= 0 { v -= l[g][i] * l[g][i] * d[i - g] }
            guard v > 1e-12 * max(1, band[0][i]) else { return nil }
            d[i] = v
        }
        var z = (0..<n).map { w[$0] * y[$0] }
        for i in 0..<n {
            for g in 1...m where i - g >= 0 { z[i] -= l[g][i] * z[i - g] }
        }
        for i in 0..<n { z[i] /= d[i] }
        for i in stride(from: n - 1, through: 0, by: -1) {
            for g in 1...m where i + g < n { z[i] -= l[g][i + g] * z[i + g] }
        }
        return z
    }

    /// Douglas–Peucker: the fewest points of the polyline, ends kept, that stay within
    /// `tolerance` of every point dropped.
    static func simplify(_ p: [(t: Double, lag: Double)], tolerance: Double) -> [(t: Double, lag: Double)] {
        guard p.count > 2 else { return p }
        var keep = [Bool](repeating: false, count: p.count)
        keep[0] = true
        keep[p.count - 1] = true
        var stack = [(0, p.count - 1)]
        while let (a, b) = stack.popLast() {
            guard b > a + 1 else { continue }
            var worst = (index: a, distance: 0.0)
            for i in (a + 1)..<b {
                let f = (p[i].t - p[a].t) / (p[b].t - p[a].t)
                let e = abs(p[i].lag - (p[a].lag + f * (p[b].lag - p[a].lag)))
                if e > worst.distance { worst = (i, e) }
            }
            if worst.distance > tolerance {
                keep[worst.index] = true
                stack.append((a, worst.index))
                stack.append((worst.index, b))
            }
        }
        return p.indices.filter { keep[$0] }.map { p[$0] }
    }

    /// The polyline's lag at `t`: linear between knots, the end pieces extended beyond them.
    static func lag(at t: Double, knots k: [(t: Double, lag: Double)]) -> Double {
        guard k.count > 1 else { return k.first?.lag ?? 0 }
        var j = 1
        while j < k.count - 1 && k[j].t < t { j += 1 }
        let a = k[j - 1], b = k[j]
        return a.lag + (t - a.t) / (b.t - a.t) * (b.lag - a.lag)
    }
}
