import ArgumentParser
import Foundation
import Mixdown

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
    @Option(help: "Output type: wav, aiff, flac, caf, ogg, opus, mp3, w64, rf64 (default: from the extension).")
    var type: String?
    @Option(help: "Sample format: s16, s24, f32 (default: the input's precision).")
    var format: String?

    func fileType() throws -> AudioFileType? { try parseType(type) }
    func sampleFormat() throws -> SampleFormat? { try parseSampleFormat(format) }
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

/// Prints one JSON object on standard output.
func printJSON<T: Encodable>(_ value: T) throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.keyEncodingStrategy = .convertToSnakeCase
    print(String(decoding: try encoder.encode(value), as: UTF8.self))
}

/// Runs `body` with Ctrl-C turned into a cancellation of the render: the library then
/// removes its temporary file and throws `cancelled` (exit code 130).
func withInterruptCancellation<T>(_ body: (CancellationToken) throws -> T) throws -> T {
    let token = CancellationToken()
    signal(SIGINT, SIG_IGN)
    signal(SIGTERM, SIG_IGN)
    let sources = [SIGINT, SIGTERM].map { sig -> DispatchSourceSignal in
        let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
        s.setEventHandler { token.cancel() }
        s.resume()
        return s
    }
    defer {
        sources.forEach { $0.cancel() }
        signal(SIGINT, SIG_DFL)
        signal(SIGTERM, SIG_DFL)
    }
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
        overwrite = common.overwrite
        durable = common.sync
    }
}
