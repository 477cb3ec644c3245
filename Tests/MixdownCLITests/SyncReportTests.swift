import Foundation
import Testing

/// `mixdown sync --report`: the event's page opened in a real browser
/// (tools/check/reports/browse.py). Three recordings of one generated event (one steady,
/// one whose clock wanders, one that paused) and one of another event: a bar per recording
/// at its offset within a pixel, a bar per stretch around the pause and the jump drawn at
/// its time, one mark per analysis window with its status, the refusal in the CLI's words,
/// links that lead to the stems and the document; and the pages it refuses to write.
@Suite(.serialized) struct SyncReportTests {
    static func event(_ ws: Workspace) throws {
        for args in [["ref.wav", "steady.wav", "--offset", "2", "--ppm", "100"],
                     ["ref2.wav", "wander.wav", "--offset", "-1", "--ppm", "-50", "--wander-ppm", "30"],
                     ["ref3.wav", "paused.wav", "--offset", "3", "--pause-at", "60", "--pause-gap", "5"]] {
            let r = try CLI.run(["generate-pair"] + args + ["--duration", "180"], in: ws.path)
            #expect(r.code == 0, "\(r.stderr)")
        }
        let u = try CLI.run(["generate-pair", "y.wav", "other.wav", "--unrelated", "--seed", "99", "--duration", "90"], in: ws.path)
        #expect(u.code == 0, "\(u.stderr)")
    }

    static let args = ["sync", "ref.wav", "steady.wav", "wander.wav", "paused.wav", "other.wav", "--keep-going", "--doc", "ev.json", "--stems", "stems"]

    @Test func thePageDrawsTheEventWhereTheEstimatesPutIt() throws {
        let ws = try Workspace()
        try Self.event(ws)
        let r = try CLI.run(Self.args + ["--report", "event.html", "-q"], in: ws.path)
        #expect(r.code == 1 && r.stderr.contains("could not place 'other.wav'"), "\(r.stderr)")
        let json = try CLI.run(["sync", "ref.wav", "steady.wav", "wander.wav", "paused.wav", "other.wav", "--json"], in: ws.path)
        let printed = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [[String: Any]])

