import CEbur128
import Foundation
import MixdownKernels
import Testing
@testable import Mixdown

/// The loudness meter against EBU Tech 3341 (loudness, true peak) and Tech 3342 (loudness
/// range), with the test signals built from their published descriptions, and against
/// libebur128 block for block.
@Suite struct LoudnessMeterTests {
    /// One part of a test signal: a sine of `frequency` Hz whose peak is `dbfs` on every
    /// channel listed (others silent), for `seconds`.
    struct Tone {
        var dbfs: Double
        var seconds: Double
        var frequency = 1000.0
        var phaseDegrees = 0.0
        var channels: [Int]? = nil
    }

    /// Planar samples of `tones` one after another (the sine's phase runs on).
    static func signal(_ tones: [Tone], channels: Int = 2, rate: Int = 48_000) -> [[Float]] {
        var planes = [[Float]](repeating: [], count: channels)
        var n0 = 0
        for t in tones {
            let count = Int((t.seconds * Double(rate)).rounded())
            let a = pow(10, t.dbfs / 20)
            for c in 0..<channels {
                let on = t.channels?.contains(c) ?? true
                planes[c] += (0..<count).map { i in
                    on ? Float(a * sin(2 * .pi * t.frequency * Double(n0 + i) / Double(rate) + t.phaseDegrees * .pi / 180)) : 0
                }
            }
            n0 += count
        }
        return planes
    }

    /// The meter fed `planes` in blocks cycling through `blocks`.
    static func measure(_ planes: [[Float]], rate: Int = 48_000, blocks: [Int] = [4096], threads: Int = 1,
                        finePeak: Bool = false) throws -> (LoudnessMeasurement, [Double]) {
        let meter = try LoudnessMeter(sampleRate: rate, channelCount: planes.count, maximumFrames: 4096, threads: threads, finePeak: finePeak)
        feed(meter, planes, blocks: blocks)
        let energies = meter.segmentEnergies
        return (meter.measurement, energies)
    }

