import Foundation
import Synchronization

/// Writes rendered blocks to an `AudioFileWriter` on a thread of its own, so that encoding
/// and writing overlap with rendering the next block. Blocks pass through a few slots
/// allocated up front; `submit` copies a block into a free slot (waiting only when all are
/// full). A write error is reported by the next `submit` or by `finish`.
final class BackgroundWriter: @unchecked Sendable {
    private let writer: AudioFileWriter
    private let slots: [AudioBuffer]
    private var slotFrames: [Int]
    private let free: DispatchSemaphore
    private let filled = DispatchSemaphore(value: 0)
    private let done = DispatchSemaphore(value: 0)
    private let failure = Mutex<MixdownError?>(nil)
    private let closing = Atomic<Bool>(false)
    private var head = 0

    init(writer: AudioFileWriter, maximumFrames: Int, slotCount: Int = 4) {
        self.writer = writer
        slots = (0..<slotCount).map { _ in AudioBuffer(format: writer.format, capacity: maximumFrames) }
        slotFrames = [Int](repeating: 0, count: slotCount)
        // libdispatch traps if a semaphore dies below its initial value: start at 0.
        free = DispatchSemaphore(value: 0)
        for _ in 0..<slotCount { free.signal() }
        let thread = Thread { [self] in drain() }
        thread.name = "mixdown.writer"
        thread.start()
    }

    private func drain() {
        var tail = 0
        while true {
            filled.wait()
            if closing.load(ordering: .acquiring) && slotFrames[tail] < 0 { break }
            if failure.withLock({ $0 == nil }) {
                do { try writer.write(slots[tail], frames: slotFrames[tail]) } catch {
                    failure.withLock { $0 = error }
                }
            }
            tail = (tail + 1) % slots.count
            free.signal()
        }
        done.signal()
    }

    /// Queues the first `frames` frames of `buffer`.
    func submit(_ buffer: AudioBuffer, frames: Int) throws(MixdownError) {
        if let error = failure.withLock({ $0 }) { throw error }
        free.wait()
        let slot = slots[head]
        for c in 0..<buffer.channelCount { slot[channel: c].update(from: buffer[channel: c], count: frames) }
        slotFrames[head] = frames
        head = (head + 1) % slots.count
        filled.signal()
    }

    /// Waits for every queued block to be written and stops the thread. Call exactly once.
    func finish() throws(MixdownError) {
        free.wait()
        slotFrames[head] = -1
        closing.store(true, ordering: .releasing)
        filled.signal()
        done.wait()
        if let error = failure.withLock({ $0 }) { throw error }
    }
}
