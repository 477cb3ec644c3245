import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// A phone's short clip placed anywhere in a long reference: the whole of REF searched,
/// eight one-second windows across the clip, and a refusal when its content occurs twice.
@Suite struct ShortClipTests {
    /// Frames `range` of `path` written to `to` (16-bit WAV).
    static func cut(_ path: String, _ range: Range<Int64>, to: String) throws {
        try SyncTestPair.write(FileSource(path: path, range: range), to: to, frames: Int64(range.count))
    }

    @Test func aThreeSecondClipIsPlacedInAnHourWithinFiftyMicroseconds() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 3600
        pair.offsetSeconds = 1.5
        pair.ppm = 131
        pair.equalise = true
        pair.snrDecibels = 20
        let truth = try pair.run()
        // 3 s of REC from 1234.5 s, and 2 s from 2000 s: far beyond a pair's ±60 s.
        for (start, seconds) in [(1234.5, 3.0), (2000.0, 2.0)] {
            let from = Int64(start * 48_000)
            try Self.cut(pair.recording, from..<(from + Int64(seconds * 48_000)), to: dir.file("clip.wav"))
            let e = try DriftEstimator(reference: pair.reference, recording: dir.file("clip.wav")).run()
            let expected = truth.referenceSeconds(atRecordingSeconds: start)
            // The clip's middle: where its windows are.
            let middle = e.offsetSeconds + e.ratio * seconds / 2, truthMiddle = truth.referenceSeconds(atRecordingSeconds: start + seconds / 2)
            #expect(abs(e.offsetSeconds - expected) < 0.000_05, "\(seconds) s clip at \(start) s: \((e.offsetSeconds - expected) * 1000) ms")
            #expect(abs(middle - truthMiddle) < 0.000_05)
            #expect(e.windows.count == 8)
            #expect(e.confidence >= 0.8)
            #expect(e.rivalOffsetSeconds == nil)
            // Among many recordings of the event, too: the clip beside the whole REC.
            let event = try EventSync(reference: pair.reference, recordings: [pair.recording, dir.file("clip.wav")]).run()
            let placed = try #require(event.placements.last?.estimate)
            #expect(abs(placed.offsetSeconds - expected) < 0.000_05, "event: \((placed.offsetSeconds - expected) * 1000) ms")
        }
        // Shorter than 2 s: refused, naming the clip and the minimum.
        try Self.cut(pair.recording, 48_000..<(48_000 + 72_000), to: dir.file("short.wav"))
        let refused = #expect(throws: MixdownError.self) { try DriftEstimator(reference: pair.reference, recording: dir.file("short.wav")).run() }
        #expect(refused?.description.contains("'\(dir.file("short.wav"))': is 1.500 s long: a clip of at least 2 s is needed") == true)
    }

    @Test func aClipWhoseContentOccursTwiceIsRefused() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.offsetSeconds = 0.75
        _ = try pair.run()
        // REF played twice in a row: every clip of it matches two places, 300 s apart.
        let n: Int64 = 300 * 48_000
        let mono = AudioFormat(sampleRate: 48_000, channelCount: 2)
        let items = [0, n].map { at in
            TrackPlayer.Item(frames: at..<(at + n)) { () throws(MixdownError) -> AudioNode in try FileSource(path: pair.reference) }
        }
        try SyncTestPair.write(TrackPlayer(format: mono, length: 2 * n, items: items, label: "twice"), to: dir.file("twice.wav"), frames: 2 * n)
        try Self.cut(pair.recording, 4_800_000..<(4_800_000 + 144_000), to: dir.file("clip.wav"))
        let e = try DriftEstimator(reference: dir.file("twice.wav"), recording: dir.file("clip.wav")).run()
        let rival = try #require(e.rivalOffsetSeconds)
        #expect(abs(abs(rival - e.offsetSeconds) - 300) < 0.001)
        let refused = #expect(throws: MixdownError.self) { try e.requireConfidence(0.5) }
        #expect(refused?.description.contains("fit about as well") == true)
    }

    /// A clip aligned to its reference is checked where it was written: the check places
    /// the stretch of the output that holds it (the rest is silence no window can match)
    /// and finds it within 0.05 ms, a number, not NaN. Before, every clip's check found
    /// nothing and the job was refused (or, earlier, passed reading NaN). A clip of exactly
    /// 3 s at a 1 s spacing is a clip (two whole windows at that spacing), not "too short".
    @Test func anAlignedClipIsCheckedWhereItWasWritten() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 120
        pair.offsetSeconds = 10
        pair.ppm = 30
        _ = try pair.run()
        for (seconds, spacing) in [(2.0, 10.0), (3.0, 1.0), (3.0, 10.0)] {
            try Self.cut(pair.recording, 960_000..<(960_000 + Int64(seconds * 48_000)), to: dir.file("clip.wav"))
            var job = FileAlign(input: dir.file("clip.wav"), reference: pair.reference, output: dir.file("aligned.wav"))
            job.tuning.windowSpacing = spacing
            job.settings.overwrite = true
            let report = try job.run()
            let worst = try #require(report.residualMaxLagMilliseconds, "\(seconds) s at \(spacing) s")
            #expect(worst.isFinite && worst < 0.05, "\(seconds) s clip at a \(spacing) s spacing: \(worst) ms")
            #expect(abs(try #require(report.residualOffsetMilliseconds)) < 0.05)
            #expect(report.outputFrames == 120 * 48_000)
        }
    }

    /// A check that cannot place the output fails closed: REF's own first 2.5 s, reversed,
    /// forced through with --min-confidence 0, is written nowhere.
    @Test func aClipsCheckThatCannotPlaceItFails() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 60
        _ = try pair.run()
        let source = try readFile(pair.reference)
        let reversed = source.planes.map { Array($0[48_000..<168_000].reversed()) }
        try writeFile(dir.file("rev.wav"), reversed, sampleRate: 48_000, format: .s16)
        var job = FileAlign(input: dir.file("rev.wav"), reference: pair.reference, output: dir.file("aligned.wav"))
        job.tuning.minimumConfidence = 0
        #expect(throws: MixdownError.self) { _ = try job.run() }
        #expect(!FileManager.default.fileExists(atPath: dir.file("aligned.wav")))
        #expect(dir.contents.filter { $0.hasPrefix(".") || $0.hasPrefix("mixdown-check") }.isEmpty)
    }

}
