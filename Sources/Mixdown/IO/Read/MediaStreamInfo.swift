/// One stream of a container, as `mixdown info` lists it.
public struct MediaStreamInfo: Sendable, Equatable, Codable {
    public enum Kind: String, Sendable, Codable { case audio, video, subtitle, data, other }
    /// The container's stream index (what `--stream` takes).
    public let index: Int
    public let kind: Kind
    public let codec: String
    /// Audio only.
    public var sampleRate: Int?
    public var channelCount: Int?
    /// Audio only: valid frames, exact (for the stream Mixdown plays), else the container's count.
    public var frames: Int64?
    /// Video only: frames per second, exact ("30000/1001").
    public var frameRate: String?
    /// The stream's exact duration in its own time base, when the container declares it.
    public var duration: MediaTime?

    public init(index: Int, kind: Kind, codec: String, sampleRate: Int? = nil, channelCount: Int? = nil,
                frames: Int64? = nil, frameRate: String? = nil, duration: MediaTime? = nil) {
        self.index = index; self.kind = kind; self.codec = codec; self.sampleRate = sampleRate
        self.channelCount = channelCount; self.frames = frames; self.frameRate = frameRate; self.duration = duration
    }
}
