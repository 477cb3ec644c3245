import Foundation
import Mixdown
import Testing

/// `mixdown sync` and `stretch --align` through the binary, on short synthetic pairs.
@Suite(.serialized) struct SyncCLITests {
    @Test func syncPrintsTheEstimateAndItsEvidence() throws {
        let ws = try Workspace()
        let made = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "120", "--offset=-1.25", "--ppm", "250", "--eq", "--snr", "10", "--json"], in: ws.path)
        #expect(made.code == 0, "\(made.stderr)")
        let r = try CLI.run(["sync", "ref.wav", "rec.wav", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(abs((obj["offset_seconds"] as! Double) + 1.25) < 0.001)
        #expect(abs((obj["ppm"] as! Double) - 250) < 2)
        #expect(abs((obj["ratio"] as! Double) - 1.00025) < 2e-6)
        #expect((obj["confidence"] as! Double) > 0.8)
        let windows = obj["windows"] as! [[String: Any]]
        #expect(windows.count == 12)
        let complete = windows.filter { w in w["status"] != nil && w["correlation"] != nil && w["recording_time"] != nil }
        #expect(complete.count == windows.count)
        let text = try CLI.run(["sync", "ref.wav", "rec.wav"], in: ws.path)
        #expect(text.stdout.hasPrefix("REC's time 0 is REF's -0:00:01.2"))
        #expect(text.stdout.contains("ppm slow"))
    }

    /// A clock that wanders: `sync --json` gives the map's exact knots, the text says so,
    /// the plot draws it, and the stems follow it to REF's exact length.
    @Test func aWanderingClockGivesAMapThatTheStemsFollow() throws {
        let ws = try Workspace()
        let made = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "300", "--offset", "1.5", "--ppm", "150",
                                "--wander-ppm", "30", "--json"], in: ws.path)
        #expect(made.code == 0, "\(made.stderr)")
        let r = try CLI.run(["sync", "ref.wav", "rec.wav", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let map = try #require(obj["map"] as? [String: Any])
        #expect(map["recording_rate"] as? Int == 48_000)
        let knots = try #require(map["knots"] as? [[String: Any]])
        #expect(knots.count >= 3)
        #expect(knots.first?["recording_frame"] as? Int == 0)
        // REF times are exact: REF frames over REF's rate.
        #expect(knots.allSatisfy { ($0["reference_time"] as? String)?.hasSuffix("/48000") == true })
        #expect((obj["line_departure_milliseconds"] as! Double) > 1)
        let text = try CLI.run(["sync", "ref.wav", "rec.wav", "--plot", "lag.svg"], in: ws.path)
        #expect(text.stdout.contains("REC's clock wanders"))
        #expect(try String(contentsOfFile: ws.path + "/lag.svg", encoding: .utf8).contains("a map of \(knots.count) knots"))
        let stems = try CLI.run(["sync", "ref.wav", "rec.wav", "--stems", "out"], in: ws.path)
        #expect(stems.code == 0, "\(stems.stderr)")
        let info = try CLI.run(["info", "out/rec.wav", "--json"], in: ws.path)
        #expect((try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as! [String: Any])["frames"] as? Int == 300 * 48_000)
        let wsola = try CLI.run(["stretch", "rec.wav", "w.wav", "--align", "ref.wav", "--algorithm", "wsola"], in: ws.path)
        #expect(wsola.code != 0)
        #expect(wsola.stderr.contains("wandering clock"))
        #expect(!ws.contents.contains("w.wav"))
    }

    @Test func unrelatedRecordingsExitNonZeroAndAlignWritesNothing() throws {
        let ws = try Workspace()
        _ = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "60", "--unrelated"], in: ws.path)
        let r = try CLI.run(["sync", "ref.wav", "rec.wav"], in: ws.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("confidence 0.0"))
        #expect(r.stderr.contains("not recordings of the same event"))
        let a = try CLI.run(["stretch", "rec.wav", "out.wav", "--align", "ref.wav"], in: ws.path)
        #expect(a.code == 1)
        #expect(!ws.contents.contains { $0.contains("out") })
    }

    /// A REC that starts 90 s into REF lies outside the 60 s searched by default: the
    /// refusal says what was searched and names --max-offset, which `stretch --align` takes
    /// too; with it the same pair aligns.
    @Test func aRecordingPastTheSearchIsToldToWidenIt() throws {
        let ws = try Workspace()
        _ = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "300", "--offset", "90", "--ppm", "30"], in: ws.path)
        let r = try CLI.run(["sync", "ref.wav", "rec.wav"], in: ws.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("with the two starts at most 60 s apart (--max-offset): if they start further apart, give a larger --max-offset"), "\(r.stderr)")
        let a = try CLI.run(["stretch", "rec.wav", "out.wav", "--align", "ref.wav"], in: ws.path)
        #expect(a.code == 1 && a.stderr.contains("--max-offset") && !ws.contents.contains("out.wav"))
        let wide = try CLI.run(["stretch", "rec.wav", "out.wav", "--align", "ref.wav", "--max-offset", "120", "--json"], in: ws.path)
        #expect(wide.code == 0, "\(wide.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(wide.stdout.utf8)) as! [String: Any]
        #expect(abs((report["offset_seconds"] as? Double ?? 0) - 90) < 0.001, "\(report)")
        let plain = try CLI.run(["stretch", "rec.wav", "p.wav", "--ratio", "1", "--max-offset", "120"], in: ws.path)
        #expect(plain.code == 2 && plain.stderr.contains("--max-offset: only with --align"))
    }

    @Test func alignWritesTheReferencesLengthAndReportsTheResidual() throws {
        let ws = try Workspace()
        _ = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "120", "--offset", "2.5", "--ppm=-180", "--rate", "44100"], in: ws.path)
        let r = try CLI.run(["stretch", "rec.wav", "out.wav", "--align", "ref.wav", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(obj["output_frames"] as? Int == 120 * 48_000)
        #expect(obj["sample_rate"] as? Int == 48_000)
        #expect((obj["residual_max_lag_milliseconds"] as! Double) < 1)
        let info = try CLI.run(["info", "out.wav", "--json"], in: ws.path)
        let frames = (try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as! [String: Any])["frames"] as? Int
        #expect(frames == 5_760_000)
    }

    /// `--plot` writes the evidence as SVG (for a refused estimate too), and never replaces
    /// a file without `--overwrite`.
    @Test func plotDrawsTheWindowsAndRefusesToReplace() throws {
        let ws = try Workspace()
        _ = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "60", "--offset", "0.5", "--ppm", "100"], in: ws.path)
        let r = try CLI.run(["sync", "ref.wav", "rec.wav", "--plot", "lag.svg", "--quiet"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let svg = try String(contentsOfFile: ws.path + "/lag.svg", encoding: .utf8)
        #expect(svg.hasPrefix("<?xml") && svg.hasSuffix("</svg>\n"))
        let json = try CLI.run(["sync", "ref.wav", "rec.wav", "--json"], in: ws.path)
        let used = (try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any])["windows_used"] as! Int
        #expect(used >= 4)
        #expect(svg.components(separatedBy: "class=\"used\"").count - 1 == 2 * used)
        #expect(svg.contains("rec.wav: offset +0.5"))
        let again = try CLI.run(["sync", "ref.wav", "rec.wav", "--plot", "lag.svg", "--quiet"], in: ws.path)
        #expect(again.code != 0 && again.stderr.contains("lag.svg"))
        #expect(try CLI.run(["sync", "ref.wav", "rec.wav", "--plot", "lag.svg", "--overwrite", "--quiet"], in: ws.path).code == 0)
        _ = try CLI.run(["generate-pair", "a.wav", "b.wav", "--duration", "60", "--unrelated"], in: ws.path)
        let refused = try CLI.run(["sync", "a.wav", "b.wav", "--plot", "refused.svg"], in: ws.path)
        #expect(refused.code == 1 && ws.contents.contains("refused.svg"))
    }
}

