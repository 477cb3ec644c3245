import ArgumentParser
import Foundation
import Mixdown

struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export part of a file, with fades, to WAV, FLAC, AIFF, CAF, Ogg, Opus, MP3, W64, RF64, M4A, MP4, MOV, MKV or WebM.",
        discussion: paragraphs("""
        Times are exact: 30, 30.25, 1:02:03.5, 1440000f (frames of the input), 131/1000.
        Frames round half away from zero. A fade-in rises from 0 on the first frame to 1
        at its end; a fade-out falls to exactly 0 on the last frame. A WAV that would pass
        4 GiB is written as RF64. The output appears complete or not at all.
        """))

    @OptionGroup var files: FileArguments
    var input: String { files.input }
    var output: String { files.output }
    var stream: Int? { files.stream }
    @Option(parsing: .unconditional, help: "Where to start in the input (default 0).")
    var start: String?
    @Option(parsing: .unconditional, help: "How long the output is (default: to the end of the input).")
    var duration: String?
    @Option(name: .customLong("fade-in"), parsing: .unconditional, help: "Fade-in length.")
    var fadeIn: String?
    @Option(name: .customLong("fade-out"), parsing: .unconditional, help: "Fade-out length.")
    var fadeOut: String?
    @Option(parsing: .unconditional, help: "Write the output at this sample rate in Hz, through Mixdown's resampler (default: the input's; an Opus output of a rate Opus does not take is written at 48000).")
    var rate: Int?
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var common: RenderOptions

    func run() throws {
        let job = try job()
        let report = try runWithProgress("export", quiet: common.quiet) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if common.json { return try printJSON(report) }
        if !common.quiet {
            print(String(format: "exported %lld frames (%@) to %@ [%@%@, %d Hz, %d ch] in %.2f s (%.0fx real time)",
                         report.frames, report.duration.clockDescription, report.output, report.type.rawValue,
                         report.sampleFormat.map { " " + $0.rawValue } ?? "", report.sampleRate, report.channels,
                         report.seconds, report.realtimeFactor))
            if let l = loudnessLine(report.loudness, page: outputOptions.report) { print(l) }
        }
    }

    /// The library job the options describe.
    func job() throws -> FileExport {
        var job = FileExport(input: input, output: output)
        var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: input, stream: stream).sampleRate }
        job.start = try times.parse(start, option: "--start")
        job.duration = try times.parse(duration, option: "--duration")
        job.fadeIn = try times.parse(fadeIn, option: "--fade-in")
        job.fadeOut = try times.parse(fadeOut, option: "--fade-out")
        job.stream = stream
        try job.apply(outputOptions, common)
        job.settings.sampleRate = rate
        return job
    }
}
