import Foundation
import Testing

/// `mixdown batch --report`: one page gathered from every shard's results, opened in a real
/// browser (tools/check/reports/browse.py): a row per manifest line with the status its
/// latest record gives, links to the outputs that resolve, the filter that leaves only the
/// jobs that did not complete; and the pages it refuses to write.
@Suite(.serialized) struct BatchReportTests {
    static let manifest = """
        {"args": ["export", "in.wav", "out/a.wav", "--duration", "1"], "id": "a"}
        {"args": ["export", "missing.wav", "out/b.wav"], "id": "b"}
        {"args": ["stretch", "in.wav", "out/c.wav", "--ratio", "1.001"], "id": "c"}
        {"args": ["export", "in.wav", "out/d.flac"], "id": "d"}

        """

    static func workspace() throws -> Workspace {
        let ws = try Workspace()
        try FileManager.default.createDirectory(atPath: ws.file("out"), withIntermediateDirectories: true)
        try Self.manifest.write(toFile: ws.file("jobs.jsonl"), atomically: true, encoding: .utf8)
        return ws
    }

    static func statuses(_ page: [String: Any]) -> [String] {
        ((page["data"] as? [String: Any])?["jobs"] as? [[String: Any]] ?? []).map { $0["status"] as? String ?? "" }
    }

    static func rows(_ page: [String: Any], _ key: String) -> [(line: Int, classes: String, visible: Bool)] {
        (page[key] as? [[String: Any]] ?? []).map { ($0["line"] as? Int ?? 0, $0["classes"] as? String ?? "", $0["visible"] as? Bool ?? false) }
    }

    @Test func onePageGathersEveryShard() throws {
        let ws = try Self.workspace()
        let first = try CLI.run(["batch", "jobs.jsonl", "--shard", "0/2", "--report", "page.html"], in: ws.path)
        #expect(first.code == 0 && first.stdout.contains("report: page.html"), "\(first.stderr)")
        var page = try LoudnessReportTests.browse(ws.file("page.html"), screenshot: ws.file("first.png"))
        #expect(Self.statuses(page) == ["completed", "not_run", "completed", "not_run"])
        #expect(Self.rows(page, "rows").map(\.classes) == ["job completed", "job not_run", "job completed", "job not_run"])

        // The other shard fails one job; its page gathers both shards' results.
        let second = try CLI.run(["batch", "jobs.jsonl", "--shard", "1/2", "--keep-going", "--report", "page.html"], in: ws.path)
        #expect(second.code == 1 && second.stdout.contains("report: page.html"), "\(second.stderr)")
        try FileManager.default.createDirectory(atPath: LoudnessReportTests.artifacts, withIntermediateDirectories: true)
        page = try LoudnessReportTests.browse(ws.file("page.html"), screenshot: LoudnessReportTests.artifacts + "/batch-report.png")
        #expect((page["console"] as? [String])?.isEmpty == true, "console: \(page["console"] ?? "")")
        #expect((page["external"] as? [String])?.isEmpty == true)
        #expect(page["title"] as? String == "Batch jobs.jsonl — Mixdown")
        // The embedded data is what docs/report.schema.json says.
        #expect((page["schema_errors"] as? [String])?.isEmpty == true, "\(page["schema_errors"] ?? "")")
        #expect(page["page_kind"] as? String == "batchPage")
        #expect(Self.statuses(page) == ["completed", "failed", "completed", "completed"])
        let data = try #require(page["data"] as? [String: Any])
        #expect(data["completed"] as? Int == 3 && data["failed"] as? Int == 1 && data["not_run"] as? Int == 0)
        #expect((data["results_files"] as? [String])?.count == 2)
        let failed = try #require((data["jobs"] as? [[String: Any]])?[1])
        #expect((failed["error"] as? String)?.contains("missing.wav': no such file") == true, "\(failed)")
        // Every link is an output, and leads to it.
        let links = (page["links"] as? [[String]] ?? []).map { $0[1] }
        #expect(links.count == 3 && links.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "\(links)")
        #expect(links.map { ($0 as NSString).lastPathComponent } == ["a.wav", "c.wav", "d.flac"])
        // All four rows show; the filter leaves the failed one.
        #expect(Self.rows(page, "rows").allSatisfy { $0.visible })
        #expect(Self.rows(page, "filtered").filter(\.visible).map(\.line) == [2])
        let contrast = try #require(page["contrast"] as? [String: Any])
        #expect(try #require(contrast["ratio"] as? Double) >= 4.5, "\(contrast)")

        // From the results as they are, running nothing.
        try FileManager.default.removeItem(atPath: ws.file("page.html"))
        let before = try String(contentsOfFile: ws.file("jobs.shard-1-of-2.results.jsonl"), encoding: .utf8)
        let only = try CLI.run(["batch", "jobs.jsonl", "--report", "page.html", "--report-only"], in: ws.path)
        #expect(only.code == 0, "\(only.stderr)")
        #expect(try String(contentsOfFile: ws.file("jobs.shard-1-of-2.results.jsonl"), encoding: .utf8) == before)
        #expect(!FileManager.default.fileExists(atPath: ws.file("jobs.results.jsonl")), "nothing ran")
        page = try LoudnessReportTests.browse(ws.file("page.html"), screenshot: ws.file("only.png"))
        #expect(Self.statuses(page) == ["completed", "failed", "completed", "completed"])
    }

    @Test func aPageOverAFileItShouldNotReplaceIsRefused() throws {
        let ws = try Self.workspace()
        let output = try CLI.run(["batch", "jobs.jsonl", "--report", "out/a.wav"], in: ws.path)
        #expect(output.code == 2 && output.stderr.contains("--report out/a.wav: is a job's output"), "\(output.stderr)")
        let manifest = try CLI.run(["batch", "jobs.jsonl", "--report", "jobs.jsonl", "--report-only"], in: ws.path)
        #expect(manifest.code == 2 && manifest.stderr.contains("is the manifest"), "\(manifest.stderr)")
        try "mine".write(toFile: ws.file("notes.html"), atomically: true, encoding: .utf8)
        let other = try CLI.run(["batch", "jobs.jsonl", "--report", "notes.html"], in: ws.path)
        #expect(other.code == 2 && other.stderr.contains("is a file Mixdown did not write as a report: it is left as it is"), "\(other.stderr)")
        #expect(try String(contentsOfFile: ws.file("notes.html"), encoding: .utf8) == "mine")
        let alone = try CLI.run(["batch", "jobs.jsonl", "--report-only"], in: ws.path)
        #expect(alone.code != 0 && alone.stderr.contains("--report-only: give --report PAGE"), "\(alone.stderr)")
        // Nothing ran: no results, no outputs.
        #expect(ws.contents == ["in.wav", "jobs.jsonl", "notes.html", "out"])
        let outputs = try FileManager.default.contentsOfDirectory(atPath: ws.file("out"))
        #expect(outputs.isEmpty)
    }
}
