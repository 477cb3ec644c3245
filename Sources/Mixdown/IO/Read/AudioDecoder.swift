/// An open audio stream being decoded, as `FileSource` pulls it: sample-accurate seek, then
/// planar Float32 reads at the stream's own rate and channel count.
protocol AudioDecoder: AnyObject {
    var info: AudioFileInfo { get }
    /// Allocates the scratch space for reads of at most `maximumFrames` frames. May be
    /// called again (a decoder shared by consecutive segments); it keeps what suffices.
    func prepare(maximumFrames: Int)
    /// Positions the next read at valid frame `frame` (0 = the first frame after priming).
    func seek(toFrame frame: Int64) throws(MixdownError)
    /// Decodes up to `frames` frames into `destinations[c]` (one pointer per channel).
    /// Returns the frames written; fewer than asked only at the end of the stream, 0 after.
    func read(into destinations: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, frames: Int) throws(MixdownError) -> Int
}
