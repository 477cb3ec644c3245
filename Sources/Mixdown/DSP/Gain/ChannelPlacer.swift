/// A mono input placed on the output's channels: on one channel (the others silent) at a
/// gain, or on every channel (the last step of a `ChannelRoute`). Frames in and out are
/// the same; the end is its input's.
public final class ChannelPlacer: AudioNode {
    public let format: AudioFormat
    public var length: Int64? { input.length }
    /// The output channel written, from 0; nil: every channel.
    public let channel: Int?
    public let gain: Float
    private let input: AudioNode
    private var scratch: AudioBuffer?

    public init(input: AudioNode, channelCount: Int, channel: Int?, gain: Float = 1) throws(MixdownError) {
        guard input.format.channelCount == 1 else {
            throw .invalidParameter(name: "input", value: "\(input.format.channelCount) channels", reason: "a channel placer takes one channel")
        }
        guard channelCount >= 1, channel.map({ $0 >= 0 && $0 < channelCount }) ?? true else {
            throw .invalidParameter(name: "channel", value: "\((channel ?? -1) + 1)", reason: "the output has \(channelCount) channel(s)")
        }
        self.input = ContractCheck.wrap(input)
        self.channel = channel
        self.gain = gain
        format = AudioFormat(sampleRate: input.format.sampleRate, channelCount: channelCount)
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
        scratch = AudioBuffer(format: input.format, capacity: maximumFrames)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let status = try input.render(into: scratch!, frames: frames)
        let n = status.frames, mono = scratch![channel: 0]
        for c in 0..<format.channelCount {
            let out = buffer[channel: c]
            if channel == nil || channel == c {
                if gain == 1 {
                    out.update(from: mono, count: n)
                } else {
                    for i in 0..<n { out[i] = mono[i] * gain }
                }
            } else {
                out.update(repeating: 0, count: n)
            }
        }
        return status
    }
}
