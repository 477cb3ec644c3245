import ArgumentParser
import Foundation
import Synchronization
import Mixdown

/// The input, the output and the input's stream: what export and stretch are given first.
struct FileArguments: ParsableArguments {
    @Argument(help: "The input file.", completion: .file())
    var input: String
    @Argument(help: ArgumentHelp("The output file; its extension gives the type unless --type is given."), completion: .file())
    var output: String
    @Option(parsing: .unconditional, help: "The input's audio stream, by the index `mixdown info` lists (default: its first audio stream).")
    var stream: Int?
}

/// Options every rendering command shares.
struct RenderOptions: ParsableArguments {
    @Flag(help: "Replace the output file if it exists.")
    var overwrite = false
    @Flag(help: "fsync the output and its directory before returning (survives a power cut; slower).")
    var sync = false
    @Flag(help: "Print one JSON object with what was done.")
    var json = false
    @Flag(name: [.customLong("quiet"), .customShort("q")], help: "No progress bar and no summary line.")
    var quiet = false
}

/// Parses a time option exactly, asking for the input's sample rate only when the text
/// is a frame count ("1440000f").
struct TimeParser {
    let sampleRate: () throws(MixdownError) -> Int
    private var cached: Int?

    init(sampleRate: @escaping () throws(MixdownError) -> Int) { self.sampleRate = sampleRate }

    mutating func parse(_ text: String?, option: String) throws -> MediaTime? {
        guard let text else { return nil }
        let t = text.trimmingCharacters(in: .whitespaces)
        if (t.hasSuffix("f") || t.hasSuffix("F")) && cached == nil { cached = try sampleRate() }
        do { return try MediaTime(parsing: text, frameRate: cached) } catch {
            throw UsageError(message: "\(option): \(error)")
        }
    }
}

/// The output file's type and sample format, shared by the commands that write audio.
struct OutputOptions: ParsableArguments {
    @Option(parsing: .unconditional, help: "Output type: wav, aiff, flac, caf, ogg, opus, mp3, w64, rf64, m4a, mp4, mov, mkv, webm (default: from the extension).", completion: .list(AudioFileType.allCases.map(\.rawValue)))
    var type: String?
    @Option(parsing: .unconditional, help: "Sample format: s16, s24, f32 (default: the input's precision).", completion: .list(SampleFormat.allCases.map(\.rawValue)))
    var format: String?
    @Option(parsing: .unconditional, help: "Codec for m4a, mp4, mov (aac or alac; default aac), mkv (opus or aac) and webm (opus).", completion: .list(AudioCodec.allCases.map(\.rawValue)))
    var codec: String?
    @Option(parsing: .unconditional, help: "Bitrate of a lossy output in kbps (aac, opus, mp3).")
    var bitrate: Int?
    @Option(name: .customLong("video-from"), parsing: .unconditional, help: "mp4/mov output: copy this file's video stream beside the audio, bit for bit.", completion: .file())
    var videoFrom: String?
    @Option(parsing: .unconditional, help: "Bring the output to this integrated loudness in LUFS (EBU R128: -16 for podcasts, -23 for broadcast): one gain for the whole file, measured on a first pass.")
    var loudness: Double?
    @Option(name: .customLong("true-peak"), parsing: .unconditional, help: "With --loudness: the true-peak ceiling in dBTP (default -1). A gain that would pass it is lowered to it, unless --limit.")
    var truePeak: Double?
    @Flag(help: "With --loudness: hold the peaks under the ceiling with a look-ahead true-peak limiter, and reach the target.")
    var limit = false
    @Option(parsing: .unconditional, help: "With --loudness: also write an HTML page of how the output reached it: the figures, its loudness and true peak over time, and the limiter's gain reduction over time (one self-contained file; --overwrite replaces it).", completion: .file(extensions: ["html"]))
    var report: String?
    @Option(parsing: .unconditional, help: "Cores to use: 1 (the serial encoder too), or N: the render on up to 2, AAC and Opus encoders on N (default: every core).")
    var threads: Int?

    /// --threads, checked.
    func threadCount() throws -> Int? {
        if let threads, threads < 1 { throw UsageError(message: "--threads \(threads): must be 1 or more") }
        return threads
    }

    /// --loudness, --true-peak and --limit; nil without --loudness.
    func loudnessTarget() throws -> LoudnessTarget? {
        guard let loudness else {
            if truePeak != nil || limit { throw UsageError(message: "--true-peak and --limit go with --loudness") }
            if report != nil { throw UsageError(message: "--report shows how the output reached its --loudness target: give --loudness too (or measure any file with `mixdown loudness FILE --report PAGE`)") }
            return nil
        }
        let target = LoudnessTarget(integrated: loudness, truePeak: truePeak ?? -1, limit: limit)
        try target.validate()
        return target
    }

    func fileType() throws -> AudioFileType? { try parseType(type) }
    func sampleFormat() throws -> SampleFormat? { try parseSampleFormat(format) }

