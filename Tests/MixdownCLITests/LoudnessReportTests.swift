import Foundation
import Testing

/// `mixdown loudness --report`: the page opened in a real browser (Debian's headless
/// Chromium through tools/check/reports/browse.py), read as a reader meets it: no console
/// error and nothing fetched, a title and headings, each chart an image with its text
/// alternative, the curves drawn where the measurement says, the text's contrast; and the
/// refusals that write nothing.
@Suite(.serialized) struct LoudnessReportTests {
    static let repository = BatchCLITests.repository
    static let python = repository.appendingPathComponent("tools/.venv/bin/python").path
    /// Where the screenshots are kept (a test artifact: beside the build, out of git).
    static let artifacts = repository.appendingPathComponent(".build/artifacts").path

    /// What browse.py found on `page`, with a screenshot at `screenshot`.
    static func browse(_ page: String, screenshot: String) throws -> [String: Any] {
        let p = Process(), out = Pipe(), err = Pipe()
        p.executableURL = URL(fileURLWithPath: python)
        p.arguments = [repository.appendingPathComponent("tools/check/reports/browse.py").path, page, screenshot]
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0, let found = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "browse.py: " + String(decoding: errors, as: UTF8.self)])
        }
        return found
    }

    static func sox(_ args: [String], in dir: String) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: SyncEventCLITests.sox!)
        p.arguments = args
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "sox \(args)")
    }

    @Test func thePageShowsWhatWasMeasured() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = ScratchDir()
        // Pink noise, quiet, loud for 3 s, quiet: a short-term curve with one clear maximum.
        try Self.sox(["-n", "-r", "48000", "-c", "2", "-b", "16", "speech.wav", "synth", "4", "pinknoise", "vol", "0.05", ":",
                      "synth", "3", "pinknoise", "vol", "0.4", ":", "synth", "5", "pinknoise", "vol", "0.05"], in: dir.path)
        let r = try CLI.run(["loudness", "speech.wav", "--report", "loud.html"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("report: loud.html"))
        let printed = try CLI.run(["loudness", "speech.wav", "--json"], in: dir.path)
        let measured = try #require(try JSONSerialization.jsonObject(with: Data(printed.stdout.utf8)) as? [String: Any])["loudness"] as! [String: Any]

        try FileManager.default.createDirectory(atPath: Self.artifacts, withIntermediateDirectories: true)
        let shot = Self.artifacts + "/loudness-report.png"
        let page = try Self.browse(dir.file("loud.html"), screenshot: shot)
        #expect((page["console"] as? [String])?.isEmpty == true, "console: \(page["console"] ?? "")")
        #expect((page["external"] as? [String])?.isEmpty == true, "fetched: \(page["external"] ?? "")")
        #expect(page["title"] as? String == "Loudness of speech.wav — Mixdown")
        // The embedded data is what docs/report.schema.json says.
        #expect((page["schema_errors"] as? [String])?.isEmpty == true, "\(page["schema_errors"] ?? "")")
        #expect(page["page_kind"] as? String == "loudnessPage")
        let headings = (page["headings"] as? [[String]] ?? []).map { $0.joined(separator: " ") }
        #expect(headings == ["h1 Loudness of speech.wav", "h2 Loudness over time", "h2 True peak over time"], "\(headings)")
        // The data embedded is the JSON printed: the same measurement, and its timeline.
        let data = try #require((page["data"] as? [[String: Any]])?.first)
        let embedded = try #require(data["loudness"] as? [String: Any])
        for key in ["integrated_lufs", "max_short_term_lufs", "true_peak_fine_dbtp", "range_lu", "frames"] {
            #expect((embedded[key] as? Double) == (measured[key] as? Double), "\(key)")
        }
        let timeline = try #require(data["timeline"] as? [String: Any])
        #expect(timeline["seconds_per_point"] as? Double == 0.1 && (timeline["short_term_lufs"] as? [Any])?.count == 120)

        let charts = try #require(page["charts"] as? [[String: Any]])
        #expect(charts.map { $0["id"] as? String } == ["loudness-0", "peak-0"])
        for chart in charts {
            #expect(chart["role"] as? String == "img")
            let label = chart["label"] as? [String] ?? []
            #expect(label.count == 2 && label.allSatisfy { $0.count > 10 }, "\(chart["id"] ?? ""): \(label)")
            #expect((chart["width"] as? Double ?? 0) > 600, "drawn at its size")
        }
        func top(_ chart: Int, _ series: String) -> Double? {
            ((charts[chart]["series"] as? [String: Any])?[series] as? [String: Any])?["top"] as? Double
        }
        func level(_ chart: Int, _ name: String) -> Double? {
            (charts[chart]["levels"] as? [[Any]])?.first { $0.first as? String == name }?.last as? Double
        }
        // Where the browser draws them, read back through the axes.
        let shortTermMaximum = try #require(measured["max_short_term_lufs"] as? Double)
        #expect(abs(try #require(top(0, "short_term_lufs")) - shortTermMaximum) <= 0.05)
        let shortTerm = (timeline["short_term_lufs"] as? [Any] ?? []).compactMap { $0 as? Double }
        #expect(abs(try #require(shortTerm.max()) - shortTermMaximum) <= 0.05)
        #expect(abs(try #require(top(1, "true_peak_dbtp")) - (measured["true_peak_fine_dbtp"] as! Double)) <= 0.05)
        #expect(abs(try #require(level(0, "Integrated")) - (measured["integrated_lufs"] as! Double)) <= 0.05)
        // The relative gate: 10 LU under the mean of the blocks above -70 LUFS, so at or
        // under the integrated loudness (the mean of those above the gate) less 10.
        let gate = try #require(level(0, "Relative gate"))
        #expect(abs(gate - (timeline["relative_gate_lufs"] as! Double)) <= 0.05)
        #expect(gate <= measured["integrated_lufs"] as! Double - 10 + 0.05)
        #expect(abs(try #require(level(1, "Ceiling (EBU R128)")) - -1) <= 0.05)
        // The absolute gate lies below the chart's floor here: not drawn.
        #expect(level(0, "Absolute gate") == nil)
        let contrast = try #require(page["contrast"] as? [String: Any])
        #expect(try #require(contrast["ratio"] as? Double) >= 4.5, "\(contrast)")
        let png = try Data(contentsOf: URL(fileURLWithPath: shot))
        #expect(png.starts(with: [0x89, 0x50, 0x4E, 0x47]) && png.count > 20_000)
    }

    /// Several files on one page, one of them silent: a section each, no curve for the
    /// silence and no gate, and still nothing the browser complains of.
    @Test func severalFilesAndSilenceMakeOnePage() throws {
        let dir = ScratchDir()
        try Self.sox(["-n", "-r", "44100", "-c", "1", "-b", "16", "tone.wav", "synth", "5", "sine", "1000", "vol", "0.25"], in: dir.path)
        try Self.sox(["-D", "-n", "-r", "48000", "-c", "2", "-b", "16", "silence.wav", "trim", "0", "4"], in: dir.path)
        let r = try CLI.run(["loudness", "tone.wav", "silence.wav", "--report", "both.html", "--json"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        // --json with --report prints each file's timeline too.
        #expect(r.stdout.split(separator: "\n").count == 2 && r.stdout.contains("\"timeline\":{"))
        let page = try Self.browse(dir.file("both.html"), screenshot: dir.file("both.png"))
        #expect((page["console"] as? [String])?.isEmpty == true, "console: \(page["console"] ?? "")")
        #expect(page["title"] as? String == "Loudness of 2 files — Mixdown")
        let headings = (page["headings"] as? [[String]] ?? []).map { $0.joined(separator: " ") }
        #expect(headings == ["h1 Loudness of 2 files", "h2 tone.wav", "h3 Loudness over time", "h3 True peak over time",
                             "h2 silence.wav", "h3 Loudness over time", "h3 True peak over time"], "\(headings)")
        let charts = try #require(page["charts"] as? [[String: Any]])
        #expect(charts.count == 4)
        // A 1 kHz tone at -12 dBFS in one channel: -12 - 3.01 + 0.0 LUFS (K-weighting is ~0 dB at 1 kHz).
        let toneTop = ((charts[0]["series"] as? [String: Any])?["short_term_lufs"] as? [String: Any])?["top"] as? Double
        #expect(abs(try #require(toneTop) - (20 * log10(0.25) - 3.01)) < 0.1)
        let silent = charts[2]
        #expect(((silent["series"] as? [String: Any]) ?? [:]).isEmpty, "no curve for silence")
        #expect((silent["levels"] as? [[Any]])?.compactMap { $0.first as? String } == [], "no integrated level or gate drawn")
        let data = try #require(page["data"] as? [[String: Any]])
        #expect((data[1]["loudness"] as? [String: Any])?["integrated_lufs"] is NSNull)
    }

    @Test func aPageThatWouldReplaceAFileIsRefusedAndNothingIsWritten() throws {
        let ws = try Workspace()
        try "keep".write(toFile: ws.file("page.html"), atomically: true, encoding: .utf8)
        let exists = try CLI.run(["loudness", "in.wav", "--report", "page.html"], in: ws.path)
        #expect(exists.code == 1 && exists.stderr.contains("'page.html': already exists (pass --overwrite to replace it)"), "\(exists.stderr)")
        #expect(try String(contentsOfFile: ws.file("page.html"), encoding: .utf8) == "keep")
        let input = try CLI.run(["loudness", "in.wav", "--report", "in.wav", "--overwrite"], in: ws.path)
        #expect(input.code == 2 && input.stderr.contains("--report in.wav: would write over 'in.wav', which this job reads"), "\(input.stderr)")
        let missing = try CLI.run(["loudness", "in.wav", "--report", "no/page.html"], in: ws.path)
        #expect(missing.code == 1 && missing.stderr.contains("directory 'no' does not exist"), "\(missing.stderr)")
        #expect(ws.contents == ["in.wav", "page.html"])
        let replaced = try CLI.run(["loudness", "in.wav", "--report", "page.html", "--overwrite", "-q"], in: ws.path)
        #expect(replaced.code == 0 && replaced.stdout.isEmpty == false)
        #expect(try String(contentsOfFile: ws.file("page.html"), encoding: .utf8).hasPrefix("<!DOCTYPE html>"))
        #expect(ws.contents == ["in.wav", "page.html"])
    }
}
