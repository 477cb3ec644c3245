/// Work a graph does once before its first frame, that may take long: Rubber Band's study
/// pass over its whole input, the frames a track drops to start a render inside a segment.
/// The puller calls `AudioNode.preroll(_:)` after `prepare` and before the first `render`;
/// nodes forward it to their inputs, and a node with work of its own says how much
/// (`begin(work:)`, in frames) and reports it as it goes (`advance(by:)`), which is also
/// where a cancellation stops it.
///
/// Progress counts frames of work: preroll frames plus the frames to render. While the
/// preroll runs the total grows as nodes begin their work, so the fraction shown never
/// goes back (`fraction(rendered:)` keeps the largest it gave).
public final class Preroll {
    private let progress: ((Double) -> Void)?
    private let cancellation: CancellationToken?
    private var total: Int64
    private var done: Int64 = 0
    private var shown = 0.0

    /// A preroll for a render of `renderFrames` frames; `progress` receives the fraction
    /// of the whole job (preroll and render) done.
    public init(renderFrames: Int64 = 0, progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) {
        total = max(0, renderFrames)
        self.progress = progress
        self.cancellation = cancellation
    }

    /// A node begins `frames` frames of preroll work.
    public func begin(work frames: Int64) {
        total += max(0, frames)
    }

    /// `frames` more frames of preroll work are done. Throws `.cancelled` once the
    /// cancellation token is set.
    public func advance(by frames: Int64) throws(MixdownError) {
        if cancellation?.isCancelled == true { throw .cancelled }
        done += frames
        progress?(fraction(rendered: 0))
    }

    /// The fraction of the whole job done when `rendered` frames of the render are: never
    /// less than a fraction given before.
    public func fraction(rendered: Int64) -> Double {
        guard total > 0 else { return 1 }
        shown = max(shown, min(1, Double(done + rendered) / Double(total)))
        return shown
    }
}
