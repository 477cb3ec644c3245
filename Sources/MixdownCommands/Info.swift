import ArgumentParser
import Mixdown

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Print a file's streams: for audio the codec, rate, channels, exact frames and duration; for video the codec, frame rate and exact duration.")

    @Argument(help: "An audio or video file (WAV, FLAC, MP3, Ogg, M4A, MP4, MOV, MKV, WebM, ...).", completion: .file())
    var file: String
    @Option(parsing: .unconditional, help: "The audio stream to describe in full (default: the first audio stream).")
    var stream: Int?
    @Flag(help: "Also decode the whole audio stream: check every frame decodes and the count is the declared one, and time it.")
    var decode = false
    @Flag(help: "Print one JSON object.")
    var json = false

    struct Output: Encodable {
        let info: AudioFileInfo
        enum Keys: String, CodingKey {
            case path, type, sampleFormat, sampleRate, channels, frames, duration, durationSeconds
            case stream, lengthSource, priming, streams
        }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(info.path, forKey: .path)
            try c.encode(info.type, forKey: .type)
            try c.encode(info.sampleFormat, forKey: .sampleFormat)
            try c.encode(info.sampleRate, forKey: .sampleRate)
            try c.encode(info.channelCount, forKey: .channels)
            try c.encode(info.frames, forKey: .frames)
            try c.encode(info.duration.reduced.description, forKey: .duration)
            try c.encode(info.duration.approximateSeconds, forKey: .durationSeconds)
            try c.encode(info.stream, forKey: .stream)
            try c.encode(info.lengthSource.rawValue, forKey: .lengthSource)
            try c.encode(info.priming, forKey: .priming)
            try c.encode(info.streams.map(StreamOutput.init), forKey: .streams)
        }
    }

    struct StreamOutput: Encodable {
        let s: MediaStreamInfo
        enum Keys: String, CodingKey { case index, kind, codec, sampleRate, channels, frames, frameRate, duration, durationSeconds }
        func encode(to encoder: Encoder) throws {
            var c = encoder.container(keyedBy: Keys.self)
            try c.encode(s.index, forKey: .index)
            try c.encode(s.kind.rawValue, forKey: .kind)
            try c.encode(s.codec, forKey: .codec)
            try c.encodeIfPresent(s.sampleRate, forKey: .sampleRate)
            try c.encodeIfPresent(s.channelCount, forKey: .channels)
            try c.encodeIfPresent(s.frames, forKey: .frames)
            try c.encodeIfPresent(s.frameRate, forKey: .frameRate)
            try c.encodeIfPresent(s.duration?.reduced.description, forKey: .duration)
            try c.encodeIfPresent(s.duration?.approximateSeconds, forKey: .durationSeconds)
        }
    }

    func run() throws {
        let info: AudioFileInfo
        do { info = try AudioFileInfo.read(path: file, stream: stream) } catch {
            if stream == nil, case .noAudioStream = error { try listStreamsOfVideoOnly() }
            throw error
        }
        if decode {
            let check = try DecodeCheck.run(path: file, stream: stream)
            if json { return try printJSON(check) }
            print(String(format: "%@: decoded %lld of %lld frames in %.2f s (%.0fx real time)",
                         file, check.decodedFrames, check.declaredFrames, check.seconds, check.realtimeFactor))
            return
        }
        if json { return try printJSON(Output(info: info)) }
        print("""
        \(info.path)
          type:        \(info.type) (\(info.sampleFormat))
          sample rate: \(info.sampleRate) Hz
          channels:    \(info.channelCount)
          frames:      \(info.frames)
          duration:    \(info.duration.clockDescription) (\(info.duration.reduced) s)
          length from: \(info.lengthSource.rawValue)\(info.priming > 0 ? ", \(info.priming) frames of priming skipped" : "")
        """)
        if info.streams.count > 1 || info.lengthSource != .header {
            print("  streams:")
            for s in info.streams { print("    " + Self.line(s) + (s.index == info.stream && s.kind == .audio ? "   <- played" : "")) }
        }
    }

    /// A video-only file: list its streams before the error says nothing plays.
    private func listStreamsOfVideoOnly() throws {
        guard let streams = try? MediaFileStreams.read(path: file), !streams.isEmpty, !json else { return }
        print(file)
        for s in streams { print("  " + Self.line(s)) }
    }

    static func line(_ s: MediaStreamInfo) -> String {
        var parts = ["\(s.index): \(s.kind.rawValue) \(s.codec)"]
        if let r = s.sampleRate { parts.append("\(r) Hz") }
        if let c = s.channelCount { parts.append("\(c) ch") }
        if let f = s.frames { parts.append("\(f) frames") }
        if let fr = s.frameRate { parts.append("\(fr) fps") }
        parts.append(s.duration.map { "\($0.clockDescription) (\($0.reduced) s)" } ?? "duration not declared")
        return parts.joined(separator: ", ")
    }
}
