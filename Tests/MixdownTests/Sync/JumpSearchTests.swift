import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// A recorder that paused: two stretches, each placed, the jump between them found to the
/// sample's neighbourhood, and the render puts both where they belong.
@Suite struct JumpSearchTests {
    @Test func aPauseGivesTwoStretchesAndTheAlignedOutputLandsBoth() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 600
        pair.offsetSeconds = 1.5
        pair.ppm = 100
        pair.equalise = true
        pair.snrDecibels = 20
        pair.pause = .init(at: 300, gap: 30)
        let truth = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        let jumps = try #require(e.jumps)
        #expect(jumps.count == 1)
        #expect(abs(jumps[0].recordingTime - 300) < 0.001, "jump at \(jumps[0].recordingTime) s")
        #expect(abs(jumps[0].seconds - 30) < 0.000_05, "jump of \(jumps[0].seconds) s")
        let segments = try #require(e.segments)
        #expect(segments.count == 2)
        // Each stretch's line and map within 0.05 ms of the truth in the middle of it (its
        // offset is its line's value at REC's time 0, an extrapolation for the second).
        for (s, t) in zip(segments, [150.0, 450.0]) {
            let line = s.offsetSeconds + s.ratio * t, expected = truth.referenceSeconds(atRecordingSeconds: t)
            #expect(abs(line - expected) < 0.000_05, "stretch from \(s.start) s at \(t) s: \((line - expected) * 1000) ms")
            let map = try #require(s.map)
            let off = map.referenceSeconds(atRecordingSeconds: t) - truth.referenceSeconds(atRecordingSeconds: t)
            #expect(abs(off) < 0.000_05, "map at \(t) s: \(off * 1000) ms")
        }
        #expect(e.confidence >= 0.8)
        #expect(e.rivalOffsetSeconds == nil)
        #expect(e.summary.contains("REC jumped: at 300.000 s by +"))
        try e.requireConfidence(0.5)
        let oneLine = #expect(throws: MixdownError.self) { try e.requireOneLine() }
        #expect(oneLine?.description.contains("REC jumped by +") == true)

        // The render: REF's exact length, both stretches within 0.1 ms, silence where REC paused.
        var job = FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("aligned.wav"))
        job.estimate = e
        let report = try job.run()
        #expect(report.outputFrames == 600 * 48_000)
        #expect(try #require(report.residualMaxLagMilliseconds) < 0.1)
        let out = try readFile(dir.file("aligned.wav")).planes[0]
        #expect(out.count == 600 * 48_000)
        let gapStart = Int(truth.referenceSeconds(atRecordingSeconds: 300 - 1e-6) * 48_000) + 100
        let gapEnd = Int(truth.referenceSeconds(atRecordingSeconds: 300) * 48_000) - 100
        #expect(gapEnd - gapStart > 29 * 48_000)
        #expect(out[gapStart..<gapEnd].allSatisfy { $0 == 0 })
        #expect(out[(gapEnd + 48_000)..<(gapEnd + 96_000)].contains { $0 != 0 })
    }

    /// Where a jump's cut lies, on four shapes of one 300 s pair (seed 3, its speech silent
    /// from 132.1 to 133.1 s and from 136.7 to 137.2 s): a pause begun in silence is placed
    /// in the middle of the span REC's audio cannot tell apart, whose width is reported and
    /// holds the truth (it was cut 96 ms early, with no word of doubt); a pause or a 0.5 s
    /// dropout in speech is cut to the analysis sample (0.125 ms), its width at most two.
    @Test(arguments: [(132.5, 30.0, true), (137.0, 20.0, true), (133.5, 0.5, false), (133.7, 30.0, false)])
    func aJumpsCutIsWhereTheAudioSaysAndNoSharper(at: Double, gap: Double, inSilence: Bool) throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.ppm = 50
        pair.seed = 3
        pair.snrDecibels = 30
        pair.pause = .init(at: at, gap: gap)
        _ = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        let jump = try #require(e.jumps?.first, "no jump found at \(at) s")
        let error = jump.recordingTime - at, sample = 1.0 / 8000
        #expect(abs(jump.seconds - gap) < 0.000_05, "jump of \(jump.seconds) s")
        if inSilence {
            #expect(jump.uncertaintySeconds > 0.05 && jump.uncertaintySeconds < 1.1, "width \(jump.uncertaintySeconds * 1000) ms")
            #expect(abs(error) <= jump.uncertaintySeconds / 2 + sample, "\(error * 1000) ms off, ±\(jump.uncertaintySeconds * 500) ms")
            #expect(e.summary.contains("somewhere within ±"))
        } else {
            #expect(abs(error) <= sample + 1e-9, "\(error * 1000) ms off")
            #expect(jump.uncertaintySeconds <= 2 * sample + 1e-9, "width \(jump.uncertaintySeconds * 1000) ms")
            #expect(!e.summary.contains("somewhere within"))
        }
    }

    /// Two pauses in one file, each begun in a word's tail on one side (seeds 2 and 3:
    /// REC silent beside the cut while one line's REF still sounds). The cut minimises REC's
    /// error against REF, so REF sounding where REC is silent counts against a line: with the
    /// correlation alone the first pause of seed 2 was cut 402 ms late (±88 ms claimed) and
    /// the second of seed 3 89 ms early (±2.3 ms claimed). Each cut's reported width holds
    /// the truth.
    @Test(arguments: [UInt64(2), 3])
    func twoPausesAreEachCutWithinTheirWidth(seed: UInt64) throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 600
        pair.offsetSeconds = 2.5
        pair.ppm = 80
        pair.seed = seed
        pair.equalise = true
        pair.snrDecibels = 25
        pair.pauses = [.init(at: 170, gap: 12), .init(at: 390, gap: 25)]
        _ = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        let jumps = try #require(e.jumps)
        try #require(jumps.count == 2)
        #expect(e.confidence >= 0.8)
        let sample = 1.0 / 8000
        for (jump, pause) in zip(jumps, pair.pauses) {
            let error = jump.recordingTime - pause.at
            #expect(abs(jump.seconds - pause.gap) < 0.000_05, "jump of \(jump.seconds) s")
            #expect(jump.uncertaintySeconds < 1.1, "width \(jump.uncertaintySeconds * 1000) ms")
            #expect(abs(error) <= jump.uncertaintySeconds / 2 + sample, "pause at \(pause.at) s: \(error * 1000) ms off, ±\(jump.uncertaintySeconds * 500) ms")
        }
    }

    @Test func aSteadyRecordingHasNoJump() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.offsetSeconds = -2.25
        pair.ppm = 250
        _ = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        #expect(e.jumps == nil)
        #expect(e.segments == nil)
    }
}
