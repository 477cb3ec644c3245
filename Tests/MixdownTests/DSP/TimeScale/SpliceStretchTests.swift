import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

@Suite struct SpliceStretchTests {
    /// Noise bursts of `burst` frames every `every` frames, silence between (seeded).
    static func bursts(count: Int, burst: Int, every: Int, seed: UInt64 = 1) -> (samples: [Float], starts: [Int]) {
        var state = seed
        func next() -> Double {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Double(state >> 11) / Double(1 << 53)
        }
        var x = [Float](repeating: 0, count: count * every)
        var starts: [Int] = []
        for k in 0..<count {
            let s = k * every + every / 2
            starts.append(s)
            for i in s..<(s + burst) { x[i] = Float(next() * 1.6 - 0.8) }
        }
        return (x, starts)
    }

    /// Sounds after silence keep their place and every frame: each burst is in the output
    /// bit for bit, starting at round(start · M / N), at ratios from 0.8 to 1.25 (the time is
    /// all taken in the silences).
    @Test(arguments: [StretchRatio(4, 5), StretchRatio(19, 20), StretchRatio(1003, 1000), StretchRatio(21, 20), StretchRatio(5, 4)])
    func soundsAfterSilenceKeepTheirPlaceAndEveryFrame(ratio: StretchRatio) throws {
        let (x, starts) = Self.bursts(count: 8, burst: 960, every: 14_400)
        let node = try SpliceStretch(input: ArraySource(planes: [x, x]), ratio: ratio)
        let out = try renderAll(node, blockSizes: [4096])
        let m = ratio.outputFrames(forInput: Int64(x.count))
        #expect(out[0].count == Int(m))
        for s in starts {
            let at = Int(FrameRounding.standard.divide(Int128(s) * Int128(m), by: Int128(x.count)))
            #expect(Array(out[0][at..<(at + 960)]) == Array(x[s..<(s + 960)]), "burst at \(s), ratio \(ratio)")
            #expect(out[0][at - 1] == 0, "nothing before the burst at \(s)")
        }
        #expect(node.quietSplices == node.splices && node.splices > 0)
    }

    /// An attack after silence plays whole even when the rest of the time must be taken in
    /// the steady chord after it: its first 20 ms are the input's, bit for bit, at
    /// round(start · M / N) (a splice there once cost its first 3 ms 3 dB).
    @Test(arguments: [StretchRatio(1003, 1000), StretchRatio(997, 1000), StretchRatio(101, 100)])
    func anAttackPlaysWholeWhenTheChordAfterItIsSpliced(ratio: StretchRatio) throws {
        let at = 24_077, n = 96_000
        let chord = (0..<n).map { i -> Float in
            guard i >= at else { return 0 }
            let t = Double(i - at) / 48_000
            return Float([130.8, 523.3, 1046.5, 2093.0].reduce(0.0) { $0 + 0.3 * sin(2 * Double.pi * $1 * t + $1) } / 4)
        }
        let node = try SpliceStretch(input: ArraySource(planes: [chord, chord]), ratio: ratio)
        let out = try renderAll(node, blockSizes: [4096])
        let m = ratio.outputFrames(forInput: Int64(n))
        let o = Int(FrameRounding.standard.divide(Int128(at) * Int128(m), by: Int128(n)))
        #expect(out[0].count == Int(m) && node.splices > node.quietSplices)
        #expect(Array(out[0][o..<(o + 960)]) == Array(chord[at..<(at + 960)]))
        #expect(out[0][..<o].allSatisfy { $0 == 0 })
    }

    /// Channels that cancel (right = −left) are sound, not silence: the splices are made
    /// where the audio repeats, the same on both channels, so the right stays the left's negative
    /// to the bit and the level is kept.
    @Test func channelsThatCancelAreNotSilence() throws {
        let n = 96_000
        let left = (0..<n).map { i in Float(0.3 * sin(2 * Double.pi * 220 * Double(i) / 48_000) + 0.1 * sin(2 * Double.pi * 660 * Double(i) / 48_000)) }
        let node = try SpliceStretch(input: ArraySource(planes: [left, left.map { -$0 }]), ratio: StretchRatio(21, 20))
        let out = try renderAll(node, blockSizes: [512])
        #expect(out[0].count == 100_800)
        #expect(out[1] == out[0].map { -$0 })
        #expect(node.quietSplices == 0 && node.splices > 0)
        let level = out[0].reduce(0.0) { $0 + Double($1) * Double($1) } / Double(out[0].count)
        let input = left.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(n)
        #expect(abs(10 * log10(level / input)) < 0.1)
    }