    /// --codec and --bitrate.
    func encoder() throws -> EncoderSettings {
        var e = EncoderSettings()
        if let codec {
            guard let c = AudioCodec(rawValue: codec.lowercased()) else {
                throw UsageError(message: "--codec: '\(codec)' is not one of \(AudioCodec.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            e.codec = c
        }
        if let bitrate {
            guard bitrate > 0, bitrate <= 10_000 else { throw UsageError(message: "--bitrate \(bitrate): give kbps, from 1 to 10000") }
            e.bitrate = bitrate * 1000
        }
        return e
    }
}

func parseType(_ text: String?) throws -> AudioFileType? {
    guard let text else { return nil }
    guard let t = AudioFileType(rawValue: text.lowercased()) else {
        throw UsageError(message: "--type: '\(text)' is not one of \(AudioFileType.allCases.map(\.rawValue).joined(separator: ", "))")
    }
    return t
}

func parseSampleFormat(_ text: String?) throws -> SampleFormat? {
    guard let text else { return nil }
    guard let f = SampleFormat(rawValue: text.lowercased()) else {
        throw UsageError(message: "--format: '\(text)' is not one of s16, s24, f32")
    }
    return f
}

/// The summary line of a normalised job (and the page written, when asked for), or nil.
func loudnessLine(_ report: OutputJob.LoudnessReport?, page: String? = nil) -> String? {
    guard let r = report else { return nil }
    var line = String(format: "loudness: %.1f LUFS (%@) %+.2f dB -> %.1f LUFS, true peak %.1f dBTP (%@)",
                      r.input.integrated, r.measuredOn, r.gainDb, r.output.integrated, r.output.truePeak, r.outputMeasuredOn)
    if r.limitedByTruePeak {
        line += String(format: "; the gain was lowered to keep the true peak under %.1f dBTP: %.1f LU short of %.1f LUFS (--limit reaches it)",
                       r.target.truePeak, r.target.integrated - r.output.integrated, r.target.integrated)
    }
    if r.limiter { line += String(format: "; the true-peak limiter held the peaks under %.1f dBTP", r.target.truePeak) }
    if r.output.truePeak > r.target.truePeak + 0.1 {
        line += String(format: "\nwarning: the decoded file's true peak passes the %.1f dBTP ceiling by %.1f dB (the codec's own overshoot): lower --true-peak or raise --bitrate",
                       r.target.truePeak, r.output.truePeak - r.target.truePeak)
    }
    if let page { line += "\nreport: \(page)" }
    return line
}

/// Prints one JSON object on standard output. A value that is not a finite number (a
/// measure that could not be taken) is written as null, never NaN or Infinity (which JSON
/// has not), and a warning on standard error says which fields.
func printJSON<T: Encodable>(_ value: T) throws {
    print(try jsonText(value, warn: { printError("mixdown: warning: \($0)") }))
}

/// `value` as Mixdown's JSON (`MixdownJSON.text`).
func jsonText<T: Encodable>(_ value: T, warn: (String) -> Void) throws -> String {
    try MixdownJSON.text(value, warn: warn)
}

/// Runs `body` with Ctrl-C, SIGTERM and SIGHUP (a closed terminal or ssh session) turned
/// into a cancellation of the render: the library then removes its temporary file and
/// throws `cancelled` (exit code 130). See `Interrupts` for what a signal does outside a job
/// and what a second one does.
func withInterruptCancellation<T>(_ body: (CancellationToken) throws -> T) throws -> T {
    let token = CancellationToken()
    Interrupts.begin(token)
    defer { Interrupts.end() }
    return try body(token)
}

/// Runs a library job with a progress bar (on a terminal, unless `quiet`) and Ctrl-C
/// turned into cancellation; the bar is cleared before the job's result is printed.
func runWithProgress<T>(_ label: String, quiet: Bool,
                        _ body: (((Double) -> Void)?, CancellationToken) throws -> T) throws -> T {
    let bar = ProgressBar(label: label, quiet: quiet)
    defer { bar.finish() }
    let result = try withInterruptCancellation { token in try body(bar.callback, token) }
    bar.finish()
    return result
}

extension FileWritingJob {
    /// --type and --format (when given), --overwrite and --sync.
    mutating func apply(_ output: OutputOptions, _ common: RenderOptions) throws {
        if let t = try output.fileType() { type = t }
        if let f = try output.sampleFormat() { sampleFormat = f }
        let e = try output.encoder()
        if e.codec != nil { encoder.codec = e.codec }
        if e.bitrate != nil { encoder.bitrate = e.bitrate }
        if let v = output.videoFrom { videoFrom = v }
        if let l = try output.loudnessTarget() { settings.loudness = l }
        settings.loudnessReport = output.report
        if let t = try output.threadCount() {
            threads = min(t, 2)
            encoders = t
        }
        overwrite = common.overwrite
        durable = common.sync
    }
}
