/// An audio file a composition draws from (AVURLAsset's role): its path, the audio stream
/// it plays, and what its header says, read once when the asset is made.
public struct AudioAsset: Sendable, Equatable {
    public let path: String
    /// The container's index of the audio stream played (0 for libsndfile's formats).
    public var stream: Int { info.stream }
    public let info: AudioFileInfo

    /// Reads the header of `path`; a missing, empty or unreadable file throws here.
    /// `stream` picks an audio stream by the container's index (nil: the first one).
    public init(path: String, stream: Int? = nil) throws(MixdownError) {
        self.path = path
        info = try AudioFileInfo.read(path: path, stream: stream)
    }

    /// The exact duration: frames / sample rate.
    public var duration: MediaTime { info.duration }
}