    /// Feeds `planes` to `meter` in blocks cycling through `blocks`.
    static func feed(_ meter: LoudnessMeter, _ planes: [[Float]], blocks: [Int]) {
        let n = planes[0].count
        let pointers = planes.map { p -> UnsafeMutablePointer<Float> in
            let b = UnsafeMutablePointer<Float>.allocate(capacity: max(1, p.count))
            b.initialize(from: p, count: p.count)
            return b
        }
        defer { pointers.forEach { $0.deallocate() } }
        var done = 0, next = 0
        withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<Float>.self, capacity: planes.count) { view in
            while done < n {
                let count = min(blocks[next % blocks.count], n - done)
                next += 1
                for c in planes.indices { view[c] = pointers[c] + done }
                meter.add(UnsafePointer(view.baseAddress!), frames: count)
                done += count
            }
        }
    }

    // MARK: EBU Tech 3341: integrated loudness within ±0.1 LU

    static let tech3341: [(name: String, tones: [Tone], lufs: Double)] = [
        ("case 1: 1 kHz at -23 dBFS, 20 s", [Tone(dbfs: -23, seconds: 20)], -23),
        ("case 2: 1 kHz at -33 dBFS, 20 s", [Tone(dbfs: -33, seconds: 20)], -33),
        ("case 3: -36, -23, -36 dBFS (10, 60, 10 s)",
         [Tone(dbfs: -36, seconds: 10), Tone(dbfs: -23, seconds: 60), Tone(dbfs: -36, seconds: 10)], -23),
        ("case 4: -72, -36, -23, -36, -72 dBFS (10, 10, 60, 10, 10 s)",
         [Tone(dbfs: -72, seconds: 10), Tone(dbfs: -36, seconds: 10), Tone(dbfs: -23, seconds: 60),
          Tone(dbfs: -36, seconds: 10), Tone(dbfs: -72, seconds: 10)], -23),
        ("case 5: -26, -20, -26 dBFS (20, 20.1, 20 s)",
         [Tone(dbfs: -26, seconds: 20), Tone(dbfs: -20, seconds: 20.1), Tone(dbfs: -26, seconds: 20)], -23),
    ]

    @Test(arguments: tech3341.indices)
    func tech3341IntegratedLoudness(index: Int) throws {
        let c = Self.tech3341[index]
        let (m, _) = try Self.measure(Self.signal(c.tones))
        #expect(abs(m.integrated - c.lufs) <= 0.1, "\(c.name): \(m.integrated) LUFS")
    }

    /// Case 6, 5.0 channels: L and R at -28 dBFS, C at -24, Ls and Rs at -30 (weighted
    /// +1.5 dB by BS.1770): -23 LUFS.
    @Test func tech3341FiveChannels() throws {
        let planes = [-28.0, -28, -24, -30, -30].map { Self.signal([Tone(dbfs: $0, seconds: 20)], channels: 1)[0] }
        let (m, _) = try Self.measure(planes)
        #expect(abs(m.integrated - -23) <= 0.1, "\(m.integrated) LUFS")
    }

    /// Case 9: short-term loudness stays at -23 LUFS ±0.1 over 20 cycles of 1.34 s at -20
    /// dBFS and 1.66 s at -30 dBFS (a 3 s window always holds one cycle).
    @Test func tech3341ShortTermIsSteady() throws {
        let cycle = [Tone(dbfs: -20, seconds: 1.34), Tone(dbfs: -30, seconds: 1.66)]
        let (_, segments) = try Self.measure(Self.signal(Array(repeating: cycle, count: 20).flatMap { $0 }))
        let worst = Self.worstStray(segments, window: 30, from: -23)
        #expect(worst <= 0.1, "short-term strays \(worst) LU from -23")
    }

    /// The largest distance (LU) from `target` of the loudness of every `window` consecutive
    /// 100 ms segments (48 kHz).
    static func worstStray(_ segments: [Double], window: Int, from target: Double) -> Double {
        var worst = 0.0
        for end in (window - 1)..<segments.count {
            let z = segments[(end - window + 1)...end].reduce(0, +) / Double(window * 4800)
            worst = max(worst, abs(LoudnessMeasurement.loudness(meanSquare: z) - target))
        }
        return worst
    }

    // MARK: EBU Tech 3342: loudness range within ±1 LU

    static let tech3342: [(name: String, tones: [Tone], range: Double)] = [
        ("case 1: -20 then -30 dBFS", [Tone(dbfs: -20, seconds: 20), Tone(dbfs: -30, seconds: 20)], 10),
        ("case 2: -20 then -15 dBFS", [Tone(dbfs: -20, seconds: 20), Tone(dbfs: -15, seconds: 20)], 5),
        ("case 3: -40 then -20 dBFS", [Tone(dbfs: -40, seconds: 20), Tone(dbfs: -20, seconds: 20)], 20),
        ("case 4: -50, -35, -20, -35, -50 dBFS",
         [-50.0, -35, -20, -35, -50].map { Tone(dbfs: $0, seconds: 20) }, 15),
    ]

    @Test(arguments: tech3342.indices)
    func tech3342LoudnessRange(index: Int) throws {
        let c = Self.tech3342[index]
        let (m, _) = try Self.measure(Self.signal(c.tones))
        #expect(abs(m.range - c.range) <= 1, "\(c.name): \(m.range) LU, expected \(c.range)")
    }

    // MARK: True peak within +0.2/-0.4 dB

    /// Sines whose samples miss the peak: a 12 kHz sine at 48 kHz (four samples a cycle)
    /// at 0, 45, 60 and 67.5 degrees (at 45 the samples sit 3 dB below the wave), with a
    /// true peak of -6 dBTP; the same at 44.1 kHz (11025 Hz), and at 96 kHz (2x) and 192 kHz
    /// (no oversampling: the samples are the peak when they hit it).
    static let peaks: [(rate: Int, frequency: Double, phase: Double)] = [
        (48_000, 12_000, 0), (48_000, 12_000, 45), (48_000, 12_000, 60), (48_000, 12_000, 67.5),
        (44_100, 11_025, 45), (48_000, 997, 30), (96_000, 24_000, 45), (192_000, 48_000, 0),
    ]

    @Test(arguments: peaks.indices)
    func truePeakOfSinesBetweenSamples(index: Int) throws {
        let p = Self.peaks[index]
        let planes = Self.signal([Tone(dbfs: -6, seconds: 2, frequency: p.frequency, phaseDegrees: p.phase)], rate: p.rate)
        let (m, _) = try Self.measure(planes, rate: p.rate)
        #expect(m.truePeak <= -6 + 0.2 && m.truePeak >= -6 - 0.4, "\(p): \(m.truePeak) dBTP")
        let samples = planes[0].map { abs($0) }.max()!
        #expect(abs(m.samplePeak - 20 * log10(Double(samples))) < 1e-6)
        if p.rate == 48_000 && p.frequency == 12_000 && p.phase == 45 {
            #expect(abs(m.samplePeak - -9.01) < 0.02, "the samples sit 3 dB below the wave: \(m.samplePeak)")
        }
    }

    /// A full-scale square wave's samples are ±1; its band-limited reconstruction rings
    /// above them: the true peak is above 0 dBTP while the sample peak is 0 dBFS.
    @Test func aClippedSquareOvershootsBetweenSamples() throws {
        let plane = (0..<48_000).map { i -> Float in (i / 24) % 2 == 0 ? 1 : -1 }
        let (m, _) = try Self.measure([plane])
        #expect(m.samplePeak == 0)
        #expect(m.truePeak > 0.5, "\(m.truePeak)")
    }

    // MARK: Against libebur128, block for block

    /// Noise shaped like programme (a loud and a quiet part, a 60 Hz hum, a click), in
    /// stereo and 5.1, at 44.1 and 48 kHz: every 400 ms momentary block equals
    /// libebur128's within 1e-6 LU, and integrated loudness, range and peaks agree.
    @Test(arguments: [(48_000, 2), (44_100, 1), (48_000, 6)])
    func agreesWithLibebur128BlockForBlock(rate: Int, channels: Int) throws {
        var planes = [[Float]](repeating: [], count: channels)
        var seed: UInt64 = 7
        let n = rate * 25
        for c in 0..<channels {
            planes[c] = (0..<n).map { i in
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                let noise = Double(Int64(bitPattern: seed >> 11) % 1_000_000) / 1_000_000
                let level = i < n / 2 ? 0.3 : 0.03
                let hum = 0.05 * sin(2 * .pi * 60 * Double(i) / Double(rate))
                return Float(level * noise + hum + (i == n / 3 + c ? 0.9 : 0))
            }
        }
        let (m, segments) = try Self.measure(planes, rate: rate, blocks: [1000, 4096, 17])

        let st = ebur128_init(UInt32(channels), UInt(rate), Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue |
                                                                 EBUR128_MODE_TRUE_PEAK.rawValue | EBUR128_MODE_SAMPLE_PEAK.rawValue))!
        var st2: UnsafeMutablePointer<ebur128_state>? = st
        defer { ebur128_destroy(&st2) }
        let segment = (rate + 5) / 10
        var interleaved = [Float](repeating: 0, count: segment * channels)
        var worst = 0.0
        for s in 0..<(n / segment) {
            for f in 0..<segment { for c in 0..<channels { interleaved[f * channels + c] = planes[c][s * segment + f] } }
            #expect(ebur128_add_frames_float(st, interleaved, segment) == 0)
            guard s >= 3 else { continue }
            var theirs = 0.0
            ebur128_loudness_momentary(st, &theirs)
            let ours = LoudnessMeasurement.loudness(meanSquare: segments[(s - 3)...s].reduce(0, +) / Double(4 * segment))
            worst = max(worst, abs(ours - theirs))
        }
        #expect(worst < 1e-6, "momentary blocks differ by up to \(worst) LU")
        var integrated = 0.0, range = 0.0
        ebur128_loudness_global(st, &integrated)
        ebur128_loudness_range(st, &range)
        #expect(abs(m.integrated - integrated) < 1e-6, "integrated \(m.integrated), libebur128 \(integrated)")
        // libebur128 steps its short-term blocks by 1 s, Mixdown by 100 ms (Tech 3342's 10 Hz).
        #expect(abs(m.range - range) < 0.5, "range \(m.range), libebur128 \(range)")
        var sample = 0.0, truePeak = 0.0
        for c in 0..<channels {
            var v = 0.0
            ebur128_sample_peak(st, UInt32(c), &v); sample = max(sample, v)
            ebur128_true_peak(st, UInt32(c), &v); truePeak = max(truePeak, v)
        }
        #expect(abs(m.samplePeak - 20 * log10(sample)) < 1e-5)
        #expect(abs(m.truePeak - 20 * log10(truePeak)) < 0.2, "true peak \(m.truePeak), libebur128 \(20 * log10(truePeak))")
    }

    // MARK: The contract

    /// Whatever the blocks it is fed in, and on one core or two, the measurement is the same
    /// to the bit.
    /// The oversampled readings skip spans whose samples cannot beat the peak so far: the
    /// same value as reading every point, for the 4x and 8x designs, at lengths around the
    /// span (0 to 200 windows), with the peak so far under, among and over the points, on
    /// material with quiet and loud passages (a point between samples over every sample).
    @Test func skippingSpansThatCannotBeatThePeakReadsTheSamePeak() {
        let kernels = mx_kernels_active().pointee
        var seed: UInt64 = 0x5eed
        func noise() -> Float {
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: seed) >> 40) / Float(1 << 23)
        }
        for interpolator in [TruePeakInterpolator(sampleRate: 48_000), TruePeakInterpolator.fine] {
            for frames in [0, 1, 63, 64, 65, 127, 128, 129, 200] {
                // Quiet noise, a loud burst in one span, a clipped square's edges in another.
                let x: [Float] = (0..<(frames + interpolator.taps - 1)).map { i in
                    if i % 150 < 20 { return noise() }
                    if i % 150 < 30 { return i % 4 < 2 ? 0.99 : -0.99 }
                    return 0.01 * noise()
                }
                x.withUnsafeBufferPointer { b in
                    let full = interpolator.peak(of: b.baseAddress!, frames: frames, kernels: kernels)
                    for before: Float in [0, 0.005, full * 0.5, full, full * 1.5] {
                        let skipped = interpolator.peak(of: b.baseAddress!, frames: frames, beating: before, kernels: kernels)
                        #expect(skipped.bitPattern == max(before, full).bitPattern, "\(interpolator.factor)x, \(frames) frames, from \(before)")
                    }
                }
            }
        }
    }

    @Test func blockSizesAndThreadsDoNotChangeTheResult() throws {
        let planes = Self.signal([Tone(dbfs: -18, seconds: 3.3, frequency: 440), Tone(dbfs: -30, seconds: 4, frequency: 9000, phaseDegrees: 45)])
        let (reference, _) = try Self.measure(planes, blocks: [4096], finePeak: true)
        #expect(reference.truePeakFine != nil)
        for blocks in [[1], [64], [512], [4096], [1000, 7, 4096, 333]] {
            for threads in [1, 2] where blocks != [1] || threads == 1 {
                let (m, _) = try Self.measure(planes, blocks: blocks, threads: threads, finePeak: true)
                #expect(m == reference, "blocks \(blocks), \(threads) threads")
            }
        }
    }

    @Test func silenceIsMinusInfinityAndShortStreamsHaveNoBlock() throws {
        let (silent, _) = try Self.measure([[Float](repeating: 0, count: 48_000 * 5)])
        #expect(silent.integrated == -.infinity && silent.truePeak == -.infinity && silent.samplePeak == -.infinity)
        #expect(silent.range == 0)
        // 399 ms: no 400 ms block is complete.
        let (short, _) = try Self.measure(Self.signal([Tone(dbfs: -10, seconds: 0.399)]))
        #expect(short.integrated == -.infinity)
        #expect(abs(short.samplePeak - -10) < 0.01)
        let (four, _) = try Self.measure(Self.signal([Tone(dbfs: -10, seconds: 0.4)]))
        #expect(four.integrated.isFinite)
    }

    /// A gain moves blocks across the -70 LUFS gate: the loudness after a gain is predicted
    /// from the blocks exactly (the K-weighting is linear), and `gain(reaching:)` lands on
    /// the target where `target - integrated` misses it.
    @Test func theGainThatReachesATargetAccountsForTheGate() throws {
        // Quiet for 10 s, then 20 s just under the absolute gate, then quiet again.
        let planes = Self.signal([Tone(dbfs: -65, seconds: 10), Tone(dbfs: -72, seconds: 20), Tone(dbfs: -65, seconds: 10)])
        let (m, _) = try Self.measure(planes)
        for gain in [-6.0, 0, 5, 12] {
            let g = Float(pow(10, gain / 20))
            let (scaled, _) = try Self.measure(planes.map { $0.map { $0 * g } })
            let predicted = m.integrated(withGain: gain)
            #expect(predicted == scaled.integrated || abs(predicted - scaled.integrated) < 1e-4, "gain \(gain): \(m.integrated(withGain: gain)) vs \(scaled.integrated)")
        }
        // +10 dB lifts the -72 dBFS part over the gate: it now counts, and pulls the mean down.
        #expect(m.integrated(withGain: 10) < m.integrated + 10 - 0.5)
        let gain = try #require(m.gain(reaching: -30))
        #expect(abs(gain - (-30 - m.integrated)) > 0.5)
        let g = Float(pow(10, gain / 20))
        let (reached, _) = try Self.measure(planes.map { $0.map { $0 * g } })
        #expect(abs(reached.integrated - -30) < 1e-3, "\(reached.integrated)")
        #expect(try Self.measure([[Float](repeating: 0, count: 48_000)]).0.gain(reaching: -16) == nil)
    }

    @Test func kWeightingAt48kHzIsTheRecommendations() {
        let published = [1.53512485958697, -2.69169618940638, 1.19839281085285, -1.69065929318241, 0.73248077421585,
                         1.0, -2.0, 1.0, -1.99004745483398, 0.99007225036621]
        let ours = KWeighting.coefficients(sampleRate: 48_000)
        for (a, b) in zip(ours, published) { #expect(abs(a - b) < 1e-8, "\(a) vs \(b)") }
    }

    @Test func badRatesAndChannelCountsAreRefused() {
        #expect(throws: MixdownError.invalidParameter(name: "sample rate", value: "100", reason: "a loudness meter needs 8000 to 768000 Hz")) {
            _ = try LoudnessMeter(sampleRate: 100, channelCount: 2)
        }
        #expect(throws: MixdownError.invalidParameter(name: "channels", value: "0", reason: "must be at least 1")) {
            _ = try LoudnessMeter(sampleRate: 48_000, channelCount: 0)
        }
    }
}
