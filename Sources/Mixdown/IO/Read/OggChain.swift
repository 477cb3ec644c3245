import Foundation

/// The logical streams of an Ogg file, read from its page headers alone (27 bytes and a
/// segment table a page, hopping over the packets).
///
/// A chained Ogg holds streams one after another (a BOS page after an EOS page): klettres'
/// voices are two such links, 23,606 and 44,100 frames. libsndfile reads the first link
/// and calls it the whole file; FFmpeg and libvorbisfile read every link. Mixdown refuses
/// a chain by name rather than play it cut short.
enum OggChain {
    /// One logical stream: its serial number and the granule position of its last page
    /// (for Vorbis, its frames).
    struct Link: Equatable {
        var serial: UInt32
        var lastGranule: Int64
        /// Whether its last page says the stream ends there (EOS): nothing was cut off.
        var ended = false
    }

    /// The links of `path`, in order; empty for a file whose pages cannot be walked (which
    /// the decoder then judges). Streams grouped at the start (audio beside video) are one
    /// link; a stream that begins after one has ended starts the next link. A link's
    /// `lastGranule` is its first stream's.
    static func links(of path: String) -> [Link] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var links: [Link] = []
        var ended = false
        var header = [UInt8](repeating: 0, count: 27 + 255)
        var offset: off_t = 0
        while true {
            let got = pread(fd, &header, header.count, offset)
            guard got >= 27, header[0] == 0x4F, header[1] == 0x67, header[2] == 0x67, header[3] == 0x53 else { return links }
            let flags = header[5]
            var granule: Int64 = 0
            for i in 0..<8 { granule |= Int64(header[6 + i]) << (8 * i) }
            var serial: UInt32 = 0
            for i in 0..<4 { serial |= UInt32(header[14 + i]) << (8 * i) }
            let segments = Int(header[26])
            guard got >= 27 + segments else { return links }
            let body = header[27..<(27 + segments)].reduce(0) { $0 + Int($1) }
            if links.isEmpty || (flags & 0x02 != 0 && ended) {
                links.append(Link(serial: serial, lastGranule: 0))
                ended = false
            }
            if serial == links[links.count - 1].serial && granule >= 0 { links[links.count - 1].lastGranule = granule }
            if flags & 0x04 != 0 {
                ended = true
                if serial == links[links.count - 1].serial { links[links.count - 1].ended = true }
            }
            offset += off_t(27 + segments + body)
        }
    }

    /// Throws `unsupportedInput` for a chained Ogg (more than one link, one after another),
    /// naming the links' lengths and how to join them.
    static func refuseChain(_ path: String, sampleRate: Int, links found: [Link]) throws(MixdownError) {
        guard found.count > 1 else { return }
        let lengths = found.map { "\($0.lastGranule)" }.joined(separator: ", ")
        throw .unsupportedInput(path: path, reason: "is a chained Ogg of \(found.count) streams one after another (\(lengths) frames at \(sampleRate) Hz); Mixdown reads one stream and would play the first alone: join them first (ffmpeg -i '\((path as NSString).lastPathComponent)' -c:a flac joined.flac)")
    }
}
