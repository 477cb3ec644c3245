/// Which resampler converts a rate or runs a varispeed.
public enum ResamplerEngine: String, Sendable, CaseIterable, Codable {
    /// Mixdown's resampler, for every ratio.
    case auto
    /// Mixdown's resampler (`Resampler`): the C kernel, exact phases or a dense table.
    case polyphase
    /// libsamplerate's sinc converters (`LibsamplerateResampler`): the reference the tests compare against.
    case libsamplerate

    public var resolved: ResamplerEngine { self == .auto ? .polyphase : self }

    /// The node that resamples `input` (of known length) by `ratio` (output / input frames),
    /// labelled `outputRate` (default: the input's rate), `outputFrames` long (default
    /// round(N · R)). `threads` applies to Mixdown's resampler only.
    public func makeNode(input: AudioNode, ratio: StretchRatio, outputRate: Int? = nil, quality: ResamplerQuality = .best,
                         outputFrames: Int64? = nil, threads: Int = 1) throws(MixdownError) -> AudioNode {
        switch resolved {
        case .libsamplerate:
            try LibsamplerateResampler(input: input, ratio: ratio, outputRate: outputRate, quality: quality, outputFrames: outputFrames)
        default:
            try Resampler(input: input, ratio: ratio, outputRate: outputRate, quality: quality, outputFrames: outputFrames, threads: threads)
        }
    }
}
