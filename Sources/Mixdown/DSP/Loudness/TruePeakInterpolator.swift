import Foundation
import MixdownKernels

/// The oversampling of the true-peak meter (ITU-R BS.1770-4, Annex 2): the points between
/// samples at which a reconstructed signal may peak higher than its samples.
///
/// Below 96 kHz the signal is oversampled 4x, from 96 kHz to 2x, and from 192 kHz not at
/// all (the sample peak is the true peak), as libebur128 does. Each in-between point is a
/// 16-tap Kaiser-windowed sinc (beta 6) normalised to unit gain at DC: the three phases of
/// 4x stay within 0.01 dB of flat up to 0.35 fs and lose 0.2 dB at 0.40 fs. The sample
/// points themselves need no filter: they are the samples.
struct TruePeakInterpolator {
    /// Taps of each phase; the points lie between input samples 7 and 8 of a 16-sample window.
    static let taps = 16
    /// 4, 2 or 1.
    let factor: Int
    /// Phases 1..<factor, each `taps` floats, in the layout of `mx_kernels.peak_interp`.
    let bank: [Float]

    init(sampleRate: Int) {
        factor = sampleRate < 96_000 ? 4 : sampleRate < 192_000 ? 2 : 1
        let half = Double(Self.taps / 2), beta = 6.0
        var bank: [Float] = []
        for p in 1..<max(factor, 1) {
            // The point lies p/factor of a sample after window sample 7.
            let t = half - 1 + Double(p) / Double(factor)
            var row = (0..<Self.taps).map { k -> Double in
                let d = Double(k) - t
                let sinc = d == 0 ? 1 : sin(Double.pi * d) / (Double.pi * d)
                let r = d / half
                return sinc * Self.besselI0(beta * (max(0, 1 - r * r)).squareRoot()) / Self.besselI0(beta)
            }
            let sum = row.reduce(0, +)
            row = row.map { $0 / sum }
            bank += row.map { Float($0) }
        }
        self.bank = bank
    }

    /// Phases computed by the kernel (the sample points are not among them).
    var phases: Int { factor - 1 }

    /// The largest in-between point of `frames` windows: `window` holds frames + taps - 1
    /// samples, and the points lie between its samples 7 and 8 onwards. 0 when the rate
    /// needs no oversampling.
    func peak(of window: UnsafePointer<Float>, frames: Int, kernels: mx_kernels) -> Float {
        guard phases > 0 else { return 0 }
        return bank.withUnsafeBufferPointer { b in kernels.peak_interp(window, frames, b.baseAddress, phases, Self.taps) }
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
