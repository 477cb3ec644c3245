#if FFmpeg
import CFFmpeg
import Foundation
import Synchronization

/// Muxes the audio's packets beside a copied video stream (`--video-from`) on a thread of
/// its own, so that the audio's encoder never waits for the video's gigabytes: the
/// encoding thread hands each audio packet over (a move of its reference, no copy) and
/// goes on; this thread writes the video's packets due before it, then the packet.
///
/// The output context is this thread's from `init` until `finish()` returns (or the muxer
/// is released): the owner writes the trailer after. Packets are muxed in the order
/// given, exactly as the single-threaded copy interleaved them (the file is the same). A
/// write or read error stops the muxing and is thrown by the next `write` or by `finish`.
final class VideoMuxer: @unchecked Sendable {
    /// The muxing thread's state, which it holds strongly.
    private final class Shared: @unchecked Sendable {
        let output: UnsafeMutablePointer<AVFormatContext>
        let video: VideoPacketReader
        let videoIndex: Int32
        let audioTimeBase: AVRational
        let destination: String
        /// Each slot's tag: true marks the end of the audio.
        let ring: PacketRing<Bool>
        let failure = Mutex<MixdownError?>(nil)
        /// Set when the job is abandoned: the rest of the video is not copied.
        let abandoned = Atomic<Bool>(false)
        let exited = DispatchSemaphore(value: 0)

        init(output: UnsafeMutablePointer<AVFormatContext>, video: VideoPacketReader, videoIndex: Int32,
             audioTimeBase: AVRational, destination: String, slots: Int) {
            self.output = output
            self.video = video
            self.videoIndex = videoIndex
            self.audioTimeBase = audioTimeBase
            self.destination = destination
            ring = PacketRing(packets: slots, empty: false)
        }

        deinit { ring.freePackets() }

        func run() {
            while true {
                let (packet, end) = ring.nextFilledSlot()
                if end { ring.release(); break }
                if failure.withLock({ $0 == nil }) {
                    do throws(MixdownError) {
                        try copyVideo(until: packet.pointee.dts)
                        let w = av_interleaved_write_frame(output, packet)
                        guard w >= 0 else { throw .writeFailed(path: destination, reason: FFmpegDecoder.message(w)) }
                    } catch { failure.withLock { $0 = error } }
                }
                av_packet_unref(packet)
                ring.release()
            }
            if !abandoned.load(ordering: .acquiring) && failure.withLock({ $0 == nil }) {
                do throws(MixdownError) { try copyVideo(until: nil) } catch { failure.withLock { $0 = error } }
            }
            exited.signal()
        }

        /// Copies the video's packets up to `limit` (in the audio's time base), or all of them.
        private func copyVideo(until limit: Int64?) throws(MixdownError) {
            let outTimeBase = output.pointee.streams[Int(videoIndex)]!.pointee.time_base
            while let pkt = try video.next() {
                let dts = pkt.pointee.dts
                pkt.pointee.stream_index = videoIndex
                pkt.pointee.pos = -1
                av_packet_rescale_ts(pkt, video.timeBase, outTimeBase)
                let w = av_interleaved_write_frame(output, pkt)
                video.release()
                guard w >= 0 else { throw .writeFailed(path: destination, reason: "video from '\(video.path)': \(FFmpegDecoder.message(w))") }
                if let limit, dts != mx_av_nopts(), av_compare_ts(dts, video.timeBase, limit, audioTimeBase) >= 0 { return }
            }
        }
    }

    private let shared: Shared
    private var finished = false

    /// Starts muxing into `output` (its header written), copying `video`'s packets to the
    /// output stream `videoIndex`. Audio packets come with the audio stream's index and
    /// timestamps in `audioTimeBase`. `slots` bounds the audio packets in flight (a
    /// parallel encode hands over a chunk of 512 at once).
    init(output: UnsafeMutablePointer<AVFormatContext>, video: VideoPacketReader, videoIndex: Int32,
         audioTimeBase: AVRational, destination: String, slots: Int = 1024) {
        shared = Shared(output: output, video: video, videoIndex: videoIndex, audioTimeBase: audioTimeBase,
                        destination: destination, slots: slots)
        let thread = Thread { [shared] in shared.run() }
        thread.name = "mixdown.muxer"
        thread.start()
    }

    deinit {
        if !finished {
            shared.abandoned.store(true, ordering: .releasing)
            stop()
        }
    }

    /// Hands one audio packet over (its reference moves: `packet` is left blank).
    func write(_ packet: UnsafeMutablePointer<AVPacket>) throws(MixdownError) {
        if let error = shared.failure.withLock({ $0 }) { throw error }
        let slot = shared.ring.nextFreeSlot()
        av_packet_move_ref(slot, packet)
        shared.ring.publish(false)
    }

    /// Muxes what is queued and the rest of the video, and stops the thread. The output
    /// is the caller's again after it. Call once.
    func finish() throws(MixdownError) {
        finished = true
        stop()
        if let error = shared.failure.withLock({ $0 }) { throw error }
    }

    private func stop() {
        _ = shared.ring.nextFreeSlot()
        shared.ring.publish(true)
        shared.exited.wait()
    }
}
#endif
