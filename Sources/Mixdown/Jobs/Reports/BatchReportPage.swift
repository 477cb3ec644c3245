import Foundation

/// `mixdown batch MANIFEST --report PAGE`: one self-contained HTML page of a manifest's
/// jobs, gathered from the results files of every shard beside the manifest (so one page
/// shows a scheduler's array whose shards each wrote their own) and any named besides: each
/// job's status (completed, failed, or not run: in no results file), time, outputs and
/// error, with a filter that shows only the jobs that did not complete (a checkbox and CSS:
/// no script). The page embeds its data as JSON (`BatchReportPage.Data`).
public struct BatchReportPage: Sendable {
    /// One manifest line as the results say.
    public struct Job: Sendable, Encodable, Equatable {
        public enum Status: String, Sendable, Encodable { case completed, failed, notRun = "not_run" }
        public let line: Int
        public let id: String
        public let args: [String]
        public let status: Status
        public let seconds: Double?
        public let outputs: [BatchRecord.Output]
        public let error: String?
        /// When it finished, seconds since 1970 (UTC); nil when not run.
        public let finished: Double?
        /// The results file its record was read from.
        public let results: String?
    }

    public struct Data: Sendable, Encodable, Equatable {
        public let manifest: String
        /// The results files read, in the order read.
        public let resultsFiles: [String]
        public let jobs: [Job]
        public let completed: Int
        public let failed: Int
        public let notRun: Int
    }

    public let data: Data

