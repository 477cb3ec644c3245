import Foundation

/// The band-limited interpolation filter of the polyphase varispeed, as a Farrow
/// structure: each of `taps` coefficients is a polynomial of degree `order` in the
/// fractional delay, so the filter for any delay costs (order + 1) · taps multiply-adds.
///
/// Design: the ideal coefficient for tap k at fractional delay μ ∈ [0, 1) is a Kaiser-
/// windowed sinc, fc · sinc(fc · t) · w(t), with t = k − (taps/2 − 1) − μ. For each μ the
/// taps are normalised to sum to 1 (exact DC gain); each tap is then fitted by least
/// squares with a polynomial in u = 2μ − 1 over 96 Chebyshev nodes.
public struct FarrowFilter: Sendable, Equatable {
    public let taps: Int
    public let order: Int
    public let kaiserBeta: Double
    /// Cutoff as a fraction of the input's Nyquist frequency (already scaled for downsampling).
    public let cutoff: Double
    /// The first half of the symmetric filter, `coefficients[k * (order + 1) + m]`: the
    /// weight of u^m for tap k < taps/2 (tap-major, so the kernel reads one tap's polynomial
    /// from consecutive floats). Tap taps−1−k of branch m is (−1)^m times tap k.
    public let coefficients: [Float]

    /// The design for a quality level; `ratio` < 1 narrows the cutoff to avoid aliasing.
    public init(quality: ResamplerQuality, ratio: StretchRatio) {
        let (taps, order, beta, cutoff): (Int, Int, Double, Double) = switch quality {
        case .best: (64, 6, 10, 0.94)
        case .medium: (48, 5, 9, 0.92)
        case .fastest: (32, 4, 8, 0.90)
        }
        self.init(taps: taps, order: order, kaiserBeta: beta, cutoff: cutoff * min(1, ratio.doubleValue))
    }

    public init(taps: Int, order: Int, kaiserBeta: Double, cutoff: Double) {
        precondition(taps >= 4 && taps % 2 == 0 && (1...7).contains(order) && cutoff > 0 && cutoff <= 1)
        self.taps = taps
        self.order = order
        self.kaiserBeta = kaiserBeta
        self.cutoff = cutoff

        let nodes = 96
        let half = Double(taps / 2)
        // Ideal, normalised taps at each node.
        var ideal = [[Double]](repeating: [Double](repeating: 0, count: taps), count: nodes)
        var us = [Double](repeating: 0, count: nodes)
        for s in 0..<nodes {
            let u = cos(Double.pi * (Double(s) + 0.5) / Double(nodes))   // Chebyshev node in (-1, 1)
            us[s] = u
            let mu = (u + 1) / 2
            var sum = 0.0
            for k in 0..<taps {
                let t = Double(k) - (half - 1) - mu
                let v = cutoff * Self.sinc(cutoff * t) * Self.kaiser(t / half, beta: kaiserBeta)
                ideal[s][k] = v
                sum += v
            }
            for k in 0..<taps { ideal[s][k] /= sum }
        }
        // Least squares: (V^T V) a = V^T y, V[s][m] = u_s^m, one right-hand side per tap.
        let n = order + 1
        var gram = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
        for s in 0..<nodes {
            var pw = [Double](repeating: 1, count: n)
            for m in 1..<n { pw[m] = pw[m - 1] * us[s] }
            for a in 0..<n { for b in 0..<n { gram[a][b] += pw[a] * pw[b] } }
        }
        var fitted = [[Double]](repeating: [], count: taps)
        for k in 0..<taps {
            var rhs = [Double](repeating: 0, count: n)
            for s in 0..<nodes {
                var p = 1.0
                for m in 0..<n { rhs[m] += p * ideal[s][k]; p *= us[s] }
            }
            fitted[k] = Self.solve(gram, rhs)
        }
        // The filter is symmetric: μ → 1 − μ mirrors the taps and turns u into −u, so tap
        // taps−1−k of branch m is (−1)^m times tap k. Make that exact (averaging the two
        // fits) and keep the first half: the kernel folds x[k] ± x[taps−1−k] first.
        var coef = [Float](repeating: 0, count: n * taps / 2)
        for k in 0..<(taps / 2) {
            for m in 0..<n {
                let mirror = fitted[taps - 1 - k][m] * (m % 2 == 0 ? 1 : -1)
                coef[k * n + m] = Float((fitted[k][m] + mirror) / 2)
            }
        }
        coefficients = coef
    }

    static func sinc(_ x: Double) -> Double { x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x) }

    /// Kaiser window at x ∈ [-1, 1], zero outside.
    static func kaiser(_ x: Double, beta: Double) -> Double {
        guard abs(x) <= 1 else { return 0 }
        return besselI0(beta * (1 - x * x).squareRoot()) / besselI0(beta)
    }

    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let q = x * x / 4
        while term > 1e-17 * sum { term *= q / (k * k); sum += term; k += 1 }
        return sum
    }

    /// Gaussian elimination with partial pivoting on a small dense system.
    static func solve(_ matrix: [[Double]], _ rhs: [Double]) -> [Double] {
        var a = matrix, b = rhs
        let n = b.count
        for col in 0..<n {
            let pivot = (col..<n).max { abs(a[$0][col]) < abs(a[$1][col]) }!
            a.swapAt(col, pivot); b.swapAt(col, pivot)
            for row in (col + 1)..<n {
                let f = a[row][col] / a[col][col]
                for c in col..<n { a[row][c] -= f * a[col][c] }
                b[row] -= f * b[col]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for row in stride(from: n - 1, through: 0, by: -1) {
            var s = b[row]
            for c in (row + 1)..<n { s -= a[row][c] * x[c] }
            x[row] = s / a[row][row]
        }
        return x
    }
}

/// How hard a resampler works: filter length and precision against speed.
public enum ResamplerQuality: String, Sendable, CaseIterable, Codable {
    /// Polyphase: 64 taps, order 6. libsamplerate: SRC_SINC_BEST_QUALITY.
    case best
    /// Polyphase: 48 taps, order 5. libsamplerate: SRC_SINC_MEDIUM_QUALITY.
    case medium
    /// Polyphase: 32 taps, order 4. libsamplerate: SRC_SINC_FASTEST.
    case fastest
}
