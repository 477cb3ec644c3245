import Foundation
import Testing
@testable import Mixdown

private func t(_ s: String) -> MediaTime { try! MediaTime(parsing: s) }
private func range(_ a: String, _ b: String) -> MediaTimeRange { MediaTimeRange(start: t(a), end: t(b)) }

/// A 48 kHz mono file of `seconds` seconds of a sine (cached per test directory).
private func asset(_ dir: TempDir, _ name: String, seconds: Int = 10, rate: Int = 48_000) throws -> AudioAsset {
    let path = dir.file(name)
    if !FileManager.default.fileExists(atPath: path) {
        try writeFile(path, [sine(440, rate: rate, frames: seconds * rate)], sampleRate: rate)
    }
    return try AudioAsset(path: path)
}

/// (source start, source end, target start, target end) as clock strings; nil source for empty edits.
private func table(_ track: CompositionTrack) -> [String] {
    track.segments.map { s in
        let target = "\(s.target.start.approximateSeconds)-\(s.target.end.approximateSeconds)"
        guard let src = s.source else { return "empty@\(target)" }
        return "\((src.asset.path as NSString).lastPathComponent):\(src.range.start.approximateSeconds)-\(src.range.end.approximateSeconds)@\(target)"
    }
}

@Suite struct CompositionTests {
    @Test func insertRipplesLaterContentAndSplitsAStraddlingSegment() throws {
        let dir = TempDir()
        let a = try asset(dir, "a.wav"), b = try asset(dir, "b.wav")
        var c = Composition()
        let id = c.addTrack(name: "main")
        try c[trackID: id].insertTimeRange(range("0", "10"), of: a, at: .zero)
        try c[trackID: id].insertTimeRange(range("1", "3"), of: b, at: t("4"))
        #expect(table(c[trackID: id]) == ["a.wav:0.0-4.0@0.0-4.0", "b.wav:1.0-3.0@4.0-6.0", "a.wav:4.0-10.0@6.0-12.0"])
        #expect(c.duration == t("12"))
        // Past the end: the gap is listed as an empty edit.
        try c[trackID: id].insertTimeRange(range("0", "1"), of: b, at: t("15"))
        #expect(table(c[trackID: id]).suffix(2) == ["empty@12.0-15.0", "b.wav:0.0-1.0@15.0-16.0"])
    }

