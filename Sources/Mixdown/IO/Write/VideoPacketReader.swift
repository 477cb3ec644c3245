#if FFmpeg
import CFFmpeg
import Foundation
import Synchronization

/// Reads one video stream's packets ahead of the muxer, on a thread of its own: the
/// demuxing and the file's reads of a `--video-from` copy (gigabytes for an hour of
/// 1080p) overlap with the rest of the job instead of adding to it.
///
/// Packets pass through a ring of `slots` packets allocated up front, in file order, with
/// the input's timestamps (the muxer rescales them: its time base is final only once its
/// header is written). The consumer takes them with `next()` and hands each back with
/// `release()`; the reader waits only when the ring is full. The end of the stream and a
/// read error arrive in order, after the packets before them. Owns the input.
final class VideoPacketReader: @unchecked Sendable {
    let path: String
    /// The video stream's time base in the input.
    let timeBase: AVRational
    /// The stream ended (after `next()` returned nil).
    private(set) var ended = false

    /// The reader thread's state, which it holds strongly (as `ReadAhead`'s producer does):
    /// a reader released before its thread has run stops it without the thread touching it.
    private final class Shared: @unchecked Sendable {
        var input: UnsafeMutablePointer<AVFormatContext>?
        /// Each slot's tag: av_read_frame's result (>= 0: a packet of the stream).
        let ring: PacketRing<Int32>
        let stopping = Atomic<Bool>(false)
        let exited = DispatchSemaphore(value: 0)
        let streamIndex: Int32

        init(input: UnsafeMutablePointer<AVFormatContext>, streamIndex: Int32, slots: Int) {
            self.input = input
            self.streamIndex = streamIndex
            ring = PacketRing(packets: slots, empty: 0)
        }

        deinit {
            ring.freePackets()
            avformat_close_input(&input)
        }

        func run() {
            while true {
                let packet = ring.nextFreeSlot()
                if stopping.load(ordering: .acquiring) { break }
                var r: Int32
                repeat {
                    r = av_read_frame(input, packet)
                    guard r >= 0 && packet.pointee.stream_index != streamIndex else { break }
                    av_packet_unref(packet)
                } while true
                ring.publish(r)
                if r < 0 { break }
            }
            exited.signal()
        }
    }

    private let shared: Shared
    /// The packet `next()` returned, until `release()`.
    private var current: UnsafeMutablePointer<AVPacket>?

    /// Takes ownership of `input` (opened, its streams found) and starts reading
    /// `streamIndex`'s packets. `slots` bounds the packets read ahead (256: about 8 s of
    /// 30 fps video, some 16 MB of 1080p H.264).
    init(path: String, input: UnsafeMutablePointer<AVFormatContext>, streamIndex: Int32, slots: Int = 256) {
        self.path = path
        timeBase = input.pointee.streams[Int(streamIndex)]!.pointee.time_base
        shared = Shared(input: input, streamIndex: streamIndex, slots: slots)
        let thread = Thread { [shared] in shared.run() }
        thread.name = "mixdown.video-reader"
        thread.start()
    }

    deinit {
        shared.stopping.store(true, ordering: .releasing)
        shared.ring.wakeProducer()
        shared.exited.wait()
    }

    /// The next packet of the stream (with the input's stream index and time base), or nil
    /// at its end. The packet stays the reader's: pass it to the muxer (which takes its
    /// data), then `release()` it before the next call.
    func next() throws(MixdownError) -> UnsafeMutablePointer<AVPacket>? {
        guard !ended else { return nil }
        let (packet, r) = shared.ring.nextFilledSlot()
        guard r >= 0 else {
            ended = true
            guard r == mx_averror_eof() else { throw .readFailed(path: path, reason: "video: \(FFmpegDecoder.message(r))") }
            return nil
        }
        current = packet
        return packet
    }

    /// Gives the packet from `next()` back to the reader.
    func release() {
        guard let packet = current else { return }
        av_packet_unref(packet)
        current = nil
        shared.ring.release()
    }
}
#endif
