import Foundation
import Testing
@testable import Mixdown

private func t(_ s: String) -> MediaTime { try! MediaTime(parsing: s) }
private func range(_ a: String, _ b: String) -> MediaTimeRange { MediaTimeRange(start: t(a), end: t(b)) }

/// Renders a composition in memory, through the same graph an export writes.
func renderInMemory(_ job: CompositionRender, blockSizes: [Int] = [4096]) throws -> [[Float]] {
    let plan = try job.plan()
    return try renderAll(job.makeGraph(plan), blockSizes: blockSizes)
}

@Suite struct CompositionRenderTests {
    @Test func aSineCancelsItsInvertedTwinAtEqualGains() throws {
        let dir = TempDir()
        let s = sine(997, frames: 48_000)
        try writeFile(dir.file("a.wav"), [s, s])
        try writeFile(dir.file("b.wav"), [s.map { -$0 }, s.map { -$0 }])
        var c = Composition()
        let a = c.addTrack(), b = c.addTrack()
        try c[trackID: a].addSegment(range("0", "1"), of: AudioAsset(path: dir.file("a.wav")), at: t("0.25"))
        try c[trackID: b].addSegment(range("0", "1"), of: AudioAsset(path: dir.file("b.wav")), at: t("0.25"))
        var job = CompositionRender(composition: c, output: dir.file("out.wav"))
        for id in [a, b] { try job.audioMix[trackID: id].setVolumeRamp(from: 0.3, to: 0.9, timeRange: range("0.5", "1")) }
        for sizes in BlockSizes.all {
            let out = try renderInMemory(job, blockSizes: sizes)
            #expect(out[0].count == 60_000)
            #expect(out.allSatisfy { $0.allSatisfy { $0 == 0 } })
        }
    }

