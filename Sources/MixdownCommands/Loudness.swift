import ArgumentParser
import Foundation
import Mixdown

struct Loudness: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Measure loudness to EBU R128: integrated loudness (LUFS), loudness range (LU), true peak (dBTP, BS.1770's 4x and a finer 8x reading), sample peak (dBFS), and the maximum momentary and short-term loudness (read every 1 ms).",
        usage: "mixdown loudness <files> ... [<options>]")

    @Argument(help: "Audio or video files (any type Mixdown reads).", completion: .file())
    var files: [String]
    @Option(parsing: .unconditional, help: "The audio stream of each file, by the index `mixdown info` lists (default: its first audio stream).")
    var stream: Int?
    @Option(parsing: .unconditional, help: "Cores the meter uses besides the decoder (1 or 2; default 2).")
    var threads = 2
    @Flag(help: "Print one JSON object per file, one per line.")
    var json = false
    @Flag(name: [.customLong("quiet"), .customShort("q")], help: "No progress bar.")
    var quiet = false

    func validate() throws {
        guard !files.isEmpty else { throw ValidationError("give at least one file") }
        guard threads == 1 || threads == 2 else { throw ValidationError("--threads: give 1 or 2") }
    }

    func run() throws {
        for file in files {
            var job = FileLoudness(input: file, stream: stream)
            job.threads = threads
            job.finePeak = true
            let report = try runWithProgress("loudness", quiet: quiet || files.count > 1 && json) { progress, token in
                try job.run(progress: progress, cancellation: token)
            }
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
    }
}
