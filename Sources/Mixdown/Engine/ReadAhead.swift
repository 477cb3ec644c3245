import Foundation
import Synchronization

/// Renders its input ahead of demand on a thread of its own (typically a `FileSource`, so
/// that decoding overlaps with the work downstream). Blocks of the prepared maximum size
/// pass through a `BlockRing` of four slots allocated in `prepare`; `render` serves any
/// size from them. The thread starts after the input's preroll (or at the first render). The frames are exactly the input's, whatever the block sizes. An input
/// error is thrown by the `render` that reaches it.
public final class ReadAhead: AudioNode, @unchecked Sendable {
    public var format: AudioFormat { input.format }
    public var length: Int64? { input.length }

    /// What the producer says of a block.
    private struct Block {
        var frames = 0
        var ended = false
        var error: MixdownError?
    }

    private let input: AudioNode
    private var ring: BlockRing<Block>?
    private var blockSize = 0
    /// The producer thread's side, which the thread holds strongly: a ReadAhead released
    /// before its thread has begun (a render opened and closed at once) stops it in
    /// `deinit` without the thread ever touching the ReadAhead.
    private var producer: Producer?
    // Consumer side: the block being read and how far.
    private var current: (buffer: AudioBuffer, tag: Block)?
    private var consumed = 0
    private var finished = false

    public init(input: AudioNode) {
        self.input = ContractCheck.wrap(input)
    }

    deinit {
        guard let producer else { return }
        producer.stopping.store(true, ordering: .releasing)
        producer.ring.wakeProducer()
        producer.exited.wait()
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(ring == nil, "prepare is called once")
        blockSize = maximumFrames
        try input.prepare(maximumFrames: maximumFrames)
        ring = BlockRing(format: input.format, capacity: maximumFrames, empty: Block())
    }

    /// Prerolls the input on the caller's thread, then starts reading ahead.
    public func preroll(_ preroll: Preroll) throws(MixdownError) {
        try input.preroll(preroll)
        start()
    }

    /// Starts the producer thread (at the preroll, or at the first render without one).
    private func start() {
        guard producer == nil, let ring else { return }
        let producer = Producer(input: input, ring: ring, blockSize: blockSize)
        self.producer = producer
        let thread = Thread { [producer] in producer.run() }
        thread.name = "mixdown.read-ahead"
        thread.start()
    }

    /// Fills the ring from the input on the read-ahead thread until the input ends, fails,
    /// or `stopping` is set.
    private final class Producer: @unchecked Sendable {
        let input: AudioNode
        let ring: BlockRing<Block>
        let blockSize: Int
        let stopping = Atomic<Bool>(false)
        let exited = DispatchSemaphore(value: 0)

        init(input: AudioNode, ring: BlockRing<Block>, blockSize: Int) {
            self.input = input
            self.ring = ring
            self.blockSize = blockSize
        }

        func run() {
            while true {
                let buffer = ring.nextFreeSlot()
                if stopping.load(ordering: .acquiring) { break }
                var block = Block()
                do {
                    let status = try input.render(into: buffer, frames: blockSize)
                    block.frames = status.frames
                    block.ended = status.ended
                } catch {
                    block.error = error
                    block.ended = true
                }
                ring.publish(block)
                if block.ended { break }
            }
            exited.signal()
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        guard let ring else { preconditionFailure("render before prepare") }
        start()
        var done = 0
        while done < frames && !finished {
            if current == nil {
                let (slot, tag) = ring.nextFilledSlot()
                current = (slot, tag)
                consumed = 0
            }
            let (slot, block) = current!
            if let error = block.error { finished = true; throw error }
            let n = min(frames - done, block.frames - consumed)
            for c in 0..<buffer.channelCount {
                (buffer[channel: c] + done).update(from: slot[channel: c] + consumed, count: n)
            }
            done += n
            consumed += n
            if consumed == block.frames {
                if block.ended { finished = true }
                current = nil
                ring.release()
            }
        }
        return RenderStatus(frames: done, ended: finished)
    }
}
