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

/// A sine from frame 0, computed per frame (no incremented phase).
final class SineSource: AudioNode {
    let format: AudioFormat
    let length: Int64?
    let hz: Double, amplitude: Double
    private var position: Int64 = 0
    init(hz: Double, rate: Int, frames: Int64, amplitude: Double = 0.5) {
        format = AudioFormat(sampleRate: rate, channelCount: 1)
        length = frames
        self.hz = hz
        self.amplitude = amplitude
    }
    func prepare(maximumFrames: Int) throws(MixdownError) {}
    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let n = Int(min(Int64(frames), length! - position))
        let w = 2 * Double.pi * hz / Double(format.sampleRate)
        for i in 0..<n { buffer[channel: 0][i] = Float(amplitude * sin(w * Double(position + Int64(i)))) }
        position += Int64(n)
        return RenderStatus(frames: n, ended: position == length!)
    }
}

/// Unit impulses at every `spacing` frames (from `spacing`), silence elsewhere.
final class ClickSource: AudioNode {
    let format: AudioFormat
    let length: Int64?
    let spacing: Int64
    private var position: Int64 = 0
    init(rate: Int, frames: Int64, spacing: Int64) {
        format = AudioFormat(sampleRate: rate, channelCount: 1)
        length = frames
        self.spacing = spacing
    }
    func prepare(maximumFrames: Int) throws(MixdownError) {}
    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let n = Int(min(Int64(frames), length! - position))
        buffer[channel: 0].update(repeating: 0, count: n)
        var k = (position + spacing - 1) / spacing * spacing
        while k < position + Int64(n) {
            if k > 0 { buffer[channel: 0][Int(k - position)] = 1 }
            k += spacing
        }
        position += Int64(n)
        return RenderStatus(frames: n, ended: position == length!)
    }
}

/// The conversions the issue names, and the two drift directions.
struct Conversion: CustomTestStringConvertible, Sendable {
    let name: String, from: Int, to: Int, ratio: StretchRatio
    var testDescription: String { name }
    var lowerNyquist: Double { Double(min(from, to)) / 2 }

    static let all: [Conversion] = [
        Conversion(name: "44.1 -> 48", from: 44_100, to: 48_000, ratio: StretchRatio(48_000, 44_100)),
        Conversion(name: "48 -> 44.1", from: 48_000, to: 44_100, ratio: StretchRatio(44_100, 48_000)),
        Conversion(name: "96 -> 44.1", from: 96_000, to: 44_100, ratio: StretchRatio(44_100, 96_000)),
        Conversion(name: "48 -> 16", from: 48_000, to: 16_000, ratio: StretchRatio(16_000, 48_000)),
        Conversion(name: "44.1 -> 48 x 1.0001309", from: 44_100, to: 48_000,
                   ratio: StretchRatio(48_000 * 10_001_309, 44_100 * 10_000_000)),
        Conversion(name: "48 x 1.0001309", from: 48_000, to: 48_000, ratio: StretchRatio(10_001_309, 10_000_000)),
        Conversion(name: "48 x 0.9998691", from: 48_000, to: 48_000, ratio: StretchRatio(9_998_691, 10_000_000)),
    ]
}

@Suite struct ResamplerTests {
    /// A tone from 20 Hz to 0.9 × the lower Nyquist comes out as the analytic sine at the
    /// output position (t = j / R input frames) with SNR >= 100 dB, and its gain within
    /// 0.01 dB (Float32 output; away from the edges, where the zeros before and after the
    /// input enter the filter).
    @Test(arguments: Conversion.all)
    func sineMatchesTheAnalyticIdeal(c: Conversion) throws {
        let top = 0.9 * c.lowerNyquist
        let n = Int64(c.from / 2)
        for hz in [20, 100, 1000, 5000, 0.5 * top, 0.8 * top, top] {
            let node = try Resampler(input: SineSource(hz: hz, rate: c.from, frames: n), ratio: c.ratio, outputRate: c.to)
            let y = try renderAll(node, blockSizes: [4096])[0]
            #expect(Int64(y.count) == c.ratio.outputFrames(forInput: n))
            let r = c.ratio.doubleValue, w = 2 * Double.pi * hz / Double(c.from)
            let edge = node.filter.taps * 2
            let range = edge..<(y.count - edge)
            let value = snr(y, { 0.5 * sin(w * Double($0) / r) }, range)
            #expect(value >= 100, "\(c.name): \(hz) Hz, SNR \(value) dB")
            // Gain: the least-squares amplitude of the output against the sine.
            var dot = 0.0, norm = 0.0
            for j in range { let s = 0.5 * sin(w * Double(j) / r); dot += Double(y[j]) * s; norm += s * s }
            let gain = 20 * log10(dot / norm)
            #expect(abs(gain) <= 0.01, "\(c.name): \(hz) Hz, gain \(gain) dB")
        }
    }

