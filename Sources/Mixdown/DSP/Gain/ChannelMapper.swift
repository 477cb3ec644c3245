import MixdownKernels

/// Changes the channel count of its input, by this rule:
/// - equal counts: passed through untouched;
/// - mono to N channels: the one channel is copied to every output channel;
/// - N channels to mono: the average of all channels (each scaled by 1/N, then summed);
/// - any other pair (for example 6 to 2): `unsupportedChannelMapping`, a clear error,
///   rather than a guessed downmix.
public final class ChannelMapper: AudioNode {
    public let format: AudioFormat
    public var length: Int64? { input.length }
    private let input: AudioNode
    private var scratch: AudioBuffer?

    public init(input: AudioNode, channelCount: Int) throws(MixdownError) {
        let from = input.format.channelCount
        guard from == channelCount || from == 1 || channelCount == 1 else {
            throw .unsupportedChannelMapping(from: from, to: channelCount)
        }
        self.input = ContractCheck.wrap(input)
        format = AudioFormat(sampleRate: input.format.sampleRate, channelCount: channelCount)
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
        if input.format.channelCount != format.channelCount {
            scratch = AudioBuffer(format: input.format, capacity: maximumFrames)
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        guard let scratch else { return try input.render(into: buffer, frames: frames) }
        let status = try input.render(into: scratch, frames: frames)
        let n = status.frames
        if scratch.channelCount == 1 {
            for c in 0..<format.channelCount { buffer[channel: c].update(from: scratch[channel: 0], count: n) }
        } else {
            let out = buffer[channel: 0]
            out.update(repeating: 0, count: n)
            let k = mx_kernels_active().pointee
            let share = 1 / Float(scratch.channelCount)
            for c in 0..<scratch.channelCount { k.mix_gain(out, scratch[channel: c], n, share) }
        }
        return status
    }
}
