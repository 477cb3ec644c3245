import Foundation
import MixdownKernels
import Testing

/// mx_fft against the definition of the DFT, and its inverse against the input.
@Suite struct FFTTests {
    static func data(_ n: Int, seed: UInt64) -> [Double] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Double(Int64(bitPattern: s >> 11) % 2000) / 1000 - 1
        }
    }

    @Test(arguments: [1, 2, 4, 8, 16, 64, 256, 1024])
    func equalsTheDirectDFT(n: Int) {
        let re0 = Self.data(n, seed: 1), im0 = Self.data(n, seed: 2)
        var re = re0, im = im0
        #expect(mx_fft(&re, &im, n, 0) == 0)
        for k in 0..<n {
            var sr = 0.0, si = 0.0
            for j in 0..<n {
                let a = -2 * Double.pi * Double(j * k % n) / Double(n)
                sr += re0[j] * cos(a) - im0[j] * sin(a)
                si += re0[j] * sin(a) + im0[j] * cos(a)
            }
            #expect(abs(re[k] - sr) < 1e-9 * Double(n) && abs(im[k] - si) < 1e-9 * Double(n), "n \(n) bin \(k)")
        }
    }

    @Test func theInverseUndoesTheTransformAtAMillionPoints() {
        let n = 1 << 20
        let re0 = Self.data(n, seed: 3)
        var re = re0, im = [Double](repeating: 0, count: n)
        #expect(mx_fft(&re, &im, n, 0) == 0)
        #expect(mx_fft(&re, &im, n, 1) == 0)
        var worst = 0.0
        for i in 0..<n { worst = max(worst, abs(re[i] / Double(n) - re0[i]), abs(im[i] / Double(n))) }
        #expect(worst < 1e-12)
    }

    @Test func anImpulseAtJHasUnitMagnitudeAndLinearPhase() {
        let n = 512, j = 37
        var re = [Double](repeating: 0, count: n), im = re
        re[j] = 1
        #expect(mx_fft(&re, &im, n, 0) == 0)
        for k in 0..<n {
            let a = -2 * Double.pi * Double(j * k) / Double(n)
            #expect(abs(re[k] - cos(a)) < 1e-12 && abs(im[k] - sin(a)) < 1e-12)
        }
    }
}
