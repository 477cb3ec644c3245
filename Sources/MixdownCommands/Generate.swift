import ArgumentParser
import Foundation
import Mixdown
import MixdownTools

struct Generate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate",
        abstract: "Synthesise a test recording: quiet sines plus a 20 ms noise burst every marker interval.",
        usage: "mixdown generate <output> --duration <duration> [<options>]")

    @Argument(help: "The output file.", completion: .file())
    var output: String
    @Option(parsing: .unconditional, help: "Length (exact time: 600, 1:00:00, 1440000f at --rate).")
    var duration: String
    @Option(parsing: .unconditional, help: "Sample rate in Hz.")
    var rate = 48_000
    @Option(parsing: .unconditional, help: "Channel count.")
    var channels = 2
    @Option(name: .customLong("marker-interval"), parsing: .unconditional, help: "Time between sync markers; 0 for none.")
    var markerInterval = "60"
    @Option(parsing: .unconditional, help: "Sample format: s16, s24, f32.")
    var format = "s16"
    @Option(parsing: .unconditionalSingleValue, help: "A whole-hertz sine at amplitude 0.5 instead of the default tones (repeatable).")
    var tone: [Int] = []
    @OptionGroup var common: RenderOptions

    struct Report: Encodable {
        let output: String
        let frames: Int64
        let sampleRate: Int
        let channels: Int
        let markerFrames: [Int64]
    }

    func run() throws {
        guard rate > 0, rate <= 768_000 else { throw UsageError(message: "--rate \(rate): must be between 1 and 768000 Hz") }
        guard channels > 0, channels <= 64 else { throw UsageError(message: "--channels \(channels): must be between 1 and 64") }
        var times = TimeParser { [rate] () throws(MixdownError) in rate }
        guard let length = try times.parse(duration, option: "--duration") else { return }
        let interval = try times.parse(markerInterval, option: "--marker-interval")
        var job = SignalFile(output: output, duration: length)
        job.sampleRate = rate
        job.channelCount = channels
        job.markerInterval = interval == .zero ? nil : interval
        job.sampleFormat = try parseSampleFormat(format)
        guard let type = AudioFileType(pathExtension: URL(fileURLWithPath: output).pathExtension) else {
            throw UsageError(message: "'\(output)': unknown extension; use .wav, .flac, .caf, .w64, .rf64, .aiff")
        }
        job.type = type
        if type.isLossy { job.sampleFormat = nil }
        for hz in tone where hz <= 0 || 2 * hz >= rate {
            throw UsageError(message: "--tone \(hz): must lie between 0 and half of --rate")
        }
        if !tone.isEmpty { job.tones = tone.map { TestSignal.Tone(hz: $0, amplitude: 0.5 / Float(tone.count)) } }
        job.overwrite = common.overwrite
        let result = try runWithProgress("generate", quiet: common.quiet) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if common.json {
            return try printJSON(Report(output: output, frames: result.frames, sampleRate: rate, channels: channels, markerFrames: result.markers))
        }
        if !common.quiet { print("generated \(result.frames) frames (\(length.clockDescription)) with \(result.markers.count) markers: \(output)") }
    }
}
