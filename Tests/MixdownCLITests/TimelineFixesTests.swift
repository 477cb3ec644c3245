import Foundation
import Testing

/// Issue 42: two wrong renders of editors' timelines, and the refusals users hit. Each
/// test fails on the reader before it.
@Suite(.serialized) struct TimelineFixesTests {
    static let python = OTIOTests.python

    /// An EDL whose sequence starts at 00:00:00:00 and whose audio starts later (5 s; 3
    /// frames), through the real CMX 3600 adapter: every event lands at its record timecode
    /// (5-9 s and 9-13 s: 13 s long, silence first), none is lost at the end.
    @Test(arguments: ["late", "frames", "sound"])
    func anEDLsEventsLandAtTheirRecordTimecodes(name: String) throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        let made = try OTIOTests.runPython("tools/check/otio/edl.py", ["make", dir.path])
        #expect(made.code == 0, "\(made.output)")
        let r = try CLI.run(["render", "\(name).otio", "\(name).wav", "-q"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        let checked = try OTIOTests.runPython("tools/check/otio/edl.py", ["check", dir.path, name])
        #expect(checked.code == 0 && checked.output.hasSuffix("ok\n"), "\(checked.output)")
        let explained = try CLI.run(["render", "\(name).otio", "--explain"], in: dir.path)
        #expect(explained.stdout.contains(name == "sound" ? "the render starts at 01:00:00:00" : "the render starts at 00:00:00:00"), "\(explained.stdout)")
    }

    /// A clip of `frames` frames at 25 fps from in.wav (48 kHz), with `effects`.
    static func clip(frames: Int, from start: Int = 0, effects: String = "", name: String = "c") -> String {
        OTIOTests.clip(OTIOTests.range(Double(start), Double(frames), 25), available: OTIOTests.range(0, 1500, 25))
            .replacingOccurrences(of: "\"name\": \"c\",", with: "\"name\": \"\(name)\"," + (effects.isEmpty ? "" : " \"effects\": [\(effects)],"))
    }

    static func warp(_ scalar: String) -> String { "{\"OTIO_SCHEMA\": \"LinearTimeWarp.1\", \"time_scalar\": \(scalar)}" }

    /// A LinearTimeWarp of exactly 1.0 (Avid writes them) is no scale: every sample is the
    /// source's. Before, 1,228 of 32,000 samples were resampled by 0.9999995.
    @Test func aTimeScalarOfOneIsNoScale() throws {
        let ws = try Workspace()
        // 40 frames at 25 fps = 1.6 s = 76,800 frames: not a whole microsecond count of frames
        // at 23.976, so use 24000/1001 to make the old microsecond rounding show.
        let c = OTIOTests.clip(OTIOTests.range(0, 40, 24000.0 / 1001), available: OTIOTests.range(0, 1400, 24000.0 / 1001))
            .replacingOccurrences(of: "\"name\": \"c\",", with: "\"name\": \"c\", \"effects\": [\(Self.warp("1.0"))],")
        try OTIOTests.timeline([c]).write(toFile: ws.file("w.otio"), atomically: true, encoding: .utf8)
        var r = try CLI.run(["render", "w.otio", "w.wav", "--format", "f32", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        r = try CLI.run(["export", "in.wav", "ref.wav", "--duration", "1001/600", "--format", "f32", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let got = try readSamples(ws.file("w.wav")), want = try readSamples(ws.file("ref.wav"))
        #expect(got.count == want.count, "\(got.count) for \(want.count)")
        #expect(zip(got, want).filter { $0 != $1 }.count == 0, "samples differ from the source")
    }

    /// A warp of 4.0 on a one-frame clip reads exactly four frames of media (it was refused
    /// as a scale of 0.24999950000099996).
    @Test func aTimeScalarOfFourOnOneFrameIsExact() throws {
        let ws = try Workspace()
        try OTIOTests.timeline([Self.clip(frames: 1, effects: Self.warp("4.0"))]).write(toFile: ws.file("w.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "w.otio", "w.wav", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let frames = try readSamples(ws.file("w.wav")).count / 2
        #expect(frames == 1920, "\(frames) frames for one frame at 25 fps")
    }

    /// Media Composer's clip gain parameter, "Amplitude multiplier", sets the clip's gain.
    @Test func avidsAmplitudeMultiplierIsTheClipsGain() throws {
        let ws = try Workspace()
        let gain = "{\"OTIO_SCHEMA\": \"Effect.1\", \"name\": \"Audio Gain\", \"effect_name\": \"\", \"metadata\": {\"AAF\": {\"Operation\": "
            + "{\"Name\": \"Audio Gain\", \"Identification\": \"9d2ea894-0968-11d3-8a38-0050040ef7d2\"}, "
            + "\"Parameters\": {\"Amplitude multiplier\": \"50000000/100000000\"}}}}"
        try OTIOTests.timeline([Self.clip(frames: 25, effects: gain)]).write(toFile: ws.file("g.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "g.otio", "--explain"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("0..<end  0.5") || r.stdout.contains("0..<48000  0.5"), "\(r.stdout)")
    }

    /// OTIO's own samples write a bare Inf beside Infinity and NaN (in metadata).
    @Test func aBareInfInMetadataIsRead() throws {
        let ws = try Workspace()
        let c = Self.clip(frames: 25).replacingOccurrences(of: "\"name\": \"c\",", with: "\"name\": \"c\", \"metadata\": {\"a\": Inf, \"b\": -Inf, \"c\": Infinity, \"d\": NaN},")
        try OTIOTests.timeline([c]).write(toFile: ws.file("i.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "i.otio", "i.wav", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
    }

    /// A dissolve whose in_offset is the whole outgoing clip (Avid exports these) renders;
    /// the outgoing clip fades from its first frame.
    @Test func aDissolveOverTheWholeOutgoingClipRenders() throws {
        let ws = try Workspace()
        let dissolve = "{\"OTIO_SCHEMA\": \"Transition.1\", \"transition_type\": \"SMPTE_Dissolve\", \"in_offset\": \(OTIOTests.rt(10, 25)), \"out_offset\": \(OTIOTests.rt(5, 25))}"
        try OTIOTests.timeline([Self.clip(frames: 10), dissolve, Self.clip(frames: 25, from: 100)]).write(toFile: ws.file("d.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "d.otio", "d.wav", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(try readSamples(ws.file("d.wav")).count / 2 == 48_000 * 35 / 25)
    }

    /// A Clip directly inside a Stack is a track of that one clip.
    @Test func aClipDirectlyInsideAStackIsATrackOfOne() throws {
        let ws = try Workspace()
        let text = "{\"OTIO_SCHEMA\": \"Timeline.1\", \"name\": \"t\", \"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"children\": [\(Self.clip(frames: 50))]}}"
        try text.write(toFile: ws.file("s.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "s.otio", "s.wav", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(try readSamples(ws.file("s.wav")).count / 2 == 96_000)
    }

    /// A timeline whose only audio is a muted clip or a generator renders silence of the
    /// timeline's length, with a note, as an editor does.
    @Test func aTimelineWithOnlyAMutedClipRendersSilenceOfItsLength() throws {
        let ws = try Workspace()
        let muted = Self.clip(frames: 50).replacingOccurrences(of: "\"name\": \"c\",", with: "\"name\": \"c\", \"enabled\": false,")
        try OTIOTests.timeline([muted]).write(toFile: ws.file("m.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "m.otio", "m.wav", "--format", "f32", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let samples = try readSamples(ws.file("m.wav"))
        #expect(samples.count == 2 * 96_000 && samples.allSatisfy { $0 == 0 }, "\(samples.count)")
        let explained = try CLI.run(["render", "m.otio", "--explain"], in: ws.path)
        #expect(explained.stdout.contains("no enabled audio clip: the render is 2.000000 s of silence"), "\(explained.stdout)")
    }

    /// A document written as OTIO at 29.97 and read back (issue 42: it exited 1 with
    /// "0..3.003 s lies outside line.wav (3.000 s)"): the 3 s clip, rounded to 90 frames,
    /// stops where its media does; it plays on its rounded frame, every sample its source's.
    @Test(arguments: ["30000/1001", "24000/1001"])
    func aTimelineWrittenAtAnNTSCRateReadsBack(rate: String) throws {
        let ws = try Workspace()
        var r = try CLI.run(["export", "in.wav", "line.wav", "--duration", "3", "--format", "f32", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        try #"{"version": 1, "tracks": [{"name": "v", "segments": [{"file": "line.wav", "at": "5"}]}]}"#
            .write(toFile: ws.file("d.json"), atomically: true, encoding: .utf8)
        r = try CLI.run(["render", "d.json", "d.wav", "--otio", "t.otio", "--otio-rate", rate, "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        r = try CLI.run(["render", "t.otio", "t.wav", "--format", "f32", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let explained = try CLI.run(["render", "t.otio", "--explain"], in: ws.path)
        #expect(explained.stdout.contains("past the end of"), "\(explained.stdout)")
        // 5 s at the edit rate: the nearest whole frame, in output frames (48 kHz).
        let parts = rate.split(separator: "/").map { Int($0)! }
        let editFrames = (5 * parts[0] + parts[1] / 2) / parts[1]
        let at = editFrames * parts[1] * 48_000 / parts[0]
        let line = try ExamplesTests.read(ws.file("line.wav")), out = try ExamplesTests.read(ws.file("t.wav"))
        #expect(out[0].count >= at + 144_000)
        for c in 0..<2 {
            #expect(Array(out[c][at..<(at + 144_000)]) == line[c], "channel \(c): not the source at frame \(at)")
            #expect(out[c][(at + 144_000)...].allSatisfy { $0 == 0 })
        }
    }
}
