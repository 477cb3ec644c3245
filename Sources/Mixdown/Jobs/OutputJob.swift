/// The one sequence every file job runs: the output's type is resolved first (before any
/// input is opened, so a bad path fails at once), then the encoding for the exact frame
/// count, then an atomic `AudioFileWriter`, then `Renderer.render`, then the timing.
/// The file appears complete at `path`, or, on any error or cancellation, not at all.
public struct OutputJob: Sendable {
    public let path: String
    public let settings: OutputSettings
    /// The container written: `settings.type`, else the one the path's extension implies.
    public let type: AudioFileType
    private let stopwatch = Stopwatch()

    /// Resolves the output's type; starts the job's clock.
    public init(path: String, settings: OutputSettings) throws(MixdownError) {
        self.path = path
        self.settings = settings
        type = try AudioFileType.forOutput(path, explicit: settings.type)
    }

    /// The encoding for `frames` frames of `channels` channels: `settings.sampleFormat`,
    /// else `natural` (the job's own precision; nil for types that take none).
    public func encoding(frames: Int64, channels: Int, natural: SampleFormat?) throws(MixdownError) -> OutputEncoding {
        try OutputEncoding.resolve(path: path, type: type, sampleFormat: settings.sampleFormat ?? natural,
                                   frames: frames, channels: channels, encoder: settings.encoder)
    }

    /// Wall time since the job began, in seconds (for reports).
    public var seconds: Double { stopwatch.seconds }

    /// The precision an input of `info` keeps in this job's type and codec.
    public func naturalSampleFormat(of info: AudioFileInfo) -> SampleFormat? {
        info.naturalSampleFormat(for: type, codec: settings.encoder.codec)
    }

    /// What a write did.
    public struct Outcome: Sendable {
        /// Wall time since the job began, in seconds (for reports).
        public let seconds: Double
        /// Temporary files of the destination that dead runs had left, removed by this one.
        public let removedStaleTemporaryFiles: [String]
    }

    /// Renders `node` to the file: exactly `frames` frames (a stream that ends short or
    /// runs past is an error), in `encoding`.
    public func write(_ node: AudioNode, frames: Int64, encoding: OutputEncoding,
                      progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Outcome {
        let writer = try AudioFileWriter(destination: path, encoding: encoding, format: node.format,
                                         maximumFrames: settings.maximumBlock, overwrite: settings.overwrite,
                                         metadata: settings.metadata, durable: settings.durable, videoFrom: settings.videoFrom)
        try Renderer.render(node, to: writer, blockSizes: settings.blockSizes, expectedFrames: frames,
                            progress: progress, cancellation: cancellation)
        return Outcome(seconds: stopwatch.seconds, removedStaleTemporaryFiles: writer.removedStaleTemporaryFiles)
    }
}
