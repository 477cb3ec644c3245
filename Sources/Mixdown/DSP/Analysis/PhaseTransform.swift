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
    /// (cycles per sample; DC always) are left out.
    public static func correlate(_ excerpt: [Float], in region: [Float], lags: Int, lowestFrequency: Double = 0) -> [Double] {
        precondition(excerpt.count > 0 && lags > 0 && region.count >= excerpt.count + lags - 1)
        return packedCorrelation(centred(excerpt), in: region, lags: lags, phaseOnly: true, lowestFrequency: lowestFrequency)
    }

    /// Σ a[i] · x[l + i] for l in 0..<lags (x holds at least a.count + lags − 1 values), or
    /// with `phaseOnly` the same of the cross-spectrum's phase alone, frequencies below
    /// `lowestFrequency` (cycles per sample; DC always) left out. Both real signals go into
    /// one complex transform, z = x + i · a, and one inverse gives the result.
    static func packedCorrelation(_ a: [Double], in x: [Float], lags: Int, phaseOnly: Bool, lowestFrequency: Double = 0) -> [Double] {
        // Circular correlation of length `size` ≥ x.count: lags 0..<lags never wrap,
        // because l + a.count − 1 < x.count.
        let size = x.count.nextPowerOfTwo
        var re = [Double](repeating: 0, count: size), im = [Double](repeating: 0, count: size)
        for i in x.indices { re[i] = Double(x[i]) }
        for i in a.indices { im[i] = a[i] }
        let table = Twiddles(size: size)
        table.transform(&re, &im, inverse: false)
        let lowest = lowestBin(lowestFrequency, size: size)
        // X[k] = (Z[k] + conj Z[−k]) / 2, A[k] = (Z[k] − conj Z[−k]) / 2i; G = X · conj(A)
        // (or its phase). G[−k] = conj G[k]: each pair k, size − k is read and then
        // overwritten in place.
        for k in 0...(size / 2) {
            let m = (size - k) & (size - 1)
            let xr = (re[k] + re[m]) / 2, xi = (im[k] - im[m]) / 2
            let ar = (im[k] + im[m]) / 2, ai = (re[m] - re[k]) / 2
            let r = xr * ar + xi * ai, i = xi * ar - xr * ai
            (re[k], im[k]) = phaseOnly ? phase(r, i, keep: k >= lowest) : (r, i)
            re[m] = re[k]; im[m] = -im[k]
        }
        table.transform(&re, &im, inverse: true)
        let scale = 1 / Double(size)
        return (0..<lags).map { re[$0] * scale }
    }

    /// G / |G| for G = r + i·i, or 0 where `keep` is false or |G| vanishes.
    static func phase(_ r: Double, _ i: Double, keep: Bool) -> (Double, Double) {
        let magnitude = (r * r + i * i).squareRoot()
        return keep && magnitude > 1e-30 ? (r / magnitude, i / magnitude) : (0, 0)
    }

    /// The first bin of a `size`-point transform at or above `frequency` (cycles per
    /// sample), never DC.
    static func lowestBin(_ frequency: Double, size: Int) -> Int { max(1, Int((frequency * Double(size)).rounded(.up))) }

    /// The excerpt less its mean, in Double.
    static func centred(_ excerpt: [Float]) -> [Double] {
        let mean = excerpt.reduce(0.0) { $0 + Double($1) } / Double(excerpt.count)
        return excerpt.map { Double($0) - mean }
    }

    /// One excerpt searched block by block through a long region (overlap-save): the
    /// region's blocks are transformed once each, whatever the number of excerpts, and
    /// memory stays at a few transforms however long the region is. The excerpt is kept
    /// as samples and transformed again at each block, not kept as a spectrum: a sync of
    /// many excerpts held 4 MB of spectrum for each (2^18 points in Double) from start to
    /// end, and the same transform of the same samples gives the same bits.
    public final class BlockSearch {
        /// Transform size: a block holds `size` region samples and gives `size − n + 1` lags.
        public let size: Int
        public let excerptLength: Int
        private let table: Twiddles
        /// The excerpt less its mean.
        private let centred: [Double]
        private let lowestBin: Int

        /// `twiddles`: a table of `size` to share with other searches (each table of 2^18
        /// is 2 MB), or nil for one of its own.
        public init(excerpt: [Float], size: Int, lowestFrequency: Double = 0, twiddles: Twiddles? = nil) {
            precondition(size.nextPowerOfTwo == size && excerpt.count > 0 && excerpt.count < size)
            precondition(twiddles.map { $0.size == size } ?? true, "a shared twiddle table must be of the search's size")
            self.size = size
            excerptLength = excerpt.count
            table = twiddles ?? Twiddles(size: size)
            centred = PhaseTransform.centred(excerpt)
            lowestBin = PhaseTransform.lowestBin(lowestFrequency, size: size)
        }

        /// The spectrum of a block of `size` region samples (zero beyond `block.count`).
        public static func spectrum(of block: ArraySlice<Float>, size: Int, table: Twiddles) -> (re: [Double], im: [Double]) {
            var re = [Double](repeating: 0, count: size), im = re
            for (i, x) in block.prefix(size).enumerated() { re[i] = Double(x) }
            table.transform(&re, &im, inverse: false)
            return (re, im)
        }

        /// corr[l] for l in 0..<(size − n + 1): the excerpt against block[l ..< l + n].
        public func correlate(_ x: (re: [Double], im: [Double])) -> [Double] {
            // The excerpt's spectrum, then the whitened cross-spectrum in its place.
            var wr = centred + [Double](repeating: 0, count: size - centred.count)
            var wi = [Double](repeating: 0, count: size)
            table.transform(&wr, &wi, inverse: false)
            for k in 0..<size {
                let ar = wr[k], ai = wi[k]
                let r = x.re[k] * ar + x.im[k] * ai, i = x.im[k] * ar - x.re[k] * ai
                (wr[k], wi[k]) = PhaseTransform.phase(r, i, keep: min(k, size - k) >= lowestBin)
            }
            table.transform(&wr, &wi, inverse: true)
            // In place: a copy would be a third buffer of the transform's size at the peak.
            let scale = 1 / Double(size)
            wr.removeLast(excerptLength - 1)
            for l in wr.indices { wr[l] *= scale }
            return wr
        }

        public var twiddles: Twiddles { table }
    }

    /// The twiddle table of one transform size.
    public struct Twiddles: Sendable {
        public let size: Int
        private var wr: [Double], wi: [Double]

        public init(size: Int) {
            self.size = size
            wr = [Double](repeating: 0, count: max(1, size / 2))
            wi = wr
            mx_fft_twiddles(&wr, &wi, size)
        }

        public func transform(_ re: inout [Double], _ im: inout [Double], inverse: Bool) {
            precondition(re.count == size && im.count == size)
            mx_fft(&re, &im, size, inverse ? 1 : 0, wr, wi, size)
        }

        /// The same on `size` values the caller owns at `re` and `im`.
        func transform(_ re: UnsafeMutablePointer<Double>, _ im: UnsafeMutablePointer<Double>, inverse: Bool) {
            mx_fft(re, im, size, inverse ? 1 : 0, wr, wi, size)
        }
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

extension Int {
    /// The smallest power of two ≥ self (1 for self ≤ 1).
    var nextPowerOfTwo: Int {
        var p = 1
        while p < self { p <<= 1 }
        return p
    }
}
