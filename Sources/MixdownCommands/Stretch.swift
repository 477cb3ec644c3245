import ArgumentParser
import Foundation
import Mixdown

struct Stretch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stretch",
        abstract: "Stretch a file to an exact length: correct clock drift, or change tempo.",
        discussion: paragraphs("""
        R is output length over input length. The output has exactly round(N x R) frames
        (N the input's frames, half away from zero), or exactly the target given by
        --to-frames, --to-duration or --match. auto uses varispeed below 5 cents of pitch
        change (|R - 1| < 29/10000, on the exact ratio) and Mixdown's spectral stretch from
        there.
        """))

    @OptionGroup var files: FileArguments
    var input: String { files.input }
    var output: String { files.output }
    var stream: Int? { files.stream }
    @Option(parsing: .unconditional, help: "Output length / input length: 1.0001309 or 10001309/10000000, between 0.25 and 4.")
    var ratio: String?
    @Option(name: .customLong("to-duration"), parsing: .unconditional, help: "Exact output duration (30, 1:02:03.5, 1440000f).")
    var toDuration: String?
    @Option(name: .customLong("to-frames"), parsing: .unconditional, help: "Exact output frame count.")
    var toFrames: String?
    @Option(parsing: .unconditional, help: "Take the exact duration of this reference file.", completion: .file())
    var match: String?
    @Option(parsing: .unconditional, help: "Estimate the offset and drift against this reference (see `mixdown sync`) and put the input on its clock: trimmed or padded at the start, stretched, ending at the reference's length.", completion: .file())
    var align: String?
    @Option(name: .customLong("min-confidence"), parsing: .unconditional, help: "With --align: refuse an estimate below this confidence (0 to 1).")
    var minConfidence = 0.5
    @Option(name: .customLong("max-offset"), parsing: .unconditional, help: "With --align: the largest offset searched (exact time; default 60 s, or the whole reference for a clip).")
    var maxOffset: String?
    @Flag(name: .customLong("keep-polarity"), help: "With --align: keep the input's polarity as recorded (by default an input found inverted against the reference is turned over).")
    var keepPolarity = false
    @Option(parsing: .unconditional, help: "auto, varispeed, wsola, spectral (Mixdown's own spectral stretch), splice (the input untouched but for a few splices) or rubberband (timeDomain: wsola).", completion: .list(TimeScaleAlgorithm.names))
    var algorithm = "auto"
    @Option(parsing: .unconditional, help: "best, medium or fastest (resampler filter; Rubber Band: best = R3, else R2).", completion: .list(ResamplerQuality.allCases.map(\.rawValue)))
    var quality = "best"
    @Option(parsing: .unconditional, help: "Varispeed resampler: auto, polyphase or libsamplerate.", completion: .list(ResamplerEngine.allCases.map(\.rawValue)))
    var resampler = "auto"
    @Option(parsing: .unconditional, help: "Write the output at this sample rate in Hz, through Mixdown's resampler (default: the input's; an Opus output of a rate Opus does not take is written at 48000).")
    var rate: Int?
    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var common: RenderOptions

    /// The library job the options describe: a stretch, or with --align an alignment.
    enum Job {
        case stretch(FileStretch)
        case align(FileAlign)
    }

    func job() throws -> Job {
        let targets = [ratio != nil, toDuration != nil, toFrames != nil, match != nil, align != nil].filter { $0 }.count
        guard targets == 1 else {
            throw UsageError(message: "give exactly one of --ratio, --to-duration, --to-frames, --match, --align")
        }
        if let align {
            if rate != nil { throw UsageError(message: "--rate: not with --align (the output is on the reference's clock, at its rate)") }
            return .align(try alignJob(reference: align))
        }
        if keepPolarity { throw UsageError(message: "--keep-polarity: only with --align (a plain stretch never changes the polarity)") }
        if maxOffset != nil { throw UsageError(message: "--max-offset: only with --align (a plain stretch searches nothing)") }
        let target: FileStretch.Target
        if let ratio {
            target = .ratio(try StretchRatio(parsing: ratio))
        } else if let toFrames {
            guard let n = Int64(toFrames), n > 0 else { throw UsageError(message: "--to-frames \(toFrames): must be a whole number of frames above 0") }
            target = .frames(n)
        } else if let toDuration {
            var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: input, stream: stream).sampleRate }
            target = .duration(try times.parse(toDuration, option: "--to-duration")!)
        } else {
            target = .match(path: match!)
        }
        var job = FileStretch(input: input, output: output, target: target)
        let e = try resamplerOption()
        let (a, q) = try engineOptions()
        job.algorithm = a
        job.quality = q
        job.resampler = e
        job.stream = stream
        try job.apply(outputOptions, common)
        job.settings.sampleRate = rate
        return .stretch(job)
    }

    func run() throws {
        let job: FileStretch
        switch try self.job() {
        case .align(let a): return try runAlign(a)
        case .stretch(let s): job = s
        }
        // Said before a long render starts, so that a user can stop it and choose.
        if !common.quiet, let notice = try job.plan().notice { printError("mixdown: note: \(notice)") }
        let report = try runWithProgress("stretch", quiet: common.quiet) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if common.json { return try printJSON(report) }
        if !common.quiet {
            print(String(format: "stretched %lld -> %lld frames (ratio %@ = %.9f, %@%@) to %@ in %.2f s (%.0fx real time)",
                         report.inputFrames, report.outputFrames, report.ratio, report.ratioValue, report.algorithm.rawValue,
                         report.resampler.map { "/" + $0.rawValue } ?? "", report.output, report.seconds, report.realtimeFactor))
            if let m = report.matched { print("length matched to \(m)") }
            if let l = loudnessLine(report.loudness, page: outputOptions.report) { print(l) }
        }
    }

    func resamplerOption() throws -> ResamplerEngine {
        guard let e = ResamplerEngine(rawValue: resampler) else {
            throw UsageError(message: "--resampler: '\(resampler)' is not one of \(ResamplerEngine.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return e
    }

    /// --algorithm and --quality, checked.
    func engineOptions() throws -> (TimeScaleAlgorithm, ResamplerQuality) {
        guard let a = TimeScaleAlgorithm(name: algorithm) else {
            throw UsageError(message: "--algorithm: '\(algorithm)' is not one of \(TimeScaleAlgorithm.names.joined(separator: ", "))")
        }
        guard let q = ResamplerQuality(rawValue: quality) else {
            throw UsageError(message: "--quality: '\(quality)' is not one of best, medium, fastest")
        }
        return (a, q)
    }

    func alignJob(reference: String) throws -> FileAlign {
        var job = FileAlign(input: input, reference: reference, output: output)
        guard minConfidence >= 0, minConfidence <= 1 else { throw UsageError(message: "--min-confidence \(minConfidence): between 0 and 1") }
        let (a, q) = try engineOptions()
        job.algorithm = a
        job.quality = q
        job.tuning.minimumConfidence = minConfidence
        var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: reference).sampleRate }
        job.tuning.maxOffset = try times.parse(maxOffset, option: "--max-offset")
        job.keepPolarity = keepPolarity
        job.resampler = try resamplerOption()
        if stream != nil { throw UsageError(message: "--stream: --align reads the first audio stream of both files") }
        try job.apply(outputOptions, common)
        return job
    }

    func runAlign(_ job: FileAlign) throws {
        let report = try runWithProgress("align", quiet: common.quiet) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if common.json { return try printJSON(report) }
        if !common.quiet {
            print(String(format: "aligned %@ to %@: offset %+.6f s, %+.3f ppm (confidence %.2f), %@; %lld frames to %@ in %.2f s; measured against the reference: offset %+.3f ms, %+.3f ppm, largest lag %.3f ms",
                         report.input, report.reference, report.offsetSeconds, report.ppm, report.confidence, report.algorithm.rawValue,
                         report.outputFrames, report.output, report.seconds, report.residualOffsetMilliseconds ?? .nan, report.residualPPM ?? .nan,
                         report.residualMaxLagMilliseconds ?? .nan) + (report.polarityCorrected ? "; its polarity was inverted against the reference's and is turned over" : ""))
            if let l = loudnessLine(report.loudness, page: outputOptions.report) { print(l) }
        }
    }
}
