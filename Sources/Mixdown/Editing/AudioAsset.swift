/// An audio file a composition draws from (AVURLAsset's role): its path, the audio stream
/// it plays, and what its header says, read once when the asset is made.
///
/// A reference to one shared record: a composition's segments that cut one file share
/// its asset, so a segment costs a pointer for it, not a copy of the header.
public struct AudioAsset: Sendable, Equatable {
    private final class Storage: Sendable {
        let path: String
        let info: AudioFileInfo
        init(path: String, info: AudioFileInfo) { self.path = path; self.info = info }
    }
    private let storage: Storage

    public var path: String { storage.path }
    public var info: AudioFileInfo { storage.info }
    /// The container's index of the audio stream played (0 for libsndfile's formats).
    public var stream: Int { info.stream }

    /// Reads the header of `path`; a missing, empty or unreadable file throws here.
    /// `stream` picks an audio stream by the container's index (nil: the first one).
    public init(path: String, stream: Int? = nil) throws(MixdownError) {
        storage = Storage(path: path, info: try AudioFileInfo.read(path: path, stream: stream))
    }

    /// The exact duration: frames / sample rate.
    public var duration: MediaTime { info.duration }

    public static func == (a: AudioAsset, b: AudioAsset) -> Bool {
        a.storage === b.storage || (a.path == b.path && a.info == b.info)
    }
}
