import MixdownKernels
import Synchronization

/// An input's peaks as a time-scale node reads it: the largest |sample| of any channel in
/// each block of `blockFrames` input frames (blocks at whole multiples of it from frame 0,
/// so the record does not depend on how the input was pulled). Written by `InputTap` as
/// the stretch pulls its input, read by `PeakGuard` for the output it lets through; the
/// blocks behind the guard are dropped, so memory holds the stretch's look-ahead only.
/// Locked: a stretch may pull its input on a helper thread.
final class PeakEnvelope: Sendable {
    static let blockFrames: Int64 = 64
    private struct State {
        var complete = false
        var peaks: [Float] = []
        /// The absolute block index of `peaks[head]`.
        var firstBlock: Int64 = 0
        var head = 0
        /// Input frames recorded (the last block may be partial).
        var frames: Int64 = 0
    }
    private let state = Mutex(State())

    /// The block holding input frame `frame` (rounded down: frames before 0 are in block -1).
    static func block(of frame: Int64) -> Int64 {
        frame >= 0 ? frame / blockFrames : -((-frame + blockFrames - 1) / blockFrames)
    }

    /// Records the next `frames` frames of `buffer`'s channels.
    func record(_ buffer: AudioBuffer, frames: Int) {
        guard frames > 0 else { return }
        state.withLock { s in
            var i = 0
            while i < frames {
                let position = s.frames + Int64(i)
                let inBlock = Int(position % Self.blockFrames)
                let n = min(frames - i, Int(Self.blockFrames) - inBlock)
                var peak: Float = 0
                let kernels = mx_kernels_active().pointee
                for c in 0..<buffer.channelCount { peak = max(peak, kernels.peak(buffer[channel: c] + i, n)) }
                if inBlock == 0 {
                    s.peaks.append(peak)
                } else {
                    s.peaks[s.peaks.count - 1] = max(s.peaks[s.peaks.count - 1], peak)
                }
                i += n
            }
            s.frames += Int64(frames)
        }
    }

    /// Input frames recorded so far, and whether the input has ended (all are recorded).
    var recorded: (frames: Int64, complete: Bool) { state.withLock { ($0.frames, $0.complete) } }

    /// The input has ended: every frame is recorded.
    func markComplete() { state.withLock { $0.complete = true } }

    /// The largest peak of the blocks that hold input frames `range` (clamped to what was
    /// recorded); 0 where nothing was.
    func peak(_ range: Range<Int64>) -> Float {
        state.withLock { s in
            let first = max(Self.block(of: range.lowerBound), s.firstBlock)
            let last = min(Self.block(of: range.upperBound - 1), s.firstBlock + Int64(s.peaks.count - s.head) - 1)
            guard first <= last else { return 0 }
            var p: Float = 0
            for b in first...last { p = max(p, s.peaks[s.head + Int(b - s.firstBlock)]) }
            return p
        }
    }

    /// Forgets the blocks wholly before input frame `frame`.
    func drop(before frame: Int64) {
        state.withLock { s in
            let keepFrom = Self.block(of: max(0, frame))
            let n = Int(min(max(0, keepFrom - s.firstBlock), Int64(s.peaks.count - s.head)))
            s.head += n
            s.firstBlock += Int64(n)
            // Compact now and then: amortised O(1), no allocation once the array has grown.
            if s.head > 4096 && s.head * 2 > s.peaks.count {
                s.peaks.removeFirst(s.head)
                s.head = 0
            }
        }
    }
}
