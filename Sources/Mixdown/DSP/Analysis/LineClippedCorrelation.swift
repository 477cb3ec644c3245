import Foundation

/// Normalised cross-correlation of a short excerpt against a region, in which steady tonal
/// lines (mains hum and its harmonics, an engine, an organ chord, a drone) count no more
/// than the broadband content around them.
///
/// A plain correlation weighs each frequency by its power, so a tone 12 dB above the noise
/// takes almost all of the weight and matches every one of its periods about as well. Here
/// each signal's spectrum is clipped, bin by bin, to twice its local median level (the
/// median over about 80 Hz of neighbouring bins): a line stands far above its neighbours
/// and is cut down to them, while broadband content (speech, noise), whose bins scatter
/// around the median, keeps its own weighting. The weights are real and positive, so they
/// shift no lag. The excerpt and the region are tapered (Tukey, ramps of a 16th of the
/// excerpt) before the transform: without a taper a loud line leaks over hundreds of bins
/// that clipping cannot tell from the broadband; a Hann taper would leak less but weigh the
/// excerpt's middle alone, and a window whose sound lies near its edges would be lost. A band weight leaves out what lies below `lowestFrequency` and
/// rolls off above 0.8 of the band's top (where averaging down aliases).
///
/// The result is a correlation coefficient, −1 to 1, between the clipped excerpt and the
/// clipped region under it: a match of opposite polarity (a microphone wired the other way)
/// gives a negative peak as clear as a positive one.
///
/// Owns its scratch buffers: one instance serves one thread.
final class LineClippedCorrelation {
    /// Samples in an excerpt.
    let excerptLength: Int
    /// Lags computed: the region holds `excerptLength + lags − 1` samples.
    let lags: Int
    /// The transform size: the smallest power of two that holds the region.
    let size: Int
    private let table: PhaseTransform.Twiddles
    private let excerptTaper: [Double]
    private let regionTaper: [Double]
    /// sqrt of the band weight for bins 0...size/2 (each signal takes one factor).
    private let band: [Double]
    // Scratch, owned (freed on deinit): pointers, so the hot loops pay no exclusivity checks.
    private let re: UnsafeMutablePointer<Double>, im: UnsafeMutablePointer<Double>
    private let gainX: UnsafeMutablePointer<Double>, gainA: UnsafeMutablePointer<Double>
    private let magnitudes: UnsafeMutablePointer<Double>
    private let levels: UnsafeMutablePointer<Double>
    private let levelCount: Int

    /// Bins per block of the local median: about 16 Hz at 8 kHz.
    private let block: Int
    /// A bin above this multiple of its local median is clipped to it.
    static let clipFactor = 2.0

    /// `lowestFrequency`: cycles per sample below which nothing counts (DC, rumble).
    init(excerptLength: Int, lags: Int, lowestFrequency: Double) {
        precondition(excerptLength > 1 && lags > 0)
        self.excerptLength = excerptLength
        self.lags = lags
        let regionLength = excerptLength + lags - 1
        size = regionLength.nextPowerOfTwo
        table = PhaseTransform.Twiddles(size: size)
        // Tukey tapers: cosine ramps of a 16th of the excerpt at both ends of each.
        let ramp = max(1, excerptLength / 16)
        excerptTaper = Self.tukey(excerptLength, ramp: ramp)
        regionTaper = Self.tukey(regionLength, ramp: ramp)
        let half = size / 2
        let size = self.size
        band = (0...half).map { k in Self.bandWeight(Double(k) / Double(size), lowest: lowestFrequency).squareRoot() }
        block = max(4, size / 1024)
        re = .allocate(capacity: size)
        im = .allocate(capacity: size)
        gainX = .allocate(capacity: half + 1)
        gainA = .allocate(capacity: half + 1)
        magnitudes = .allocate(capacity: half + 1)
        levelCount = (half + block) / block
        levels = .allocate(capacity: levelCount)
    }

    deinit {
        for p in [re, im, gainX, gainA, magnitudes, levels] { p.deallocate() }
    }

    /// `count` values: 1, with raised-cosine ramps of `ramp` values at both ends.
    static func tukey(_ count: Int, ramp: Int) -> [Double] {
        (0..<count).map { i in
            let d = min(i, count - 1 - i)
            return d >= ramp ? 1 : 0.5 - 0.5 * cos(.pi * (Double(d) + 0.5) / Double(ramp))
        }
    }

    /// 0 below `lowest`, a raised cosine up to twice it, 1 up to 0.4 cycles per sample, a
    /// raised cosine down to 0 at 0.475 (`f`: cycles per sample).
    static func bandWeight(_ f: Double, lowest: Double) -> Double {
        let low: Double
        if f < lowest { low = 0 } else if f < 2 * lowest { low = 0.5 - 0.5 * cos(.pi * (f - lowest) / lowest) } else { low = 1 }
        let high: Double
        if f <= 0.4 { high = 1 } else if f >= 0.475 { high = 0 } else { high = 0.5 + 0.5 * cos(.pi * (f - 0.4) / 0.075) }
        return low * high
    }

