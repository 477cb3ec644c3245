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
}
