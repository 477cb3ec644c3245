import Foundation
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

    @Test func unrelatedRecordingsExitNonZeroAndAlignWritesNothing() throws {
        let ws = try Workspace()
        _ = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "60", "--unrelated"], in: ws.path)
        let r = try CLI.run(["sync", "ref.wav", "rec.wav"], in: ws.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("confidence 0.0"))
        #expect(r.stderr.contains("are they recordings of the same event?"))
        let a = try CLI.run(["stretch", "rec.wav", "out.wav", "--align", "ref.wav"], in: ws.path)
        #expect(a.code == 1)
        #expect(!ws.contents.contains { $0.contains("out") })
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