    @Test(arguments: [("1001/30000", 1602), ("1/96000", 1), ("3/96000", 2), ("2", 96_000)])
    func anImpulseLandsOnTheRoundedFrame(at time: String, frame: Int) throws {
        let dir = TempDir()
        var impulse = [Float](repeating: 0, count: 64)
        impulse[0] = 1
        try writeFile(dir.file("i.wav"), [impulse])
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].addSegment(range("0", "64/48000"), of: AudioAsset(path: dir.file("i.wav")), at: t(time))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        job.outputFormat = AudioFormat(sampleRate: 48_000, channelCount: 1)
        let out = try renderInMemory(job)[0]
        #expect(out.firstIndex(of: 1) == frame)
        #expect(out.filter { $0 != 0 }.count == 1)
    }

    @Test func rampsHitTheirEndValuesOnTheExactFrames() throws {
        let dir = TempDir()
        try writeFile(dir.file("dc.wav"), [[Float](repeating: 1, count: 3 * 48_000)])
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].addSegment(range("0", "3"), of: AudioAsset(path: dir.file("dc.wav")), at: .zero)
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        try job.audioMix[trackID: id].setVolume(0.25, at: .zero)
        try job.audioMix[trackID: id].setVolumeRamp(from: 0, to: 1, timeRange: range("1", "2"))
        for sizes in BlockSizes.all {
            let out = try renderInMemory(job, blockSizes: sizes)[0]
            #expect(out[47_999] == 0.25)
            #expect(out[48_000] == 0)
            #expect(out[72_000] == 0.5)
            #expect(out[95_999] == Float(47_999.0 / 48_000))
            #expect(out[96_000] == 1)
            #expect(out[143_999] == 1)
        }
    }

    /// Segments, gaps, ramps, ducking, a late start: identical at every block size and thread count.
    @Test func rendersIdenticallyAtEveryBlockSizeAndThreadCount() throws {
        let dir = TempDir()
        try writeFile(dir.file("m.wav"), [sine(220, frames: 96_000), sine(330, frames: 96_000)])
        try writeFile(dir.file("v.wav"), [sine(1000, frames: 30_000)])
        var c = Composition()
        let m = c.addTrack(), v = c.addTrack(), w = c.addTrack()
        let music = try AudioAsset(path: dir.file("m.wav")), voice = try AudioAsset(path: dir.file("v.wav"))
        try c[trackID: m].addSegment(range("0", "1.5"), of: music, at: .zero)
        try c[trackID: m].addSegment(range("0.25", "2"), of: music, at: t("1.5"))
        try c[trackID: v].addSegment(range("0", "0.5"), of: voice, at: t("0.7"))
        try c[trackID: v].addSegment(range("0.1", "0.6"), of: voice, at: t("2.2"))
        try c[trackID: w].addSegment(range("0", "0.625"), of: voice, at: t("1001/3000"))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        try job.audioMix[trackID: m].setVolumeRamp(from: 0, to: 1, timeRange: range("0", "0.3"))
        try job.audioMix.duck(m, to: .linear(0.2), whileAudioOn: v, in: c, rampDown: t("0.1"), rampUp: t("0.2"))
        try job.audioMix[trackID: w].setVolumeRamp(from: 1, to: 0.1, timeRange: range("0.5", "0.9"))
        job.threads = 1
        let reference = try renderInMemory(job, blockSizes: [4096])
        #expect(reference[0].count == 156_000)
        for sizes in BlockSizes.all {
            #expect(try renderInMemory(job, blockSizes: sizes) == reference)
        }
        job.threads = 2
        #expect(try renderInMemory(job, blockSizes: BlockSizes.irregular) == reference)
        // A time range is a slice of the whole render.
        job.timeRange = range("0.8", "2.9")
        let part = try renderInMemory(job, blockSizes: [512])
        #expect(part[0].count == 100_800)
        #expect(part[1] == Array(reference[1][38_400..<139_200]))
    }

    @Test func filesOfOtherRatesAndLayoutsAreConvertedBeforeMixing() throws {
        let dir = TempDir()
        try writeFile(dir.file("m44.wav"), [sine(441, rate: 44_100, frames: 44_100)], sampleRate: 44_100)
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].addSegment(range("0", "1"), of: AudioAsset(path: dir.file("m44.wav")), at: .zero)
        try writeFile(dir.file("s48.wav"), [[Float](repeating: 0, count: 100), [Float](repeating: 0, count: 100)])
        let other = c.addTrack()
        try c[trackID: other].addSegment(range("0", "100/48000"), of: AudioAsset(path: dir.file("s48.wav")), at: .zero)
        #expect(c.defaultOutputFormat == AudioFormat(sampleRate: 48_000, channelCount: 2))
        let job = CompositionRender(composition: c, output: dir.file("o.wav"))
        for sizes in [[4096], BlockSizes.irregular] {
            let out = try renderInMemory(job, blockSizes: sizes)
            #expect(out.count == 2 && out[0].count == 48_000)
            #expect(out[0] == out[1])
            // The 441 Hz sine at 48 kHz: compare away from the edges (the resampler's ramp-in).
            // Measured 8.0e-7 (−122 dB re full scale); 4e-6 (−108 dB, the resampler's
            // documented floor) catches a regression that 1e-3 would let through.
            let ideal = sine(441, rate: 48_000, frames: 48_000)
            let err = (1000..<47_000).map { abs(out[0][$0] - ideal[$0]) }.max()!
            #expect(err < 4e-6)
        }
    }

    /// A render that starts inside a resampled or stretched segment drops that segment's
    /// head: its frames are exactly the whole render's.
    @Test func aTimeRangeInsideAConvertedOrScaledSegmentIsAnExactSlice() throws {
        let dir = TempDir()
        try writeFile(dir.file("m44.wav"), [sine(441, rate: 44_100, frames: 88_200)], sampleRate: 44_100)
        try writeFile(dir.file("a48.wav"), [sine(500, frames: 96_000)])
        var c = Composition()
        let id = c.addTrack(), other = c.addTrack()
        try c[trackID: id].addSegment(range("0", "2"), of: AudioAsset(path: dir.file("m44.wav")), at: t("0.5"))
        try c[trackID: other].addSegment(range("0", "2"), of: AudioAsset(path: dir.file("a48.wav")), at: .zero)
        try c[trackID: other].scaleTimeRange(range("0", "2"), toDuration: t("2.2"))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        job.outputFormat = AudioFormat(sampleRate: 48_000, channelCount: 1)
        job.timePitchAlgorithm = .varispeed
        let whole = try renderInMemory(job, blockSizes: [4096])[0]
        #expect(whole.count == 120_000)
        job.timeRange = range("1.25", "2.4")
        let part = try renderInMemory(job, blockSizes: [333])[0]
        #expect(part == Array(whole[60_000..<115_200]))
    }

    /// A scaled range at 44.1, 48 and 96 kHz with every algorithm: exact frame counts, the
    /// unscaled parts bit for bit, and the middle checked for what it must hold: a 500 Hz
    /// sine keeps its pitch with the pitch-keeping algorithms and drops to 500 / 1.2 Hz
    /// with varispeed (silence, or the wrong algorithm, fails).
    @Test(arguments: TimeScaleAlgorithm.allCases.filter(\.isAvailable), [44_100, 48_000, 96_000])
    func aScaledRangeCoversExactlyItsFrames(algorithm: TimeScaleAlgorithm, rate: Int) throws {
        let dir = TempDir()
        let src = sine(500, rate: rate, frames: 2 * rate)
        try writeFile(dir.file("a.wav"), [src], sampleRate: rate)
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].addSegment(range("0", "2"), of: AudioAsset(path: dir.file("a.wav")), at: .zero)
        try c.scaleTimeRange(range("0.5", "1.5"), toDuration: t("1.2"))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        job.timePitchAlgorithm = algorithm
        let out = try renderInMemory(job, blockSizes: [1000])[0]
        let half = rate / 2
        #expect(out.count == 2 * rate + rate / 5)
        // Unscaled parts are the file's own frames.
        #expect(Array(out[0..<half]) == Array(src[0..<half]))
        #expect(Array(out[(out.count - half)...]) == Array(src[(src.count - half)...]))
        // The middle, 1.2 s of it, away from its edges: tenths of a second, each nearly all
        // at the expected pitch.
        let pitch = algorithm.resolved(for: StretchRatio(6, 5)) == .varispeed ? 500.0 / 1.2 : 500
        for k in 1..<11 {
            let w = Array(out[(half + k * rate / 10)..<(half + k * rate / 10 + rate / 10)])
            let energy = w.reduce(0.0) { $0 + Double($1) * Double($1) }
            #expect(energy > 0.1 * Double(w.count) * 0.125, "window \(k) is nearly silent")
            #expect(toneShare(w, hz: pitch, rate: rate) > 0.9, "window \(k): \(algorithm) at \(rate) Hz")
            #expect(toneShare(w, hz: pitch == 500 ? 500 / 1.2 : 500, rate: rate) < 0.1)
        }
    }

    #if !RubberBand
    @Test func aScaledRangeWithRubberBandNeedsItBuiltIn() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(500, frames: 96_000)])
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].addSegment(range("0", "2"), of: AudioAsset(path: dir.file("a.wav")), at: .zero)
        try c.scaleTimeRange(range("0", "1"), toDuration: t("1.1"))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        job.timePitchAlgorithm = .rubberband
        #expect(throws: MixdownError.self) { try job.plan() }
    }
    #endif
}

/// The share of `w`'s energy in a tone of `hz` (its DFT power at that frequency, both
/// signs, over the window's energy): near 1 for a sine of that pitch.
func toneShare(_ w: [Float], hz: Double, rate: Int) -> Double {
    var re = 0.0, im = 0.0, energy = 0.0
    for (i, x) in w.enumerated() {
        let phase = 2 * Double.pi * hz * Double(i) / Double(rate)
        re += Double(x) * cos(phase)
        im -= Double(x) * sin(phase)
        energy += Double(x) * Double(x)
    }
    return energy > 0 ? 2 * (re * re + im * im) / (Double(w.count) * energy) : 0
}
