import ArgumentParser
import Foundation
import Mixdown
import MixdownTools

struct MeasureLength: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-length",
        abstract: "Compare a stretched file's length with the exact target round(N x R).")
    @Argument(help: "The original.", completion: .file()) var original: String
    @Argument(help: "The stretched file.", completion: .file()) var output: String
    @Option(parsing: .unconditional, help: "The ratio the output was made with (output / input).") var ratio: String
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let r = try LengthCheck.measure(original: original, output: output, ratio: try StretchRatio(parsing: ratio))
        if json { return try printJSON(r) }
        print("target \(r.targetFrames) frames, output \(r.outputFrames): \(r.difference == 0 ? "exact" : String(format: "%+lld frames", r.difference))")
    }
}

struct MeasureSine: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "measure-sine",
        abstract: "SINAD of a file that should hold one sine of a known frequency.")
    @Argument(help: "The file.", completion: .file()) var file: String
    @Option(parsing: .unconditional, help: "The sine's frequency in Hz (after any pitch change).") var frequency: Double
    @Flag(help: "Print one JSON object.") var json = false

    func run() throws {
        let r = try SineFit.measure(path: file, frequency: frequency)
        if json { return try printJSON(r) }
        print(String(format: "sine at %.6f Hz, amplitude %.6f, SINAD %.2f dB", r.frequency, r.amplitude, r.sinadDecibels))
    }
}
