/// An audio file a composition draws from (AVURLAsset's role): its path and what its
/// header says, read once when the asset is made.
public struct AudioAsset: Sendable, Equatable {
    public let path: String
    public let info: AudioFileInfo

    /// Reads the header of `path`; a missing, empty or unreadable file throws here.
    public init(path: String) throws(MixdownError) {
        self.path = path
        info = try AudioFileInfo.read(path: path)
    }

    /// The exact duration: frames / sample rate.
    public var duration: MediaTime { info.duration }
}