extension SyncCLITests {
    /// A plot, page, document or timeline that cannot be written is refused before anything
    /// is read: with inputs that are not audio at all, the error is the output's, naming it
    /// and its missing folder (or the directory it names), exit 1, and nothing is written.
    @Test func unwritableTextOutputsAreRefusedBeforeTheAnalysis() throws {
        let ws = try Workspace()
        for name in ["ref.wav", "rec.wav", "rec2.wav"] { FileManager.default.createFile(atPath: ws.file(name), contents: Data("x".utf8)) }
        try FileManager.default.createDirectory(atPath: ws.file("adir"), withIntermediateDirectories: false)
        let cases: [([String], String)] = [
            (["ref.wav", "rec.wav", "--plot", "nodir/lag.svg"], "'nodir/lag.svg': cannot write: directory 'nodir' does not exist"),
            (["ref.wav", "rec.wav", "--report", "nodir/p.html"], "'nodir/p.html': cannot write: directory 'nodir' does not exist"),
            (["ref.wav", "rec.wav", "rec2.wav", "--doc", "nodir/e.json"], "'nodir/e.json': cannot write: directory 'nodir' does not exist"),
            (["ref.wav", "rec.wav", "rec2.wav", "--otio", "adir"], "'adir': cannot write: it is a directory"),
        ]
        let before = ws.contents
        for (args, message) in cases {
            let r = try CLI.run(["sync"] + args + ["--quiet"], in: ws.path)
            #expect(r.code == 1 && r.stderr.contains(message), "\(args): \(r.stderr)")
            #expect(!r.stderr.contains("cannot read audio"), "\(args): \(r.stderr)")
            #expect(ws.contents == before, "\(args): \(ws.contents)")
        }
    }
}

