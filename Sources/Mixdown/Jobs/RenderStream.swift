/// A render that the caller pulls into its own buffers instead of having it written to a
/// file: a composition (`CompositionRender`, a document's render) or a whole-file stretch
/// (`FileStretch`). The frames are the ones the file render writes, bit for bit, whatever
/// the sizes of the pulls and wherever the stream was sought to.
///
/// The stream has exactly `frames` frames (output frames at `format`, not samples). `pull`
/// writes up to the frames asked at the start of each of the caller's channels; fewer only
/// at the end, which is explicit (`RenderStatus.ended`); after it every pull gives 0 frames.
/// `seek(toFrame:)` moves to any frame in 0...frames, sample-accurately: a composition
/// starts its graph at that frame (as a render of a time range does); a stretch with
/// Mixdown's resampler starts its resampler there; libsamplerate, WSOLA and Rubber Band
/// render from the start and drop the frames before it (cost grows with the frame).
///
/// Not thread-safe: one thread at a time. The caller owns its buffers; the stream keeps
/// no pointer to them after a call returns.
public final class RenderStream {
    /// The format of the frames `pull` writes.
    public let format: AudioFormat
    /// The stream's length in frames.
    public let frames: Int64
    /// The frame the next `pull` begins with.
    public private(set) var position: Int64 = 0

    /// The largest block asked of the graph; a longer pull is several blocks.
    public static let maximumBlock = 4096

    /// Builds the graph that renders frames `start..<frames`, and how many frames of its
    /// output come before `start` (to be dropped).
    private let make: (Int64) throws(MixdownError) -> (node: AudioNode, skip: Int64)
    private var node: AudioNode?
    private let view: AudioBuffer
    private var scratch: AudioBuffer?

    private init(format: AudioFormat, frames: Int64,
                 make: @escaping (Int64) throws(MixdownError) -> (node: AudioNode, skip: Int64)) throws(MixdownError) {
        self.format = format
        self.frames = frames
        self.make = make
        view = AudioBuffer(viewWithChannelCount: format.channelCount, capacity: Self.maximumBlock)
        try seek(toFrame: 0)
    }

    /// A pull render of `job`'s composition (its output path and file settings are not
    /// used; its time range, format, algorithm, resampler, quality and threads are, and its
    /// tracks' own loudness, measured here once over the whole range).
    public convenience init(render job: CompositionRender) throws(MixdownError) {
        let timeline = try job.timeline()
        let base = timeline.frames
        // Tracks with their own loudness are measured once, over the whole render.
        let envelopes = try job.levelling(timeline).0
        try self.init(format: timeline.format, frames: Int64(base.count)) { (start) throws(MixdownError) in
            let part = try job.timeline(frames: (base.lowerBound + start)..<base.upperBound)
            return (try job.makeGraph(CompositionRender.Timeline(format: part.format, frames: part.frames,
                                                                 compositionFrames: part.compositionFrames, envelopes: envelopes)), 0)
        }
    }

    /// A pull render of `job`'s stretch (its output and file settings are not used).
    public convenience init(stretch job: FileStretch) throws(MixdownError) {
        let first = try job.makeGraph()
        var pending: FileStretch.Graph? = first
        try self.init(format: first.node.format, frames: first.outputFrames) { (start) throws(MixdownError) in
            // The graph made to learn the format serves the first seek.
            if start == 0, let g = pending { pending = nil; return (g.node, g.skip) }
            pending = nil
            let g = try job.makeGraph(startingAt: start)
            return (g.node, g.skip)
        }
    }

    /// Moves to `frame` (0...frames): the next pull begins there. A new graph is made,
    /// prepared and prerolled (Rubber Band's study pass runs again).
    public func seek(toFrame frame: Int64) throws(MixdownError) {
        guard frame >= 0 && frame <= frames else {
            throw .invalidParameter(name: "seek frame", value: "\(frame)", reason: "must lie in 0...\(frames), the stream's frames")
        }
        node = nil
        position = frame
        guard frame < frames else { return }
        let (made, skip) = try make(frame)
        let checked = ContractCheck.wrap(made)
        try checked.prepare(maximumFrames: Self.maximumBlock)
        try checked.preroll(Preroll())
        var dropped: Int64 = 0
        if skip > 0 {
            let scratch = self.scratch ?? AudioBuffer(format: format, capacity: Self.maximumBlock)
            self.scratch = scratch
            while dropped < skip {
                let want = Int(min(Int64(Self.maximumBlock), skip - dropped))
                let status = try checked.render(into: scratch, frames: want)
                dropped += Int64(status.frames)
                if status.frames < want { break }
            }
        }
        guard dropped == skip else { throw shortfall(at: frame - skip + dropped) }
        node = checked
    }

    /// Writes up to `count` frames at the start of each of `channels` (`format.channelCount`
    /// pointers, each to at least `count` floats). Fewer only at the end of the stream.
    public func pull(into channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames count: Int) throws(MixdownError) -> RenderStatus {
        guard count > 0 else { throw .invalidParameter(name: "frames", value: "\(count)", reason: "must be more than 0") }
        var done = 0
        while done < count, position < frames, let node {
            let want = Int(min(Int64(min(count - done, Self.maximumBlock)), frames - position))
            view.aim(at: channels, offset: done)
            let status = try node.render(into: view, frames: want)
            done += status.frames
            position += Int64(status.frames)
            if status.frames < want {
                // The graph ended before the length it promised: an error, never a short file.
                self.node = nil
                throw shortfall(at: position)
            }
        }
        if position == frames { node = nil }
        return RenderStatus(frames: done, ended: position == frames)
    }

    private func shortfall(at frame: Int64) -> MixdownError {
        .readFailed(path: "render", reason: "the render ended at frame \(frame), \(frames) were expected")
    }
}
