import Foundation
import Testing
@testable import Mixdown

/// The spectral stretch as the jobs run it (`SpectralStretch.guarded`) keeps its peaks
/// within 1 dB of its input's: waveforms whose peak is made by partials in phase (a square,
/// a sawtooth, a click train) came out 3 to 15 dB above it, clipped in 16-bit.
@Suite struct PeakGuardTests {
    static let rate = 48_000

    /// Naive (not band-limited) waveforms as sox synthesises them, 1.5 s, at `amplitude`.
    static func square(_ hz: Double, _ n: Int, amplitude: Float) -> [Float] {
        (0..<n).map { (Double($0) * hz / Double(rate)).truncatingRemainder(dividingBy: 1) < 0.5 ? amplitude : -amplitude }
    }
    static func sawtooth(_ hz: Double, _ n: Int, amplitude: Float) -> [Float] {
        (0..<n).map { amplitude * Float(2 * (Double($0) * hz / Double(rate)).truncatingRemainder(dividingBy: 1) - 1) }
    }
    static func clicks(_ hz: Double, _ n: Int, amplitude: Float) -> [Float] {
        let period = Int(Double(rate) / hz)
        return (0..<n).map { $0 % period < 3 ? amplitude : 0 }
    }

    static func peak(_ planes: [[Float]]) -> Float { planes.map { $0.map(abs).max() ?? 0 }.max() ?? 0 }

    @Test(arguments: [0.5, 0.8, 1.003, 1.25, 2.0])
    func peaksStayWithinOneDecibelOfTheInputs(ratio r: Double) throws {
        let n = 72_000
        let signals: [(String, [Float])] = [("square 100 Hz", Self.square(100, n, amplitude: 0.5)),
                                            ("sawtooth 220 Hz", Self.sawtooth(220, n, amplitude: 0.8)),
                                            ("clicks 10 Hz", Self.clicks(10, n, amplitude: 0.5))]
        let ratio = StretchRatio(Int64((r * 1000).rounded()), 1000)
        for (name, x) in signals {
            let input = [x, x.map { $0 * 0.9 }]
            let y = try renderAll(SpectralStretch.guarded(input: ArraySource(planes: input), ratio: ratio), blockSizes: [4096])
            #expect(y[0].count == Int(ratio.outputFrames(forInput: Int64(n))), "\(name)")
            let over = 20 * log10(Self.peak(y) / Self.peak(input))
            #expect(over <= 1.0, "\(name) by \(r): the peak is \(over) dB above the input's")
            // Unguarded, the same stretch takes the square over by more than 1 dB (so the
            // test can fail).
            if name == "square 100 Hz" && r != 1.003 {
                let raw = try renderAll(SpectralStretch(input: ArraySource(planes: input), ratio: ratio), blockSizes: [4096])
                #expect(20 * log10(Self.peak(raw) / Self.peak(input)) > 1.0, "\(name) by \(r): the unguarded stretch did not overshoot")
            }
        }
    }

    /// A full-scale square (every input sample at ±1 in 16-bit) gives no output sample past
    /// 32767/32768: an integer output clips nowhere the input did not.
    @Test func aFullScaleInputDoesNotClipAnIntegerOutput() throws {
        let x = Self.square(100, 48_000, amplitude: 1)
        let y = try renderAll(SpectralStretch.guarded(input: ArraySource(planes: [x]), ratio: StretchRatio(5, 4)), blockSizes: [4096])
        #expect(Self.peak(y) <= 32767 / 32768)
    }

    /// The same samples at every block size (ceilings fixed by position, not by the calls),
    /// and every frame of a sine the stretch's own (the guard passes what stays under its
    /// ceiling bit for bit).
    @Test func theSameSamplesAtEveryBlockSizeAndSinesUntouched() throws {
        let x = Self.sawtooth(220, 24_000, amplitude: 0.8)
        let ratio = StretchRatio(5, 4)
        let reference = try renderAll(SpectralStretch.guarded(input: ArraySource(planes: [x]), ratio: ratio), blockSizes: [4096])
        for sizes in [[1], [64], [512], [1000, 17, 3, 4096, 250]] {
            let y = try renderAll(SpectralStretch.guarded(input: ArraySource(planes: [x]), ratio: ratio), blockSizes: sizes)
            let first = zip(y[0], reference[0]).enumerated().first { $0.element.0 != $0.element.1 }?.offset
            #expect(y[0].count == reference[0].count && first == nil, "block sizes \(sizes): first difference at frame \(first ?? -1)")
        }
        // Frames away from the cuts are those the guard is given (the stretch finished by
        // QuietEdges), bit for bit.
        let raw = try renderAll(QuietEdgesTests.edgesOnly([x], ratio), blockSizes: [4096])[0]
        let kept = zip(reference[0], raw).filter { $0 == $1 }.count
        #expect(kept > 0 && kept < raw.count, "\(kept) of \(raw.count) frames untouched")
        let s = sine(440, frames: 24_000, amplitude: 0.5)
        let guarded = try renderAll(SpectralStretch.guarded(input: ArraySource(planes: [s]), ratio: ratio), blockSizes: [512])
        let given = try renderAll(QuietEdgesTests.edgesOnly([s], ratio), blockSizes: [512])
        #expect(guarded[0].count == given[0].count && zip(guarded[0], given[0]).allSatisfy { $0 == $1 })
        // And past the input's first frames (copied by QuietEdges: the start of the input
        // is a sound after silence), those are the stretch's own.
        let plain = try renderAll(SpectralStretch(input: ArraySource(planes: [s]), ratio: ratio), blockSizes: [512])
        let copied = 48 * 13   // the 1 ms lead, the 6 ms latest hand-over and the 6 ms fade
        #expect(zip(guarded[0], plain[0]).dropFirst(copied).allSatisfy { $0 == $1 })
        #expect(zip(guarded[0], plain[0]).prefix(copied).contains { $0 != $1 })
    }
}