    /// The results files of `manifest` found beside it (the whole batch's and every shard's,
    /// by `BatchRun.defaultResultsPath`'s names), then `also` (a --results file named
    /// elsewhere), each once.
    public static func resultsFiles(of manifest: BatchManifest, also: [String] = []) -> [String] {
        let base = ((manifest.path as NSString).deletingPathExtension as NSString).lastPathComponent
        let dir = (manifest.path as NSString).deletingLastPathComponent
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.isEmpty ? "." : dir)) ?? []
        let shard = try! NSRegularExpression(pattern: "^" + NSRegularExpression.escapedPattern(for: base) + "\\.shard-[0-9]+-of-[0-9]+\\.results\\.jsonl$")
        var found = names.filter { name in
            name == base + ".results.jsonl" || shard.firstMatch(in: name, range: NSRange(name.startIndex..., in: name)) != nil
        }.sorted().map { dir.isEmpty ? $0 : dir + "/" + $0 }
        for path in also where !found.contains(where: { FileIdentity($0) == FileIdentity(path) }) { found.append(path) }
        return found
    }

    /// The page of `manifest` from `results` (files that do not exist are skipped): each line
    /// takes its latest record among them (by the time it finished), else it was not run.
    /// Results files are only read.
    public init(manifest: BatchManifest, results: [String]) throws(MixdownError) {
        var latest: [String: (BatchRecord, String)] = [:]
        var read: [String] = []
        let decoder = JSONDecoder()
        for path in results where FileManager.default.fileExists(atPath: path) {
            guard let text = FileManager.default.contents(atPath: path) else {
                throw .readFailed(path: path, reason: "cannot read the results file")
            }
            read.append(path)
            for row in text.split(separator: UInt8(ascii: "\n")) {
                guard let r = try? decoder.decode(BatchRecord.self, from: Foundation.Data(row)) else { continue }
                if let seen = latest[r.id], seen.0.finished > r.finished { continue }
                latest[r.id] = (r, path)
            }
        }
        let jobs = manifest.lines.map { line -> Job in
            guard let (r, file) = latest[line.id] else {
                return Job(line: line.number, id: line.id, args: line.args, status: .notRun, seconds: nil, outputs: [], error: nil,
                           finished: nil, results: nil)
            }
            return Job(line: line.number, id: line.id, args: line.args, status: r.status == .completed ? .completed : .failed,
                       seconds: r.seconds, outputs: r.outputs, error: r.error, finished: r.finished, results: file)
        }
        data = Data(manifest: manifest.path, resultsFiles: read, jobs: jobs,
                    completed: jobs.filter { $0.status == .completed }.count, failed: jobs.filter { $0.status == .failed }.count,
                    notRun: jobs.filter { $0.status == .notRun }.count)
    }

    /// Refuses a page that is the manifest, a results file, or a job's input or output, whose
    /// directory does not exist, or that would replace a file other than a page Mixdown
    /// wrote (a batch's page is written again at each run, as its jobs' outputs are): before
    /// anything runs.
    public static func checkDestination(_ path: String, manifest: BatchManifest, results: [String],
                                        tasks: [BatchTask]) throws(MixdownError) {
        let page = FileIdentity(path)
        let named: [(String, String)] = [(manifest.path, "the manifest")] + results.map { ($0, "a results file") }
            + tasks.flatMap { t in t.inputs.map { ($0, "a job's input") } + t.outputs.map { ($0, "a job's output") } }
        if let clash = named.first(where: { FileIdentity($0.0) == page }) {
            throw .invalidParameter(name: "--report", value: path, reason: "is \(clash.1), '\(clash.0)': write the page elsewhere")
        }
        if FileManager.default.fileExists(atPath: path) && !ReportPage.isPage(path) {
            throw .invalidParameter(name: "--report", value: path, reason: "is a file Mixdown did not write as a report: it is left as it is; name a new file")
        }
        _ = try AudioFileWriter.checkDestination(path, overwrite: true)
    }

    /// Writes the page to `path` (complete or absent), replacing an earlier one.
    public func write(to path: String) throws(MixdownError) {
        try ReportPage.write(data, to: path, overwrite: true) { html(json: $0, page: path) }
    }

    func html(json: String, page: String) -> String {
        let d = data
        let name = (d.manifest as NSString).lastPathComponent
        var body = "<h1>Batch \(ReportPage.escaped(name))</h1>\n"
        body += "<p>\(d.completed) of \(d.jobs.count) jobs completed, \(d.failed) failed, \(d.notRun) not run"
            + " (from \(d.resultsFiles.count) results file\(d.resultsFiles.count == 1 ? "" : "s"): "
            + d.resultsFiles.map { "<code>\(ReportPage.escaped(($0 as NSString).lastPathComponent))</code>" }.joined(separator: ", ") + ").</p>\n"
        body += """
        <p><label><input type="checkbox" id="only-unfinished"> Show only the jobs that did not complete (failed or not run)</label></p>
        <h2>Jobs</h2>
        <table class="jobs">
        <caption class="note">One row per line of the manifest; a job's latest record among the results files.</caption>
        <thead><tr><th scope="col">Line</th><th scope="col">Id</th><th scope="col">Status</th><th scope="col">Time</th><th scope="col">Outputs</th><th scope="col">Error</th></tr></thead>
        <tbody>

        """
        for job in d.jobs {
            let outputs = job.outputs.map { o in
                "<a href=\"\(ReportPage.escaped(ReportPage.link(o.path, from: page)))\">\(ReportPage.escaped((o.path as NSString).lastPathComponent))</a>"
            }.joined(separator: "<br>")
            let status = job.status == .notRun ? "not run" : job.status.rawValue
            let time = job.seconds.map { String(format: "%.2f s", $0) } ?? ""
            body += "<tr class=\"job \(job.status.rawValue)\" data-line=\"\(job.line)\"><td>\(job.line)</td><td><code>\(ReportPage.escaped(job.id))</code></td>"
                + "<td class=\"status\">\(status)</td><td class=\"number\">\(time)</td><td>\(outputs)</td>"
                + "<td class=\"error\">\(ReportPage.escaped(job.error ?? ""))</td></tr>\n"
        }
        body += "</tbody>\n</table>\n"
        return ReportPage.page(title: "Batch \(name) — Mixdown", body: body, json: json, style: """
            body:has(#only-unfinished:checked) tr.completed { display: none; }
            tr.failed td.status { color: #a10016; font-weight: 600; }
            tr.not_run td.status { color: #5c4400; font-weight: 600; }
            td.error { color: #a10016; max-width: 30em; }
            table.jobs td, table.jobs th { border-bottom: 1px solid #ddd; vertical-align: top; }
            """)
    }
}
