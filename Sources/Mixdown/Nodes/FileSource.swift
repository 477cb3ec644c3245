import CSndFile
import MixdownKernels

/// Reads a range of an audio file through libsndfile (WAV, RF64, W64, AIFF, CAF, FLAC,
/// Ogg Vorbis, Opus, MP3: whatever the installed libsndfile reads), as planar Float32 at
/// the file's own rate and channel count. Integer samples are scaled by 1/32768 (16-bit)
/// or 1/2^31 (24/32-bit, left-justified), libsndfile's normalisation.
///
/// The range is in frames of the file, start inclusive, end exclusive; seeking is
/// sample-accurate (libsndfile's `sf_seek`). A file that ends before its header said
/// throws `truncatedAudio` rather than ending early.
public final class FileSource: AudioNode {
    public let info: AudioFileInfo
    public let format: AudioFormat
    /// The frames of the file this node plays.
    public let range: Range<Int64>
    public var length: Int64? { Int64(range.count) }

    private let file: SndFileReader
    private var remaining: Int64
    private var interleaved: UnsafeMutablePointer<Float>?
    /// For 16-bit PCM: read as integers and decode in the C kernel (libsndfile's own
    /// conversion is scalar), with the same result, x / 32768.
    private var shorts: UnsafeMutablePointer<Int16>?
    private let readsShorts: Bool
    private var capacity = 0
    /// Per-channel destination pointers, re-aimed at an offset inside the caller's buffer.
    private var destinations: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>?

    /// Opens `path` and plays `range` (default: the whole file). A range that does not lie
    /// inside the file throws `rangeOutsideSource`.
    public convenience init(path: String, range: Range<Int64>? = nil) throws(MixdownError) {
        try self.init(reader: SndFileReader(path: path), range: range)
    }

    /// Plays `range` of an already open file (one open per export, so pipes work too).
    init(reader: SndFileReader, range: Range<Int64>?) throws(MixdownError) {
        file = reader
        info = reader.info
        let path = info.path
        format = info.format
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
        readsShorts = info.sampleFormat == "pcm_16"
        if r.lowerBound > 0 {
            guard sf_seek(file.handle, r.lowerBound, SEEK_SET) == r.lowerBound else {
                throw .readFailed(path: path, reason: "cannot seek to frame \(r.lowerBound): \(String(cString: sf_strerror(file.handle)))")
            }
        }
    }

    deinit {
        interleaved?.deallocate()
        shorts?.deallocate()
        destinations?.deallocate()
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(interleaved == nil, "prepare is called once")
        capacity = maximumFrames
        interleaved = .allocate(capacity: max(1, maximumFrames * format.channelCount))
        if readsShorts { shorts = .allocate(capacity: max(1, maximumFrames * format.channelCount)) }
        destinations = .allocate(capacity: format.channelCount)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        guard let scratch = interleaved, let dst = destinations else { preconditionFailure("render before prepare") }
        assert(frames <= capacity && buffer.channelCount == format.channelCount)
        let want = Int(min(Int64(frames), remaining))
        var done = 0
        // libsndfile may return short reads before the end (compressed formats); loop.
        let k = mx_kernels_active().pointee
        while done < want {
            let got = shorts.map { Int(sf_readf_short(file.handle, $0, sf_count_t(want - done))) }
                ?? Int(sf_readf_float(file.handle, scratch, sf_count_t(want - done)))
            if got <= 0 {
                let expected = info.frames
                let read = range.lowerBound + Int64(range.count) - remaining + Int64(done)
                if sf_error(file.handle) != 0 {
                    throw .readFailed(path: info.path, reason: String(cString: sf_strerror(file.handle)))
                }
                throw .truncatedAudio(path: info.path, expectedFrames: expected, readFrames: read)
            }
            for c in 0..<format.channelCount { dst[c] = buffer[channel: c] + done }
            if let shorts {
                k.s16_deinterleave(dst, shorts, format.channelCount, got)
            } else {
                k.deinterleave(dst, scratch, format.channelCount, got)
            }
            done += got
        }
        remaining -= Int64(done)
        return RenderStatus(frames: done, ended: remaining == 0)
    }
}
