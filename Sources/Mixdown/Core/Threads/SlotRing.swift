import Foundation

/// A single-producer single-consumer ring of slots allocated up front (audio blocks,
/// FFmpeg packets, byte buffers), each with a `Tag` the producer attaches (how much it
/// holds, whether the stream ended, an error). The producer fills slots in order, the
/// consumer drains them in the same order; each side blocks only when the ring is full
/// (producer) or empty (consumer). A slot belongs to one side at a time, handed over only
/// through the two semaphores: hence the unchecked Sendable. The tags live in memory
/// allocated once, not in an Array property: the producer writing one tag while the
/// consumer reads another would be two accesses to one Array, a race (ThreadSanitizer
/// reported it; a copy-on-write could even allocate on the producer's thread).
final class SlotRing<Slot, Tag>: @unchecked Sendable {
    let slots: [Slot]
    private let tags: UnsafeMutablePointer<Tag>
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private var writeIndex = 0
    private var readIndex = 0

    init(slots: [Slot], empty: Tag) {
        precondition(!slots.isEmpty)
        self.slots = slots
        tags = .allocate(capacity: slots.count)
        tags.initialize(repeating: empty, count: slots.count)
        // libdispatch traps if a semaphore dies below its initial value: start at 0.
        for _ in slots { free.signal() }
    }

    deinit {
        tags.deinitialize(count: slots.count)
        tags.deallocate()
    }

    /// Producer: waits for a free slot and returns it to fill. Then `publish`.
    func nextFreeSlot() -> Slot {
        free.wait()
        return slots[writeIndex]
    }

    /// Producer: hands the slot from `nextFreeSlot` to the consumer, with its tag.
    func publish(_ tag: Tag) {
        tags[writeIndex] = tag
        writeIndex = (writeIndex + 1) % slots.count
        filled.signal()
    }

    /// Producer, holding no slot: waits until the consumer has released every slot.
    func waitUntilDrained() {
        for _ in slots { free.wait() }
        for _ in slots { free.signal() }
    }

    /// Consumer: waits for the oldest filled slot. Read it, then `release`.
    func nextFilledSlot() -> (slot: Slot, tag: Tag) {
        filled.wait()
        return (slots[readIndex], tags[readIndex])
    }

    /// Consumer: gives the slot from `nextFilledSlot` back to the producer.
    func release() {
        readIndex = (readIndex + 1) % slots.count
        free.signal()
    }

    /// Wakes a producer blocked in `nextFreeSlot` without a slot to spare (for shutting it
    /// down: it must check its stop flag before it touches the slot).
    func wakeProducer() { free.signal() }
}

/// Audio blocks: `count` buffers of `capacity` frames.
typealias BlockRing<Tag> = SlotRing<AudioBuffer, Tag>

extension SlotRing where Slot == AudioBuffer {
    convenience init(format: AudioFormat, capacity: Int, count: Int = 4, empty: Tag) {
        self.init(slots: (0..<count).map { _ in AudioBuffer(format: format, capacity: capacity) }, empty: empty)
    }
}
