#if FFmpeg
import CFFmpeg
import Foundation
import Testing
@testable import Mixdown

/// The muxers' output file written on a thread of its own: the bytes on disk are the ones
/// written, through slot boundaries, FFmpeg's buffer, seeks back and size queries; a
/// failed write is reported, not lost.
@Suite struct WriteBehindFileTests {
    /// Random-sized writes with seeks back to patch earlier bytes (as the MP4 muxer patches
    /// its sizes) and size queries, against the same edits applied to an array.
    @Test(arguments: [(1, 5), (2, 7), (3, 64), (4, 4 << 20)])
    func theFileHoldsEveryWriteAndPatch(slots: (Int, Int)) throws {
        let dir = TempDir()
        let path = dir.file("out.bin")
        let file = try WriteBehindFile(path: path, destination: "out.bin", slots: slots.0, slotBytes: slots.1)
        let pb = try #require(file.context)
        var expected: [UInt8] = []
        var rng = SystemRandomNumberGenerator()
        var seed: UInt8 = 1
        for round in 0..<200 {
            let n = Int.random(in: 0...(round % 10 == 0 ? min(300_000, 200 * slots.1) : 3000), using: &rng)
            let bytes = (0..<n).map { i in UInt8(truncatingIfNeeded: Int(seed) &* 31 &+ i) }
            seed &+= 1
            avio_write(pb, bytes, Int32(n))
            expected += bytes
            if round % 17 == 5 && expected.count > 8 {
                // Patch four bytes somewhere behind, then come back to the end.
                let at = Int.random(in: 0..<(expected.count - 4), using: &rng)
                let patch: [UInt8] = [0xDE, 0xAD, UInt8(round), 0xEF]
                #expect(avio_seek(pb, Int64(at), SEEK_SET) == Int64(at))
                avio_write(pb, patch, 4)
                expected.replaceSubrange(at..<(at + 4), with: patch)
                #expect(avio_seek(pb, Int64(expected.count), SEEK_SET) == Int64(expected.count))
            }
            // The size of what reached the file (as with FFmpeg's own file protocol, FFmpeg's
            // buffer counts once flushed): every byte queued behind it.
            if round % 29 == 3 { avio_flush(pb); #expect(avio_size(pb) == Int64(expected.count)) }
        }
        #expect(file.close() == 0)
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        #expect(written.count == expected.count)
        #expect(written == expected)
    }

    /// /dev/full refuses every write (ENOSPC): `close` returns that error.
    @Test func aFailedWriteIsReportedByClose() throws {
        let file = try WriteBehindFile(path: "/dev/full", destination: "full", slots: 2, slotBytes: 4096)
        let pb = try #require(file.context)
        let bytes = [UInt8](repeating: 7, count: 100_000)
        avio_write(pb, bytes, Int32(bytes.count))
        #expect(file.close() == -ENOSPC)
    }

    @Test func aDirectoryThatDoesNotExistIsNamed() throws {
        let dir = TempDir()
        #expect(throws: MixdownError.outputNotWritable(path: "the destination", reason: "No such file or directory")) {
            _ = try WriteBehindFile(path: dir.file("no/such/dir/out.m4a"), destination: "the destination")
        }
    }
}
#endif
