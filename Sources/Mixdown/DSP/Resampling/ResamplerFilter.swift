import Foundation
import Synchronization

/// The band-limiting filter of `Resampler`, designed for one exact ratio and quality, and
/// laid out for the C kernel as a bank of phase rows.
///
/// Design: a Kaiser-windowed sinc. Frequencies are fractions of the input's Nyquist
/// frequency. The pass band reaches `passEdge` × the lower Nyquist (the output's when
/// downsampling); the stop band starts at the output's Nyquist when downsampling (nothing
/// above it can alias), and at 2 − `passEdge` when upsampling (the images of the pass band
/// start there). The cutoff lies half way; the window's β and the length follow Kaiser's
/// formulas for `attenuation` dB, the length rounded up to a multiple of 16 (the kernel's lanes).
///
/// Layout: output j sits at input position t = j / R = n + μ (n whole, 0 <= μ < 1). Its
/// `taps` inputs are frames n − (taps/2 − 1) ..< n + taps/2 + 1, and tap i weighs
/// h(μ + taps/2 − 1 − i): the filter is centred, with no delay. A row holds those weights
/// for one μ, scaled to sum to 1 (exact DC gain).
/// - `exact` (when R = L/M in lowest terms has L <= `maximumExactPhases`): L rows, row p
///   for μ = p / L. Every output uses its exact phase.
/// - `interpolated` otherwise: `phases` + 1 rows for μ = q / phases; an output between two
///   rows weighs its taps by row + f (next row − row), f the remainder in [0, 1): in exact
///   arithmetic y0 + f (y1 − y0) of the two rows' results, with one sum instead of two.
public struct ResamplerFilter: Sendable, Equatable {
    public enum Layout: Sendable, Hashable {
        case exact(phases: Int)
        case interpolated(phases: Int)
    }

    public let taps: Int
    public let layout: Layout
    public let kaiserBeta: Double
    /// Cutoff, pass-band edge and stop-band edge as fractions of the input's Nyquist frequency.
    public let cutoff: Double
    public let passEdge: Double
    public let stopEdge: Double
    /// The rows, `taps` floats each, one after the other.
    public let bank: [Float]

    /// Exact rows up to this many phases (a 160/147 or 147/160 conversion has 160 or 147);
    /// beyond it, a dense table with interpolation.
    public static let maximumExactPhases = 1024

    /// The band edges and the length in taps of the filter for `ratio` at `quality`,
    /// without designing it.
    static func size(ratio: StretchRatio, quality: ResamplerQuality) -> (taps: Int, passEdge: Double, stopEdge: Double, lower: Double) {
        let (pass, attenuation) = quality.design
        // Down or up is decided on the exact ratio; the Double only sizes the band.
        let downsampling = ratio.numerator < ratio.denominator
        let lower = downsampling ? ratio.doubleValue : 1   // the lower Nyquist, in input Nyquists
        let passEdge = pass * lower
        let stopEdge = downsampling ? lower : 2 - pass
        let width = Double.pi * (stopEdge - passEdge)   // radians per input frame
        let length = Int(((attenuation - 7.95) / (2.285 * width)).rounded(.up)) + 1
        return ((length + 15) / 16 * 16, passEdge, stopEdge, lower)
    }

    public init(ratio: StretchRatio, quality: ResamplerQuality) {
        let (_, attenuation) = quality.design
        let (taps, passEdge, stopEdge, lower) = Self.size(ratio: ratio, quality: quality)
        let layout: Layout
        if ratio.numerator <= Int64(Self.maximumExactPhases) {
            layout = .exact(phases: Int(ratio.numerator))
        } else {
            // Interpolating between rows errs by about (Δ ω)² / 8 for a tone at ω radians
            // per input frame, Δ = 1 / phases: 1024 phases keep a tone at 0.9 × Nyquist
            // near −110 dB. Downsampling narrows the band, and the rows with it.
            var phases = 64
            while Double(phases) < 1024 * lower { phases *= 2 }
            layout = .interpolated(phases: phases)
        }
        let key = Design(taps: taps, layout: layout, kaiserBeta: Self.beta(forAttenuation: attenuation), passEdge: passEdge, stopEdge: stopEdge)
        if let made = Self.recent.withLock({ $0[key] }) {
            self = made
            return
        }
        self.init(taps: taps, layout: layout, kaiserBeta: key.kaiserBeta, passEdge: passEdge, stopEdge: stopEdge)
        let made = self
        Self.recent.withLock {
            if $0.count >= Self.recentCapacity { $0.removeAll() }
            $0[key] = made
        }
    }

    /// What decides a design. A clock map's pieces (ratios a few ppm apart, all above 1)
    /// and a batch's files at one rate ask for the same filter again and again: the last
    /// few designs are kept (each about half a megabyte), so each is computed once.
    private struct Design: Hashable {
        let taps: Int
        let layout: Layout
        let kaiserBeta: Double
        let passEdge: Double
        let stopEdge: Double
    }
    private static let recentCapacity = 4
    private static let recent = Mutex<[Design: ResamplerFilter]>([:])

    public init(taps: Int, layout: Layout, kaiserBeta: Double, passEdge: Double, stopEdge: Double) {
        precondition(taps >= 16 && taps % 16 == 0 && passEdge > 0 && stopEdge > passEdge)
        self.taps = taps
        self.layout = layout
        self.kaiserBeta = kaiserBeta
        self.passEdge = passEdge
        self.stopEdge = stopEdge
        cutoff = min(1, (passEdge + stopEdge) / 2)
        let rows: Int, divisions: Double
        switch layout {
        case .exact(let p): (rows, divisions) = (p, Double(p))
        case .interpolated(let p): (rows, divisions) = (p + 1, Double(p))
        }
        var bank = [Float](repeating: 0, count: rows * taps)
        var row = [Double](repeating: 0, count: taps)
        let half = Double(taps / 2)
        let i0 = Self.besselI0(kaiserBeta)
        for p in 0..<rows {
            let mu = Double(p) / divisions
            var sum = 0.0
            for i in 0..<taps {
                let t = mu + (half - 1) - Double(i)
                let x = t / half
                let w = abs(x) <= 1 ? Self.besselI0(kaiserBeta * (1 - x * x).squareRoot()) / i0 : 0
                row[i] = cutoff * Self.sinc(cutoff * t) * w
                sum += row[i]
            }
            for i in 0..<taps { bank[p * taps + i] = Float(row[i] / sum) }
        }
        self.bank = bank
    }

    /// Kaiser's β for a stop-band attenuation in dB.
    static func beta(forAttenuation a: Double) -> Double {
        a > 50 ? 0.1102 * (a - 8.7) : a >= 21 ? 0.5842 * pow(a - 21, 0.4) + 0.07886 * (a - 21) : 0
    }

    static func sinc(_ x: Double) -> Double { x == 0 ? 1 : sin(Double.pi * x) / (Double.pi * x) }

    static func besselI0(_ x: Double) -> Double {
        var sum = 1.0, term = 1.0, k = 1.0
        let q = x * x / 4
        while term > 1e-17 * sum { term *= q / (k * k); sum += term; k += 1 }
        return sum
    }
}
