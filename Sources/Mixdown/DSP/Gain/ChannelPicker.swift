/// One channel of its input, as a mono stream (the first step of a `ChannelRoute`: the
/// channel a track plays is picked before any resampling, so the rest of the chain works
/// on one channel). Frames in and out are the same; the end is its input's.
public final class ChannelPicker: AudioNode {
    public let format: AudioFormat
    public var length: Int64? { input.length }
    /// The input's channel played, from 0.
    public let channel: Int
    private let input: AudioNode
    private var scratch: AudioBuffer?

    /// `channel` must be one of the input's; a bad one is an error naming both counts.
    public init(input: AudioNode, channel: Int) throws(MixdownError) {
        guard channel >= 0, channel < input.format.channelCount else {
            throw .invalidParameter(name: "channel", value: "\(channel + 1)", reason: "the input has \(input.format.channelCount) channel(s)")
        }
        self.input = ContractCheck.wrap(input)
        self.channel = channel
        format = AudioFormat(sampleRate: input.format.sampleRate, channelCount: 1)
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
        if input.format.channelCount != 1 { scratch = AudioBuffer(format: input.format, capacity: maximumFrames) }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        guard let scratch else { return try input.render(into: buffer, frames: frames) }
        let status = try input.render(into: scratch, frames: frames)
        buffer[channel: 0].update(from: scratch[channel: channel], count: status.frames)
        return status
    }
}
