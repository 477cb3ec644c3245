import CEbur128
import Foundation
import Testing
@testable import Mixdown

/// The rest of EBU Tech 3341's cases that apply to a file-based meter (7, 8, 10, 12, 13,
/// 15-23; cases 1-6 and 9 are in `LoudnessMeterTests`) and Tech 3342's cases 5 and 6,
/// with signals built to the documents' descriptions; and the 8x reading against tones
/// whose peaks are known.
@Suite struct Tech3341Tests {
    typealias Tone = LoudnessMeterTests.Tone

    static func measure(_ planes: [[Float]], rate: Int = 48_000, finePeak: Bool = false) throws -> LoudnessMeasurement {
        try LoudnessMeterTests.measure(planes, rate: rate, blocks: [4096, 333], finePeak: finePeak).0
    }

    // MARK: Maximum momentary and short-term loudness (cases 10 and 13)

    /// Case 13, twenty files: a 400 ms burst of 1 kHz at -23 dBFS after silence of 1 s plus
    /// i x 37.1 ms (so that it starts anywhere against the 100 ms segments): the maximum
    /// momentary loudness is -23 ±0.1 LUFS. Read every 100 ms it would be 0.6 dB low at worst.
    @Test(arguments: 0..<20)
    func case13MaximumMomentary(file: Int) throws {
        let m = try Self.burst(seconds: 0.4, file: file)
        #expect(abs(m.momentaryMaximum - -23) <= 0.1, "file \(file): \(m.momentaryMaximum)")
    }

    /// Case 10, twenty files: a 3 s burst at -23 dBFS after silence offset as in case 13:
    /// the maximum short-term loudness is -23 ±0.1 LUFS.
    @Test(arguments: 0..<20)
    func case10MaximumShortTerm(file: Int) throws {
        let m = try Self.burst(seconds: 3, file: file)
        #expect(abs(m.shortTermMaximum - -23) <= 0.1, "file \(file): \(m.shortTermMaximum)")
    }

    /// A burst of 1 kHz at -23 dBFS, `seconds` long, after 1 s + file x 37.1 ms of silence
    /// (so that it starts anywhere against the 100 ms segments), then 1 s of silence.
    static func burst(seconds: Double, file: Int) throws -> LoudnessMeasurement {
        try measure(LoudnessMeterTests.signal([Tone(dbfs: -120, seconds: 1 + Double(file) * 0.0371),
                                               Tone(dbfs: -23, seconds: seconds), Tone(dbfs: -120, seconds: 1)]))
    }

    /// Case 12: 20 cycles of 0.18 s at -20 dBFS and 0.22 s at -30 dBFS: every 400 ms window
    /// holds one cycle, so the momentary loudness stays at -23 ±0.1 after the first 400 ms.
    @Test func case12MomentaryIsSteady() throws {
        let cycle = [Tone(dbfs: -20, seconds: 0.18), Tone(dbfs: -30, seconds: 0.22)]
        let (m, segments) = try LoudnessMeterTests.measure(LoudnessMeterTests.signal(Array(repeating: cycle, count: 20).flatMap { $0 }))
        let worst = LoudnessMeterTests.worstStray(segments, window: 4, from: -23)
        #expect(worst <= 0.1, "momentary strays \(worst) LU from -23")
        // A window is one period long: read at 1 ms steps it holds one cycle wherever it
        // starts, so the maximum is -23 too.
        #expect(abs(m.momentaryMaximum - -23) <= 0.1, "\(m.momentaryMaximum)")
    }

    // MARK: Authentic programme (cases 7 and 8; Tech 3342 cases 5 and 6)

