import Foundation

/// A single-producer single-consumer ring of audio blocks: `count` buffers of `capacity`
/// frames allocated up front, each with a `Tag` the producer attaches (how many frames it
/// holds, whether the stream ended, an error). The producer fills slots in order, the
/// consumer drains them in the same order; each side blocks only when the ring is full
/// (producer) or empty (consumer). A slot belongs to one side at a time, handed over only
/// through the two semaphores: hence the unchecked Sendable.
final class BlockRing<Tag>: @unchecked Sendable {
    private let slots: [AudioBuffer]
    private var tags: [Tag]
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private var writeIndex = 0
    private var readIndex = 0

    init(format: AudioFormat, capacity: Int, count: Int = 4, empty: Tag) {
        precondition(count > 0)
        slots = (0..<count).map { _ in AudioBuffer(format: format, capacity: capacity) }
        tags = [Tag](repeating: empty, count: count)
        // libdispatch traps if a semaphore dies below its initial value: start at 0.
        for _ in 0..<count { free.signal() }
    }

    /// Producer: waits for a free slot and returns its buffer to fill. Then `publish`.
    func nextFreeSlot() -> AudioBuffer {
        free.wait()
        return slots[writeIndex]
    }

    /// Producer: hands the slot from `nextFreeSlot` to the consumer, with its tag.
    func publish(_ tag: Tag) {
        tags[writeIndex] = tag
        writeIndex = (writeIndex + 1) % slots.count
        filled.signal()
    }

    /// Consumer: waits for the oldest filled slot. Read it, then `release`.
    func nextFilledSlot() -> (buffer: AudioBuffer, tag: Tag) {
        filled.wait()
        return (slots[readIndex], tags[readIndex])
    }

    /// Consumer: gives the slot from `nextFilledSlot` back to the producer.
    func release() {
        readIndex = (readIndex + 1) % slots.count
        free.signal()
    }

    /// Wakes a producer blocked in `nextFreeSlot` without a slot to spare (for shutting it
    /// down: it must check its stop flag before it touches the buffer).
    func wakeProducer() { free.signal() }
}
