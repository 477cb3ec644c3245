import Foundation
import Testing
@testable import Mixdown

/// QuietEdges on the spectral stretch as the jobs run it (`SpectralStretch.guarded`): a
/// sound after silence starts as the input's own frames where the time map puts it, quiet
/// stays quiet, a floor of noise is kept, and the samples are the same at every block size.
@Suite struct QuietEdgesTests {
    static let rate = 48_000

    /// A chord from frame `at` (sines from phase 0: its first frames are tiny, as a real
    /// onset's), the right channel another chord: channels that differ.
    static func chordAfterSilence(at: Int, frames: Int) -> [[Float]] {
        func chord(_ hz: [Double], _ a: Double) -> [Float] {
            (0..<frames).map { i in
                i < at ? 0 : Float(hz.reduce(0.0) { $0 + a * sin(2 * .pi * $1 * Double(i - at) / Double(rate)) })
            }
        }
        return [chord([220, 700, 1500, 3100], 0.04), chord([330, 990, 2500], 0.05)]
    }

    /// A voice-like tone (110 Hz harmonics, 3 % vibrato) that stops dead at `stop`.
    static func toneThatStops(at stop: Int, frames: Int) -> [[Float]] {
        var phase = 0.0
        let left: [Float] = (0..<frames).map { i in
            phase += 2 * .pi * 110 * (1 + 0.03 * sin(2 * .pi * 1.3 * Double(i) / Double(rate))) / Double(rate)
            return i < stop ? Float((1..<30).reduce(0.0) { $0 + 0.02 * sin(Double($1) * phase + Double($1 * $1)) }) : 0
        }
        return [left, left.map { $0 * 0.5 }]
    }

    static func stretched(_ planes: [[Float]], _ ratio: StretchRatio, blockSizes: [Int] = [4096], edges: Bool = true) throws -> [[Float]] {
        let source = ArraySource(planes: planes)
        let node: AudioNode = edges ? try SpectralStretch.guarded(input: source, ratio: ratio)
                                    : try SpectralStretch(input: source, ratio: ratio)
        return try renderAll(node, blockSizes: blockSizes)
    }

    /// The spectral stretch finished by QuietEdges, without `guarded`'s peak guard.
    static func edgesOnly(_ planes: [[Float]], _ ratio: StretchRatio) throws -> AudioNode {
        let source = ArraySource(planes: planes)
        let history = InputHistory(channelCount: planes.count, length: source.length)
        let stretch = try SpectralStretch(input: InputTap(input: source, history: history), ratio: ratio)
        return QuietEdges(input: stretch, history: history, ratio: ratio)
    }

    static func level(_ planes: [[Float]], _ range: Range<Int>) -> Double {
        var sum = 0.0
        for p in planes { for t in range { sum += Double(p[t]) * Double(p[t]) } }
        return 10 * log10(sum / Double(planes.count * range.count) + 1e-30)
    }

    static func outputFrame(_ p: Int, _ r: StretchRatio) -> Int {
        Int(FrameRounding.standard.divide(Int128(p) * Int128(r.numerator), by: Int128(r.denominator)))
    }

