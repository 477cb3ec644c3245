import Foundation
import Mixdown
import Testing

/// OpenTimelineIO timelines rendered by `mixdown render`: ones the real client
/// (opentimelineio 0.18.1 in tools/.venv, made by tools/check/otio/setup) wrote, checked frame by
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
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        let made = try Self.runPython("tools/check/otio/make_timelines.py", [dir.path])
        #expect(made.code == 0, "\(made.output)")
        for name in ["cuts", "features"] {
            let r = try CLI.run(["render", "\(name).otio", "\(name).wav", "--json"], in: dir.path)
            #expect(r.code == 0, "\(name): \(r.stderr)")
        }
        let checked = try Self.runPython("tools/check/otio/check_renders.py", [dir.path])
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
        (timeline([dissolve, clip(range(0, 24))]), "tracks[0].children[0]: in_offset 0.25 s reaches past the start of the track"),
        (timeline([clip(range(0, 24)), dissolve]), "tracks[0].children[1]: out_offset 0.25 s reaches past the end of the track"),
        (timeline([clip(range(0, 24)), dissolve, "{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(range(0, 4))}"]),
         "tracks[0].children[1]: out_offset 0.25 s reaches past the 0.16666666666666666 s gap beside it"),
        (timeline(["{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(range(0, 24))}", dissolve, "{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(range(0, 24))}", clip(range(0, 24))]),
         "tracks[0].children[1]: a transition between two gaps fades nothing"),
        (timeline([clip(range(0, 4)), dissolve, clip(range(48, 24))]), "tracks[0].children[1]: overlaps more than its clips"),
        (timeline([clip(range(1430, 24))]), "tracks[0].children[0].source_range: 59.583333333333336-60.583333333333336 s lies outside its media's available range 0.0-60.0 s"),
        (timeline([clip(range(0, 24, 0))]), "tracks[0].children[0].source_range.start_time.rate: a rate of 0.0: must be above 0"),
        (timeline([clip(range(0, 24, 25.5))]), "tracks[0].children[0].source_range.start_time.rate: a rate of 25.5 is neither a whole number nor an NTSC rate"),
        ("{\"OTIO_SCHEMA\": \"Timeline.1\", \"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"children\": []}}", "tracks: has no enabled audio clip to render"),
        // Exact sums of times at three unrelated rates near 10^9 need more than 64 bits: refused, never wrapped.
        (timeline([clip(range(0, 7, 999_999_937)), clip(range(0, 7, 999_999_929)), clip(range(0, 7, 999_999_893)), clip(range(0, 7, 999_999_797))]),
         "tracks: its times, added exactly, leave 64 bits"),
        (timeline([clip(range(0, 24)).replacingOccurrences(of: "\"name\": \"c\",", with: "\"name\": \"c\", \"effects\": [{\"OTIO_SCHEMA\": \"LinearTimeWarp.1\", \"time_scalar\": 1e300}],")]),
         "tracks[0].children[0].effects[0].time_scalar: a time_scalar of 1e+300: a scale must lie between 0.25 and 4"),
        (timeline([clip(range(0, 24)), "{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(range(0, 1e12, 24))}"]),
         "tracks[0].children[1].source_range.duration.value: 1000000000000.0 frames at 24.0: beyond the largest time Mixdown accepts, 1,000,000 hours"),
        // A window before the track that is not the CMX 3600 adapter's record timecode.
        (timeline([clip(range(0, 24))]).replacingOccurrences(of: "\"name\": \"a\",", with: "\"name\": \"a\", \"source_range\": \(range(-48, 12)),"),
         "tracks[0].source_range.start_time: lies wholly before the track (2.000000 s before it, 0.500000 s long) and is not as long as the track"),
    ]

    /// An editor's export on another machine: a path on the editor's disk found by its file
    /// name under --media, a MissingReference found by its clip name, an Avid MXF folder
    /// moved by --relink. The render is the same bytes as the timeline with local paths;
    /// --explain says how each was found; an unresolved one names the clip and every place
    /// looked at, and writes nothing.
    @Test func mediaOnTheEditorsMachineIsRelinked() throws {
        let ws = try Workspace()
        try FileManager.default.createDirectory(atPath: ws.file("media"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: ws.file("in.wav"), toPath: ws.file("media/take1.wav"))
        try FileManager.default.copyItem(atPath: ws.file("in.wav"), toPath: ws.file("media/take2.wav"))
        func clip(_ name: String, _ start: Int, _ reference: String) -> String {
            "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"\(name)\", \"source_range\": \(Self.range(Double(start), 24)), \"active_media_reference_key\": \"DEFAULT_MEDIA\", "
                + "\"media_references\": {\"DEFAULT_MEDIA\": \(reference)}}"
        }
        func external(_ url: String) -> String { "{\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"\(url)\"}" }
        let missing = "{\"OTIO_SCHEMA\": \"MissingReference.1\"}"
        let away = Self.timeline([clip("take1", 0, external("file:///Macintosh%20HD/Users/ed/Media/take1.wav")), clip("take2", 48, missing),
                                  clip("A001C003", 96, external("/Volumes/Avid MediaFiles/MXF/1/in.wav"))])
        let local = Self.timeline([clip("take1", 0, external("in.wav")), clip("take2", 48, external("in.wav")), clip("A001C003", 96, external("in.wav"))])
        try away.write(toFile: ws.file("away.otio"), atomically: true, encoding: .utf8)
        try local.write(toFile: ws.file("local.otio"), atomically: true, encoding: .utf8)
        let options = ["--media", "media", "--relink", "/Volumes/Avid MediaFiles/MXF/1=\(ws.path)"]
        let explain = try CLI.run(["render", "away.otio", "--explain"] + options, in: ws.path)
        #expect(explain.code == 0, "\(explain.stderr)")
        #expect(explain.stdout.contains("note: tracks[0].children[0].media_references.DEFAULT_MEDIA: clip 'take1' found by its file name in 'media': 'media/take1.wav'"), "\(explain.stdout)")
        #expect(explain.stdout.contains("note: tracks[0].children[1].media_references.DEFAULT_MEDIA: clip 'take2' found by its clip name in 'media': 'media/take2.wav'"))
        #expect(explain.stdout.contains("note: tracks[0].children[2].media_references.DEFAULT_MEDIA: clip 'A001C003' relinked by prefix '/Volumes/Avid MediaFiles/MXF/1' to '\(ws.path)/in.wav'"))
        #expect(try CLI.run(["render", "away.otio", "away.wav", "-q"] + options, in: ws.path).code == 0)
        #expect(try CLI.run(["render", "local.otio", "local.wav", "-q"], in: ws.path).code == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: ws.file("away.wav"))) == Data(contentsOf: URL(fileURLWithPath: ws.file("local.wav"))))
        // Without the directory the MissingReference cannot be found: named, and nothing written.
        let unresolved = try CLI.run(["render", "away.otio", "x.wav", "--relink", "/Volumes/Avid MediaFiles/MXF/1=\(ws.path)"], in: ws.path)
        #expect(unresolved.code == 1)
        #expect(unresolved.stderr.contains("'away.otio': tracks[0].children[0].media_references.DEFAULT_MEDIA: clip 'take1': its media was not found; looked at '/Macintosh HD/Users/ed/Media/take1.wav'"),
                "\(unresolved.stderr)")
        let bad = try CLI.run(["render", "away.otio", "x.wav", "--media", "nowhere"], in: ws.path)
        #expect(bad.code != 0 && bad.stderr.contains("--media 'nowhere': not a directory"))
        #expect(!ws.contents.contains("x.wav"))
    }

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

    /// Documents that use what the format has (cuts, empty edits, composition and track
    /// scales, volume ramps, ducking, a time range, settings, metadata) for the round trip.
    static func roundTripDocuments(in dir: String) throws -> [String] {
        var names = ["qa1730", "voiceover", "wwdc2010", "mixed-rates"]
        for a in ["varispeed", "timeDomain", "spectral"] where TimeScaleAlgorithm(name: a)!.isAvailable {
            try """
            { "version": 1, "time_pitch_algorithm": "\(a)", "output": { "sample_rate": 48000, "channels": 2 },
              "tracks": [ { "name": "a", "segments": [
                { "file": "audio/source.wav", "source": { "start": "0", "duration": "10" }, "at": "0" },
                { "file": "audio/mono44k.wav", "source": { "start": "2", "duration": "8" }, "at": "10" } ] } ],
              "scale": [ { "time_range": { "start": "3", "duration": "4" }, "to_duration": "5.5" },
                         { "time_range": { "start": "12", "duration": "3" }, "to_duration": "3.003" } ] }
            """.write(toFile: dir + "/scaled-\(a).json", atomically: true, encoding: .utf8)
            names.append("scaled-\(a)")
        }
        try """
        { "version": 1, "output": { "sample_rate": 44100, "channels": 1, "type": "wav" }, "resampler": "libsamplerate", "resampler_quality": "medium",
          "time_range": { "start": "1001/30000", "end": "17" }, "metadata": { "title": "round trip", "comment": "settings" },
          "tracks": [
            { "name": "drifting", "segments": [
                { "file": "audio/stereo48k.wav", "source": { "start": "12345f", "end": "8.5" }, "at": "1/3" },
                { "empty": { "start": "9", "duration": "2" } },
                { "file": "audio/clip2.wav", "source": { "start": "0", "duration": "7" }, "at": "11" } ],
              "scale": [ { "time_range": { "start": "0", "duration": "18" }, "to_duration": "18.0023578" } ],
              "volume": [ { "volume": 0.7, "at": "0" }, { "ramp": { "from": 0.7, "to": 0.1, "start": "4", "duration": "3" } } ] },
            { "name": "tail", "segments": [ { "empty": { "start": "0", "duration": "2.5" } },
                { "file": "audio/line1.wav", "at": "2.5" }, { "empty": { "start": "5.5", "duration": "13" } } ] } ] }
        """.write(toFile: dir + "/settings.json", atomically: true, encoding: .utf8)
        return names + ["settings"]
    }

    /// `render DOC --otio T.otio` writes a timeline that renders to the same bytes as the
    /// document, and so does the same timeline after opentimelineio read it and wrote it
    /// again; the client finds every clip where the document placed it, its media range exact.
    @Test func aDocumentWrittenAsOTIORendersTheSameBytes() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = try ExamplesTests.prepared.get()
        for name in try Self.roundTripDocuments(in: dir) {
            let quiet = ["--format", "s24", "--overwrite", "-q"]
            let direct = try CLI.run(["render", "\(name).json", "\(name)-doc.wav"] + quiet, in: dir)
            #expect(direct.code == 0, "\(name): \(direct.stderr)")
            let written = try CLI.run(["render", "\(name).json", "--otio", "\(name).otio", "--overwrite"], in: dir)
            #expect(written.code == 0 && written.stdout == "wrote \(name).otio\n", "\(name): \(written.stderr)")
            let client = try Self.runPython("tools/check/otio/read_back.py", [dir + "/\(name).otio", dir + "/\(name)-client.otio"])
            #expect(client.code == 0, "\(name): \(client.output)")
            for otio in ["\(name)", "\(name)-client"] {
                let r = try CLI.run(["render", "\(otio).otio", "\(otio).wav"] + quiet, in: dir)
                #expect(r.code == 0, "\(otio): \(r.stderr)")
                let a = FileManager.default.contents(atPath: dir + "/\(name)-doc.wav"), b = FileManager.default.contents(atPath: dir + "/\(otio).wav")
                #expect(a != nil && a == b, "\(otio).otio does not render the bytes of \(name).json")
            }
            try Self.compare(clientReport: client.output, with: CompositionDocument(contentsOf: dir + "/\(name).json"), in: dir, name: name)
        }
    }

    /// --otio-rate: Mixdown's timeline at an editor's rate. The FCP 7 XML adapter converts
    /// it (it refuses rate 1 or 48000), and reading the XML back as an editor would puts each
    /// clip on its frame: whole-frame times exactly, the others rounded to the nearest frame
    /// (halves away from zero) and flagged in metadata.
    /// (At 30000/1001 the first clip's 10 s are 299.7 frames: both clips are rounded.)
    @Test(arguments: [("25", 25.0, [(0, 250, 0), (251, 100, 63)], 1), ("30000/1001", 30_000.0 / 1_001, [(0, 300, 0), (300, 120, 75)], 2)])
    func aTimelineAtAnEditRateConvertsToFCPXMLWithEveryClipOnItsFrame(rate: String, fps: Double, expected: [(Int, Int, Int)], rounded: Int) throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let ws = try Workspace()
        // 10 s from 0 at 0; 4 s from 2.5 s at 10.02 s (not a frame at either rate).
        try """
        { "version": 1, "tracks": [ { "name": "dialogue", "segments": [
            { "file": "in.wav", "source": { "start": "0", "duration": "10" }, "at": "0" },
            { "file": "in.wav", "source": { "start": "2.5", "duration": "4" }, "at": "10.02" } ] } ] }
        """.write(toFile: ws.file("doc.json"), atomically: true, encoding: .utf8)
        let w = try CLI.run(["render", "doc.json", "--otio", "t.otio", "--otio-rate", rate], in: ws.path)
        #expect(w.code == 0, "\(w.stderr)")
        let text = try String(contentsOfFile: ws.file("t.otio"), encoding: .utf8)
        #expect(text.contains("\"edit_rate\": \"\(rate)\", \"rounded\": \(rounded)"), "\(text.prefix(400))")
        let r = try Self.runPython("tools/check/otio/fcp_check.py", [ws.file("t.otio"), ws.file("t.xml")])
        #expect(r.code == 0, "\(r.output)")
        struct Report: Decodable { struct Clip: Decodable { let record_in: Int, duration: Int, source_in: Int, rate: Double }; let tracks: [[Clip]] }
        let report = try JSONDecoder().decode(Report.self, from: Data(r.output.utf8))
        let clips = try #require(report.tracks.first)
        #expect(clips.map { [$0.record_in, $0.duration, $0.source_in] } == expected.map { [$0.0, $0.1, $0.2] })
        #expect(clips.allSatisfy { abs($0.rate - fps) < 1e-6 })
        // Mixdown reads its own timeline back on those frames too.
        #expect(try CLI.run(["render", "t.otio", "--explain"], in: ws.path).code == 0)
        let bad = try CLI.run(["render", "doc.json", "--otio", "u.otio", "--otio-rate", "1e9/0"], in: ws.path)
        #expect(bad.code != 0 && bad.stderr.contains("--otio-rate '1e9/0'"))
    }

    /// What opentimelineio read (read_back.py's JSON) against the document's segments.
    static func compare(clientReport: String, with doc: CompositionDocument, in dir: String, name: String) throws {
        struct Report: Decodable {
            struct Track: Decodable { let name: String; let clips: [Clip]; let seconds: Double }
            struct Clip: Decodable {
                let name: String, target_url: String, source_start: [Int64], duration: [Int64]
                let at_seconds: Double, placed_seconds: Double, time_scalar: Double?
            }
            let tracks: [Track]
        }
        let report = try JSONDecoder().decode(Report.self, from: Data(clientReport.utf8))
        #expect(report.tracks.map(\.name) == doc.composition.tracks.map(\.name), "\(name)")
        for (track, t) in zip(doc.composition.tracks, report.tracks) {
            let segments = track.placedSegments.filter { $0.source != nil }
            #expect(segments.count == t.clips.count, "\(name) '\(track.name)': \(t.clips.count) clips for \(segments.count) segments")
            #expect(abs(t.seconds - track.duration.approximateSeconds) < 1e-9, "\(name) '\(track.name)': \(t.seconds) s")
            for (s, c) in zip(segments, t.clips) {
                let source = s.source!
                let start = try MediaTime(numerator: c.source_start[0], denominator: c.source_start[1], parameter: "start")
                // OTIO's duration is the segment's end minus its start, exactly (the end is what the render's frames count to).
                let (e, a) = (s.target.end, s.target.start)
                let lengthMatches = Int128(c.duration[0]) * Int128(e.timescale) * Int128(a.timescale)
                    == Int128(c.duration[1]) * (Int128(e.value) * Int128(a.timescale) - Int128(a.value) * Int128(e.timescale))
                #expect(start == source.range.start && lengthMatches,
                        "\(name) '\(c.name)': source \(c.source_start) + \(c.duration) for \(s.target.start.clockDescription)")
                #expect(abs(c.at_seconds - s.target.start.approximateSeconds) < 1e-9 && abs(c.placed_seconds - s.target.duration.approximateSeconds) < 1e-9,
                        "\(name) '\(c.name)': at \(c.at_seconds) s for \(s.target.start.clockDescription)")
                #expect(dir + "/" + c.target_url == source.asset.path, "\(name): \(c.target_url) for \(source.asset.path)")
                if s.isScaled {
                    let scalar = source.range.duration.approximateSeconds / s.target.duration.approximateSeconds
                    #expect(c.time_scalar.map { abs($0 - scalar) < 1e-12 } == true, "\(name) '\(c.name)': time_scalar \(String(describing: c.time_scalar)), \(scalar)")
                } else {
                    #expect(c.time_scalar == nil, "\(name) '\(c.name)'")
                }
            }
        }
    }

    /// Editors' formats through the real adapters: a CMX 3600 EDL (otio-cmx3600-adapter; 23.976,
    /// record timecode from 01:00:00:00, two audio channels whose record ins differ, a gap and a
    /// dissolve) and a Final Cut Pro 7 XML sequence (otio-fcp-adapter; Audio Levels filters),
    /// converted to OTIO and rendered; every frame checked by the scripts from the timecodes.
    @Test(arguments: [("edl.py", "sound"), ("fcp.py", "sequence")])
    func anEditorsFormatConvertedByItsAdapterRendersEndToEnd(script: String, name: String) throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        let made = try Self.runPython("tools/check/otio/\(script)", ["make", dir.path])
        #expect(made.code == 0, "\(made.output)")
        let r = try CLI.run(["render", "\(name).otio", "\(name).wav", "-q"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        let checked = try Self.runPython("tools/check/otio/\(script)", ["check", dir.path])
        #expect(checked.code == 0 && checked.output.hasSuffix("ok\n"), "\(checked.output)")
    }

    /// The CMX 3600 `AA` event of a stereo source, with an `AUD 3` line (as the adapter's
    /// multi_audio.edl), recorded at 00:59:53:11 and converted by the real adapter: A1 plays
    /// channel 1 on the left and A2 channel 2 on the right, every 16-bit sample the source's
    /// (summed whole they were twice it, and clipped); the render starts at the event, not
    /// 59 min 53 s of silence after 00:00:00:00 (checked by tools/check/otio/edl.py).
    @Test func anEDLStereoEventRendersAsItsSourceFromTheEvent() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        let made = try Self.runPython("tools/check/otio/edl.py", ["make", dir.path])
        #expect(made.code == 0, "\(made.output)")
        let r = try CLI.run(["render", "stereo.otio", "stereo.wav.out.wav", "--format", "s16", "-q"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        let checked = try Self.runPython("tools/check/otio/edl.py", ["check-stereo", dir.path])
        #expect(checked.code == 0 && checked.output.hasSuffix("ok\n"), "\(checked.output)")
        let explained = try CLI.run(["render", "stereo.otio", "--explain"], in: dir.path)
        #expect(explained.stdout.contains("channel 1 of the file") && explained.stdout.contains("channel 2 of the file")
                && (explained.stdout + explained.stderr).contains("starts at the first record in, 00:59:53:11"), "\(explained.stdout)\(explained.stderr)")
    }

    /// Avid's clip gain and fades: AAFs written with pyaaf2 as Media Composer writes them
    /// (Audio Gain operations: a constant Amplitude, linear and held keyframes, beside Filler;
    /// a clip between Filler with a Mono Audio Dissolve into and out of it), read by
    /// otio-aaf-adapter, render every frame at the gain the AAF gives it (checked by the
    /// script from its own fractions and opentimelineio's places); keyframes that are not
    /// linear are refused.
    @Test func avidAudioGainFromTheAAFAdapterRendersItsLevels() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        let made = try Self.runPython("tools/check/otio/aaf.py", ["make", dir.path])
        #expect(made.code == 0, "\(made.output)")
        for name in ["gain", "fade"] {
            let r = try CLI.run(["render", "\(name).otio", "\(name).wav", "--format", "f32", "-q"], in: dir.path)
            #expect(r.code == 0, "\(name): \(r.stderr)")
        }
        let checked = try Self.runPython("tools/check/otio/aaf.py", ["check", dir.path])
        #expect(checked.code == 0 && checked.output.hasSuffix("ok\n"), "\(checked.output)")
        let explained = try CLI.run(["render", "gain.otio", "--explain"], in: dir.path)
        #expect(explained.stdout.contains("144000..<192000  ramp 1 -> 0.25") && explained.stdout.contains("307200..<345600  2"),
                "\(explained.stdout)")
        // The same timeline with Bezier keyframes: refused at the parameter, nothing written.
        let text = try String(contentsOfFile: dir.file("gain.otio"), encoding: .utf8)
        #expect(text.contains("\"keyframe_interpolation\": \"Linear\""))
        try text.replacingOccurrences(of: "\"keyframe_interpolation\": \"Linear\"", with: "\"keyframe_interpolation\": \"Bezier\"")
            .write(toFile: dir.file("bezier.otio"), atomically: true, encoding: .utf8)
        let bezier = try CLI.run(["render", "bezier.otio", "bezier.wav"], in: dir.path)
        #expect(bezier.code == 1 && bezier.stderr.contains(
            "tracks[0].children[2].effects[0].metadata.AAF.Parameters.Amplitude.keyframe_interpolation: keyframed Audio Gain with Bezier interpolation"),
                "\(bezier.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("bezier.wav")))
    }

    /// Track windows (a track's `source_range`) that start before the track and inside it,
    /// written by opentimelineio: every frame of the render is where opentimelineio's
    /// `child_at_time` and `transformed_time` put its media frame (silence before the track).
    @Test func trackWindowsRenderWhereOpentimelineioPlacesThem() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        let made = try Self.runPython("tools/check/otio/window.py", ["make", dir.path])
        #expect(made.code == 0, "\(made.output)")
        for name in ["window-7-9", "window-7-16", "window3-4"] {
            let r = try CLI.run(["render", "\(name).otio", "\(name).wav", "--format", "f32", "-q"], in: dir.path)
            #expect(r.code == 0, "\(name): \(r.stderr)")
        }
        let checked = try Self.runPython("tools/check/otio/window.py", ["check", dir.path])
        #expect(checked.code == 0 && checked.output.hasSuffix("ok\n"), "\(checked.output)")
    }

    /// DaVinci Resolve's clip volume (the "Fairlight Clip Volume and Fades" effect of its
    /// OTIO export, in dB) sets the clip's gain; its other effects are ignored by their own
    /// names; keyframed volume follows its keys (frames from the clip's start), linear in dB.
    @Test func resolveClipVolumeSetsTheClipsGain() throws {
        let ws = try Workspace()
        func resolve(_ name: String, _ parameters: String, enabled: Bool = true) -> String {
            "{\"OTIO_SCHEMA\": \"Effect.1\", \"name\": \"\", \"effect_name\": \"Resolve Effect\", \"metadata\": {\"Resolve_OTIO\": "
                + "{\"Effect Name\": \"\(name)\", \"Enabled\": \(enabled), \"Parameters\": [\(parameters)]}}}"
        }
        func volume(_ db: Double, keys: String = "{}") -> String {
            "{\"Default Parameter Value\": 0.0, \"Key Frames\": \(keys), \"Parameter ID\": \"volume\", \"Parameter Value\": \(db), \"Variant Type\": \"Double\"}"
        }
        func timeline(_ effects: [String]) -> String {
            Self.timeline([Self.clip(Self.range(0, 24)).replacingOccurrences(of: "\"name\": \"c\",",
                                                                            with: "\"name\": \"c\", \"effects\": [\(effects.joined(separator: ", "))],")])
        }
        try timeline([resolve("Fairlight Clip Volume and Fades", volume(-20)), resolve("Fairlight Clip Pan", "")])
            .write(toFile: ws.file("t.otio"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "t.otio", "--explain"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("0..<end  0.1") || r.stdout.contains("0..<48000  0.1"), "\(r.stdout)")
        #expect(r.stdout.contains("note: tracks[0].children[0].effects[1]: effect 'Fairlight Clip Pan' ignored"), "\(r.stdout)")
        // Disabled: 0 dB.
        try timeline([resolve("Fairlight Clip Volume and Fades", volume(-20), enabled: false)])
            .write(toFile: ws.file("off.otio"), atomically: true, encoding: .utf8)
        let off = try CLI.run(["render", "off.otio", "--explain"], in: ws.path)
        #expect(off.code == 0 && !off.stdout.contains("0.1"), "\(off.stdout)")
        try timeline([resolve("Fairlight Clip Volume and Fades", volume(-6, keys: "{\"3\": {\"Value\": -12.0, \"Variant Type\": \"Double\"}}"))])
            .write(toFile: ws.file("keys.otio"), atomically: true, encoding: .utf8)
        // One key (frame 3 of the clip, -12 dB): it holds over the whole clip.
        let keyed = try CLI.run(["render", "keys.otio", "out.wav", "--format", "f32", "-q"], in: ws.path)
        #expect(keyed.code == 0, "\(keyed.stderr)")
        let source = try ExamplesTests.read(ws.file("in.wav"))
        let out = try ExamplesTests.read(ws.file("out.wav"))
        let g = Float(pow(10, -12.0 / 20))
        #expect(out.count == 2 && out[0].count == 48_000)
        for c in 0..<2 { #expect(zip(out[c], source[c]).allSatisfy { abs($0 - $1 * g) <= 1e-6 }, "channel \(c): not -12 dB throughout") }
        // Keys at frames 6 and 18 (0 and -20 dB): 0 dB to frame 6, a fade in dB to frame 18,
        // -20 dB after; at frame 12 (halfway) -10 dB, within 0.1 dB.
        try timeline([resolve("Fairlight Clip Volume and Fades",
                              volume(-6, keys: "{\"18\": {\"Value\": -20.0, \"Variant Type\": \"Double\"}, \"6\": {\"Value\": 0.0, \"Variant Type\": \"Double\"}}"))])
            .write(toFile: ws.file("ramp.otio"), atomically: true, encoding: .utf8)
        let ramp = try CLI.run(["render", "ramp.otio", "ramp.wav", "--format", "f32", "-q"], in: ws.path)
        #expect(ramp.code == 0, "\(ramp.stderr)")
        let rendered = try ExamplesTests.read(ws.file("ramp.wav"))[0]
        // dB at the middle of 24 fps frame f (2,000 samples a frame), from the left channel's
        // ratio to the source at the loudest sample of the 200 around it.
        func level(atFrame f: Int) -> Double {
            let i = (f * 2000 + 900..<f * 2000 + 1100).max { abs(source[0][$0]) < abs(source[0][$1]) }!
            return 20 * log10(Double(abs(rendered[i]) / abs(source[0][i])))
        }
        // Linear in dB between the keys: frame 12.5 is -10.8 dB.
        for (f, want) in [(2, 0.0), (12, -20.0 * 6.5 / 12), (21, -20.0)] {
            #expect(abs(level(atFrame: f) - want) < 0.1, "frame \(f): \(level(atFrame: f)) dB for \(want)")
        }
    }

    /// Audio Levels: a keyframed level is refused with its path; a level out of range too.
    @Test func audioLevelsThatCannotBeRenderedAreRefused() throws {
        let ws = try Workspace()
        func levels(_ parameter: String) -> String {
            Self.timeline([Self.clip(Self.range(0, 24)).replacingOccurrences(of: "\"name\": \"c\",", with:
                "\"name\": \"c\", \"effects\": [{\"OTIO_SCHEMA\": \"Effect.1\", \"name\": \"Audio Levels\", \"metadata\": {\"fcp_xml\": {\"effectid\": \"audiolevels\", \"parameter\": \(parameter)}}}],")])
        }
        for (parameter, message) in [
            ("{\"parameterid\": \"level\", \"value\": \"1\", \"keyframe\": [{\"when\": \"0\", \"value\": \"1\"}]}",
             "tracks[0].children[0].effects[0].metadata.fcp_xml.parameter.keyframe: keyframed Audio Levels are not supported"),
            ("[{\"parameterid\": \"pan\", \"value\": \"0\"}, {\"parameterid\": \"level\", \"value\": \"40\"}]",
             "tracks[0].children[0].effects[0].metadata.fcp_xml.parameter[1].value: a level of 40.0: must lie between 0 and 16 (linear)"),
        ] {
            try levels(parameter).write(toFile: ws.file("t.otio"), atomically: true, encoding: .utf8)
            let r = try CLI.run(["render", "t.otio", "out.wav"], in: ws.path)
            #expect(r.code == 1 && r.stderr.contains("'t.otio': " + message), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: ws.file("out.wav")))
        }
    }
}
