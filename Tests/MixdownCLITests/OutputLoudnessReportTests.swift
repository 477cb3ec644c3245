import Foundation
import Testing

/// `--report` on an output written with `--loudness` (export, stretch, render): the page
/// opened in headless Chromium, its curves read back where the browser draws them and held
/// against what the written file measures and what the limiter must have done; the page
/// counted among the job's outputs (a batch knows of it); the refusals that write nothing.
@Suite(.serialized) struct OutputLoudnessReportTests {
    /// 6 s of pink noise (peaks at -17.4 dBFS), a 20 ms 1 kHz burst at -0.9 dBFS, 6 s of the
    /// noise: normalised to -13 LUFS, the burst must be limited by about 14 dB, and nothing else.
    static func material(in dir: String) throws {
        // -R: the same noise every run (sox seeds its generator from the clock otherwise).
        try LoudnessReportTests.sox(["-R", "-n", "-r", "48000", "-c", "2", "-b", "16", "noise.wav", "synth", "6", "pinknoise", "vol", "0.15"], in: dir)
        try LoudnessReportTests.sox(["-n", "-r", "48000", "-c", "2", "-b", "16", "burst.wav", "synth", "0.02", "sine", "1000", "vol", "0.9"], in: dir)
        try LoudnessReportTests.sox(["noise.wav", "burst.wav", "noise.wav", "in.wav"], in: dir)
    }

    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    }

    @Test func theLimitersWorkIsDrawnWhereItHappened() throws {
        let dir = ScratchDir()
        try Self.material(in: dir.path)
        let r = try CLI.run(["export", "in.wav", "out.wav", "--loudness", "-13", "--limit", "--report", "out.html"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("the true-peak limiter held the peaks") && r.stdout.hasSuffix("report: out.html\n"), "\(r.stdout)")
        let input = try Self.json(try CLI.run(["loudness", "in.wav", "--json"], in: dir.path).stdout)["loudness"] as! [String: Any]
        let written = try Self.json(try CLI.run(["loudness", "out.wav", "--json"], in: dir.path).stdout)["loudness"] as! [String: Any]

        try FileManager.default.createDirectory(atPath: LoudnessReportTests.artifacts, withIntermediateDirectories: true)
        let shot = LoudnessReportTests.artifacts + "/output-loudness-report.png"
        let page = try LoudnessReportTests.browse(dir.file("out.html"), screenshot: shot)
        #expect((page["console"] as? [String])?.isEmpty == true, "console: \(page["console"] ?? "")")
        #expect((page["external"] as? [String])?.isEmpty == true, "fetched: \(page["external"] ?? "")")
        #expect((page["schema_errors"] as? [String])?.isEmpty == true, "\(page["schema_errors"] ?? "")")
        #expect(page["page_kind"] as? String == "outputPage")
        #expect(page["title"] as? String == "Loudness of out.wav — Mixdown")
        let headings = (page["headings"] as? [[String]] ?? []).map { $0.joined(separator: " ") }
        #expect(headings == ["h1 Loudness of out.wav", "h2 Loudness over time", "h2 True peak over time", "h2 Limiter gain reduction over time"], "\(headings)")
        let data = try #require(page["data"] as? [String: Any])
        #expect(data["output"] as? String == "out.wav")
        let loudness = try #require(data["loudness"] as? [String: Any])
        #expect(loudness["limiter"] as? Bool == true && loudness["output_measured_on"] as? String == "rendered samples")
        let gain = try #require(loudness["gain_db"] as? Double)

        let charts = try #require(page["charts"] as? [[String: Any]])
        #expect(charts.map { $0["id"] as? String } == ["loudness-0", "peak-0", "limiter-0"])
        for chart in charts {
            #expect(chart["role"] as? String == "img")
            #expect((chart["label"] as? [String] ?? []).allSatisfy { $0.count > 10 })
        }
        func series(_ chart: Int, _ key: String) -> [String: Any]? { (charts[chart]["series"] as? [String: Any])?[key] as? [String: Any] }
        func level(_ chart: Int, _ name: String) -> Double? {
            (charts[chart]["levels"] as? [[Any]])?.first { $0.first as? String == name }?.last as? Double
        }
        // The file as written, measured again from disk: the page's curves are its. The curve
        // reads every 100 ms, the maximum every 1 ms: under it, by little for a 3 s window.
        let shortTermMaximum = try #require(written["max_short_term_lufs"] as? Double)
        let timeline = try #require(loudness["timeline"] as? [String: Any])
        let curve = try #require(((timeline["short_term_lufs"] as? [Any]) ?? []).compactMap { $0 as? Double }.max())
        #expect(abs(try #require(series(0, "short_term_lufs")?["top"] as? Double) - curve) <= 0.05)
        #expect(curve <= shortTermMaximum + 0.01 && curve >= shortTermMaximum - 0.2, "curve \(curve), measured \(shortTermMaximum)")
        #expect(abs(try #require(level(0, "Integrated")) - -13) <= 0.2)
        let peak = try #require(written["true_peak_fine_dbtp"] as? Double)
        #expect(abs(try #require(series(1, "true_peak_dbtp")?["top"] as? Double) - peak) <= 0.05)
        #expect(peak <= -1 + 0.01, "under the ceiling")
        #expect(abs(try #require(level(1, "Ceiling (--true-peak)")) - -1) <= 0.05)

        // The limiter: nothing taken off the noise, and at the burst what its peak, lifted by
        // the gain, stands over the ceiling it holds (-1 dBTP less the fine allowance of 0.5 dB).
        let limiter = try #require(loudness["limiter_timeline"] as? [String: Any])
        let reduction = (limiter["gain_reduction_db"] as? [Double]) ?? []
        #expect(reduction.count == 121 && limiter["seconds_per_point"] as? Double == 0.1)
        let deepest = try #require(limiter["maximum_gain_reduction_db"] as? Double)
        let predicted = -((input["true_peak_fine_dbtp"] as! Double) + gain - (-1 - 0.5))
        #expect(abs(deepest - predicted) <= 0.3, "deepest \(deepest), predicted \(predicted)")
        #expect(abs(try #require(series(2, "gain_reduction_db")?["bottom"] as? Double) - deepest) <= 0.05)
        // The burst lies at 6.00-6.02 s; the look-ahead starts 5 ms before it, the 100 ms
        // release ends within a second after it.
        let deepestPoint = try #require(reduction.firstIndex(of: reduction.min()!))
        #expect(Double(deepestPoint) * 0.1 < 6.02 && Double(deepestPoint + 1) * 0.1 > 5.995, "deepest at point \(deepestPoint)")
        for (i, value) in reduction.enumerated() where value < -0.1 {
            #expect(Double(i + 1) * 0.1 > 5.99 && Double(i) * 0.1 < 7.02, "reduced at \(Double(i) * 0.1) s: \(value) dB")
        }
        #expect(try #require(limiter["limited_seconds"] as? Double) <= 1)

        let contrast = try #require(page["contrast"] as? [String: Any])
        #expect(try #require(contrast["ratio"] as? Double) >= 4.5, "\(contrast)")
        #expect(FileManager.default.fileExists(atPath: shot))
    }

    /// A lossy output without the limiter: the page is of the decoded file, with no limiter
    /// chart; `--json` prints the data the page embeds; stretch and render take --report too.
    @Test func aLossyOutputAndEveryWritingCommand() throws {
        let dir = ScratchDir()
        try Self.material(in: dir.path)
        // Ogg Opus: lossy, and written by libsndfile (a build without FFmpeg writes it too).
        let r = try CLI.run(["export", "in.wav", "out.opus", "--loudness", "-20", "--report", "opus.html", "--json"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        let printed = try #require(try Self.json(r.stdout)["loudness"] as? [String: Any])
        #expect(printed["output_measured_on"] as? String == "decoded file" && printed["limiter"] as? Bool == false)
        #expect(printed["timeline"] is [String: Any] && printed["limiter_timeline"] == nil)
        let page = try LoudnessReportTests.browse(dir.file("opus.html"), screenshot: dir.file("opus.png"))
        #expect((page["console"] as? [String])?.isEmpty == true && (page["schema_errors"] as? [String])?.isEmpty == true)
        let headings = (page["headings"] as? [[String]] ?? []).map { $0.joined(separator: " ") }
        #expect(headings == ["h1 Loudness of out.opus", "h2 Loudness over time", "h2 True peak over time"], "\(headings)")
        let embedded = try #require((page["data"] as? [String: Any])?["loudness"] as? [String: Any])
        for key in ["gain_db", "passes", "encodes"] {
            #expect((embedded[key] as? Double) == (printed[key] as? Double), "\(key)")
        }
        #expect(NSDictionary(dictionary: embedded["output"] as! [String: Any]).isEqual(to: printed["output"] as! [String: Any]))

        let stretch = try CLI.run(["stretch", "in.wav", "st.wav", "--ratio", "1.01", "--loudness", "-14", "--limit", "--report", "st.html", "-q"], in: dir.path)
        #expect(stretch.code == 0 && FileManager.default.fileExists(atPath: dir.file("st.html")), "\(stretch.stderr)")
        try """
        {"version": 1, "tracks": [{"segments": [{"file": "in.wav", "at": "0"}]}]}
        """.write(toFile: dir.file("doc.json"), atomically: true, encoding: .utf8)
        let render = try CLI.run(["render", "doc.json", "mix.flac", "--loudness", "-14", "--limit", "--report", "mix.html", "--json"], in: dir.path)
        #expect(render.code == 0, "\(render.stderr)")
        let mix = try LoudnessReportTests.browse(dir.file("mix.html"), screenshot: dir.file("mix.png"))
        #expect((mix["schema_errors"] as? [String])?.isEmpty == true && mix["page_kind"] as? String == "outputPage")
        #expect((mix["charts"] as? [[String: Any]])?.count == 3, "the limiter ran on the burst")
    }

    @Test func aPageThatCannotBeWrittenIsRefusedBeforeTheOutput() throws {
        let ws = try Workspace()
        func refused(_ args: [String], code: Int32, _ message: String) throws {
            let r = try CLI.run(args, in: ws.path)
            #expect(r.code == code && r.stderr.contains(message), "\(args): \(r.code) \(r.stderr)")
            #expect(ws.contents == ["in.wav", "keep.html"], "\(args) wrote \(ws.contents)")
        }
        try "keep".write(toFile: ws.file("keep.html"), atomically: true, encoding: .utf8)
        try refused(["export", "in.wav", "out.wav", "--report", "p.html"], code: 2,
                    "--report shows how the output reached its --loudness target: give --loudness too")
        try refused(["export", "in.wav", "out.wav", "--loudness", "-16", "--report", "keep.html"], code: 1,
                    "'keep.html': already exists (pass --overwrite to replace it)")
        try refused(["export", "in.wav", "out.wav", "--loudness", "-16", "--report", "./out.wav"], code: 2,
                    "--report ./out.wav: is the output: write the page elsewhere")
        try refused(["stretch", "in.wav", "out.wav", "--ratio", "1.01", "--loudness", "-16", "--report", "in.wav", "--overwrite"], code: 2,
                    "--report in.wav: would write over 'in.wav', which this job reads")
        try refused(["export", "in.wav", "out.wav", "--loudness", "-16", "--report", "no/p.html"], code: 1,
                    "directory 'no' does not exist")
        #expect(try String(contentsOfFile: ws.file("keep.html"), encoding: .utf8) == "keep")
    }

    /// The page is one of the job's outputs: a batch refuses a second line that writes it.
    @Test func aBatchKnowsOfThePage() throws {
        try HardeningTests.refusedBatch([["export", "in0.wav", "a.wav", "--loudness", "-16", "--report", "a.html"],
                                         ["export", "in1.wav", "b.wav", "--loudness", "-16", "--report", "sub/../a.html"]],
                                        line: 2, reason: "which line 1 writes too")
        try HardeningTests.refusedBatch([["stretch", "in0.wav", "a.wav", "--ratio", "1.01", "--loudness", "-16", "--report", "a.html"],
                                         ["export", "a.html", "b.wav"]],
                                        line: 2, reason: "reads '")
    }
}
