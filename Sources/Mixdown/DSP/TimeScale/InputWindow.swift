/// A sliding window over a node's output, addressed by absolute input frame, for the
/// stretchers that read around a position (polyphase varispeed, WSOLA). Frames before 0 and
/// from `length` on read as silence. Memory is allocated once, in `init`.
final class InputWindow {
    /// Per-channel storage; `channels[c][i]` is input frame `start + i`. Each holds
    /// `capacity` frames and `maximumPull` more: the input renders straight into it, through
    /// `view`, at whatever offset the next frames land (no copy from a buffer of its own).
    let channels: [UnsafeMutablePointer<Float>]
    let capacity: Int
    /// The first frame held, and one past the last.
    private(set) var start: Int64
    private(set) var end: Int64
    private let input: AudioNode
    private let length: Int64
    /// Aimed into `channels` where the input's next frames land.
    private let view: AudioBuffer
    private let pointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    private var pulled: Int64 = 0
    private let label: String

    /// A window of `capacity` frames beginning at input frame `start` (which may be
    /// negative); `input` is prepared by the caller for blocks of `maximumPull` frames.
    /// The input's first frame is input frame `origin` (a node that seeks), and `length`
    /// counts frames from input frame 0; the window must not start between 0 and `origin`.
    init(input: AudioNode, length: Int64, capacity: Int, maximumPull: Int, start: Int64, origin: Int64 = 0, label: String) {
        precondition(origin == 0 || start >= origin, "\(label): the window starts before its input")
        self.input = ContractCheck.wrap(input)
        pulled = origin
        self.length = length
        self.capacity = capacity
        self.start = start
        end = start
        self.label = label
        view = AudioBuffer(viewWithChannelCount: input.format.channelCount, capacity: maximumPull)
        channels = (0..<input.format.channelCount).map { _ in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: capacity + maximumPull)
            p.initialize(repeating: 0, count: capacity + maximumPull)
            return p
        }
        pointers = .allocate(capacity: max(1, channels.count))
        for (c, p) in channels.enumerated() { pointers[c] = p }
    }

    deinit {
        channels.forEach { $0.deallocate() }
        pointers.deallocate()
    }

    /// Channel `c` at input frame `frame` (which must be held).
    @inline(__always) func pointer(_ c: Int, at frame: Int64) -> UnsafeMutablePointer<Float> {
        channels[c] + Int(frame - start)
    }

    /// Makes the window hold frames `low..<high`, keeping what it has, pulling the rest from
    /// the input and filling silence outside it. `appended(offset, count)` is told where new
    /// frames landed (offsets into `channels`), for callers that derive data from them.
    func slide(from low: Int64, to high: Int64, appended: (Int, Int) -> Void = { _, _ in }) throws(MixdownError) {
        let drop = Int(low - start)
        if drop > 0 {
            let keep = Int(max(0, end - low))
            for p in channels { p.update(from: p + drop, count: keep) }
            // A jump past everything held: the input is a stream, so the frames in between
            // are read and dropped (else the next frames pulled would land at `low`).
            // Nothing is kept then (end < low), so they land at the storage's start.
            view.aim(at: pointers, offset: 0)
            while end < low && pulled < min(low, length) {
                let n = Int(min(Int64(view.capacity), min(low, length) - pulled))
                pulled += Int64(try input.renderRequired(into: view, frames: n, label: label, position: pulled, total: length))
            }
            start = low
            end = max(end, low)
        }
        precondition(Int(high - start) <= capacity, "\(label): input window overflow")
        while end < high {
            let at = Int(end - start)
            var n: Int
            if end < 0 || pulled >= length {
                n = Int(end < 0 ? min(high, 0) - end : high - end)
                for p in channels { (p + at).update(repeating: 0, count: n) }
            } else {
                n = Int(min(Int64(view.capacity), high - end, length - pulled))
                view.aim(at: pointers, offset: at)
                n = try input.renderRequired(into: view, frames: n, label: label, position: pulled, total: length)
                pulled += Int64(n)
            }
            appended(at, n)
            end += Int64(n)
        }
    }
}

extension AudioNode {
    /// Renders up to `frames` frames of a stream known to hold `total`, of which `position`
    /// were read before; an end of stream before `total` is a `readFailed` naming `label`.
    func renderRequired(into buffer: AudioBuffer, frames: Int, label: String, position: Int64,
                        total: Int64) throws(MixdownError) -> Int {
        let status = try render(into: buffer, frames: frames)
        guard status.frames > 0 else {
            throw .readFailed(path: label, reason: "the input ended at frame \(position) of \(total)")
        }
        return status.frames
    }
}

extension Optional where Wrapped == PlanarFIFO {
    /// A hop-by-hop stretcher's render (WSOLA, the spectral stretch): `step` adds the next
    /// hop to this FIFO until `frames` are held (or the `total` output is); they are popped
    /// into `buffer` and counted in `produced`. Nil (not prepared) or done: no frames, ended.
    func renderHops(into buffer: AudioBuffer, frames: Int, produced: inout Int64, total: Int64,
                    step: () throws(MixdownError) -> Void) throws(MixdownError) -> RenderStatus {
        let want = Int(min(Int64(frames), total - produced))
        guard want > 0, let fifo = self else { return RenderStatus(frames: 0, ended: true) }
        while fifo.count < want { try step() }
        fifo.pop(into: buffer, frames: want)
        produced += Int64(want)
        return RenderStatus(frames: want, ended: produced == total)
    }
}