/// `mixdown sync REF REC REC ...` through the binary: recordings of one speech-like event
/// cut and sped up by sox from one `generate-pair` world, and one of another event.
@Suite(.serialized) struct SyncEventCLITests {
    static let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first { FileManager.default.isExecutableFile(atPath: $0) }

    static func event(_ ws: Workspace) throws {
        let r = try CLI.run(["generate-pair", "world.wav", "x.wav", "--duration", "150"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let u = try CLI.run(["generate-pair", "y.wav", "other.wav", "--unrelated", "--seed", "99", "--duration", "90"], in: ws.path)
        #expect(u.code == 0, "\(u.stderr)")
        // REF: world 20-110 s; a: from world 22 s, +150 ppm; b: from world 17 s, 44.1 kHz, -80 ppm.
        for args in [["world.wav", "ref.wav", "trim", "20", "90"],
                     ["world.wav", "a.wav", "trim", "22", "90", "speed", "1.00015"],
                     ["world.wav", "-r", "44100", "b.wav", "trim", "17", "90", "speed", "0.99992"]] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: sox!)
            p.arguments = ["-q", "-R"] + args
            p.currentDirectoryURL = URL(fileURLWithPath: ws.path)
            try p.run()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
        }
    }

    @Test(.enabled(if: sox != nil)) func everyRecordingGetsAnObjectWithItsDeviceAndPath() throws {
        let ws = try Workspace()
        try Self.event(ws)
        let r = try CLI.run(["sync", "ref.wav", "a.wav", "b.wav", "--device", "lav=b.wav", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])
        #expect(list.count == 2)
        #expect(list.map { $0["recording"] as? String } == ["a.wav", "b.wav"])
        #expect(abs((list[0]["offset_seconds"] as! Double) - 2) < 0.001 && abs((list[0]["ppm"] as! Double) - 150) < 1, "\(list[0])")
        #expect(abs((list[1]["offset_seconds"] as! Double) + 3) < 0.001 && abs((list[1]["ppm"] as! Double) + 80) < 1, "\(list[1])")
        #expect(list[0]["device"] is NSNull && list[1]["device"] as? String == "lav")
        #expect(list.allSatisfy { $0["placed_via"] as? String == "reference" && $0["windows"] != nil && $0["confidence"] != nil })
    }