    /// Downsampling: a tone between the output's and the input's Nyquist is 100 dB down.
    @Test(arguments: [(96_000, 44_100, 30_000.0), (96_000, 44_100, 22_100.0), (48_000, 44_100, 23_000.0),
                      (48_000, 44_100, 22_060.0), (48_000, 16_000, 9_000.0), (48_000, 16_000, 20_000.0)])
    func toneAboveTheOutputNyquistIsRemoved(from: Int, to: Int, hz: Double) throws {
        let n = Int64(from / 2)
        let node = try Resampler(input: SineSource(hz: hz, rate: from, frames: n, amplitude: 1), ratio: StretchRatio(Int64(to), Int64(from)), outputRate: to)
        let y = try renderAll(node, blockSizes: [4096])[0]
        let edge = node.filter.taps
        let rms = (y[edge..<(y.count - edge)].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(y.count - 2 * edge)).squareRoot()
        let db = 20 * log10(rms * 2.0.squareRoot())     // against the input's RMS, 1/√2
        #expect(db <= -100, "\(hz) Hz at \(from) -> \(to): \(db) dB")
    }

    /// Clicks every 60 s of a 10-minute file land within 1 sample of 60 s × k × R.
    @Test(arguments: Conversion.all)
    func markersLandOnTheirFrames(c: Conversion) throws {
        let spacing = Int64(c.from) * 60, n = spacing * 10
        let node = try Resampler(input: ClickSource(rate: c.from, frames: n, spacing: spacing), ratio: c.ratio, outputRate: c.to, threads: 2)
        try node.prepare(maximumFrames: 65_536)
        let buffer = AudioBuffer(format: node.format, capacity: 65_536)
        var peaks: [(Int64, Float, Float, Float)] = []    // frame, previous, value, next
        var position: Int64 = 0
        var prev: Float = 0, best: (Int64, Float) = (-1, 0), bestPrev: Float = 0, pending = false
        var nextOfBest: Float = 0
        while true {
            let status = try node.render(into: buffer, frames: 65_536)
            let p = buffer[channel: 0]
            for i in 0..<status.frames {
                let v = p[i], j = position + Int64(i)
                if pending && j == best.0 + 1 { nextOfBest = v }
                if v > 0.2 && v > best.1 { best = (j, v); bestPrev = prev; pending = true }
                if pending && j > best.0 + 1000 {
                    peaks.append((best.0, bestPrev, best.1, nextOfBest))
                    best = (-1, 0); pending = false
                }
                prev = v
            }
            position += Int64(status.frames)
            if status.ended { break }
        }
        #expect(peaks.count == 9, "\(c.name): \(peaks.count) clicks")
        for (k, peak) in peaks.enumerated() {
            let (j, a, b, d) = peak
            // Sub-sample position from a parabola through the peak and its neighbours.
            let found = Double(j) + Double(a - d) / (2 * Double(a - 2 * b + d))
            let expected = Double(Int64(k + 1) * spacing) * c.ratio.doubleValue
            #expect(abs(found - expected) <= 1, "\(c.name): click \(k + 1) at \(found), expected \(expected)")
        }
    }

