import Foundation
import Testing

/// OpenTimelineIO timelines rendered by `mixdown render`: ones the real client
/// (opentimelineio 0.18.1 in tools/.venv, made by tools/otio/setup) wrote, checked frame by
/// frame against what its script computed with exact fractions; and bad timelines, each
/// refused with the path of the object at fault.
@Suite(.serialized) struct OTIOTests {
    static let repository = BatchCLITests.repository
    static let python = repository.appendingPathComponent("tools/.venv/bin/python").path

    static func runPython(_ script: String, _ args: [String]) throws -> (code: Int32, output: String) {
        let p = Process(), out = Pipe()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [repository.appendingPathComponent(script).path] + args
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Two hours at 24000/1001 with 1,000 cuts: every frame of every cut is its source frame;
    /// gaps, a dissolve, a time warp, gains, a disabled clip, a nested stack and a video track
    /// give the levels computed independently; a MissingReference names its clip.
    @Test func timelinesTheRealClientWroteRenderOnTheirExactFrames() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/otio/setup")
        let dir = ScratchDir()
        let made = try Self.runPython("tools/otio/make_timelines.py", [dir.path])
        #expect(made.code == 0, "\(made.output)")
        for name in ["cuts", "features"] {
            let r = try CLI.run(["render", "\(name).otio", "\(name).wav", "--json"], in: dir.path)
            #expect(r.code == 0, "\(name): \(r.stderr)")
        }
        let checked = try Self.runPython("tools/otio/check_renders.py", [dir.path])
        #expect(checked.code == 0, "\(checked.output)")
        #expect(checked.output.contains("1000 cuts"))
        let missing = try CLI.run(["render", "missing.otio", "missing.wav"], in: dir.path)
        #expect(missing.code == 1)
        #expect(missing.stderr.contains("'missing.otio': tracks[0].children[0].media_references.DEFAULT_MEDIA: clip 'interview take 3' has a MissingReference"),
                "\(missing.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("missing.wav")))
    }

    static func rt(_ value: Double, _ rate: Double) -> String {
        "{\"OTIO_SCHEMA\": \"RationalTime.1\", \"rate\": \(rate), \"value\": \(value)}"
    }

    static func range(_ start: Double, _ duration: Double, _ rate: Double = 24) -> String {
        "{\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(rt(start, rate)), \"duration\": \(rt(duration, rate))}"
    }

    static func clip(_ sourceRange: String, available: String? = nil) -> String {
        "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"c\", \"source_range\": \(sourceRange), \"active_media_reference_key\": \"DEFAULT_MEDIA\", "
            + "\"media_references\": {\"DEFAULT_MEDIA\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"in.wav\", "
            + "\"available_range\": \(available ?? range(0, 1440))}}}"
    }

    static func timeline(_ children: [String]) -> String {
        "{\"OTIO_SCHEMA\": \"Timeline.1\", \"name\": \"t\", \"global_start_time\": null, \"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"children\": ["
            + "{\"OTIO_SCHEMA\": \"Track.1\", \"kind\": \"Audio\", \"name\": \"a\", \"children\": [\(children.joined(separator: ", "))]}]}}"
    }

    static let dissolve = "{\"OTIO_SCHEMA\": \"Transition.1\", \"transition_type\": \"SMPTE_Dissolve\", \"in_offset\": \(rt(6, 24)), \"out_offset\": \(rt(6, 24))}"

    /// (timeline, the message's path and words)
    static let bad: [(String, String)] = [
        (timeline([clip(range(0, 24)), "{\"OTIO_SCHEMA\": \"Marker.2\", \"name\": \"m\"}"]),
         "tracks[0].children[1].OTIO_SCHEMA: an unknown schema 'Marker'"),
        (timeline([clip(range(0, -24))]), "tracks[0].children[0].source_range.duration: a negative duration"),
        (timeline([dissolve, clip(range(0, 24))]), "tracks[0].children[0]: a transition at the edge of a track"),
        (timeline([clip(range(0, 24)), dissolve]), "tracks[0].children[1]: a transition at the edge of a track"),
        (timeline([clip(range(0, 4)), dissolve, clip(range(48, 24))]), "tracks[0].children[1]: overlaps more than its clips"),
        (timeline([clip(range(1430, 24))]), "tracks[0].children[0].source_range: 59.583333333333336-60.583333333333336 s lies outside its media's available range 0.0-60.0 s"),
        (timeline([clip(range(0, 24, 0))]), "tracks[0].children[0].source_range.start_time.rate: a rate of 0.0: must be above 0"),
        (timeline([clip(range(0, 24, 25.5))]), "tracks[0].children[0].source_range.start_time.rate: a rate of 25.5 is neither a whole number nor an NTSC rate"),
        ("{\"OTIO_SCHEMA\": \"Timeline.1\", \"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"children\": []}}", "tracks: has no enabled audio clip to render"),
    ]

    @Test(arguments: 0..<bad.count)
    func aBadTimelineIsRefusedWithThePathAtFault(case i: Int) throws {
        let ws = try Workspace()
        try Self.bad[i].0.write(toFile: ws.file("t.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "t.otio", "out.wav"], in: ws.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("'t.otio': " + Self.bad[i].1), "\(r.stderr)")
        #expect(ws.contents == ["in.wav", "t.otio"])
    }

    /// --explain says what was not exact and what was left out.
    @Test func explainNotesRoundingsAndIgnoredTracks() throws {
        let ws = try Workspace()
        let video = "{\"OTIO_SCHEMA\": \"Track.1\", \"kind\": \"Video\", \"name\": \"v\", \"children\": []}"
        let text = Self.timeline([Self.clip(Self.range(10.25, 24, 23.976023976023978))])
            .replacingOccurrences(of: "\"children\": [{\"OTIO_SCHEMA\": \"Track.1\"", with: "\"children\": [\(video), {\"OTIO_SCHEMA\": \"Track.1\"")
        try text.write(toFile: ws.file("t.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "t.otio", "--explain"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("tracks[0]: a Video track, ignored"), "\(r.stdout)")
        #expect(r.stdout.contains("rate 23.976023976023978 read as 24000/1001 exactly"))
        #expect(r.stdout.contains("tracks[1].children[0].source_range.start_time.value 10.25 at 23.976023976023978 is not a whole frame: rounded to 41/4 frames"))
        // 24 frames at 24000/1001 from 10.25 frames: frames round(10.25 x 1001/24000 x 48000) = 20521 ... 68569.
        #expect(r.stdout.contains("frames 20521..<68569"), "\(r.stdout)")
    }
}
