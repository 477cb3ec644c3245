import ArgumentParser
import Mixdown

struct Info: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print a file's type, sample format, rate, channels, frames and exact duration.")

    @Argument(help: "An audio file libsndfile reads.")
    var file: String
    @Flag(help: "Print one JSON object.")
    var json = false

    struct Output: Encodable {
        let info: AudioFileInfo
        enum Keys: String, CodingKey { case path, type, sampleFormat, sampleRate, channels, frames, duration, durationSeconds }
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
        }
    }

    func run() throws {
        let info = try AudioFileInfo.read(path: file)
        if json { return try printJSON(Output(info: info)) }
        print("""
        \(info.path)
          type:        \(info.type) (\(info.sampleFormat))
          sample rate: \(info.sampleRate) Hz
          channels:    \(info.channelCount)
          frames:      \(info.frames)
          duration:    \(info.duration.clockDescription) (\(info.duration.reduced) s)
        """)
    }
}
