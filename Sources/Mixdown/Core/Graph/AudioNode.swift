/// What one `render` call did.
public struct RenderStatus: Sendable, Equatable {
    /// Frames written at the start of the caller's buffer.
    public var frames: Int
    /// True when the stream has no more frames after these. A block shorter than asked
    /// comes only with `ended == true`; after that every call gives 0 frames and `ended`.
    public var ended: Bool

    public init(frames: Int, ended: Bool) {
        self.frames = frames
        self.ended = ended
    }
}

/// A node of the pulled render graph.
///
/// Life cycle: create, then `prepare(maximumFrames:)` once (it allocates everything it
/// will need, and prepares its inputs), then `render` as often as needed. `render` never
/// allocates, blocks on locks, or writes outside `frames` frames of the caller's buffer.
/// The end of the stream is explicit (`RenderStatus.ended`); there are no in-band sentinels.
public protocol AudioNode: AnyObject {
    /// The format of the frames `render` writes.
    var format: AudioFormat { get }
    /// How many frames the node produces in all, when known before rendering.
    var length: Int64? { get }
    /// Allocates buffers for blocks of at most `maximumFrames` frames. Called once.
    func prepare(maximumFrames: Int) throws(MixdownError)
    /// Does the work that must come before the first frame and may take long (see
    /// `Preroll`), reporting it to `preroll`; forwards the call to the node's inputs.
    /// Called at most once, after `prepare` and before the first `render`. A node whose
    /// `render` comes first does the work then, unreported. Default: nothing (a node with
    /// inputs forwards the call).
    func preroll(_ preroll: Preroll) throws(MixdownError)
    /// Writes up to `frames` frames (at most the prepared maximum) at the start of each
    /// channel of `buffer`, which has `format.channelCount` channels. Fewer only at the end.
    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus
}

extension AudioNode {
    public func preroll(_ preroll: Preroll) throws(MixdownError) {}
}
