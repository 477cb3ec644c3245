import Foundation
import Testing
@testable import Mixdown

/// Ogg Vorbis files libsndfile counts wrong: the length is where the stream's decode ends,
/// as the stream declares it.
struct SndFileDecoderTests {
    /// One Ogg page as it is stored: its flags, granule position, serial number, lacing
    /// values and body (a packet may run on into the next page).
    struct OggPage {
        var flags: UInt8
        var granule: Int64
        var serial: UInt32
        var lacing: [UInt8]
        var body: [UInt8]

        /// The packets that end in this page, from its first byte (a page that continues a
        /// packet has flag 1: not read so here).
        var packets: [[UInt8]] {
            var out: [[UInt8]] = [], start = 0, size = 0
            for s in lacing {
                size += Int(s)
                if s < 255 { out.append(Array(body[start..<(start + size)])); start += size; size = 0 }
            }
            return out
        }

        /// The page with `packets` put before its own.
        func prepending(_ packets: [[UInt8]]) -> OggPage {
            var page = self
            page.lacing = packets.flatMap { [UInt8](repeating: 255, count: $0.count / 255) + [UInt8($0.count % 255)] } + lacing
            page.body = packets.flatMap { $0 } + body
            return page
        }

        /// Split after its first packet (whole in this page): that packet alone, and the rest.
        func splitAfterFirstPacket() -> (OggPage, OggPage) {
            let count = lacing.firstIndex { $0 < 255 }! + 1, bytes = lacing[..<count].reduce(0) { $0 + Int($1) }
            var first = self, rest = self
            first.lacing = Array(lacing[..<count]); first.body = Array(body[..<bytes])
            rest.lacing = Array(lacing[count...]); rest.body = Array(body[bytes...])
            return (first, rest)
        }
    }

    /// The pages of an Ogg file.
    static func pages(_ bytes: [UInt8]) throws -> [OggPage] {
        var pages: [OggPage] = [], i = 0
        func le(_ at: Int, _ count: Int) -> UInt64 { (0..<count).reduce(0) { $0 | UInt64(bytes[at + $1]) << (8 * $1) } }
        while i < bytes.count {
            try #require(Array(bytes[i..<(i + 4)]) == Array("OggS".utf8), "a page at byte \(i)")
            let segments = Int(bytes[i + 26])
            let lacing = Array(bytes[(i + 27)..<(i + 27 + segments)]), size = lacing.reduce(0) { $0 + Int($1) }
            let at = i + 27 + segments
            pages.append(OggPage(flags: bytes[i + 5], granule: Int64(bitPattern: le(i + 6, 8)), serial: UInt32(le(i + 14, 4)),
                                 lacing: lacing, body: Array(bytes[at..<(at + size)])))
            i = at + size
        }
        return pages
    }

    /// The Ogg CRC (polynomial 0x04c11db7, not reflected, from 0) of a page with its CRC field zero.
    static func crc(_ bytes: [UInt8]) -> UInt32 {
        bytes.reduce(UInt32(0)) { c, byte in
            var r = c ^ UInt32(byte) << 24
            for _ in 0..<8 { r = r & 0x8000_0000 != 0 ? (r << 1) ^ 0x04c1_1db7 : r << 1 }
            return r
        }
    }

    /// `pages` as a file, numbered from 0, each page's CRC made.
    static func bytes(_ pages: [OggPage]) -> [UInt8] {
        pages.enumerated().flatMap { sequence, page -> [UInt8] in
            func le<T: FixedWidthInteger>(_ v: T) -> [UInt8] { (0..<(T.bitWidth / 8)).map { UInt8(truncatingIfNeeded: v >> (8 * $0)) } }
            var out = Array("OggS".utf8) + [0, page.flags] + le(page.granule) + le(page.serial) + le(UInt32(sequence)) + [0, 0, 0, 0]
            out += [UInt8(page.lacing.count)] + page.lacing + page.body
            out.replaceSubrange(22..<26, with: le(crc(out)))
            return out
        }
    }

    /// hyperrogue-music's hr-savino-caribbean, -ivory and -ocean.ogg are laid out so: the
    /// header packets (identification, comment, setup) again at the head of the first audio
    /// page, whose granule position is -104. libsndfile counts 104 frames more than it
    /// decodes (2,814,104 of 2,814,000), FFmpeg refuses the headers, and libvorbisfile (sox)
    /// reads the stream to its last page's granule position. A Vorbis file that Mixdown wrote
    /// and laid out so reads as that length (`lengthSource` the last granule), every sample
    /// the file as written decodes to, and sox reads the same length. Before, libsndfile's
    /// count was believed and the read ended in a truncation error.
    @Test func anOggWhoseFirstAudioPageRepeatsTheHeadersReadsToItsLastGranule() throws {
        let dir = TempDir()
        let written = dir.file("written.ogg"), laid = dir.file("laid-out.ogg")
        let n = 3 * 48_000
        let planes = [sine(440, frames: n, amplitude: 0.3), sine(660, frames: n, amplitude: 0.2)]
        try writeFile(written, planes, type: .ogg, format: nil)
        let original = try Self.pages(Array(try Data(contentsOf: URL(fileURLWithPath: written))))
        // The identification header's page, then the comment and setup headers' (libogg
        // flushes the headers to pages of their own).
        try #require(original.count > 3 && original[0].packets.count == 1 && original[1].packets.count == 2 && original[2].flags & 1 == 0)
        var (head, rest) = original[2].splitAfterFirstPacket()
        head = head.prepending(original[0].packets + original[1].packets)
        head.granule = -104
        let pages = Array(original[0..<2]) + [head, rest] + Array(original[3...])
        try Data(Self.bytes(pages)).write(to: URL(fileURLWithPath: laid))

        let expected = try readFile(written)
        let last = try #require(pages.last?.granule)
        #expect(expected.info.frames == last)
        let (info, got) = try readFile(laid)
        #expect(info.frames == last, "\(info.frames) frames, the last granule \(last)")
        #expect(info.lengthSource == .lastGranule)
        #expect(got == expected.planes, "the samples differ from the file as written")
        // sox (libvorbisfile) reads the same length.
        let stat = try runProcess("/usr/bin/sox", [laid, "-n", "stat"])
        let samples = stat.output.split(separator: "\n").first { $0.hasPrefix("Samples read:") }
        #expect(samples.flatMap { Int64($0.split(separator: " ").last!) } == 2 * last, "sox: \(samples ?? "nothing")")
    }
}