    /// c[l] for l in 0..<lags: the clipped excerpt against the clipped region[l ..< l + n],
    /// normalised (−1 to 1). `region` holds `excerptLength + lags − 1` samples.
    func correlate(_ excerpt: UnsafePointer<Float>, _ region: UnsafePointer<Float>) -> [Double] {
        let n = excerptLength, length = n + lags - 1, size = self.size, half = size / 2
        let re = self.re, im = self.im
        var meanA = 0.0, meanX = 0.0
        for i in 0..<n { meanA += Double(excerpt[i]) }
        for i in 0..<length { meanX += Double(region[i]) }
        meanA /= Double(n)
        meanX /= Double(length)
        for i in 0..<size {
            re[i] = i < length ? (Double(region[i]) - meanX) * regionTaper[i] : 0
            im[i] = i < n ? (Double(excerpt[i]) - meanA) * excerptTaper[i] : 0
        }
        table.transform(re, im, inverse: false)
        // Z = X + i·A: X[k] = (Z[k] + conj Z[−k]) / 2, A[k] = (Z[k] − conj Z[−k]) / 2i.
        // Kept in place: re/im[k] hold X[k] and re/im[size − k] hold A[k] for 0 < k < half
        // (bins 0 and half, real for both, keep X in re and A in im).
        for k in 0...half {
            let m = (size - k) & (size - 1)
            let xr = (re[k] + re[m]) / 2, xi = (im[k] - im[m]) / 2
            let ar = (im[k] + im[m]) / 2, ai = (re[m] - re[k]) / 2
            if k == 0 || k == half {
                re[k] = xr; im[k] = ar
            } else {
                re[k] = xr; im[k] = xi
                re[m] = ar; im[m] = ai
            }
        }
        clipGains(gainX) { k in k == 0 || k == half ? abs(re[k]) : (re[k] * re[k] + im[k] * im[k]).squareRoot() }
        clipGains(gainA) { k in
            if k == 0 || k == half { return abs(im[k]) }
            let m = size - k
            return (re[m] * re[m] + im[m] * im[m]).squareRoot()
        }
        // G = conj(Aw) · Xw (the correlation) and Xw (the clipped region) share one
        // inverse: Z = G + i · Xw, both Hermitian, so z = g + i · xw.
        var energyA = 0.0
        for k in 0...half {
            let m = (size - k) & (size - 1)
            let wx = gainX[k] * band[k], wa = gainA[k] * band[k]
            let xr: Double, xi: Double, ar: Double, ai: Double
            if k == 0 || k == half {
                (xr, xi, ar, ai) = (re[k] * wx, 0, im[k] * wa, 0)
            } else {
                (xr, xi, ar, ai) = (re[k] * wx, im[k] * wx, re[m] * wa, im[m] * wa)
            }
            energyA += (k == 0 || k == half ? 1 : 2) * (ar * ar + ai * ai)
            let gr = ar * xr + ai * xi, gi = ar * xi - ai * xr
            // Z[k] = G[k] + i Xw[k]; Z[−k] = conj G[k] + i conj Xw[k].
            re[k] = gr - xi; im[k] = gi + xr
            if k != 0 && k != half { re[m] = gr + xi; im[m] = -gi + xr }
        }
        energyA /= Double(size)
        table.transform(re, im, inverse: true)
        let scale = 1 / Double(size)
        // Sliding energy of the clipped region over n samples.
        var energyX = 0.0
        for i in 0..<n { energyX += im[i] * im[i] }
        energyX *= scale * scale
        var out = [Double](repeating: 0, count: lags)
        let floor = 1e-12 * max(energyA, 1e-300)
        for l in 0..<lags {
            if l > 0 {
                let old = im[l - 1] * scale, new = im[l + n - 1] * scale
                energyX = max(0, energyX + new * new - old * old)
            }
            let denominator = (energyA * energyX).squareRoot()
            out[l] = energyX > floor ? max(-1, min(1, re[l] * scale / denominator)) : 0
        }
        return out
    }

    /// min(1, clipFactor · local median / |bin|) for bins 0...size/2: the median of each
    /// block of bins, then for each bin the median of its block's and the two blocks'
    /// either side (a line that fills one block does not raise its own level).
    private func clipGains(_ gains: UnsafeMutablePointer<Double>, of magnitude: (Int) -> Double) {
        let half = size / 2
        for k in 0...half { magnitudes[k] = magnitude(k) }
        var scratch = [Double](repeating: 0, count: block)
        for b in 0..<levelCount {
            let lo = b * block, hi = min(half + 1, lo + block)
            for k in lo..<hi { scratch[k - lo] = magnitudes[k] }
            let count = hi - lo
            scratch[..<count].sort()
            levels[b] = scratch[count / 2]
        }
        var five = [Double](repeating: 0, count: 5)
        for b in 0..<levelCount {
            let lo = max(0, b - 2), hi = min(levelCount - 1, b + 2)
            for j in lo...hi { five[j - lo] = levels[j] }
            let count = hi - lo + 1
            five[..<count].sort()
            let level = Self.clipFactor * five[count / 2]
            for k in (b * block)..<min(half + 1, (b + 1) * block) {
                let x = magnitudes[k]
                gains[k] = x > level ? level / x : 1
            }
        }
    }
}
