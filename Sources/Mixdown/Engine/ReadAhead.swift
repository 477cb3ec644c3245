import Foundation
import Synchronization

/// Renders its input ahead of demand on a thread of its own (typically a `FileSource`, so
/// that decoding overlaps with the work downstream). Blocks of the prepared maximum size
/// pass through four slots allocated in `prepare`; `render` serves any size from them.
/// The frames are exactly the input's, whatever the block sizes. An input error is
/// thrown by the `render` that reaches it.
/// Slots are handed between the two threads only through the semaphores: hence unchecked.
public final class ReadAhead: AudioNode, @unchecked Sendable {
    public var format: AudioFormat { input.format }
    public var length: Int64? { input.length }

    private let input: AudioNode
    private var slots: [AudioBuffer] = []
    private var slotFrames: [Int] = []
    private var slotEnded: [Bool] = []
    private var slotError: [MixdownError?] = []
    private let free = DispatchSemaphore(value: 0)
    private let filled = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let exited = DispatchSemaphore(value: 0)
    private var started = false
    private var blockSize = 0
    // Consumer side: the slot being read and how far.
    private var current = -1
    private var consumed = 0
    private var finished = false
    private var consumedSlots = 0

    public init(input: AudioNode) {
        self.input = ContractCheck.wrap(input)
    }

    deinit {
        guard started else { return }
        stopping.store(true, ordering: .releasing)
        free.signal()
        exited.wait()
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(!started, "prepare is called once")
        blockSize = maximumFrames
        try input.prepare(maximumFrames: maximumFrames)
        let count = 4
        slots = (0..<count).map { _ in AudioBuffer(format: input.format, capacity: maximumFrames) }
        slotFrames = [Int](repeating: 0, count: count)
        slotEnded = [Bool](repeating: false, count: count)
        slotError = [MixdownError?](repeating: nil, count: count)
        // libdispatch traps if a semaphore dies below its initial value: start at 0.
        for _ in 0..<count { free.signal() }
        started = true
        let thread = Thread { [unowned self] in produce() }
        thread.name = "mixdown.read-ahead"
        thread.start()
    }

    private func produce() {
        var slot = 0
        while true {
            free.wait()
            if stopping.load(ordering: .acquiring) { break }
            do {
                let status = try input.render(into: slots[slot], frames: blockSize)
                slotFrames[slot] = status.frames
                slotEnded[slot] = status.ended
            } catch {
                slotError[slot] = error
                slotEnded[slot] = true
                slotFrames[slot] = 0
            }
            let last = slotEnded[slot]
            filled.signal()
            if last { break }
            slot = (slot + 1) % slots.count
        }
        exited.signal()
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        var done = 0
        while done < frames && !finished {
            if current < 0 {
                filled.wait()
                current = consumedSlots % slots.count
                consumed = 0
            }
            if let error = slotError[current] { finished = true; throw error }
            let n = min(frames - done, slotFrames[current] - consumed)
            for c in 0..<buffer.channelCount {
                (buffer[channel: c] + done).update(from: slots[current][channel: c] + consumed, count: n)
            }
            done += n
            consumed += n
            if consumed == slotFrames[current] {
                if slotEnded[current] { finished = true }
                consumedSlots += 1
                current = -1
                free.signal()
            }
        }
        return RenderStatus(frames: done, ended: finished)
    }
}
