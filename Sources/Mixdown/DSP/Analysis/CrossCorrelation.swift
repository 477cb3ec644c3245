import MixdownKernels

/// Cross-correlation and its peak, for every place that finds where one signal lies in
/// another: drift estimation, marker measurement and the stretch tests.
public enum CrossCorrelation {
    /// Normalised cross-correlation of `a` (n values) against `x` at lags 0..<lags, where
    /// `x` holds n + lags − 1 values: corr[l] = Σ a·x[l...] / (|a| · |x[l..<l+n]|), with the
    /// means removed when `centred`. The sums run in the C kernel.
    /// Long searches (n · lags beyond about 2^27) take the sums by FFT instead, in double
    /// precision: the same values to within rounding.
    public static func normalised(_ a: [Float], _ x: [Float], lags: Int, centred: Bool) -> [Double] {
        let n = a.count
        precondition(x.count >= n + lags - 1)
        var a = a
        if centred {
            let mean = a.reduce(0, +) / Float(n)
            for i in 0..<n { a[i] -= mean }
        }
        let aNorm = a.reduce(0.0) { $0 + Double($1) * Double($1) }.squareRoot()
        var num = [Double](repeating: 0, count: lags)
        if Double(n) * Double(lags) > Double(1 << 27) {
            num = PhaseTransform.packedCorrelation(a.map(Double.init), in: x, lags: lags, phaseOnly: false)
        } else {
            var sums = [Float](repeating: 0, count: lags)
            let k = mx_kernels_active().pointee
            a.withUnsafeBufferPointer { ap in x.withUnsafeBufferPointer { xp in sums.withUnsafeMutableBufferPointer { dp in
                k.xcorr(dp.baseAddress!, ap.baseAddress!, xp.baseAddress!, n, lags)
            } } }
            for l in 0..<lags { num[l] = Double(sums[l]) }
        }
        // Sliding sums of x and x² over n values.
        var s = 0.0, s2 = 0.0
        for i in 0..<n { s += Double(x[i]); s2 += Double(x[i]) * Double(x[i]) }
        var out = [Double](repeating: 0, count: lags)
        for l in 0..<lags {
            if l > 0 {
                let old = Double(x[l - 1]), new = Double(x[l + n - 1])
                s += new - old
                s2 += new * new - old * old
            }
            let energy = centred ? s2 - s * s / Double(n) : s2
            out[l] = energy > 1e-20 && aNorm > 0 ? num[l] / (aNorm * energy.squareRoot()) : 0
        }
        return out
    }

    /// Plain cross-correlation in Double of `template` (n values) against `window` at lags
    /// 0..<lags (`window` holds n + lags − 1 values): corr[l] = Σ template[i] · window[l + i].
    /// For measurements, where exactness matters more than speed.
    public static func plain(_ template: [Double], _ window: [Double], lags: Int) -> [Double] {
        let n = template.count
        precondition(window.count >= n + lags - 1)
        return (0..<lags).map { l in
            var s = 0.0
            for i in 0..<n { s += template[i] * window[l + i] }
            return s
        }
    }

    /// The peak of `c` with a parabola through it and its neighbours: (fractional index, value).
    /// A peak on an edge (the search range did not contain it) gives nil, or with
    /// `clampingEdges` the parabola through the first or last three values.
    public static func parabolicPeak(_ c: [Double], clampingEdges: Bool = false) -> (index: Double, value: Double)? {
        guard c.count >= 3, var m = c.indices.max(by: { c[$0] < c[$1] }) else { return nil }
        if m == 0 || m == c.count - 1 {
            guard clampingEdges else { return nil }
            m = max(1, min(c.count - 2, m))
        }
        let y0 = c[m - 1], y1 = c[m], y2 = c[m + 1]
        let d = y0 - 2 * y1 + y2
        let delta = d < 0 ? 0.5 * (y0 - y2) / d : 0
        return (Double(m) + delta, y1 - 0.25 * (y0 - y2) * delta)
    }
}
