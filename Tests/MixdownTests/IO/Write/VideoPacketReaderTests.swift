#if FFmpeg
import CFFmpeg
import Foundation
import Testing
@testable import Mixdown

/// The `--video-from` copy's reader thread: every packet of the video stream, in file
/// order, and nothing of the other streams; a reader released at any point stops its
/// thread (it may be blocked on a full ring, or still reading).
@Suite(.serialized) struct VideoPacketReaderTests {
    /// 12 s of 25 fps video (300 packets) beside an audio stream.
    static func videoWithAudio(_ dir: TempDir) throws -> String {
        let path = dir.file("v.mp4")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=s=64x48:r=25:d=12", "-f", "lavfi",
                            "-i", "sine=f=440:d=12", "-c:v", "mpeg4", "-g", "10", "-c:a", "aac", path])
        return path
    }

    static func open(_ path: String) throws -> (UnsafeMutablePointer<AVFormatContext>, Int32) {
        var input: UnsafeMutablePointer<AVFormatContext>?
        #expect(avformat_open_input(&input, path, nil, nil) >= 0)
        let fmt = try #require(input)
        #expect(avformat_find_stream_info(fmt, nil) >= 0)
        return (fmt, av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0))
    }

    /// (dts, pts, size, key) of each video packet, read directly.
    static func directPackets(_ path: String) throws -> [[Int64]] {
        let (fmt, index) = try open(path)
        var holder: UnsafeMutablePointer<AVFormatContext>? = fmt
        defer { avformat_close_input(&holder) }
        let pkt = av_packet_alloc()!
        var all: [[Int64]] = []
        while av_read_frame(fmt, pkt) >= 0 {
            if pkt.pointee.stream_index == index {
                all.append([pkt.pointee.dts, pkt.pointee.pts, Int64(pkt.pointee.size), Int64(pkt.pointee.flags & AV_PKT_FLAG_KEY)])
            }
            av_packet_unref(pkt)
        }
        var owned: UnsafeMutablePointer<AVPacket>? = pkt
        av_packet_free(&owned)
        return all
    }

    @Test(arguments: [1, 3, 256])
    func readsEveryVideoPacketInOrder(slots: Int) throws {
        let dir = TempDir()
        let path = try Self.videoWithAudio(dir)
        let expected = try Self.directPackets(path)
        #expect(expected.count == 300)
        let (fmt, index) = try Self.open(path)
        let reader = VideoPacketReader(path: path, input: fmt, streamIndex: index, slots: slots)
        var got: [[Int64]] = []
        while let pkt = try reader.next() {
            #expect(pkt.pointee.stream_index == index)
            got.append([pkt.pointee.dts, pkt.pointee.pts, Int64(pkt.pointee.size), Int64(pkt.pointee.flags & AV_PKT_FLAG_KEY)])
            reader.release()
        }
        #expect(got == expected)
        #expect(reader.ended)
        #expect(try reader.next() == nil)
    }

    /// Released with its ring full, half read, or before its thread has run: no hang, no crash.
    @Test func aReaderReleasedAtAnyPointStopsItsThread() throws {
        let dir = TempDir()
        let path = try Self.videoWithAudio(dir)
        for round in 0..<60 {
            let (fmt, index) = try Self.open(path)
            let reader = VideoPacketReader(path: path, input: fmt, streamIndex: index, slots: 4)
            for _ in 0..<(round % 3 == 0 ? 0 : round % 3 == 1 ? 2 : 150) {
                guard try reader.next() != nil else { break }
                reader.release()
            }
            if round % 2 == 0 { usleep(2000) }
        }
    }
}
#endif
