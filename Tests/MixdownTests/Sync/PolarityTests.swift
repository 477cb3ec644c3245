import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// A recording whose polarity is inverted against REF's (a microphone wired pin 2 for pin 3,
/// an inverting preamp or filter) is placed as well as the same recording the right way
/// up, its polarity is reported, and `stretch --align` and `--stems` turn it over unless
/// asked to keep it. Before the fine match took the sign of the largest |c|, such a
/// recording landed on a side lobe about 0.9 ms from its true, negative peak.
@Suite(.serialized) struct PolarityTests {
    /// `path` with every sample negated, written as 32-bit float (exact) to `to`.
    static func inverted(_ path: String, to: String) throws -> String {
        let (info, planes) = try readFile(path)
        try writeFile(to, planes.map { $0.map { -$0 } }, sampleRate: info.sampleRate)
        return to
    }

    static func expectSamePlace(_ inverted: DriftEstimate, _ upright: DriftEstimate, offset: Double, ppm: Double, _ what: String) {
        #expect(upright.polarity == 1, "\(what): upright polarity")
        #expect(inverted.polarity == -1, "\(what): inverted polarity")
        #expect(abs(inverted.offsetSeconds - offset) < 0.001, "\(what): offset \(inverted.offsetSeconds)")
        #expect(abs(inverted.ppm - ppm) < 1, "\(what): \(inverted.ppm) ppm")
        // The same place as the upright recording, not 0.9 ms beside it.
        #expect(abs(inverted.offsetSeconds - upright.offsetSeconds) < 0.00005, "\(what): \(inverted.offsetSeconds) vs upright \(upright.offsetSeconds)")
        #expect(inverted.confidence >= 0.8, "\(what): confidence \(inverted.confidence)")
        #expect(inverted.summary.hasSuffix("REC's polarity is inverted"))
        #expect(!upright.summary.contains("polarity"))
    }

    @Test(arguments: [48_000, 44_100])
    func invertedSpeechIsPlacedWhereTheUprightIs(rate: Int) throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.offsetSeconds = 12.3
        pair.ppm = 200
        pair.recordingRate = rate
        pair.equalise = true
        pair.snrDecibels = 10
        let truth = try pair.run()
        let upright = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        let flipped = try DriftEstimator(reference: pair.reference, recording: Self.inverted(pair.recording, to: dir.file("inv.wav"))).run()
        Self.expectSamePlace(flipped, upright, offset: truth.offsetSeconds, ppm: (truth.ratio - 1) * 1e6, "speech at \(rate) Hz")
    }

    @Test func anInvertedCopyOfTheReferenceIsPlacedOnIt() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 120
        _ = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: Self.inverted(pair.reference, to: dir.file("inv.wav"))).run()
        #expect(e.polarity == -1)
        #expect(abs(e.offsetSeconds) < 0.00001, "offset \(e.offsetSeconds)")
        #expect(abs(e.ppm) < 0.1, "\(e.ppm) ppm")
        #expect(e.confidence > 0.95)
    }

    @Test(.enabled(if: MaterialTests.sox != nil)) func invertedMusicIsPlacedWhereTheUprightIs() throws {
        let dir = TempDir()
        let loop = try MaterialTests.loop(dir), ambience = try MaterialTests.ambience(dir)
        try MaterialTests.sox(["-m", "-v", "0.8", loop, "-v", "0.3", ambience, dir.file("music.wav")])
        let (cam, rec) = try MaterialTests.pair(dir.file("music.wav"), in: dir)
        let upright = try DriftEstimator(reference: cam, recording: rec).run()
        let flipped = try DriftEstimator(reference: cam, recording: Self.inverted(rec, to: dir.file("inv.wav"))).run()
        Self.expectSamePlace(flipped, upright, offset: MaterialTests.offset, ppm: MaterialTests.ppm, "music")
    }

    @Test func alignTurnsAnInvertedRecordingOverUnlessAskedToKeepIt() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 120
        pair.offsetSeconds = 2.5
        pair.ppm = -150
        _ = try pair.run()
        let inv = try Self.inverted(pair.recording, to: dir.file("inv.wav"))
        var turned = FileAlign(input: inv, reference: pair.reference, output: dir.file("turned.wav"))
        turned.verify = false
        let a = try turned.run()
        var kept = FileAlign(input: inv, reference: pair.reference, output: dir.file("kept.wav"))
        kept.verify = false
        kept.keepPolarity = true
        let b = try kept.run()
        #expect(a.polarityCorrected && !b.polarityCorrected)
        let x = try readFile(a.output).planes, y = try readFile(b.output).planes
        #expect(x[0].count == y[0].count)
        // Exactly each other's negation, and the turned one sums with REF: its correlation
        // against the upright recording aligned the same way is positive.
        #expect(zip(x[0], y[0]).allSatisfy { $0 == -$1 })
        #expect(x[0].contains { $0 != 0 })
        var upright = FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("upright.wav"))
        upright.verify = false
        let c = try upright.run()
        #expect(!c.polarityCorrected)
        let u = try readFile(c.output).planes
        let dot = zip(u[0], x[0]).reduce(0.0) { $0 + Double($1.0) * Double($1.1) }
        #expect(dot > 0)
    }

    /// An aligned recording lies on REF's clock from REF's first frame, so it takes REF's
    /// start timecode (its bext TimeReference), and an editor puts it where REF is.
    @Test func anAlignedRecordingKeepsTheReferencesStartTimecode() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 60
        pair.offsetSeconds = 1.5
        _ = try pair.run()
        let reference: Int64 = (10 * 3_600 + 7) * 48_000   // 10:00:07
        try OTIOTimelineTests.addBext(pair.reference, timeReference: reference)
        #expect(try AudioFileInfo.read(path: pair.reference).timeReference == reference)
        var job = FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("aligned.wav"))
        job.verify = false
        _ = try job.run()
        #expect(try AudioFileInfo.read(path: dir.file("aligned.wav")).timeReference == reference)
        // A recording without one, and a REF without one, write none.
        #expect(try AudioFileInfo.read(path: pair.recording).timeReference == nil)
        var back = FileAlign(input: dir.file("aligned.wav"), reference: pair.recording, output: dir.file("back.wav"))
        back.verify = false
        _ = try back.run()
        #expect(try AudioFileInfo.read(path: dir.file("back.wav")).timeReference == nil)
    }
}
