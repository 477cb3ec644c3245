/// Converts its input to another sample rate with libsamplerate's sinc converters.
///
/// Output frame j sits at input time j / outputRate: the output starts aligned with the
/// input (libsamplerate's own alignment, checked by the tests). The ratio is exactly
/// outputRate / inputRate, so the output has round(N · outputRate / inputRate) frames,
/// half away from zero, unless `outputFrames` is given; either way the tail is flushed
/// and the result trimmed or padded to that count. A composition also uses it with a
/// frame ratio of its own, to scale a segment and change its rate in one pass (varispeed).
public final class SampleRateConverter: AudioNode {
    public var format: AudioFormat { core.format }
    public var length: Int64? { core.length }
    public var ratio: StretchRatio { core.ratio }
    private let core: SampleRateVarispeed

    /// Converts to `sampleRate` (the ratio must lie within libsamplerate's [1/256, 256]).
    public convenience init(input: AudioNode, sampleRate: Int, quality: ResamplerQuality = .best,
                            outputFrames: Int64? = nil) throws(MixdownError) {
        try self.init(input: input, ratio: StretchRatio(Int64(sampleRate), Int64(input.format.sampleRate)),
                      sampleRate: sampleRate, quality: quality, outputFrames: outputFrames)
    }

    /// Resamples by the frame ratio `ratio` (output frames / input frames) and labels the
    /// output `sampleRate`: a varispeed and a rate change in one.
    public init(input: AudioNode, ratio: StretchRatio, sampleRate: Int, quality: ResamplerQuality = .best,
                outputFrames: Int64? = nil) throws(MixdownError) {
        core = try SampleRateVarispeed(input: input, ratio: ratio, quality: quality, outputFrames: outputFrames, outputRate: sampleRate)
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) { try core.prepare(maximumFrames: maximumFrames) }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        try core.render(into: buffer, frames: frames)
    }
}
