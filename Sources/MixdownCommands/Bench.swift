import ArgumentParser
import Foundation
import Mixdown
import MixdownTools

struct Bench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Time each stage and the drift-correction job on this machine, in memory (no file needed).",
        usage: "mixdown bench [<options>]")

    @Option(parsing: .unconditional, help: "Wall seconds to spend on each stage.")
    var seconds = 1.0
    @Option(help: "Instead: pull this composition document's whole render through the pull API (RenderStream) into a buffer, and discard it.")
    var pull: String?
    @Option(help: "With --pull: frames per pull.")
    var block = 4096
    @Flag(help: "Print one JSON object.")
    var json = false

    struct Report: Encodable {
        let kernelPath: String
        let stages: [ThroughputBench.Stage]
    }

    func run() throws {
        if let pull {
            let r = try PullBench(document: pull, blockFrames: block).run()
            if json { return try printJSON(r) }
            return print(String(format: "pulled %lld frames in blocks of %d in %.2f s (%.0fx real time); checksum %.17g",
                                r.frames, r.blockFrames, r.seconds, r.realtimeFactor, r.checksum))
        }
        let bench = ThroughputBench(secondsPerStage: seconds)
        let stages = try bench.run { name in
            if !json && isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[Kbench: \(name)".utf8)) }
        }
        if !json && isatty(STDERR_FILENO) == 1 { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
        let path = ThroughputBench.kernelPath
        if json { return try printJSON(Report(kernelPath: path, stages: stages)) }
        print("48 kHz stereo, in memory; kernels: \(path)")
        func pad(_ text: String, _ width: Int) -> String { text.padding(toLength: max(width, text.count), withPad: " ", startingAt: 0) }
        print(pad("stage", 64) + "     frames/s   x real time")
        for s in stages {
            print(pad(s.name, 64) + String(format: "%13.0f %13.0f", s.framesPerSecond, s.realtimeFactor))
        }
    }
}