    /// An impulse at input frame k comes out centred on k · R: on that frame when it is whole.
    @Test(arguments: [StretchRatio(2, 1), StretchRatio(160, 147), StretchRatio(147, 160), StretchRatio(1, 3)])
    func impulseLandsOnItsFrame(ratio: StretchRatio) throws {
        let k = Int(ratio.denominator) * 37
        var x = [Float](repeating: 0, count: k * 2)
        x[k] = 1
        let y = try renderAll(Resampler(input: ArraySource(planes: [x]), ratio: ratio, outputRate: 48_000), blockSizes: [512])[0]
        let at = k * Int(ratio.numerator) / Int(ratio.denominator)
        let peak = y.indices.max { abs(y[$0]) < abs(y[$1]) }!
        #expect(peak == at)
        // Symmetric around it: the filter is centred.
        for d in 1...20 { #expect(abs(y[at - d] - y[at + d]) <= 1e-6, "d = \(d)") }
        if ratio.doubleValue >= 1 { #expect(y[at] == 1, "phase 0 of an upsampler passes the input frame itself") }
    }

    /// Block sizes and thread counts change nothing, for exact rows and the dense table.
    @Test(arguments: [StretchRatio(160, 147), StretchRatio(147, 320), StretchRatio(48_000 * 10_001_309, 44_100 * 10_000_000),
                      StretchRatio(9_998_691, 10_000_000)])
    func outputIsIndependentOfBlocksAndThreads(ratio: StretchRatio) throws {
        let x = (0..<30_011).map { (i: Int) -> Float in
            let t = Double(i)
            return Float(sin(t * 0.05) * 0.5 + sin(t * 0.61) * 0.25)
        }
        let y = (0..<30_011).map { (i: Int) -> Float in Float(sin(Double(i) * 0.03 + 1) * 0.5) }
        var reference: [[Float]]?
        for threads in [1, 2] {
            for blocks in BlockSizes.all {
                let out = try renderAll(Resampler(input: ArraySource(planes: [x, y]), ratio: ratio, outputRate: 48_000, threads: threads),
                                        blockSizes: blocks)
                #expect(Int64(out[0].count) == ratio.outputFrames(forInput: 30_011))
                if let reference { #expect(out == reference, "threads \(threads), blocks \(blocks)") } else { reference = out }
            }
        }
    }

    /// Channels run in pairs through the dense table (one set of coefficients per output for
    /// both): three channels that differ (a tone, its inverted twin, a tone mix) each come
    /// out as that channel alone does, and the twin cancels the tone exactly.
    @Test(arguments: [StretchRatio(10_001_309, 10_000_000), StretchRatio(9_998_691, 10_000_000),
                      StretchRatio(48_000 * 10_001_309, 44_100 * 10_000_000)])
    func channelsComeOutAsEachAloneDoes(ratio: StretchRatio) throws {
        let n = 20_011
        let tone = (0..<n).map { Float(sin(Double($0) * 0.05) * 0.5) }
        let mix = (0..<n).map { (i: Int) -> Float in Float(sin(Double(i) * 0.61) * 0.25 + sin(Double(i) * 0.013 + 1) * 0.4) }
        let planes = [tone, tone.map { -$0 }, mix]
        let together = try renderAll(Resampler(input: ArraySource(planes: planes), ratio: ratio, outputRate: 48_000), blockSizes: [777])
        #expect(together.count == 3 && Int64(together[0].count) == ratio.outputFrames(forInput: Int64(n)))
        for (c, plane) in planes.enumerated() {
            let alone = try renderAll(Resampler(input: ArraySource(planes: [plane]), ratio: ratio, outputRate: 48_000), blockSizes: [777])[0]
            #expect(together[c].map(\.bitPattern) == alone.map(\.bitPattern), "channel \(c)")
        }
        #expect(zip(together[0], together[1]).allSatisfy { $0 + $1 == 0 })
        #expect(together[0].map { abs($0) }.max()! > 0.4)
    }

    /// A node that starts at output frame j0 gives exactly frames j0... of the whole stream.
    @Test(arguments: [StretchRatio(160, 147), StretchRatio(1, 3), StretchRatio(48_000 * 10_001_309, 44_100 * 10_000_000)])
    func seekingIsExact(ratio: StretchRatio) throws {
        let x = (0..<20_000).map { Float(sin(Double($0) * 0.07) * 0.5) }
        let whole = try renderAll(Resampler(input: ArraySource(planes: [x]), ratio: ratio, outputRate: 48_000), blockSizes: [333])[0]
        for j0 in [Int64(0), 1, 17, 5_000, Int64(whole.count) - 3, Int64(whole.count)] {
            let first = Resampler.inputStart(forOutput: j0, ratio: ratio)
            let tail = try renderAll(Resampler(input: ArraySource(planes: [Array(x[Int(first)...])]), ratio: ratio, outputRate: 48_000,
                                               inputFrames: 20_000, startingAt: j0), blockSizes: [1000])[0]
            #expect(tail == Array(whole[Int(j0)...]), "from \(j0)")
        }
        // An input that does not start where the seek needs it is refused.
        #expect(throws: MixdownError.self) {
            try Resampler(input: ArraySource(planes: [x]), ratio: ratio, outputRate: 48_000, inputFrames: 20_000, startingAt: 5_000)
        }
    }

    /// Against libsamplerate's best converter on a tone mix in the pass band: the two
    /// references agree to better than 90 dB.
    @Test func agreesWithLibsamplerate() throws {
        let n = 44_100
        let x = (0..<n).map { i -> Float in
            let t = Double(i) / 44_100
            return Float(0.3 * sin(2 * .pi * 440 * t) + 0.2 * sin(2 * .pi * 3_000 * t + 1) + 0.1 * sin(2 * .pi * 12_000 * t + 2))
        }
        let ratio = StretchRatio(48_000, 44_100)
        let ours = try renderAll(Resampler(input: ArraySource(sampleRate: 44_100, planes: [x]), ratio: ratio, outputRate: 48_000), blockSizes: [4096])[0]
        let theirs = try renderAll(LibsamplerateResampler(input: ArraySource(sampleRate: 44_100, planes: [x]), ratio: ratio, outputRate: 48_000),
                                   blockSizes: [4096])[0]
        #expect(ours.count == theirs.count)
        let value = snr(ours, { Double(theirs[$0]) }, 2_000..<(ours.count - 2_000))
        #expect(value >= 90, "\(value) dB")
    }
}
