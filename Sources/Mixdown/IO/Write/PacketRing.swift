#if FFmpeg
import CFFmpeg

/// FFmpeg packets handed from one thread to another (the video's reader to the muxer,
/// the audio's encoder to the muxer): `count` empty packets allocated up front.
typealias PacketRing<Tag> = SlotRing<UnsafeMutablePointer<AVPacket>, Tag>

extension SlotRing where Slot == UnsafeMutablePointer<AVPacket> {
    convenience init(packets count: Int, empty: Tag) {
        self.init(slots: (0..<count).map { _ in av_packet_alloc()! }, empty: empty)
    }

    /// Frees every packet (and the data any still holds). Call once, when neither side
    /// will touch the ring again.
    func freePackets() {
        for p in slots { var owned: UnsafeMutablePointer<AVPacket>? = p; av_packet_free(&owned) }
    }
}
#endif
