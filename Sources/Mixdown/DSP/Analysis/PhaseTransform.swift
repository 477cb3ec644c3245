import MixdownKernels

/// Generalised cross-correlation with the phase transform (GCC-PHAT): where a short
/// excerpt lies in a long region, found from the phase of their cross-spectrum. Every
/// frequency band weighs the same, so a loud drone, a hum or a spectral tilt cannot
/// outvote the bands that carry the timing, and noise-like material (wind, rain, a
/// crowd), whose energy envelope is flat, still gives one sharp peak.
public enum PhaseTransform {
    /// The peak of a correlation and how distinct it is.
    public struct Peak: Sendable, Equatable {
        /// Fractional lag in samples (parabolic interpolation around the best lag).
        public let lag: Double
        /// The correlation at the best lag: it grows with the excerpt's share of the
        /// transform, so compare it with `runnerUp`, not with a fixed number.
        public let value: Double
        /// The best value outside ±`exclusion` samples of the peak; `value / runnerUp` near
        /// 1 means two places match about as well (repeated bars, a steady tone).
        public let runnerUp: Double
        /// Where the runner-up lies (samples, not interpolated).
        public let runnerUpLag: Int
    }

    /// corr[l] for l in 0..<lags: `excerpt` (n values) against region[l ..< l + n], where
    /// `region` holds at least n + lags − 1 values. Frequencies below `lowestFrequency`
    /// (cycles per sample; DC always) are left out. nil when the FFT's scratch cannot be allocated.
    public static func correlate(_ excerpt: [Float], in region: [Float], lags: Int, lowestFrequency: Double = 0) -> [Double]? {
        let n = excerpt.count
        precondition(n > 0 && lags > 0 && region.count >= n + lags - 1)
        var size = 1
        while size < region.count { size <<= 1 }
        // Circular correlation of length `size` ≥ region.count: lags 0..<lags never wrap,
        // because l + n − 1 < region.count.
        var xr = [Double](repeating: 0, count: size), xi = [Double](repeating: 0, count: size)
        var ar = [Double](repeating: 0, count: size), ai = [Double](repeating: 0, count: size)
        for i in 0..<region.count { xr[i] = Double(region[i]) }
        let mean = excerpt.reduce(0.0) { $0 + Double($1) } / Double(n)
        for i in 0..<n { ar[i] = Double(excerpt[i]) - mean }
        guard mx_fft(&xr, &xi, size, 0) == 0, mx_fft(&ar, &ai, size, 0) == 0 else { return nil }
        let lowestBin = max(1, Int((lowestFrequency * Double(size)).rounded(.up)))
        // G = X · conj(A) / |X · conj(A)|: the phase alone.
        for k in 0..<size {
            let bin = min(k, size - k)
            let gr = xr[k] * ar[k] + xi[k] * ai[k]
            let gi = xi[k] * ar[k] - xr[k] * ai[k]
            let m = (gr * gr + gi * gi).squareRoot()
            if bin < lowestBin || m < 1e-30 {
                xr[k] = 0; xi[k] = 0
            } else {
                xr[k] = gr / m; xi[k] = gi / m
            }
        }
        guard mx_fft(&xr, &xi, size, 1) == 0 else { return nil }
        let scale = 1 / Double(size)
        return (0..<lags).map { xr[$0] * scale }
    }

    /// The best lag of `c`, interpolated, and the best value farther than `exclusion`
    /// samples from it. nil for fewer than three values.
    public static func peak(_ c: [Double], exclusion: Int) -> Peak? {
        guard c.count >= 3, let m = c.indices.max(by: { c[$0] < c[$1] }) else { return nil }
        var lag = Double(m)
        if m > 0 && m < c.count - 1 {
            let y0 = c[m - 1], y1 = c[m], y2 = c[m + 1]
            let d = y0 - 2 * y1 + y2
            if d < 0 { lag += 0.5 * (y0 - y2) / d }
        }
        var runnerUp = (lag: m, value: 0.0)
        for i in c.indices where abs(i - m) > exclusion && c[i] > runnerUp.value { runnerUp = (i, c[i]) }
        return Peak(lag: lag, value: c[m], runnerUp: runnerUp.value, runnerUpLag: runnerUp.lag)
    }
}
