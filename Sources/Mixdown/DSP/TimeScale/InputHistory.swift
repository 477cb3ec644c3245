import Synchronization

/// The recent input of a time-scale node as it reads it: its samples, and each block's
/// energy (every channel's sum of squares over `blockFrames` input frames, blocks at whole
/// multiples of it from frame 0, so the record does not depend on how the input was
/// pulled). Written by `InputTap` as the stretch pulls its input, read by `QuietEdges`
/// for the output it gives; the frames behind it are released, so memory holds the
/// stretch's look-ahead only. Locked: a stretch may pull its input on another thread.
final class InputHistory: Sendable {
    static let blockFrames: Int64 = 32
    private struct State {
        var samples: [[Float]]
        /// The absolute input frame of `samples[c][0]`, and one past the last recorded.
        var first: Int64 = 0
        var end: Int64 = 0
        var complete = false
        /// Energies of blocks `firstBlock ..< firstBlock + energies.count`: every block whose
        /// frames are all recorded (and, once complete, the last one, short).
        var energies: [Float] = []
        var firstBlock: Int64 = 0
    }
    private let state: Mutex<State>
    let channelCount: Int
    /// The input's length when known: the record is complete once it holds that many frames
    /// (a stretch reads no further, so the input need not say it has ended).
    let length: Int64?

    init(channelCount: Int, length: Int64?) {
        self.channelCount = channelCount
        self.length = length
        state = Mutex(State(samples: Array(repeating: [], count: channelCount)))
    }

    /// Records the next `frames` frames of `buffer`'s channels.
    func record(_ buffer: AudioBuffer, frames: Int) {
        guard frames > 0 else { return }
        state.withLock { s in
            for c in 0..<channelCount {
                s.samples[c].append(contentsOf: UnsafeBufferPointer(start: buffer[channel: c], count: frames))
            }
            s.end += Int64(frames)
            if let length, s.end >= length { s.complete = true }
            Self.measure(&s, through: s.complete ? (s.end + Self.blockFrames - 1) / Self.blockFrames : s.end / Self.blockFrames)
        }
    }

    /// The input has ended: its last, short block is measured (as if padded with silence).
    func markComplete() {
        state.withLock { s in
            s.complete = true
            Self.measure(&s, through: (s.end + Self.blockFrames - 1) / Self.blockFrames)
        }
    }

    /// Measures blocks up to (not including) `block`.
    private static func measure(_ s: inout State, through block: Int64) {
        var b = s.firstBlock + Int64(s.energies.count)
        while b < block {
            let from = b * blockFrames, to = min(s.end, from + blockFrames)
            var sum: Float = 0
            for c in s.samples.indices {
                s.samples[c].withUnsafeBufferPointer { p in
                    let x = p.baseAddress! + Int(from - s.first)
                    for t in 0..<Int(to - from) { sum += x[t] * x[t] }
                }
            }
            s.energies.append(sum)
            b += 1
        }
    }

    /// Input frames recorded so far, and whether that is all of them.
    var recorded: (frames: Int64, complete: Bool) { state.withLock { ($0.end, $0.complete) } }

    /// Energy of blocks `blocks` (their largest, and whether every one is under `quiet`):
    /// blocks before frame 0 and past a complete input's end are silence. Each block must be
    /// measured (recorded in full, or the input complete) and not released.
    func energies(_ blocks: Range<Int64>, quietUnder quiet: Float) -> (largest: Float, allQuiet: Bool) {
        state.withLock { s in
            var largest: Float = 0, allQuiet = true
            for b in blocks where b >= 0 {
                let i = b - s.firstBlock
                if i >= Int64(s.energies.count) {
                    precondition(s.complete, "block \(b) of the input is not recorded yet")
                    break
                }
                precondition(i >= 0, "block \(b) of the input was released")
                let e = s.energies[Int(i)]
                largest = max(largest, e)
                if e >= quiet { allQuiet = false }
            }
            return (largest, allQuiet)
        }
    }

    /// The blocks measured so far (one past the last).
    var measuredBlocks: Int64 { state.withLock { $0.firstBlock + Int64($0.energies.count) } }

    /// Copies input frames `from ..< from + count` of channel `c` to `destination`: silence
    /// before frame 0 and past a complete input's end. They must be recorded and not released.
    func copy(channel c: Int, from: Int64, count: Int, to destination: UnsafeMutablePointer<Float>) {
        guard count > 0 else { return }
        state.withLock { s in
            for k in 0..<count {
                let t = from + Int64(k)
                if t < 0 || (s.complete && t >= s.end) { destination[k] = 0; continue }
                precondition(t >= s.first && t < s.end, "input frame \(t) is not held")
                destination[k] = s.samples[c][Int(t - s.first)]
            }
        }
    }

    /// The first frame in `range` where some channel's |sample| exceeds `level`, or nil.
    func firstAbove(_ level: Float, in range: Range<Int64>) -> Int64? {
        state.withLock { s in
            for t in max(range.lowerBound, s.first)..<min(range.upperBound, s.end) {
                for c in s.samples.indices where abs(s.samples[c][Int(t - s.first)]) > level { return t }
            }
            return nil
        }
    }

    /// Forgets the frames and blocks before input frame `frame` (they are not read again).
    /// Memory is moved only when at least half of it is released.
    func release(before frame: Int64) {
        state.withLock { s in
            let drop = Int(min(s.end, frame) - s.first)
            if drop > 0 && drop >= s.samples[0].count / 2 {
                for c in s.samples.indices { s.samples[c].removeFirst(drop) }
                s.first += Int64(drop)
            }
            let blocks = Int(min(Int64(s.energies.count), frame / Self.blockFrames - 1 - s.firstBlock))
            if blocks > 0 && blocks >= s.energies.count / 2 {
                s.energies.removeFirst(blocks)
                s.firstBlock += Int64(blocks)
            }
        }
    }
}
