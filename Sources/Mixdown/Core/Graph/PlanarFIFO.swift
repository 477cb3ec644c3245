/// A first-in first-out store of planar Float32 frames with a fixed capacity, allocated
/// once. Used by nodes whose engines produce output in their own rhythm (Rubber Band,
/// libsamplerate, WSOLA, the spectral stretch) to hand the caller exactly the frames it
/// asks for.
///
/// The queued frames sit at `start ..< start + count` of the storage: a pop or a discard
/// moves `start` on and copies nothing more; a write moves the queue back to the front
/// only when the room it asks for runs past the end (a pop that moved the rest down every
/// time copied the step's output twice more).
final class PlanarFIFO {
    let channelCount: Int
    let capacity: Int
    private(set) var count = 0
    /// Where the oldest queued frame sits in `storage`.
    private var start = 0
    /// Per-channel storage; frames start ..< start + count are queued, oldest first.
    private let storage: AudioBuffer
    /// Per-channel pointers at the write position, for engines that fill planar pointers.
    let writePointers: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    init(channelCount: Int, capacity: Int) {
        self.channelCount = channelCount
        self.capacity = capacity
        storage = AudioBuffer(channelCount: channelCount, capacity: capacity)
        writePointers = .allocate(capacity: channelCount)
    }

    deinit { writePointers.deallocate() }

    /// Frames that can still be queued.
    var space: Int { capacity - count }

    /// Aims `writePointers` at the first free frame, with `space` frames of room after it;
    /// call `didWrite` with what was written.
    func prepareWrite() -> UnsafeMutablePointer<UnsafeMutablePointer<Float>?> {
        makeRoom(space)
        for c in 0..<channelCount { writePointers[c] = storage[channel: c] + start + count }
        return writePointers
    }

    /// Aims `view` (a view of `channelCount` channels, `room` frames long at most) at the
    /// first free frame, with `room` frames after it, for a writer that renders into an
    /// `AudioBuffer`; call `didWrite` with what was written.
    func aimWrite(_ view: AudioBuffer, room: Int) {
        precondition(view.capacity <= room)
        makeRoom(room)
        view.aim(into: storage, offset: start + count)
    }

    func didWrite(_ frames: Int) {
        precondition(frames >= 0 && start + count + frames <= capacity)
        count += frames
    }

    func appendSilence(_ frames: Int) {
        makeRoom(frames)
        storage.clear((start + count)..<(start + count + frames))
        count += frames
    }

    /// Moves the oldest `frames` frames to the start of `buffer`'s channels, at `offset`.
    func pop(into buffer: AudioBuffer, offset: Int = 0, frames: Int) {
        precondition(frames <= count)
        for c in 0..<channelCount { (buffer[channel: c] + offset).update(from: storage[channel: c] + start, count: frames) }
        drop(frames)
    }

    /// Drops the oldest `frames` frames.
    func discard(_ frames: Int) {
        precondition(frames <= count)
        drop(frames)
    }

    private func drop(_ frames: Int) {
        count -= frames
        start = count == 0 ? 0 : start + frames
    }

    /// Room for `frames` more after the queued ones: the queue moved to the front if not.
    private func makeRoom(_ frames: Int) {
        precondition(frames >= 0 && count + frames <= capacity)
        guard start + count + frames > capacity else { return }
        for c in 0..<channelCount {
            let s = storage[channel: c]
            s.update(from: s + start, count: count)
        }
        start = 0
    }
}
