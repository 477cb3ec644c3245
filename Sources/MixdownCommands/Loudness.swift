import ArgumentParser
import Foundation
import Mixdown

struct Loudness: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "loudness",
        abstract: "Measure loudness to EBU R128: integrated loudness (LUFS), loudness range (LU), true peak (dBTP, BS.1770's 4x and a finer 8x reading), sample peak (dBFS), and the maximum momentary and short-term loudness (read every 1 ms).",
        usage: "mixdown loudness <files> ... [<options>]")

    @Argument(help: "Audio or video files (any type Mixdown reads).", completion: .file())
    var files: [String]
    @Option(parsing: .unconditional, help: "The audio stream of each file, by the index `mixdown info` lists (default: its first audio stream).")
    var stream: Int?
    @Option(parsing: .unconditional, help: "Cores the meter uses besides the decoder (1 or 2; default 2).")
    var threads = 2
    @Option(parsing: .unconditional, help: "Write an HTML page of every file measured: the figures, loudness and true peak over time (one self-contained file).", completion: .file(extensions: ["html"]))
    var report: String?
    @Flag(help: "Replace the --report page if it exists.")
    var overwrite = false
    @Flag(help: "Print one JSON object per file, one per line (with --report, the data over time the page draws too).")
    var json = false
    @Flag(name: [.customLong("quiet"), .customShort("q")], help: "No progress bar.")
    var quiet = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
        guard threads == 1 || threads == 2 else { throw ValidationError("--threads: give 1 or 2") }
    }

    func run() throws {
        if let report { try LoudnessReportPage.checkDestination(report, overwrite: overwrite, inputs: files) }
        var measured: [FileLoudness.Report] = []
        for file in files {
            var job = FileLoudness(input: file, stream: stream)
            job.threads = threads
            job.finePeak = true
            job.overTime = self.report != nil
            let report = try runWithProgress("loudness", quiet: quiet || files.count > 1 && json) { progress, token in
                try job.run(progress: progress, cancellation: token)
            }
            measured.append(report)
            if json { try printJSON(report); continue }
            let m = report.loudness
            func show(_ v: Double, _ unit: String) -> String {
                v.isFinite ? String(format: "%.1f %@", v, unit) : "-inf \(unit)"
            }
            print("""
            \(file)
              integrated:  \(show(m.integrated, "LUFS"))\(m.integrated.isFinite ? "" : " (silent: nothing above the -70 LUFS gate)")
              range:       \(show(m.range, "LU"))
              true peak:   \(show(m.truePeak, "dBTP")) (BS.1770, 4x); \(show(m.truePeakFine ?? m.truePeak, "dBTP")) read 8x
              sample peak: \(show(m.samplePeak, "dBFS"))
              max momentary: \(show(m.momentaryMaximum, "LUFS")), max short-term: \(show(m.shortTermMaximum, "LUFS"))
            """)
        }
        if let report {
            try LoudnessReportPage(reports: measured).write(to: report, overwrite: overwrite)
            if !json && !quiet { print("report: \(report)") }
        }
    }
}
