import ArgumentParser
import Foundation
import Mixdown

/// The commands' jobs for callers other than the command line (the C API).
public enum CommandTasks {
    /// The task of one manifest line, as `mixdown batch` runs it.
    public static func batchTask(for line: BatchManifest.Line, in manifest: BatchManifest) throws -> BatchTask {
        try Batch.task(for: line, in: manifest)
    }
}

struct Batch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "batch",
        abstract: "Run a manifest of jobs (JSON Lines), resumably, several at once, or one shard of it.",
        usage: "mixdown batch <manifest> [<options>]",
        discussion: paragraphs("""
        Each line is {"args": ["stretch", "in.wav", "out.wav", "--ratio", "1.0001309"], "id": "..."}:
        the arguments of a stretch, export, render or sync, as typed after `mixdown`; relative
        paths are relative to the manifest (docs/batch.md, schema docs/batch.schema.json).
        Every line is checked before anything runs. Each finished job appends one record to
        the results file; a rerun skips the jobs whose record matches their arguments and
        inputs and whose outputs are still there, and redoes the rest. A batch's jobs
        replace their outputs (as --overwrite). Exit status 0 when every job of the shard has
        completed, 1 otherwise.
        """))

    @Argument(help: "The manifest (JSON Lines).", completion: .file())
    var manifest: String
    @Option(parsing: .unconditional, help: "Jobs at once, each on one thread (default: one per core).")
    var jobs: Int?
    @Option(parsing: .unconditional, help: "Run only the jobs whose index is I mod N (a scheduler's array index: I/N).")
    var shard: String?
    @Option(parsing: .unconditional, help: "The results file (default: beside the manifest, one per shard).")
    var results: String?
    @Flag(name: .customLong("keep-going"), help: "Run every job even when one fails (default: start no new job after a failure).")
    var keepGoing = false
    @Option(parsing: .unconditional, help: "Write an HTML page of every job of the manifest from the results files of every shard beside it (and --results): status, time, outputs, errors.", completion: .file(extensions: ["html"]))
    var report: String?
    @Flag(name: .customLong("report-only"), help: "Write the --report page from the results as they are, running nothing.")
    var reportOnly = false
    @Flag(help: "Print the summary as one JSON object.")
    var json = false
    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        let manifest = try BatchManifest(contentsOf: self.manifest)
        var batch = BatchRun(manifest: manifest)
        if let shard { batch.shard = try BatchShard(parsing: shard) }
        if reportOnly && report == nil { throw ValidationError("--report-only: give --report PAGE") }
        var page: (path: String, results: [String])?
        if let report {
            let results = BatchReportPage.resultsFiles(of: manifest, also: [results ?? BatchRun.defaultResultsPath(manifest: manifest.path, shard: batch.shard)])
            // Each line's task, as the run checks them (a line at fault is named).
            let tasks = try manifest.lines.map { line in
                do { return try Self.task(for: line, in: manifest) } catch {
                    throw MixdownError.invalidManifest(file: manifest.path, line: line.number, reason: "\(error)")
                }
            }
            try BatchReportPage.checkDestination(report, manifest: manifest, results: results, tasks: tasks)
            page = (report, results)
        }
        func writePage() throws {
            guard let page else { return }
            try BatchReportPage(manifest: manifest, results: BatchReportPage.resultsFiles(of: manifest, also: page.results)).write(to: page.path)
            if !json && !quiet { print("report: \(page.path)") }
        }
        if reportOnly { return try writePage() }
        if let jobs { batch.jobs = jobs }
        batch.resultsPath = results
        batch.keepGoing = keepGoing
        let line = BatchLine(quiet: quiet || json)
        let summary = try withInterruptCancellation { token in
            let summary = try batch.run(makeTask: { try Self.task(for: $0, in: manifest) }, progress: line.update, cancellation: token)
            // Ctrl-C: the running jobs were cancelled (nothing of theirs left); a rerun continues.
            if token.isCancelled { line.finish(); throw MixdownError.cancelled }
            return summary
        }
        line.finish()
        if json {
            try printJSON(summary)
        } else if !quiet {
            for f in summary.failures { printError("mixdown: batch: '\(f.id)' (line \(f.line)) failed: \(f.error)") }
            print(String(format: "batch %@ (shard %@): done %d, skipped %d, failed %d, not run %d of %d jobs in %.2f s; results in %@",
                         summary.manifest, summary.shard, summary.done, summary.skipped, summary.failed, summary.notRun, summary.total,
                         summary.seconds, summary.results))
        }
        try writePage()
        if !summary.succeeded { throw ExitCode(1) }
    }

    /// The task of one manifest line: its arguments parsed by the command they name, paths
    /// made relative to the manifest, one thread, replacing its output.
    static func task(for line: BatchManifest.Line, in manifest: BatchManifest) throws -> BatchTask {
        let args = Array(line.args.dropFirst())
        let at = manifest.resolve
        do {
            switch line.args[0] {
            case "stretch":
                var c = try Stretch.parse(args)
                c.files.input = at(c.files.input)
                c.files.output = at(c.files.output)
                c.match = c.match.map(at)
                c.align = c.align.map(at)
                c.outputOptions.videoFrom = c.outputOptions.videoFrom.map(at)
                c.outputOptions.report = c.outputOptions.report.map(at)
                c.common.overwrite = true
                c.outputOptions.threads = 1
                let inputs = [c.files.input] + [c.match, c.align, c.outputOptions.videoFrom].compactMap { $0 }
                switch try c.job() {
                case .stretch(let job):
                    return BatchTask(inputs: inputs, outputs: job.outputs) { progress, token throws(MixdownError) in
                        try job.run(progress: progress, cancellation: token).outputFrames
                    }
                case .align(let job):
                    return BatchTask(inputs: inputs, outputs: job.outputs) { progress, token throws(MixdownError) in
                        try job.run(progress: progress, cancellation: token).outputFrames
                    }
                }
            case "export":
                var c = try Export.parse(args)
                c.files.input = at(c.files.input)
                c.files.output = at(c.files.output)
                c.outputOptions.videoFrom = c.outputOptions.videoFrom.map(at)
                c.outputOptions.report = c.outputOptions.report.map(at)
                c.common.overwrite = true
                var job = try c.job()
                job.threads = 1
                job.encoders = 1
                let inputs = [c.files.input] + [c.outputOptions.videoFrom].compactMap { $0 }
                return BatchTask(inputs: inputs, outputs: job.outputs) { [job] progress, token throws(MixdownError) in
                    try job.run(progress: progress, cancellation: token).frames
                }
            case "render":
                var c = try Render.parse(args)
                c.document = at(c.document)
                c.output = c.output.map(at)
                c.outputOptions.videoFrom = c.outputOptions.videoFrom.map(at)
                c.outputOptions.report = c.outputOptions.report.map(at)
                c.common.overwrite = true
                if c.explain { throw UsageError(message: "--explain renders nothing: not a batch job") }
                if c.otio != nil { throw UsageError(message: "--otio writes a timeline beside the render: not a batch job") }
                c.media = c.media.map(at)
                let doc = try CompositionDocument(contentsOf: c.document, relinking: c.relinking())
                var job = try c.job(doc)
                job.threads = 1
                job.encoders = 1
                // The document and every file it names decide a rerun.
                let inputs = [c.document] + doc.composition.assets.map(\.path) + [job.settings.videoFrom].compactMap { $0 }
                return BatchTask(inputs: inputs, outputs: job.outputs) { [job] progress, token throws(MixdownError) in
                    try job.run(progress: progress, cancellation: token).frames
                }
            case "sync":
                var c = try Sync.parse(args)
                c.reference = at(c.reference)
                c.recordings = c.recordings.map(at)
                c.device = c.device.map { text in
                    guard let eq = text.firstIndex(of: "=") else { return text }
                    return text[...eq] + text[text.index(after: eq)...].split(separator: ",").map { at(String($0)) }.joined(separator: ",")
                }
                c.plot = c.plot.map(at)
                c.report = c.report.map(at)
                c.doc = c.doc.map(at)
                c.stems = c.stems.map(at)
                c.otio = c.otio.map(at)
                c.overwrite = true
                let job = try c.job()
                return BatchTask(inputs: job.inputs, outputs: job.outputs) { progress, token throws(MixdownError) in
                    let outcome = try job.run(progress: progress, cancellation: token)
                    if let failure = outcome.failure { throw failure }
                    return outcome.stems.isEmpty ? nil : outcome.stemFrames
                }
            default:
                throw UsageError(message: "unknown command '\(line.args[0])'")
            }
        } catch let error as UsageError {
            throw BatchLineError(message: error.message)
        } catch let error as MixdownError {
            throw BatchLineError(message: error.description)
        } catch {
            // ArgumentParser's own errors: the message it would print, on one line.
            throw BatchLineError(message: MixdownCommand.message(for: error).split(separator: "\n").first.map(String.init) ?? "\(error)")
        }
    }
}

/// A manifest line's error, as the batch reports it ("'m.jsonl': line 3: ...").
struct BatchLineError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

/// The batch's progress line on standard error: jobs done of total, the running jobs'
/// mean percentage, the rate and the time left (a `ProgressBar` line).
final class BatchLine: @unchecked Sendable {
    private let line: ProgressBar

    init(quiet: Bool) { line = ProgressBar(label: "batch", quiet: quiet) }

    var update: @Sendable (BatchRun.Progress) -> Void {
        { @Sendable [self] p in
            self.line.show(force: p.finished == p.total) { _ in
                let eta = p.eta.map { String(format: "%.0f s left", $0) } ?? "-"
                return String(format: "batch %d/%d jobs, current %3.0f%%, %.2f jobs/s, %@", p.finished, p.total, p.running * 100, p.rate, eta)
            }
        }
    }

    func finish() { line.finish() }
}