        try FileManager.default.createDirectory(atPath: LoudnessReportTests.artifacts, withIntermediateDirectories: true)
        let page = try LoudnessReportTests.browse(ws.file("event.html"), screenshot: LoudnessReportTests.artifacts + "/sync-report.png")
        #expect((page["console"] as? [String])?.isEmpty == true, "console: \(page["console"] ?? "")")
        #expect((page["external"] as? [String])?.isEmpty == true)
        #expect(page["title"] as? String == "Sync of 4 recordings on ref.wav — Mixdown")
        // The embedded data is what docs/report.schema.json says.
        #expect((page["schema_errors"] as? [String])?.isEmpty == true, "\(page["schema_errors"] ?? "")")
        #expect(page["page_kind"] as? String == "syncPage")
        let data = try #require(page["data"] as? [String: Any])
        let recordings = try #require(data["recordings"] as? [[String: Any]])
        // The page's data is what --json prints.
        #expect(recordings.map { $0["recording"] as? String } == printed.map { $0["recording"] as? String })
        for (a, b) in zip(recordings, printed) {
            #expect(a["offset_seconds"] as? Double == b["offset_seconds"] as? Double && a["ppm"] as? Double == b["ppm"] as? Double)
            #expect((a["windows"] as? [Any])?.count == (b["windows"] as? [Any])?.count && a["error"] as? String == b["error"] as? String)
        }
        let charts = try #require(page["charts"] as? [[String: Any]])
        let event = try #require(charts.first { $0["id"] as? String == "event" })
        let axes = (event["axes"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Double }
        func px(_ seconds: Double) -> Double { axes["left"]! + (axes["right"]! - axes["left"]!) * (seconds - axes["x0"]!) / (axes["x1"]! - axes["x0"]!) }
        let bars = (event["bars"] as? [[String: Any]] ?? [])
        #expect(bars.map { $0["recording"] as? String } == ["ref.wav", "steady.wav", "wander.wav", "paused.wav", "paused.wav"], "\(bars)")
        for name in ["steady.wav", "wander.wav", "paused.wav"] {
            let estimate = try #require(recordings.first { $0["recording"] as? String == name })
            let bar = try #require(bars.first { $0["recording"] as? String == name && $0["piece"] as? Int == 0 })
            let offset = try #require(estimate["offset_seconds"] as? Double)
            #expect(abs((bar["x"] as! Double) - px(offset)) <= 1, "\(name): drawn at \(bar["x"]!), the estimate's \(px(offset))")
        }
        // The pause: its second stretch starts 5 s of the event later, and the jump is drawn at its time.
        let paused = try #require(recordings.first { $0["recording"] as? String == "paused.wav" })
        let jump = try #require((paused["jumps"] as? [[String: Any]])?.first)
        let jumpTime = try #require(jump["recording_time"] as? Double)
        // REC paused 60 s into it (somewhere in the silence the jump's uncertainty spans: an
        // event's placement kept it, where it was dropped as 0 before) and missed 5 s of the event.
        #expect((jump["uncertainty_seconds"] as! Double) > 0.01)
        #expect(abs(jumpTime - 60) <= (jump["uncertainty_seconds"] as! Double) / 2 + 0.001 && abs((jump["seconds"] as! Double) - 5) < 0.001, "\(jump)")
        let stretch = try #require((paused["segments"] as? [[String: Any]])?.last)
        let second = try #require(bars.first { $0["recording"] as? String == "paused.wav" && $0["piece"] as? Int == 1 })
        let secondStart = (stretch["offset_seconds"] as! Double) + (stretch["ratio"] as! Double) * (stretch["start"] as! Double)
        #expect(abs((second["start"] as! Double) - secondStart) < 1e-6 && abs((second["x"] as! Double) - px(secondStart)) <= 1)
        // Each generate-pair REF starts 20 s plus the offset's whole seconds into the world:
        // ref3.wav starts 1 s after ref.wav, so paused.wav lands 3 + 1 s into ref.wav.
        #expect(abs((paused["offset_seconds"] as! Double) - 4) < 0.001 && abs(secondStart - (4 + 60 + 5)) < 0.15)
        for (i, name) in ["steady.wav", "wander.wav", "paused.wav"].enumerated() {
            let chart = try #require(charts.first { $0["id"] as? String == "lag-\(i)" })
            let estimate = try #require(recordings.first { $0["recording"] as? String == name })
            let windows = try #require(estimate["windows"] as? [[String: Any]])
            #expect(chart["marks"] as? [String] == windows.map { $0["status"] as? String ?? "" }, "\(name)")
            // Each mark where its window's lag is, read back through the axes: within a pixel
            // in time and in lag (less the offset, in ms).
            let axes = (chart["axes"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Double }
            let secondsPerPixel = axes["x1"]! / (axes["right"]! - axes["left"]!)
            let msPerPixel = (axes["y1"]! - axes["y0"]!) / (axes["bottom"]! - axes["top"]!)
            let points = chart["mark_points"] as? [[Any]] ?? []
            #expect(points.count == windows.count)
            let offset = try #require(estimate["offset_seconds"] as? Double)
            for (point, window) in zip(points, windows) {
                let time = window["recording_time"] as! Double
                #expect(abs((point[1] as! Double) - time) <= secondsPerPixel, "\(name): a mark at \(point[1]) s for the window at \(time) s")
                if let lag = window["lag"] as? Double {
                    #expect(abs((point[2] as! Double) - (lag - offset) * 1000) <= msPerPixel, "\(name) at \(time) s: drawn \(point[2]) ms, lag \((lag - offset) * 1000) ms")
                }
            }
            #expect(chart["role"] as? String == "img" && (chart["label"] as? [String])?.count == 2)
            let jumps = chart["jumps"] as? [[Double]] ?? []
            if name == "paused.wav" {
                let lagAxes = (chart["axes"] as? [String: Any] ?? [:]).compactMapValues { $0 as? Double }
                let x = lagAxes["left"]! + (lagAxes["right"]! - lagAxes["left"]!) * jumpTime / lagAxes["x1"]!
                #expect(jumps.count == 1 && abs(jumps[0][1] - x) <= 1, "\(jumps)")
            } else {
                #expect(jumps.isEmpty)
            }
        }
        #expect((recordings[1]["map"] as? [String: Any]) != nil, "the wandering clock has a map")
        // The refusal, in the CLI's words.
        let error = try #require(recordings[3]["error"] as? String)
        let items = page["items"] as? [[String]] ?? []
        #expect(items.count == 1 && items[0][0] == "other.wav" && items[0][1].contains(error), "\(items)")
        #expect(r.stderr.contains(error))
        // Links to what was written beside it.
        let links = (page["links"] as? [[String]] ?? []).map { $0[1] }
        #expect(links.map { ($0 as NSString).lastPathComponent } == ["ev.json", "steady.wav", "wander.wav", "paused.wav"], "\(links)")
        #expect(links.allSatisfy { FileManager.default.fileExists(atPath: $0) } && links.dropFirst().allSatisfy { $0.contains("/stems/") })
        let contrast = try #require(page["contrast"] as? [String: Any])
        #expect(try #require(contrast["ratio"] as? Double) >= 4.5, "\(contrast)")
        // Refused without --keep-going, the run writes no stems: the page links none, not
        // the ones the run before left in stems/.
        let again = try CLI.run(Array(Self.args.filter { $0 != "--keep-going" }) + ["--report", "again.html", "--overwrite", "-q"], in: ws.path)
        #expect(again.code == 1 && again.stderr.contains("could not place 'other.wav'"), "\(again.stderr)")
        #expect(FileManager.default.fileExists(atPath: ws.file("stems/steady.wav")))
        let againPage = try String(contentsOfFile: ws.file("again.html"), encoding: .utf8)
        #expect(!againPage.contains("\"stems\":") && !againPage.contains("href="), "links only to what this run wrote")
        let size = try FileManager.default.attributesOfItem(atPath: ws.file("event.html"))[.size] as! Int
        #expect(size < 200_000, "\(size) bytes for 9 minutes of recordings")
    }

    @Test func aPairsRefusedEstimateIsDrawnWithItsReason() throws {
        let ws = try Workspace()
        let u = try CLI.run(["generate-pair", "ref.wav", "other.wav", "--unrelated", "--duration", "60"], in: ws.path)
        #expect(u.code == 0, "\(u.stderr)")
        let r = try CLI.run(["sync", "ref.wav", "other.wav", "--report", "pair.html", "-q"], in: ws.path)
        #expect(r.code == 1, "\(r.stderr)")
        let page = try LoudnessReportTests.browse(ws.file("pair.html"), screenshot: ws.file("pair.png"))
        #expect((page["console"] as? [String])?.isEmpty == true)
        #expect(page["title"] as? String == "Sync of other.wav on ref.wav — Mixdown")
        let text = try String(contentsOfFile: ws.file("pair.html"), encoding: .utf8)
        #expect(text.contains("confidence 0.00 is below 0.50"), "the refusal in the CLI's words")
        #expect(r.stderr.contains("confidence 0.00 is below 0.50"))
    }

    @Test func aPageThatWouldReplaceAFileIsRefusedBeforeTheAnalysis() throws {
        let ws = try Workspace()
        let u = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "60"], in: ws.path)
        #expect(u.code == 0, "\(u.stderr)")
        try "keep".write(toFile: ws.file("page.html"), atomically: true, encoding: .utf8)
        let exists = try CLI.run(["sync", "ref.wav", "rec.wav", "--report", "page.html"], in: ws.path)
        #expect(exists.code == 1 && exists.stderr.contains("'page.html': already exists"), "\(exists.stderr)")
        #expect(try String(contentsOfFile: ws.file("page.html"), encoding: .utf8) == "keep")
        let input = try CLI.run(["sync", "ref.wav", "rec.wav", "--report", "rec.wav", "--overwrite"], in: ws.path)
        #expect(input.code == 2 && input.stderr.contains("--report rec.wav: would write over 'rec.wav', which this sync reads"), "\(input.stderr)")
        #expect(ws.contents == ["in.wav", "page.html", "rec.wav", "ref.wav"])
    }
}