    /// Programme-like stereo: speech-like sections, a music-like chord, noise beds and a
    /// click, each section at its own level from `levels` (dB), 40 s. Scaled so libebur128
    /// reads -23 LUFS.
    static func programme(levels: [Double], seed: UInt64) throws -> [[Float]] {
        let rate = 48_000, section = 5 * rate
        var state = seed
        func noise() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(Int64(bitPattern: state) >> 11) / Double(1 << 52)
        }
        var planes: [[Float]] = [[], []]
        for (k, level) in levels.enumerated() {
            let g = pow(10, level / 20)
            for i in 0..<section {
                let t = Double(i) / Double(rate)
                // Syllable-like bursts, a chord, and a bed of noise.
                let syllable = max(0, sin(2 * .pi * 3.1 * t + Double(k))) * (sin(2 * .pi * 180 * t) + 0.5 * sin(2 * .pi * 2300 * t))
                let chord = k % 2 == 0 ? 0.3 * (sin(2 * .pi * 261.6 * t) + sin(2 * .pi * 329.6 * t) + sin(2 * .pi * 392 * t)) : 0
                let bed = 0.05 * noise()
                let v = g * 0.2 * (syllable + chord + bed)
                planes[0].append(Float(v))
                planes[1].append(Float(v * 0.8 + g * 0.01 * noise()))
            }
        }
        let reading = Self.libebur128(planes)
        let scale = Float(pow(10, (-23 - reading.integrated) / 20))
        return planes.map { $0.map { $0 * scale } }
    }

    /// libebur128's integrated loudness and loudness range.
    static func libebur128(_ planes: [[Float]]) -> (integrated: Double, range: Double) {
        let st = ebur128_init(2, 48_000, Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_LRA.rawValue))!
        var handle: UnsafeMutablePointer<ebur128_state>? = st
        defer { ebur128_destroy(&handle) }
        var interleaved = [Float](repeating: 0, count: planes[0].count * 2)
        for i in planes[0].indices { interleaved[2 * i] = planes[0][i]; interleaved[2 * i + 1] = planes[1][i] }
        _ = ebur128_add_frames_float(st, interleaved, planes[0].count)
        var integrated = 0.0, range = 0.0
        ebur128_loudness_global(st, &integrated)
        ebur128_loudness_range(st, &range)
        return (integrated, range)
    }

    /// Case 7 with Tech 3342 case 5 (narrow range, about 5 LU) and case 8 with 3342 case 6
    /// (wide, about 15 LU): integrated -23 ±0.1 LUFS, and the range within ±1 LU of the one
    /// libebur128 reads, which is itself within ±1 LU of the case's.
    @Test(arguments: [(levels: [0.0, -3, -5, -1, -4, 0, -6, -2], range: 5.0),
                      (levels: [0.0, -7.4, -14.7, -3.7, -11, 1.8, -16.6, -5.5], range: 15.0)])
    func authenticProgramme(levels: [Double], range: Double) throws {
        let planes = try Self.programme(levels: levels, seed: 11)
        let theirs = Self.libebur128(planes)
        try #require(abs(theirs.range - range) <= 1, "the material's range by libebur128: \(theirs.range)")
        let m = try Self.measure(planes)
        #expect(abs(m.integrated - -23) <= 0.1, "\(m.integrated)")
        #expect(abs(m.range - range) <= 1, "\(m.range) LU, libebur128 \(theirs.range)")
    }

    // MARK: True peak (cases 15-23), +0.2/-0.4 dB

    /// A sine of `amplitude` at `cycles` per sample and `phase` degrees, 2 s at 48 kHz, faded
    /// in and out over 10 ms (an abrupt start rings in any band-limited reconstruction: the
    /// Gibbs overshoot is a real peak, up to 0.8 dB over the tone's).
    static func tone(amplitude: Double, cycles: Double, phase: Double) -> [Float] {
        let n = 96_000, fade = 480
        return (0..<n).map { i in
            let edge = min(1, Double(min(i, n - 1 - i)) / Double(fade))
            let window = 0.5 - 0.5 * cos(.pi * edge)
            return Float(window * amplitude * sin(2 * .pi * cycles * Double(i) + phase * .pi / 180))
        }
    }

    /// Cases 15-19: a sine at fs/4, fs/6 or fs/8 with the amplitude and phase the document
    /// gives (0.5 at 0, 45, 60 and 67.5 degrees: -6 dBTP; 1.41 at 45 degrees: +3 dBTP, its
    /// samples at 0 dBFS), 48 kHz.
    @Test(arguments: [(4.0, 0.5, 0.0, -6.0), (4, 0.5, 45, -6), (6, 0.5, 60, -6), (8, 0.5, 67.5, -6), (4, 1.41, 45, 3)])
    func cases15To19(divisor: Double, amplitude: Double, phase: Double, expected: Double) throws {
        let plane = Self.tone(amplitude: amplitude, cycles: 1 / divisor, phase: phase)
        let m = try Self.measure([plane, plane], finePeak: true)
        #expect(m.truePeak <= expected + 0.2 && m.truePeak >= expected - 0.4, "\(m.truePeak)")
        let fine = try #require(m.truePeakFine)
        #expect(fine <= expected + 0.2 && fine >= expected - 0.4, "\(fine)")
    }

    /// Cases 20-23: one band-limited pulse (a sinc of 0.45 fs under a Kaiser window of 64
    /// samples) whose continuous peak, 1.0 (0 dBTP), lies 0, 1/4, 2/4 or 3/4 of a sample
    /// after a sample instant, in silence.
    @Test(arguments: 0..<4)
    func cases20To23(offset: Int) throws {
        let n = 48_000
        let centre = Double(n / 2) + Double(offset) / 4, band = 0.9
        let plane = (0..<n).map { i -> Float in
            let d = Double(i) - centre
            guard abs(d) < 32 else { return 0 }
            let sinc = d == 0 ? 1 : sin(.pi * band * d) / (.pi * band * d)
            let r = d / 32
            return Float(sinc * TruePeakInterpolator.besselI0(6 * (1 - r * r).squareRoot()) / TruePeakInterpolator.besselI0(6))
        }
        let m = try Self.measure([plane, plane], finePeak: true)
        #expect(m.truePeak <= 0.2 && m.truePeak >= -0.4, "offset \(offset)/4: \(m.truePeak)")
        let fine = try #require(m.truePeakFine)
        #expect(abs(fine) <= 0.05, "offset \(offset)/4: 8x \(fine)")
    }

    // MARK: The 8x reading

    /// Tones up to 0.45 fs at any phase: the 8x reading is the tone's amplitude within 0.1 dB
    /// (BS.1770's 4x reading can be 0.7 dB low at 0.45 fs); and it never reads under the
    /// samples.
    @Test(arguments: [(997.0, 13.0), (9000, 71), (15_000, 22.5), (19_000, 45), (21_600, 80)])
    func theFineReadingFindsTheTonesPeak(frequency: Double, phase: Double) throws {
        let plane = Self.tone(amplitude: 0.5, cycles: frequency / 48_000, phase: phase)
        let m = try Self.measure([plane], finePeak: true)
        let fine = try #require(m.truePeakFine)
        #expect(abs(fine - 20 * log10(0.5)) <= 0.1, "\(frequency) Hz: \(fine)")
        #expect(fine >= m.samplePeak)
    }
}
