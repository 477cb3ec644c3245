import Foundation
import MixdownKernels

/// The oversampling of a true-peak reading: the points between samples at which a
/// reconstructed signal may peak higher than its samples. Each in-between point is a
/// Kaiser-windowed sinc of `taps` input samples, normalised to unit gain at DC; the points
/// lie between samples `taps / 2 - 1` and `taps / 2` of a window of `taps` samples. The
/// sample points themselves need no filter: they are the samples.
///
/// Two designs:
/// - `init(sampleRate:)`, ITU-R BS.1770-4's meter (Annex 2): 4x below 96 kHz, 2x from 96
///   kHz and none from 192 kHz (the sample peak is the true peak), as libebur128 does, with
///   16 taps (beta 6): within 0.01 dB of flat up to 0.35 fs, 0.2 dB low at 0.40 fs. On
///   full-band noise it reads 0.3-0.4 dB under ffmpeg's ebur128 and a 16x polyphase
///   reference (`tools/check/loudness/true_peak_reference.py`), and up to 1.1 dB under the ideal
///   reconstruction.
/// - `fine`, what the limiter holds and the output check reads: 8x at every rate with 64
///   taps (beta 5), flat to 0.45 fs; on the same material it reads at or above ffmpeg's,
///   libebur128's and the 16x reference's figures (docs/loudness.md has the table). Between
///   its points the reconstruction can rise at most 1 / cos(pi / 16) (0.17 dB) for a tone
///   at the Nyquist frequency, in practice a few thousandths of a dB.
struct TruePeakInterpolator {
    /// Input samples per in-between point.
    let taps: Int
    /// 1 (no oversampling) or more.
    let factor: Int
    /// Phases 1..<factor in mirrored pairs (p, factor − p), p = 1 ... factor / 2, each pair
    /// `taps` floats in the layout of `mx_kernels.peak_interp`: the even part of phase p's
    /// row, then its odd part (zero for the middle phase, its own mirror).
    let bank: [Float]
    /// The largest sum of |coefficients| over the phases: no point exceeds it times the
    /// largest |sample| of its window (so a window whose samples are that far under a
    /// ceiling needs no points computed).
    let gainBound: Float

    /// BS.1770's meter at `sampleRate`.
    init(sampleRate: Int) {
        self.init(factor: sampleRate < 96_000 ? 4 : sampleRate < 192_000 ? 2 : 1, taps: 16, beta: 6)
    }

    /// The limiter's and the output check's reading.
    static let fine = TruePeakInterpolator(factor: 8, taps: 64, beta: 5)

    /// dB the fine reading is held under a ceiling. Reconstructions differ where a signal
    /// has energy near the Nyquist frequency: on full-band noise bursts pressed against a
    /// ceiling by the limiter, a 16x polyphase reference, libebur128 and ffmpeg's ebur128
    /// read the same output 0.2-0.3 dB over this reading (the ideal, FFT-interpolated
    /// reconstruction 0.5 dB); on speech, tones and clicks they agree within 0.1 dB.
    /// Measured by `tools/check/loudness/ceiling-check`.
    static let fineAllowance = 0.5

    init(factor: Int, taps: Int, beta: Double) {
        precondition(factor >= 1 && (factor == 1 || factor % 2 == 0) && taps >= 2 && taps % 2 == 0)
        self.factor = factor
        self.taps = taps
        let half = Double(taps / 2), h = taps / 2
        var bank: [Float] = []
        var bound: Float = 1
        for p in stride(from: 1, through: factor / 2, by: 1) {
            // The point lies p/factor of a sample after window sample taps / 2 - 1; its mirror,
            // the taps reversed, lies (factor − p)/factor after it.
            let t = half - 1 + Double(p) / Double(factor)
            var row = (0..<taps).map { k -> Double in
                let d = Double(k) - t
                let sinc = d == 0 ? 1 : sin(Double.pi * d) / (Double.pi * d)
                let r = d / half
                return sinc * Self.besselI0(beta * (max(0, 1 - r * r)).squareRoot()) / Self.besselI0(beta)
            }
            let sum = row.reduce(0, +)
            row = row.map { $0 / sum }
            let even = (0..<h).map { Float((row[$0] + row[taps - 1 - $0]) / 2) }
            let odd = 2 * p == factor ? [Float](repeating: 0, count: h) : (0..<h).map { Float((row[$0] - row[taps - 1 - $0]) / 2) }
            // A point is sum of (e + o) x[k] + (e − o) x[taps−1−k]: at most the largest |x|
            // times the sum of 2 max(|e|, |o|).
            bound = max(bound, zip(even, odd).reduce(0) { $0 + 2 * max(abs($1.0), abs($1.1)) } * (1 + 1e-5))
            bank += even + odd
        }
        self.bank = bank
        gainBound = bound
    }

    /// Mirrored pairs of phases the kernel computes (the sample points are not among them).
    var pairs: Int { factor / 2 }

    /// The largest in-between point of `frames` windows: `window` holds frames + taps - 1
    /// samples, and the points lie between its samples taps / 2 - 1 and taps / 2 onwards.
    /// 0 when the design has no oversampling.
    func peak(of window: UnsafePointer<Float>, frames: Int, kernels: mx_kernels) -> Float {
        guard pairs > 0 else { return 0 }
        return bank.withUnsafeBufferPointer { b in
            // The kernel takes at most four pairs a call.
            var m: Float = 0
            var p = 0
            while p < pairs {
                let n = min(4, pairs - p)
                m = max(m, kernels.peak_interp(window, frames, b.baseAddress! + p * taps, n, taps))
                p += n
            }
            return m
        }
    }

    /// Windows per span that `peak(of:frames:beating:kernels:)` skips or reads whole.
    static let skipSpan = 64

    /// The larger of `peak` and the largest in-between point of `frames` windows (as
    /// `peak(of:frames:kernels:)`). No point can exceed its window's largest sample times
    /// `gainBound`, so a span of `skipSpan` windows that cannot beat `peak` costs one scan
    /// of its samples: the meter, past a programme's first loud passage, skips most of it;
    /// the limiter, given its ceiling, reads only chunks whose points could pass it. The
    /// same value as reading every point: a point is computed the same way wherever a read
    /// starts, and the maximum does not depend on the order.
    func peak(of window: UnsafePointer<Float>, frames: Int, beating peak: Float, kernels: mx_kernels) -> Float {
        var m = peak
        var f = 0
        while f < frames {
            let n = min(Self.skipSpan, frames - f)
            if kernels.peak(window + f, n + taps - 1) * gainBound > m {
                m = max(m, self.peak(of: window + f, frames: n, kernels: kernels))
            }
            f += n
        }
        return m
    }

    /// The modified Bessel function of the first kind, order 0, by its power series.
    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        while term > 1e-17 * sum {
            term *= (x / (2 * k)) * (x / (2 * k))
            sum += term
            k += 1
        }
        return sum
    }
}
