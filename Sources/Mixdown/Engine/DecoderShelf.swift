/// The open decoders one composition track keeps between its segments: consecutive
/// segments that cut the same file (a transcript edit, a silence cut) reuse one decoder,
/// which seeks, instead of opening, probing and indexing the file again for each segment
/// (for an MP4 that is its whole sample table). Holds the `capacity` most recently used
/// files, so a track alternating between two files also reuses both.
///
/// Not thread-safe: one track's chains are made by whichever thread renders the track,
/// never by two at once. A decoder is handed to one `FileSource` at a time: a track plays
/// one segment at a time, and releases its chain before it opens the next.
final class DecoderShelf {
    private struct Entry { let path: String; let stream: Int?; let decoder: AudioDecoder }
    private var entries: [Entry] = []
    let capacity: Int

    init(capacity: Int = 2) { self.capacity = capacity }

    /// A source playing `range` of `path`'s stream `stream`, on a kept decoder when there is one.
    func source(path: String, range: Range<Int64>, stream: Int?) throws(MixdownError) -> FileSource {
        if let i = entries.firstIndex(where: { $0.path == path && $0.stream == stream }) {
            let e = entries.remove(at: i)
            entries.append(e)
            return try FileSource(decoder: e.decoder, range: range)
        }
        let decoder = try AudioFileProbe.open(path: path, stream: stream)
        entries.append(Entry(path: path, stream: stream, decoder: decoder))
        if entries.count > capacity { entries.removeFirst() }
        return try FileSource(decoder: decoder, range: range)
    }
}