    /// Stretching, the chord's frames from 1 ms before its first frame over -60 dBFS to
    /// 3 ms after it are the input's, bit for bit, from round(p·R) on; the output from 20
    /// ms to 3.3 ms before it is silence, as the input is (the gate's 2 ms margin, a block
    /// to its edge and a block of ramp). The stretch alone loses more than
    /// 1 dB of its first 3 ms from 1.25 on, and puts energy before it (so this can fail).
    /// Near ratio 1 the stretch (the long frame alone) renormalises after an onset, and
    /// nothing is copied: the first 3 ms within 0.5 dB of the input's, landing within
    /// (R − 1) times half a frame, plus 2, of round(p·R), where the phase reset puts it (a
    /// copy handed over to a stretch some frames apart, and noise bursts came back combed:
    /// castanets' round trip 2.9 dB from the input where the stretch alone is 1.5).
    @Test(arguments: [(1003, 1000), (105, 100), (5, 4), (3, 2), (2, 1)])
    func aSoundAfterSilenceStartsAsTheInput(_ ratio: (Int64, Int64)) throws {
        let r = StretchRatio(ratio.0, ratio.1)
        let at = 24_011
        let x = Self.chordAfterSilence(at: at, frames: 48_000)
        let p = (at..<48_000).first { t in x.contains { abs($0[t]) > 1e-3 } }!
        let y = try Self.stretched(x, r)
        let o = Self.outputFrame(p, r)
        let renormalised = SpectralStretch.crossover(for: r) == nil
        if renormalised {
            let level = Self.level(y, o..<(o + 144)) - Self.level(x, p..<(p + 144))
            #expect(abs(level) < 0.5, "by \(r.doubleValue): the first 3 ms \(String(format: "%+.2f", level)) dB")
            for c in 0..<2 {
                let lag = bestLag(Array(x[c][(p - 24)..<(p + 504)]), Array(y[c][(o - 24)..<(o + 504)]), start: 24, length: 480, maxLag: 24)
                #expect(Double(abs(lag)) <= abs(r.doubleValue - 1) * 1024 + 2, "by \(r.doubleValue), channel \(c): the onset lands \(lag) frames off")
            }
        }
        for c in 0..<2 {
            let out = Array(y[c][(o - 48)..<(o + 144)]), input = Array(x[c][(p - 48)..<(p + 144)])
            #expect(renormalised || out == input, "by \(r.doubleValue), channel \(c): the onset is not the input's")
            let before = y[c][(o - 960)..<(o - 160)]
            #expect(before.allSatisfy { $0 == 0 }, "by \(r.doubleValue): energy before the onset: first at \((before.firstIndex { $0 != 0 } ?? 0) - o), last at \((before.lastIndex { $0 != 0 } ?? 0) - o), largest \(before.map(abs).max()!)")
        }
        if r.doubleValue >= 1.25 {
            let plain = try Self.stretched(x, r, edges: false)
            let lost = Self.level(x, p..<(p + 144)) - Self.level(plain, o..<(o + 144))
            #expect(lost > 1, "by \(r.doubleValue): the stretch alone lost only \(lost) dB")
            #expect(Self.level(plain, (o - 960)..<(o - 96)) > -80)
        }
    }

