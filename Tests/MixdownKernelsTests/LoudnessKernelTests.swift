import Foundation
import MixdownKernels
import Testing

/// The loudness meter's kernels (K-weighting, sample peak, oversampled peak) on every SIMD
/// path against their scalar references, bit for bit, for lengths 0...67 at misaligned
/// offsets and for 1 to 7 channels (so the four-, two- and one-channel lanes all run).
@Suite struct LoudnessKernelTests {
    /// BS.1770's 48 kHz K-weighting coefficients as the recommendation prints them.
    static let coefficients: [Double] = [1.53512485958697, -2.69169618940638, 1.19839281085285,
                                         -1.69065929318241, 0.73248077421585,
                                         1.0, -2.0, 1.0, -1.99004745483398, 0.99007225036621]

    @Test(arguments: KernelPathTests.simdPaths)
    func kWeightingMatchesScalar(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        for channels in 1...7 {
            for n in KernelPathTests.lengths {
                for off in [0, 1, 3] {
                    let planes = (0..<channels).map { c in KernelPathTests.data(n + off, seed: UInt64(n * 13 + channels * 7 + off + c * 1000)) }
                    // A state carried in from an earlier call, and energies already summed.
                    let state0 = (0..<(4 * channels)).map { i in Double(i % 5) * 0.01 - 0.02 }
                    let energy0 = (0..<channels).map { i in Double(i) * 0.5 }
                    var refState = state0, gotState = state0, refEnergy = energy0, gotEnergy = energy0
                    planes.withPlanePointers(offset: off) { src in
                        mx_kweight_scalar(&refEnergy, &refState, src, channels, n, Self.coefficients)
                        k.kweight(&gotEnergy, &gotState, src, channels, n, Self.coefficients)
                    }
                    #expect(refState.map(\.bitPattern) == gotState.map(\.bitPattern), "state: \(channels) ch, n=\(n), off=\(off)")
                    #expect(refEnergy.map(\.bitPattern) == gotEnergy.map(\.bitPattern), "energy: \(channels) ch, n=\(n), off=\(off)")
                }
            }
        }
    }

    @Test(arguments: KernelPathTests.simdPaths)
    func peaksMatchScalar(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        let taps = 16
        let bank = (0..<(4 * taps)).map { Float(sin(Double($0) * 0.7)) / 8 }
        for n in KernelPathTests.lengths {
            for off in KernelPathTests.offsets {
                // NaNs and infinities among the samples: NaN is passed over on every path.
                let x = KernelPathTests.data(n + taps + off, seed: UInt64(n * 3 + off), specials: true)
                x.withUnsafeBufferPointer { p in
                    let from = p.baseAddress! + off
                    #expect(mx_peak_scalar(from, n).bitPattern == k.peak(from, n).bitPattern, "peak n=\(n) off=\(off)")
                    for pairs in 1...4 {
                        let ref = mx_peak_interp_scalar(from, n, bank, pairs, taps)
                        let got = k.peak_interp(from, n, bank, pairs, taps)
                        #expect(ref.bitPattern == got.bitPattern, "peak_interp n=\(n) off=\(off) pairs=\(pairs)")
                    }
                }
            }
        }
    }

    /// The scalar references against their definitions.
    @Test func peaksFollowTheirDefinitions() {
        let x: [Float] = [0.25, -0.75, .nan, 0.5, -0.125]
        #expect(mx_peak_scalar(x, 5) == 0.75)
        #expect(mx_peak_scalar(x, 0) == 0)
        // An impulse through one pair: every window puts it at another tap, so the points
        // are every tap of the phase and of its mirror: the largest magnitude tap.
        let taps = 16
        var impulse = [Float](repeating: 0, count: 2 * taps)
        impulse[taps - 1] = 1
        let w = (0..<taps).map { Float($0 == 5 ? -0.875 : 0.125) }
        #expect(mx_peak_interp_scalar(impulse, taps, Self.pair(w), 1, taps) == 0.875)
        // On noise: the pair's points are the phase and its mirror, summed here in Double.
        let row = (0..<taps).map { Float(sin(Double($0) * 0.9 + 0.3)) / 4 }
        let y = KernelPathTests.data(60 + taps, seed: 77)
        var phase = 0.0, mirror = 0.0
        for i in 0..<60 {
            phase = max(phase, abs((0..<taps).reduce(0.0) { $0 + Double(row[$1]) * Double(y[i + $1]) }))
            mirror = max(mirror, abs((0..<taps).reduce(0.0) { $0 + Double(row[taps - 1 - $1]) * Double(y[i + $1]) }))
        }
        let both = Double(mx_peak_interp_scalar(y, 60, Self.pair(row), 1, taps))
        #expect(abs(both - max(phase, mirror)) < 1e-6, "\(both) against \(phase), \(mirror)")
        #expect(abs(phase - mirror) > 0.01, "the row and its mirror must read differently for the test to tell")
    }

    /// A phase's row as a pair: its even part, then its odd part.
    static func pair(_ w: [Float]) -> [Float] {
        let t = w.count
        return (0..<(t / 2)).map { (w[$0] + w[t - 1 - $0]) / 2 } + (0..<(t / 2)).map { (w[$0] - w[t - 1 - $0]) / 2 }
    }

    /// A 997 Hz sine at 48 kHz through K-weighting gains BS.1770's +0.691 dB... less the
    /// 0.691 dB the loudness formula takes back: a full-scale sine reads -3.01 LUFS.
    @Test func kWeightedFullScaleSineReadsMinusThreeLUFS() {
        let n = 48_000 * 2
        let x = (0..<n).map { Float(sin(2 * Double.pi * 997 * Double($0) / 48_000)) }
        var state = [Double](repeating: 0, count: 4), energy = [0.0]
        [x].withPlanePointers(offset: 0) { src in mx_kweight_scalar(&energy, &state, src, 1, n, Self.coefficients) }
        // The second second only: the filter has settled.
        energy = [0.0]
        [x].withPlanePointers(offset: 48_000) { src in mx_kweight_scalar(&energy, &state, src, 1, 48_000, Self.coefficients) }
        let lufs = -0.691 + 10 * log10(energy[0] / 48_000)
        #expect(abs(lufs - -3.01) < 0.02, "\(lufs)")
    }
}
