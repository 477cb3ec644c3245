/// Tags written into the output where the type has room for them (libsndfile's strings).
public struct AudioMetadata: Sendable, Equatable, Codable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var comment: String?
    public var date: String?
    public var software: String?
    /// Where the file starts on a recorder's clock, frames since midnight at the file's
    /// rate: written as a Broadcast WAV `bext` TimeReference (WAV and RF64 only: libsndfile writes no bext to W64), so
    /// that a stem keeps its place in an editor. nil writes no `bext` chunk.
    public var timeReference: Int64?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil,
                comment: String? = nil, date: String? = nil, software: String? = "Mixdown") {
        self.title = title; self.artist = artist; self.album = album
        self.comment = comment; self.date = date; self.software = software
    }
}
