import Foundation
import MixdownKernels
import Testing
@testable import Mixdown

/// SNR in dB of `y` against `ideal` over `range`.
func snr(_ y: [Float], _ ideal: (Int) -> Double, _ range: Range<Int>) -> Double {
    var s = 0.0, e = 0.0
    for j in range { let v = ideal(j); s += v * v; e += (Double(y[j]) - v) * (Double(y[j]) - v) }
    return 10 * log10(s / max(e, 1e-300))
}

@Suite struct PolyphaseVarispeedTests {
    static let drift = StretchRatio(10_001_309, 10_000_000)

    /// A sine through varispeed equals the sine at f / R, phase-continuous from t = 0.
    @Test(arguments: [100.0, 1000, 5000, 10_000, 15_000, 18_000])
    func sineMatchesTheAnalyticIdeal(hz: Double) throws {
        let n = 96_000, rate = 48_000.0
        let x = (0..<n).map { Float(0.5 * sin(2 * Double.pi * hz * Double($0) / rate)) }
        for ratio in [Self.drift, StretchRatio(9_998_691_805, 10_000_000_000), StretchRatio(101, 100), StretchRatio(4, 5), StretchRatio(5, 4)] {
            let node = try PolyphaseVarispeed(input: ArraySource(planes: [x]), ratio: ratio)
            let y = try renderAll(node, blockSizes: [4096])[0]
            #expect(Int64(y.count) == ratio.outputFrames(forInput: Int64(n)))
            // Away from the edges, where the input's zero padding enters the filter.
            let r = ratio.doubleValue
            let passband = hz < 0.94 * 0.5 * rate * min(1, r) * 0.95
            let value = snr(y, { 0.5 * sin(2 * Double.pi * hz * (Double($0) / r) / rate) }, 200..<(y.count - 200))
            if passband && hz <= 15_000 { #expect(value >= 90, "\(hz) Hz, R = \(ratio)") }
        }
    }
}