    @Test func removeAndInsertEmptyMoveEverythingAfter() throws {
        let dir = TempDir()
        let a = try asset(dir, "a.wav")
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].insertTimeRange(range("0", "10"), of: a, at: .zero)
        try c.removeTimeRange(range("2", "5"))
        #expect(table(c[trackID: id]) == ["a.wav:0.0-2.0@0.0-2.0", "a.wav:5.0-10.0@2.0-7.0"])
        try c.insertEmptyTimeRange(range("1", "1.5"))
        #expect(table(c[trackID: id]) == ["a.wav:0.0-1.0@0.0-1.0", "empty@1.0-1.5", "a.wav:1.0-2.0@1.5-2.5", "a.wav:5.0-10.0@2.5-7.5"])
    }

    @Test func scaleTimeRangeScalesInsideAndShiftsAfter() throws {
        let dir = TempDir()
        let a = try asset(dir, "a.wav")
        var c = Composition()
        let id = c.addTrack()
        try c[trackID: id].insertTimeRange(range("0", "10"), of: a, at: .zero)
        try c.scaleTimeRange(range("2", "4"), toDuration: t("3"))
        #expect(table(c[trackID: id]) == ["a.wav:0.0-2.0@0.0-2.0", "a.wav:2.0-4.0@2.0-5.0", "a.wav:4.0-10.0@5.0-11.0"])
        let s = c[trackID: id].segments
        #expect(!s[0].isScaled && s[1].isScaled && !s[2].isScaled)
        // Exact rational arithmetic: 1001/30000 s scaled by 3/2 stays exact.
        var d = Composition()
        let j = d.addTrack()
        try d[trackID: j].addSegment(MediaTimeRange(start: .zero, duration: t("1001/30000")), of: a, at: .zero)
        try d.scaleTimeRange(MediaTimeRange(start: .zero, duration: t("1001/30000")), toDuration: t("1001/20000"))
        #expect(d[trackID: j].segments[0].target.end == t("1001/20000"))
        #expect(!d[trackID: j].segments[0].target.end.hasBeenRounded)
    }

    @Test func badEditsNameTheTrackTheSegmentAndTheTimes() throws {
        let dir = TempDir()
        let a = try asset(dir, "a.wav")
        var c = Composition()
        let id = c.addTrack(name: "voice")
        try c[trackID: id].addSegment(range("0", "4"), of: a, at: t("2"))
        #expect(throws: MixdownError.overlappingSegments(
            track: "track 1 'voice'",
            segment: "'\(a.path)' 0:00:01.000000 to 0:00:02.000000 at 0:00:05.000000 to 0:00:06.000000",
            other: "'\(a.path)' 0:00:00.000000 to 0:00:04.000000 at 0:00:02.000000 to 0:00:06.000000")) {
            try c[trackID: id].addSegment(range("1", "2"), of: a, at: t("5"))
        }
        do {
            try c[trackID: id].addSegment(range("8", "12"), of: a, at: t("20"))
            Issue.record("a range past the end of the file was accepted")
        } catch {
            #expect("\(error)" == "track 1 'voice': inserting 0:00:08.000000 to 0:00:12.000000 of '\(a.path)' at 0:00:20.000000: the source range lies outside the file, which is 0:00:10.000000 long (480000 frames)")
        }
        #expect(throws: MixdownError.self) {
            try c[trackID: id].addSegment(MediaTimeRange(start: t("3"), duration: t("-1")), of: a, at: t("30"))
        }
        #expect(throws: MixdownError.self) { try c[trackID: id].scaleTimeRange(range("0", "1"), toDuration: .zero) }
        // Nothing changed after the refused edits.
        #expect(c[trackID: id].placedSegments.count == 1)
    }

    @Test func segmentTableGivesExactFramesAtTheOutputRate() throws {
        let dir = TempDir()
        let a = try asset(dir, "a44.wav", seconds: 2, rate: 44_100)
        var c = Composition()
        let id = c.addTrack()
        // 1001/30000 s at 48 kHz is 1601.6 frames: it rounds to 1602.
        try c[trackID: id].addSegment(MediaTimeRange(start: t("1/2"), duration: t("1")), of: a, at: t("1001/30000"))
        let rows = c[trackID: id].mappings(outputRate: 48_000)
        #expect(rows.count == 2)
        #expect(rows[0].file == nil && rows[0].targetStartFrame == 0 && rows[0].targetEndFrame == 1602)
        #expect(rows[1].sourceStartFrame == 22_050 && rows[1].sourceEndFrame == 66_150 && rows[1].sourceSampleRate == 44_100)
        // End: 1001/30000 + 1 s = 49601.6 frames -> 49602.
        #expect(rows[1].targetStartFrame == 1602 && rows[1].targetEndFrame == 49_602)
    }

    @Test func duckingWritesOrdinaryVolumeEvents() throws {
        let dir = TempDir()
        let music = try asset(dir, "m.wav", seconds: 30), voice = try asset(dir, "v.wav", seconds: 3)
        var c = Composition()
        let m = c.addTrack(name: "music"), v = c.addTrack(name: "voice")
        try c[trackID: m].addSegment(range("0", "30"), of: music, at: .zero)
        try c[trackID: v].addSegment(range("0", "3"), of: voice, at: t("5"))
        try c[trackID: v].addSegment(range("0", "1"), of: voice, at: t("8.5"))   // 0.5 s gap: merged
        var mix = AudioMix()
        try mix[trackID: m].setVolumeRamp(from: 0, to: 0.8, timeRange: range("0", "2"))
        try mix.duck(m, to: .decibels(-20), whileAudioOn: v, in: c, rampDown: t("0.5"), rampUp: t("1"))
        let events = mix[trackID: m].volume.events
        #expect(events.count == 3)
        #expect(events[1] == .ramp(from: 0.8, to: 0.1, range: range("4.5", "5")))
        #expect(events[2] == .ramp(from: 0.1, to: 0.8, range: range("9.5", "10.5")))
        // A duck that would cross an existing event is refused, naming both.
        var clash = AudioMix()
        try clash[trackID: m].setVolume(0.5, at: t("4.75"))
        #expect(throws: MixdownError.self) {
            try clash.duck(m, to: .linear(0.2), whileAudioOn: v, in: c, rampDown: t("0.5"), rampUp: t("0.5"))
        }
    }
}
