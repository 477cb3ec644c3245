/// Reads a range of an audio stream as planar Float32 at the stream's own rate and channel
/// count: libsndfile's formats (WAV, RF64, W64, AIFF, CAF, FLAC, Ogg, MP3) and, with the
/// `FFmpeg` trait, MP4, MOV, M4A, MKV and WebM. `AudioFileProbe` picks the reader.
///
/// The range is in frames of the stream, start inclusive, end exclusive; frame 0 is the
/// first valid frame (after the encoder's priming, where the container declares it).
/// Seeking is sample-accurate. A stream that ends before its declared length throws
/// `truncatedAudio` rather than ending early; undecodable data throws `corruptAudio`.
public final class FileSource: AudioNode {
    public let info: AudioFileInfo
    public let format: AudioFormat
    /// The frames of the stream this node plays.
    public let range: Range<Int64>
    public var length: Int64? { Int64(range.count) }

    private let decoder: AudioDecoder
    private var remaining: Int64
    private var capacity = 0
    /// Per-channel destination pointers, re-aimed at an offset inside the caller's buffer.
    private var destinations: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?

    /// Hz: the rates a job reads (the output's `--rate` takes the same).
    public static let renderableRates = 8000...768_000

    /// Opens `path` and plays `range` (default: the whole stream) of its audio stream
    /// `stream` (the container's index; nil: the first audio stream). A range that does not
    /// lie inside the stream throws `rangeOutsideSource`.
    public convenience init(path: String, range: Range<Int64>? = nil, stream: Int? = nil) throws(MixdownError) {
        try self.init(decoder: AudioFileProbe.open(path: path, stream: stream), range: range)
    }

    /// Plays `range` of an already open stream (one open per export, so pipes work too).
    init(decoder: AudioDecoder, range: Range<Int64>?) throws(MixdownError) {
        self.decoder = decoder
        info = decoder.info
        let path = info.path
        format = info.format
        // A header can say 1 Hz (or 67 MHz): no meter, resampler or encoder takes it, and
        // each said so without the file's name. Refused here, where every job reads.
        guard Self.renderableRates.contains(info.sampleRate) else {
            throw .unsupportedInput(path: path, reason: "its sample rate, \(info.sampleRate) Hz, is outside the \(Self.renderableRates.lowerBound) to \(Self.renderableRates.upperBound) Hz Mixdown renders (`mixdown info` still describes it)")
        }
        let r = range ?? 0..<info.frames
        guard r.lowerBound >= 0, r.upperBound <= info.frames, !r.isEmpty else {
            let rate = info.sampleRate
            throw .rangeOutsideSource(
                path: path,
                requested: "frames \(r.lowerBound)..<\(r.upperBound) (\(MediaTime(frames: r.lowerBound, sampleRate: rate).clockDescription) to \(MediaTime(frames: r.upperBound, sampleRate: rate).clockDescription))",
                available: "\(info.frames) frames (\(info.duration.clockDescription))")
        }
        self.range = r
        remaining = Int64(r.count)
        try decoder.seek(toFrame: r.lowerBound)
    }

    deinit {
        destinations?.deallocate()
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(destinations == nil, "prepare is called once")
        capacity = maximumFrames
        decoder.prepare(maximumFrames: maximumFrames)
        destinations = .allocate(capacity: format.channelCount)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        guard let dst = destinations else { preconditionFailure("render before prepare") }
        assert(frames <= capacity && buffer.channelCount == format.channelCount)
        let want = Int(min(Int64(frames), remaining))
        var done = 0
        while done < want {
            for c in 0..<format.channelCount { dst[c] = buffer[channel: c] + done }
            let got = try decoder.read(into: dst, frames: want - done)
            if got == 0 {
                let read = range.upperBound - remaining + Int64(done)
                throw .truncatedAudio(path: info.path, expectedFrames: info.frames, readFrames: read)
            }
            done += got
        }
        remaining -= Int64(done)
        return RenderStatus(frames: done, ended: remaining == 0)
    }
}
