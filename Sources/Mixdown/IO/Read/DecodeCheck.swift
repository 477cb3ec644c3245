/// Decodes a whole audio stream to nothing: that every frame decodes, that the count is the
/// declared one, and how fast (`mixdown info --decode`).
public struct DecodeCheck: Sendable, Codable, Equatable {
    public let path: String
    public let stream: Int
    /// Frames the stream declares (or was counted to have when opened).
    public let declaredFrames: Int64
    /// Frames decoded: equal to `declaredFrames`, or the check throws.
    public let decodedFrames: Int64
    /// Wall time of the decode, opening included.
    public let seconds: Double
    /// Stream duration / wall time.
    public let realtimeFactor: Double

    /// Pulls `path`'s audio stream `stream` to its end in blocks of `blockFrames` frames.
    /// A stream that ends early throws `truncatedAudio`; damaged data `corruptAudio`.
    public static func run(path: String, stream: Int? = nil, blockFrames: Int = 16_384) throws(MixdownError) -> DecodeCheck {
        let stopwatch = Stopwatch()
        let source = try FileSource(path: path, stream: stream)
        try source.prepare(maximumFrames: blockFrames)
        let buffer = AudioBuffer(format: source.format, capacity: blockFrames)
        var frames: Int64 = 0
        while true {
            let status = try source.render(into: buffer, frames: blockFrames)
            frames += Int64(status.frames)
            if status.ended { break }
        }
        let seconds = stopwatch.seconds
        return DecodeCheck(path: path, stream: source.info.stream, declaredFrames: source.info.frames, decodedFrames: frames,
                           seconds: seconds, realtimeFactor: seconds > 0 ? source.info.duration.approximateSeconds / seconds : 0)
    }
}
