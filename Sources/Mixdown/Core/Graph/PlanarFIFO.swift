/// A first-in first-out store of planar Float32 frames with a fixed capacity, allocated
/// once. Used by nodes whose engines produce output in their own rhythm (Rubber Band,
/// libsamplerate, WSOLA) to hand the caller exactly the frames it asks for.
final class PlanarFIFO {
    let channelCount: Int
    let capacity: Int
    private(set) var count = 0
    /// Per-channel storage; frames 0..<count are queued, oldest first.
    let storage: AudioBuffer
    /// Per-channel pointers at the write position, for engines that fill planar pointers.
    let writePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    init(channelCount: Int, capacity: Int) {
        self.channelCount = channelCount
        self.capacity = capacity
        storage = AudioBuffer(channelCount: channelCount, capacity: capacity)
        writePointers = .allocate(capacity: channelCount)
    }

    deinit { writePointers.deallocate() }

    var space: Int { capacity - count }

    /// Aims `writePointers` at the first free frame; call `didWrite` with what was written.
    func prepareWrite() -> UnsafeMutablePointer<UnsafeMutablePointer<Float>?> {
        for c in 0..<channelCount { writePointers[c] = storage[channel: c] + count }
        return writePointers
    }

    func didWrite(_ frames: Int) {
        precondition(count + frames <= capacity)
        count += frames
    }

    func appendSilence(_ frames: Int) {
        precondition(count + frames <= capacity)
        storage.clear(count..<(count + frames))
        count += frames
    }

    /// Moves the oldest `frames` frames to the start of `buffer`'s channels, at `offset`.
    func pop(into buffer: AudioBuffer, offset: Int = 0, frames: Int) {
        precondition(frames <= count)
        for c in 0..<channelCount {
            let s = storage[channel: c]
            (buffer[channel: c] + offset).update(from: s, count: frames)
            s.update(from: s + frames, count: count - frames)
        }
        count -= frames
    }

    /// Drops the oldest `frames` frames.
    func discard(_ frames: Int) {
        precondition(frames <= count)
        for c in 0..<channelCount {
            let s = storage[channel: c]
            s.update(from: s + frames, count: count - frames)
        }
        count -= frames
    }
}