    @Test(.enabled(if: sox != nil)) func aRecordingOfAnotherEventStopsEveryOutputUnlessKeepGoing() throws {
        let ws = try Workspace()
        try Self.event(ws)
        let r = try CLI.run(["sync", "ref.wav", "a.wav", "other.wav", "--doc", "ev.json", "--stems", "stems", "-q"], in: ws.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("could not place 'other.wav'"))
        #expect(!ws.contents.contains("ev.json") && !ws.contents.contains("stems"))
        let k = try CLI.run(["sync", "ref.wav", "a.wav", "other.wav", "--doc", "ev.json", "--stems", "stems", "--keep-going", "-q"], in: ws.path)
        #expect(k.code == 1)
        #expect(k.stderr.contains("could not place 'other.wav'"))
        let stems = (try? FileManager.default.contentsOfDirectory(atPath: ws.file("stems"))) ?? []
        #expect(stems == ["a.wav"])
        // The document renders the aligned event: REF's exact length.
        let render = try CLI.run(["render", "ev.json", "mix.wav", "-q"], in: ws.path)
        #expect(render.code == 0, "\(render.stderr)")
        #expect(try AudioFileInfo.read(path: ws.file("mix.wav")).frames == AudioFileInfo.read(path: ws.file("ref.wav")).frames)
        #expect(try AudioFileInfo.read(path: ws.file("stems/a.wav")).frames == AudioFileInfo.read(path: ws.file("ref.wav")).frames)
        // In --json, the recording that was not placed was placed through nothing.
        let j = try CLI.run(["sync", "ref.wav", "a.wav", "other.wav", "--json"], in: ws.path)
        #expect(j.code == 1)
        let list = try #require(try JSONSerialization.jsonObject(with: Data(j.stdout.utf8)) as? [[String: Any]])
        #expect(list.map { $0["recording"] as? String } == ["a.wav", "other.wav"])
        #expect(list[0]["placed_via"] as? String == "reference")
        #expect(list[1]["placed_via"] is NSNull && list[1]["error"] is String)
    }

    /// The PluralEyes-style hand-off: `sync --otio` writes the aligned event as a timeline an
    /// editor imports (at 25 fps through the FCP 7 XML adapter), and it renders like --doc.
    @Test(.enabled(if: sox != nil)) func theEventGoesToAnEditorAsATimeline() throws {
        let ws = try Workspace()
        try Self.event(ws)
        let r = try CLI.run(["sync", "ref.wav", "a.wav", "b.wav", "--doc", "ev.json", "--otio", "ev.otio", "--otio-rate", "25", "-q"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let fcp = try OTIOTests.runPython("tools/check/otio/fcp_check.py", [ws.file("ev.otio"), ws.file("ev.xml")])
        #expect(fcp.code == 0, "\(fcp.output)")
        #expect(fcp.output.contains("\"rate\": 25.0"))
        for name in ["ev.json", "ev.otio"] {
            let out = name.replacingOccurrences(of: ".", with: "-") + ".wav"
            let rendered = try CLI.run(["render", name, out, "-q"], in: ws.path)
            #expect(rendered.code == 0, "\(name): \(rendered.stderr)")
            #expect(try AudioFileInfo.read(path: ws.file(out)).frames == AudioFileInfo.read(path: ws.file("ref.wav")).frames)
        }
        let bad = try CLI.run(["sync", "ref.wav", "a.wav", "--otio-rate", "25"], in: ws.path)
        #expect(bad.code != 0 && bad.stderr.contains("--otio-rate: only with --otio"))
    }

    @Test(.enabled(if: sox != nil)) func badDevicesAndStemsAreNamedWithExit1AndNothingWritten() throws {
        let ws = try Workspace()
        try Self.event(ws)
        let cases: [([String], String)] = [
            (["--device", "cam=a.wav,missing.wav"], "--device cam: names 'missing.wav', which does not exist"),
            (["--device", "cam=a.wav", "--device", "cam=b.wav"], "--device cam: two devices are named 'cam'"),
            (["--stems", "in.wav"], "--stems 'in.wav': is a file, not a directory"),
        ]
        for (extra, message) in cases {
            let before = ws.contents
            let r = try CLI.run(["sync", "ref.wav", "a.wav", "b.wav", "--doc", "ev.json"] + extra, in: ws.path)
            #expect(r.code == 1, "\(extra)")
            #expect(r.stderr.contains(message), "\(r.stderr)")
            #expect(ws.contents == before)
        }
    }
}
