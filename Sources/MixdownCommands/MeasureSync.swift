import ArgumentParser
import Mixdown
import MixdownTools

struct MeasureSync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-sync",
        abstract: "Find each sync marker of an original recording in a stretched copy and report its error.",
        usage: "mixdown measure-sync <original> <stretched> [<options>]")

    @Argument(help: "The original (with a 20 ms noise burst every --interval, as `generate` makes).", completion: .file())
    var original: String
    @Argument(help: "The stretched file.", completion: .file())
    var stretched: String
    @Option(parsing: .unconditional, help: "Time between markers in the original.")
    var interval = "60"
    @Option(parsing: .unconditional, help: "Output / input length (default: stretched frames / original frames).")
    var ratio: String?
    @Flag(help: "Print one JSON object.")
    var json = false

    func run() throws {
        var job = MarkerSync(original: original, stretched: stretched)
        var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: original).sampleRate }
        job.interval = try times.parse(interval, option: "--interval")!
        if let ratio { job.ratio = try StretchRatio(parsing: ratio) }
        let result = try job.run()
        if json { return try printJSON(result) }
        for m in result.markers {
            print(String(format: "marker at frame %lld: expected %.2f, found %.2f, error %+.3f frames (%+.4f ms)",
                         m.sourceFrame, m.expectedFrame, m.foundFrame, m.errorFrames, m.errorMilliseconds))
        }
        print(String(format: "%d markers, worst error %.4f ms", result.markers.count, result.worstMilliseconds))
    }
}
