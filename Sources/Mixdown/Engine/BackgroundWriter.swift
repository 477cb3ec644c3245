import Foundation
import Synchronization

/// Writes rendered blocks to an `AudioFileWriter` on a thread of its own, so that encoding
/// and writing overlap with rendering the next block. Blocks pass through a `BlockRing`
/// allocated up front; the render writes each block straight into a free slot
/// (`nextBuffer`, waiting only when all are full) and `publish`es it. A write error is
/// reported by the next `nextBuffer` or by `finish`.
final class BackgroundWriter: @unchecked Sendable {
    private let writer: AudioFileWriter
    /// Each slot's tag is its frame count; nil closes the stream.
    private let ring: BlockRing<Int?>
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<MixdownError?>(nil)
    /// Measures every block as it is handed to the encoder (on this thread).
    private let meter: LoudnessMeter?
    /// The slot `nextBuffer` gave out, until `publish`.
    private var held: AudioBuffer?

    init(writer: AudioFileWriter, maximumFrames: Int, slotCount: Int = 4, meter: LoudnessMeter? = nil) {
        self.writer = writer
        self.meter = meter
        ring = BlockRing(format: writer.format, capacity: maximumFrames, count: slotCount, empty: nil)
        let thread = Thread { [self] in drain() }
        thread.name = "mixdown.writer"
        thread.start()
    }

    private func drain() {
        while true {
            let (buffer, frames) = ring.nextFilledSlot()
            guard let frames else { break }
            if failure.withLock({ $0 == nil }) {
                meter?.add(buffer, frames: frames)
                do { try writer.write(buffer, frames: frames) } catch {
                    failure.withLock { $0 = error }
                }
            }
            ring.release()
        }
        done.signal()
    }

    /// The free slot the next block is to be rendered into (waiting while every slot is
    /// full): the render writes straight into the ring, with no copy. Asked again before
    /// `publish`, it is the same slot.
    func nextBuffer() throws(MixdownError) -> AudioBuffer {
        if let error = failure.withLock({ $0 }) { throw error }
        if let held { return held }
        let slot = ring.nextFreeSlot()
        held = slot
        return slot
    }

    /// Queues the first `frames` frames of the slot from `nextBuffer`.
    func publish(frames: Int) {
        precondition(held != nil, "publish after nextBuffer")
        held = nil
        ring.publish(frames)
    }

    /// Waits for every queued block to be written and stops the thread. Call exactly once.
    func finish() throws(MixdownError) {
        if held == nil { _ = ring.nextFreeSlot() }
        held = nil
        ring.publish(nil)
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