    /// A tone that stops dead leaves silence from 4 ms after where the time map puts its end
    /// (the gate's 2 ms margin, a block to its edge and a block of ramp), at every ratio; the
    /// stretch alone rings on (so this can fail).
    @Test(arguments: [(1, 2), (4, 5), (105, 100), (5, 4), (2, 1)])
    func aToneThatStopsLeavesSilence(_ ratio: (Int64, Int64)) throws {
        let r = StretchRatio(ratio.0, ratio.1)
        let stop = 30_000
        let x = Self.toneThatStops(at: stop, frames: 48_000)
        let y = try Self.stretched(x, r)
        let end = Self.outputFrame(stop, r)
        for c in 0..<2 {
            let ringing = y[c][(end + 192)...]
            #expect(ringing.allSatisfy { $0 == 0 }, "by \(r.doubleValue), channel \(c): it rings after the end: first at \((ringing.firstIndex { $0 != 0 } ?? 0) - end), last at \((ringing.lastIndex { $0 != 0 } ?? 0) - end), largest \(ringing.map(abs).max()!)")
        }
        // Before the end the tone keeps its level.
        #expect(abs(Self.level(y, (end - 2400)..<(end - 480)) - Self.level(x, (stop - 2400 / 2)..<(stop - 480 / 2))) < 1)
        let plain = try Self.stretched(x, r, edges: false)
        #expect(Self.level(plain, (end + 576)..<(end + 864)) - Self.level(x, (stop - 480)..<stop) > -60,
                "by \(r.doubleValue): the stretch alone does not ring")
    }

    /// A floor of noise under -60 dBFS is quiet, and kept: away from a sound the gate passes
    /// it as the stretch gives it, and after a sound's end the output falls to the floor's
    /// level (at most 6 dB over it), not to silence.
    @Test func aFloorOfNoiseIsKept() throws {
        var seed: UInt64 = 7
        func noise() -> Float {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: seed >> 11) - (1 << 52)) / Float(1 << 52) * 0.0005   // about -71 dBFS
        }
        let frames = 72_000, stop = 30_000
        let tone = Self.toneThatStops(at: stop, frames: frames)
        let x = tone.map { plane in plane.enumerated().map { $0.offset >= 12_000 ? $0.element + noise() : noise() } }
        let r = StretchRatio(5, 4)
        let y = try renderAll(Self.edgesOnly(x, r), blockSizes: [4096])
        let plain = try Self.stretched(x, r, edges: false)
        // Far from the tone (its end is at output 37500): the stretch's own frames, but for
        // the few blocks whose noise the stretch made more than 6 dB louder than the input's
        // loudest block near them; the level the same within 0.2 dB.
        let far = 60_000..<85_000
        let untouched = far.filter { y[0][$0] == plain[0][$0] }.count
        #expect(untouched > far.count * 9 / 10, "\(untouched) of \(far.count) frames untouched; levels: input \(Self.level(x, 48_000..<68_000)), stretch \(Self.level(plain, far)), finished \(Self.level(y, far))")
        #expect(abs(Self.level(y, far) - Self.level(plain, far)) < 0.2)
        // Just after the end: the floor's level within 6 dB.
        let end = Self.outputFrame(stop, r)
        let floor = Self.level(x, 40_000..<70_000)
        let after = Self.level(y, (end + 576)..<(end + 864))
        #expect(after < floor + 6.5 && after > floor - 6, "after the end \(after) dB, the floor \(floor) dB")
    }

    /// L = −R after silence stays exactly so: the copy and the gate treat the channels alike.
    @Test func oppositeChannelsStayOpposite() throws {
        let chord = Self.chordAfterSilence(at: 9_000, frames: 30_000)[0]
        let y = try Self.stretched([chord, chord.map { -$0 }], StretchRatio(3, 2))
        #expect(zip(y[0], y[1]).allSatisfy { $0 + $1 == 0 })
        #expect(Self.level(y, 20_000..<40_000) > -40)
    }

    /// The same samples at every block size, on bursts and silences that give copies of
    /// every kind: one that hands over, one cut short by the next (a 4 ms burst, 21 ms of
    /// silence, then a sound), and the start of the input.
    @Test(arguments: [(3, 2), (4, 5)])
    func theSameSamplesAtEveryBlockSize(_ ratio: (Int64, Int64)) throws {
        let r = StretchRatio(ratio.0, ratio.1)
        let chord = Self.chordAfterSilence(at: 0, frames: 30_000)
        let x = chord.map { plane in
            plane.enumerated().map { i, v -> Float in
                (i < 4_000) || (i >= 9_000 && i < 9_192) || (i >= 10_200 && i < 16_000) || i >= 24_000 ? v : 0
            }
        }
        let reference = try Self.stretched(x, r, blockSizes: [4096])
        for sizes in [[1], [64], [512], [1000, 17, 3, 4096, 250]] {
            let y = try Self.stretched(x, r, blockSizes: sizes)
            #expect(y == reference, "block sizes \(sizes)")
        }
        #expect(reference[0].count == Self.outputFrame(30_000, r))
    }

    /// Short and odd inputs at the extreme ratios: the exact length, and the same samples at
    /// blocks of 1 and 4096 (each decision waits for what it reads, even where the input ends
    /// inside the gate's margin or a copy).
    @Test(arguments: [(1, 4), (1, 2), (1003, 1000), (2, 1), (4, 1)])
    func shortInputsAtEveryRatio(_ ratio: (Int64, Int64)) throws {
        let r = StretchRatio(ratio.0, ratio.1)
        for n in [1, 31, 33, 100, 1000, 3000] where Self.outputFrame(n, r) >= 1 {
            let chord = Self.chordAfterSilence(at: 0, frames: n)
            let burst = chord.map { plane in plane.enumerated().map { $0.offset >= n / 2 ? $0.element * 8 : 0 } }
            for x in [chord, burst] {
                let a = try Self.stretched(x, r, blockSizes: [4096])
                let b = try Self.stretched(x, r, blockSizes: [1])
                #expect(a[0].count == Self.outputFrame(n, r), "\(n) frames by \(r.doubleValue)")
                #expect(a == b, "\(n) frames by \(r.doubleValue)")
            }
        }
    }
}
