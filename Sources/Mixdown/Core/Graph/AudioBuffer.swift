#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Planar Float32 audio: `channelCount` separate arrays of `capacity` frames each.
///
/// The creator owns the memory; it is allocated once, in `init`, and freed in `deinit`.
/// Nodes render into a caller's buffer and never keep a reference to it.
public final class AudioBuffer: @unchecked Sendable {
    public let channelCount: Int
    /// Frames each channel holds.
    public let capacity: Int
    /// One pointer per channel, laid out as C's `float *const *` for the kernels.
    public let channelPointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>>
    /// Nil for a view, which points into another buffer's samples.
    private let storage: UnsafeMutablePointer<Float>?

    public init(channelCount: Int, capacity: Int) {
        precondition(channelCount > 0 && capacity >= 0)
        self.channelCount = channelCount
        self.capacity = capacity
        // One block for all channels, zeroed so a fresh buffer is silence: by calloc, which
        // takes a large block's pages zeroed from the system as they are first touched
        // (buffers sized for a look-ahead fill bit by bit; writing their zeros first
        // faulted in every page at once: a stretch of 50 ms took 3,800 page faults, now 2,090).
        let count = max(1, channelCount * capacity)
        guard let block = calloc(count, MemoryLayout<Float>.stride) else { fatalError("AudioBuffer: out of memory") }
        let samples = block.bindMemory(to: Float.self, capacity: count)
        storage = samples
        channelPointers = .allocate(capacity: channelCount)
        for c in 0..<channelCount { channelPointers[c] = samples + c * capacity }
    }

    public convenience init(format: AudioFormat, capacity: Int) {
        self.init(channelCount: format.channelCount, capacity: capacity)
    }

    /// A view: `channelCount` channel pointers and no samples of its own, aimed into
    /// another buffer with `aim(into:offset:)` (so a node can render at an offset of a
    /// caller's buffer). Allocates here only; re-aiming allocates nothing.
    public init(viewWithChannelCount channelCount: Int, capacity: Int) {
        self.channelCount = channelCount
        self.capacity = capacity
        storage = nil
        channelPointers = .allocate(capacity: channelCount)
        let dummy = UnsafeMutablePointer<Float>(bitPattern: MemoryLayout<Float>.alignment)!
        for c in 0..<channelCount { channelPointers[c] = dummy }
    }

    /// Points this view's channels at frame `offset` of `base`'s. The view's `capacity`
    /// must not run past the end of `base`: callers render at most `base.capacity - offset`.
    public func aim(into base: AudioBuffer, offset: Int) {
        precondition(storage == nil && base.channelCount == channelCount && offset <= base.capacity)
        for c in 0..<channelCount { channelPointers[c] = base.channelPointers[c] + offset }
    }

    /// Points this view's channels at frame `offset` of a caller's planar channels
    /// (`channelCount` pointers, each to at least `offset + capacity` frames).
    public func aim(at channels: UnsafePointer<UnsafeMutablePointer<Float>>, offset: Int) {
        precondition(storage == nil && offset >= 0)
        for c in 0..<channelCount { channelPointers[c] = channels[c] + offset }
    }

    deinit {
        free(storage)
        channelPointers.deallocate()
    }

    /// The samples of channel `c`.
    @inline(__always) public subscript(channel c: Int) -> UnsafeMutablePointer<Float> {
        channelPointers[c]
    }

    /// Sets frames `range` of every channel to zero.
    public func clear(_ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= capacity)
        for c in 0..<channelCount {
            (channelPointers[c] + range.lowerBound).update(repeating: 0, count: range.count)
        }
    }

    /// A copy of channel `c`'s first `frames` frames, for tests and analysis (allocates).
    public func samples(channel c: Int, frames: Int) -> [Float] {
        Array(UnsafeBufferPointer(start: channelPointers[c], count: frames))
    }
}