    /// A steady tone is spliced where it repeats, by whole periods: the output stays within
    /// 0.5 % of the tone's level everywhere (no crossfade dip). The time to take is a whole
    /// number of periods here (240 frames at 200 Hz: 240, 4800 and -4800 frames); a last jump
    /// that is not cannot be clean on a pure tone (docs/splice.md).
    @Test func aSteadyToneHasNoDipAtItsSplices() throws {
        let n = 96_000
        let tone = (0..<n).map { i in Float(0.5 * sin(2 * Double.pi * 200 * Double(i) / 48_000)) }
        for ratio in [StretchRatio(401, 400), StretchRatio(19, 20), StretchRatio(21, 20)] {
            let node = try SpliceStretch(input: ArraySource(planes: [tone]), ratio: ratio)
            let out = try renderAll(node, blockSizes: [1000])[0]
            // Peaks over every period (240 frames) after the first.
            let peaks = stride(from: 240, to: out.count - 240, by: 240).map { a in out[a..<(a + 240)].map(abs).max()! }
            #expect(peaks.allSatisfy { abs($0 - 0.5) < 0.0025 }, "\(ratio): \(peaks.min()!)...\(peaks.max()!)")
        }
    }

    /// Every marker (a 20 ms noise burst over continuous tones) lands within the stated bound
    /// of input × R along a 10-minute recording.
    @Test(arguments: [StretchRatio(1003, 1000), StretchRatio(99, 100), StretchRatio(21, 20)])
    func markersLandWithinTheBound(ratio: StretchRatio) throws {
        let signal = { TestSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 2), length: 600 * 48_000, markerInterval: 30 * 48_000) }
        let bound = try SpliceStretch(input: signal(), ratio: ratio).bound
        #expect(bound == 480)
        let errors = try markerErrors(signal: signal, ratio: ratio, search: 700) { try SpliceStretch(input: $0, ratio: ratio) }
        #expect(errors.count == 19)
        #expect(errors.allSatisfy { abs($0) <= Double(bound) }, "\(errors)")
    }

    /// Inputs shorter than a crossfade, and none, still give exactly round(N · R) frames.
    @Test func tinyInputsGiveTheirExactLength() throws {
        for n in [0, 1, 2, 3, 7, 100, 383, 1000, 5000] {
            let x = (0..<n).map { Float(sin(Double($0) * 0.3)) * 0.5 }
            for ratio in [StretchRatio(1, 2), StretchRatio(19, 20), StretchRatio(21, 20), StretchRatio(2, 1), StretchRatio(4, 1), StretchRatio(1, 4)] {
                let out = try renderAll(try SpliceStretch(input: ArraySource(planes: [x, x]), ratio: ratio), blockSizes: [64])
                #expect(out[0].count == Int(ratio.outputFrames(forInput: Int64(n))), "\(n) frames at \(ratio)")
            }
        }
    }
    /// Six unrelated partials in stereo, each with its own phase between the channels (the
    /// bench's stereo probe): no jump matches them all, so the splices go through
    /// `PhaseContinuation` and every partial runs on with its phase. Over the middle second,
    /// each partial's complex amplitude in the mono sum is within 0.05 dB of the input's (a
    /// time-domain crossfade there left it 0.9 dB low at 0.99 and 1.01, 2.7 dB at 0.95), and
    /// its phase between the channels within 0.01 degrees.
    static let partials: [(hz: Double, degrees: Double)] = [(300, 0), (470, 30), (710, 60), (1130, 90), (1900, 120), (3100, 150)]

    static func unrelatedPartials(frames n: Int) -> [[Float]] {
        (0..<2).map { c in
            (0..<n).map { i in
                let t = Double(i) / 48_000
                return Float(partials.reduce(0.0) { $0 + 0.12 * sin(2 * Double.pi * $1.hz * t + (c == 1 ? $1.degrees * Double.pi / 180 : 0)) })
            }
        }
    }

    /// The complex amplitude of `hz` in x (Hann-weighted), as the bench measures it.
    static func amplitude(_ x: ArraySlice<Float>, hz: Double) -> (re: Double, im: Double) {
        var re = 0.0, im = 0.0, weight = 0.0
        for (k, v) in x.enumerated() {
            let w = 0.5 - 0.5 * cos(2 * Double.pi * Double(k) / Double(x.count - 1))
            let a = -2 * Double.pi * hz * Double(k) / 48_000
            re += Double(v) * w * cos(a)
            im += Double(v) * w * sin(a)
            weight += w
        }
        return (2 * re / weight, 2 * im / weight)
    }

    @Test(arguments: [StretchRatio(99, 100), StretchRatio(101, 100), StretchRatio(1003, 1000), StretchRatio(19, 20), StretchRatio(21, 20)])
    func unrelatedPartialsKeepTheirPhaseThroughTheSplices(ratio: StretchRatio) throws {
        let n = 4 * 48_000
        let x = Self.unrelatedPartials(frames: n)
        let node = try SpliceStretch(input: ArraySource(planes: x), ratio: ratio)
        let out = try renderAll(node, blockSizes: [4096])
        #expect(out[0].count == Int(ratio.outputFrames(forInput: Int64(n))))
        #expect(node.continuousSplices > 0 && node.quietSplices == 0)
        func middle(_ y: [Float]) -> ArraySlice<Float> { y[(y.count - 48_000) / 2..<((y.count - 48_000) / 2 + 48_000)] }
        let sumIn = zip(x[0], x[1]).map { $0 + $1 }, sumOut = zip(out[0], out[1]).map { $0 + $1 }
        for p in Self.partials {
            let a = Self.amplitude(middle(sumIn), hz: p.hz), b = Self.amplitude(middle(sumOut), hz: p.hz)
            let level = 10 * log10((b.re * b.re + b.im * b.im) / (a.re * a.re + a.im * a.im))
            #expect(abs(level) < 0.05, "\(p.hz) Hz at \(ratio): mono sum \(level) dB")
            let l = Self.amplitude(middle(out[0]), hz: p.hz), r = Self.amplitude(middle(out[1]), hz: p.hz)
            let degrees = (atan2(r.im * l.re - r.re * l.im, r.re * l.re + r.im * l.im)) * 180 / Double.pi
            #expect(abs(degrees - p.degrees) < 0.01, "\(p.hz) Hz at \(ratio): \(degrees) degrees between the channels")
        }
    }

    /// A held chord keeps its pitch through splices that match well: a crossfade there
    /// steps each note's phase (no jump is a whole number of every note's periods), which
    /// over a second reads as a pitch 0.1 to 0.3 cents off; through the continuation, each
    /// note's turn measured across the jump, within 0.03 cents. The notes are 2.7 to 2.9 of
    /// the continuation's frame bins apart (C major at 48 kHz), so their main lobes overlap.
    /// Each note's frequency is its phase advance between the two halves of the middle
    /// second, in cents from the input's, measured the same way.
    @Test(arguments: [StretchRatio(99, 100), StretchRatio(1003, 1000), StretchRatio(101, 100)])
    func aChordKeepsItsPitchThroughSplicesThatMatch(ratio: StretchRatio) throws {
        let notes = [261.63, 329.63, 392.0, 523.25]
        let n = 4 * 48_000
        let chord = (0..<n).map { i in Float(notes.reduce(0.0) { $0 + 0.2 * sin(2 * Double.pi * $1 * Double(i) / 48_000) }) }
        let node = try SpliceStretch(input: ArraySource(planes: [chord, chord]), ratio: ratio)
        let out = try renderAll(node, blockSizes: [4096])
        #expect(out[0].count == Int(ratio.outputFrames(forInput: Int64(n))))
        #expect(node.splices > 0 && node.quietSplices == 0)
        func cents(_ y: [Float], _ hz: Double) -> Double {
            let half = 24_000, start = (y.count - 2 * half) / 2
            let a = Self.amplitude(y[start..<(start + half)], hz: hz), b = Self.amplitude(y[(start + half)..<(start + 2 * half)], hz: hz)
            let advance = atan2(b.im * a.re - b.re * a.im, b.re * a.re + b.im * a.im)
            let expected = remainder(2 * Double.pi * hz * Double(half) / 48_000, 2 * Double.pi)
            let error = remainder(advance - expected, 2 * Double.pi) / (2 * Double.pi * Double(half) / 48_000)
            return 1200 * log2((hz + error) / hz)
        }
        for hz in notes {
            let off = cents(out[0], hz) - cents(chord, hz)
            #expect(abs(off) < 0.03, "\(hz) Hz at \(ratio): \(off) cents")
        }
    }

    /// The continuation gives the same samples at every block size, and where the partials
    /// stop and quiet follows it ends: the burst after the quiet is the input's again, bit
    /// for bit, where the ratio puts it (the time taken in the quiet), with nothing before it.
    @Test func theCopyResumesAfterTheContinuationAtEveryBlockSize() throws {
        let tone = 2 * 48_000, quiet = 24_000, burst = 9_600
        let partials = Self.unrelatedPartials(frames: tone)
        let (noise, _) = Self.bursts(count: 1, burst: burst, every: 2 * burst)
        let x = (0..<2).map { c in partials[c] + [Float](repeating: 0, count: quiet) + noise[(burst)..<(2 * burst)] + [Float](repeating: 0, count: quiet) }
        let start = tone + quiet
        for ratio in [StretchRatio(101, 100), StretchRatio(99, 100)] {
            var outputs: [[[Float]]] = []
            for sizes in [[1], [64], [512], [4096], [1, 700, 64, 4096, 13]] {
                let node = try SpliceStretch(input: ArraySource(planes: x), ratio: ratio)
                outputs.append(try renderAll(node, blockSizes: sizes))
                #expect(node.continuousSplices > 0 && node.quietSplices > 0, "\(ratio), blocks \(sizes)")
            }
            #expect(outputs.allSatisfy { $0 == outputs[0] }, "\(ratio): the samples depend on the block size")
            let out = outputs[0]
            let m = ratio.outputFrames(forInput: Int64(x[0].count))
            #expect(out[0].count == Int(m))
            let at = Int(FrameRounding.standard.divide(Int128(start) * Int128(m), by: Int128(x[0].count)))
            for c in 0..<2 {
                #expect(Array(out[c][at..<(at + burst)]) == Array(x[c][start..<(start + burst)]), "\(ratio): the burst, channel \(c)")
                #expect(out[c][(at - 4800)..<at].allSatisfy { $0 == 0 }, "\(ratio): the 100 ms before the burst")
            }
        }
    }

    /// Five partials (110 Hz to 1.6 kHz) and noise bursts every 6,800 frames, peaking at
    /// 0.97 (a deterministic generator: the same samples on every machine).
    static func partialsAndBursts(seconds: Int = 4) -> [Float] {
        let rate = 48_000.0, n = seconds * 48_000
        func fraction(_ v: Double) -> Double { v - v.rounded(.down) }
        var state: UInt32 = 12_349
        var x = [Double](repeating: 0, count: n)
        for i in 0..<n {
            let t = Double(i) / rate
            for j in 0..<5 {
                let f = 110 + 1_500 * fraction(Double(j + 4) * 0.618_033_988_7), a = 0.4 + 0.6 * fraction(Double(j) * 0.414_213_56)
                x[i] += a * sin(2 * Double.pi * f * t + Double(j * j))
            }
            state = state &* 1_664_525 &+ 1_013_904_223
            x[i] += 3.4 * (Double(state >> 8) / 16_777_216 - 0.5) * exp(-Double(i % 6_800) / 300)
        }
        let peak = x.map(abs).max()!
        return x.map { Float(0.97 * $0 / peak) }
    }

    /// The jobs' splice (`SpliceStretch.guarded`) keeps what the continuation makes under full
    /// scale where the input peaks under it, and passes every other frame bit for bit. In
    /// five partials with noise bursts no jump matches, so the splices go through the
    /// continuation, whose turned partials meet the bursts in new phases: the plain splice
    /// peaks at 1.025 (99/100) and 1.027 (101/100) where the input's peak is 0.97, and a 16-bit
    /// output clipped there. Guarded, every sample is at most 32767/32768, and each frame
    /// it changed lies within the guard's fall and recovery (2 x 128 frames, in blocks of
    /// 64) of a frame over that. The same samples at every block size.
    @Test(arguments: [StretchRatio(99, 100), StretchRatio(101, 100)])
    func theContinuationsOvershootStaysUnderFullScale(ratio: StretchRatio) throws {
        let x = Self.partialsAndBursts()
        let plain = try renderAll(SpliceStretch(input: ArraySource(planes: [x, x]), ratio: ratio), blockSizes: [4096])
        let guarded = try renderAll(SpliceStretch.guarded(input: ArraySource(planes: [x, x]), ratio: ratio), blockSizes: [4096])
        let ceiling = PeakGuard.belowFullScale
        #expect(plain[0].map(abs).max()! > 1, "\(ratio): the plain splice's peak \(plain[0].map(abs).max()!)")
        #expect(guarded[0].count == Int(ratio.outputFrames(forInput: Int64(x.count))) && guarded[1].count == guarded[0].count)
        #expect(guarded.allSatisfy { $0.allSatisfy { abs($0) <= ceiling } }, "\(ratio): guarded peak \(guarded[0].map(abs).max()!)")
        let over = plain[0].indices.filter { abs(plain[0][$0]) > ceiling }
        let changed = plain[0].indices.filter { plain[0][$0] != guarded[0][$0] || plain[1][$0] != guarded[1][$0] }
        #expect(!changed.isEmpty && !over.isEmpty)
        // The frames within the guard's fall and recovery of one over full scale.
        let reach = 2 * 128 + 64
        var nearOver = [Bool](repeating: false, count: plain[0].count)
        for o in over { for j in max(0, o - reach)...min(nearOver.count - 1, o + reach) { nearOver[j] = true } }
        let stray = changed.filter { !nearOver[$0] }
        #expect(stray.isEmpty, "\(ratio): \(stray.count) frames changed farther than \(reach) from any over full scale, first \(stray.prefix(5))")
        let irregular = try renderAll(SpliceStretch.guarded(input: ArraySource(planes: [x, x]), ratio: ratio), blockSizes: [1, 64, 777, 4096, 512])
        #expect(irregular == guarded, "\(ratio): the samples depend on the block sizes")
    }

    /// The guard keeps the splice's promise for a full-scale input: bursts of ±1 after silence
    /// come out bit for bit where the ratio puts them (a guard whose ceiling is just under full
    /// scale, as the spectral stretch's is, scaled them by 32767/32768).
    @Test(arguments: [StretchRatio(19, 20), StretchRatio(1003, 1000)])
    func aFullScaleInputPassesTheGuardBitForBit(ratio: StretchRatio) throws {
        let (noise, starts) = Self.bursts(count: 6, burst: 960, every: 14_400)
        let x = noise.map { $0 == 0 ? Float(0) : ($0 > 0 ? 1 : -1) }
        let out = try renderAll(SpliceStretch.guarded(input: ArraySource(planes: [x, x]), ratio: ratio), blockSizes: [4096])
        let m = ratio.outputFrames(forInput: Int64(x.count))
        #expect(out[0].count == Int(m))
        for s in starts {
            let at = Int(FrameRounding.standard.divide(Int128(s) * Int128(m), by: Int128(x.count)))
            #expect(Array(out[0][at..<(at + 960)]) == Array(x[s..<(s + 960)]), "burst at \(s), ratio \(ratio)")
        }
    }
}
