import Foundation
import Testing
@testable import Mixdown
import MixdownKernels

/// The spectral stretch's long frame at a lower rate (docs/spectral.md): the factor each
/// rate takes, the filters by physics (a tone decimated and interpolated back is the tone),
/// and the stretch decimated against the same stretch at the full rate.
@Suite struct DecimationTests {
    /// The long frame runs on 5.5 to 6 kHz wherever the filters fit: its frame is 256
    /// frames there at every rate from 22.05 kHz up; at 8 kHz it stays at the full rate.
    @Test func eachRateTakesTheLargestFactorItsFiltersAllow() throws {
        for (rate, factor) in [(8_000, 1), (22_050, 4), (44_100, 8), (48_000, 8), (96_000, 16), (192_000, 32)] {
            let source = ArraySource(sampleRate: rate, planes: [[Float](repeating: 0, count: 4 * rate)])
            let node = try SpectralStretch(input: source, ratio: StretchRatio(5, 4))
            #expect(node.longFrameDecimation == factor, "\(rate) Hz")
            if factor > 1 { #expect(node.frameSize / factor == 256, "\(rate) Hz") }
            #expect(try SpectralStretch(input: source, ratio: StretchRatio(5, 4), decimate: false).longFrameDecimation == 1)
            #expect(try SpectralStretch(input: source, ratio: StretchRatio(5, 4), crossoverHz: nil).longFrameDecimation == 1)
        }
    }

    /// A tone in the long frame's band through the decimator and the interpolator (48 kHz,
    /// by 8) comes back as itself: within -100 dB of it, every sample (the filters' 120 dB,
    /// and the floats).
    @Test(arguments: [110.0, 440, 1000, 1130])
    func aToneDecimatedAndInterpolatedBackIsTheTone(hz: Double) throws {
        let rate = 48_000.0, bin = rate / 2048
        let filters = try #require(DecimationFilters(rate: rate, analysed: 900 + 10 * bin, margin: 24 * bin, sounded: 900,
                                                     spread: 4 * bin, maximum: 16))
        #expect(filters.factor == 8)
        let n = 48_000, d = 8, outputs = 2048
        let x = (0..<n).map { Float(0.5 * sin(2 * Double.pi * hz * Double($0) / rate + 0.3)) }
        let input = ContractCheck.wrap(ArraySource(planes: [x]))
        try input.prepare(maximumFrames: 4096)
        let window = InputWindow(input: input, length: Int64(n), capacity: n + 4096, maximumPull: 4096,
                                 start: -2048, label: "test")
        try window.slide(from: -2048, to: Int64(n) + 2048)
        let decimated = DecimatedInput(channels: 1, capacity: n / d + 1024, filter: filters.decimator, factor: d, start: -200)
        decimated.fill(through: Int64(n / d + 100), keeping: -200, from: window)
        // As the stretch uses them: a hop of decimated frames appended at a time, and a
        // block interpolated once the frames it reads are in.
        let output = DecimatedOutput(channels: 1, outputs: outputs, filter: filters.interpolator, factor: d, first: -200)
        let out = AudioBuffer(format: AudioFormat(sampleRate: 48_000, channelCount: 1), capacity: outputs)
        var worst = 0.0, from: Int64 = -1_600
        while from + Int64(outputs) + 4_096 < Int64(n) {
            while output.end * Int64(d) < from + Int64(outputs) + output.lookahead {
                let at = output.end
                output.append({ _ in decimated.pointer(0, at: at) }, count: 32, gain: 1, keeping: output.firstRead(from: from))
            }
            out[channel: 0].update(repeating: 0, count: outputs)
            output.interpolate(from: from, into: out, envelope: nil)
            for t in 0..<outputs where from + Int64(t) >= 2_048 {
                worst = max(worst, abs(Double(out[channel: 0][t]) - Double(x[Int(from) + t])))
            }
            from += Int64(outputs)
        }
        #expect(20 * log10(worst / 0.5) < -100, "\(hz) Hz: \(20 * log10(worst / 0.5)) dB")
    }

    /// A stereo chord whose notes lie below the crossover, in it and above it, stretched with
    /// the long frame at an eighth of the rate and at the full rate: every 10 ms block of
    /// each channel at the same level within 0.05 dB (measured: up to 0.011 dB at 2, 0.009
    /// at 5/4; waveforms differ by a constant phase per partial, which the first frame sets).
    @Test(arguments: [StretchRatio(4, 5), StretchRatio(5, 4), StretchRatio(2, 1)])
    func theLongFrameAtALowerRateSoundsAsAtTheFullRate(ratio: StretchRatio) throws {
        let n = 96_000, fade = 2_400
        func notes(_ hz: [Double], _ phase: Double) -> [Float] {
            (0..<n).map { i in
                let g = i < fade ? Double(i) / Double(fade) : 1
                return Float(g * g * hz.reduce(0.0) { $0 + 0.15 * sin(2 * Double.pi * $1 * Double(i) / 48_000 + phase) })
            }
        }
        let planes = [notes([110, 523, 659, 880, 1320], 0), notes([165, 330, 784, 1100], 1)]
        let decimated = try SpectralStretch(input: ArraySource(planes: planes), ratio: ratio)
        let full = try SpectralStretch(input: ArraySource(planes: planes), ratio: ratio, decimate: false)
        #expect(decimated.longFrameDecimation == 8 && full.longFrameDecimation == 1)
        let a = try renderAll(decimated, blockSizes: [4096]), b = try renderAll(full, blockSizes: [4096])
        var worst = 0.0
        for c in 0..<2 {
            #expect(a[c].count == b[c].count)
            for s in stride(from: 4_800, to: a[c].count - 4_800 - 480, by: 480) {
                func rms(_ y: [Float]) -> Double { (y[s..<(s + 480)].reduce(0.0) { $0 + Double($1) * Double($1) } / 480).squareRoot() }
                worst = max(worst, abs(20 * log10(rms(a[c]) / rms(b[c]))))
            }
        }
        #expect(worst < 0.05, "\(ratio): \(worst) dB")
    }
}
