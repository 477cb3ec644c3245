/// What a node produces: planar Float32 at `sampleRate` frames per second, `channelCount`
/// channels. Frames, not samples: one frame holds one sample of every channel.
public struct AudioFormat: Sendable, Hashable, CustomStringConvertible {
    public let sampleRate: Int
    public let channelCount: Int

    public init(sampleRate: Int, channelCount: Int) {
        precondition(sampleRate > 0 && sampleRate <= Int(Int32.max), "sample rate out of range: \(sampleRate)")
        precondition(channelCount > 0, "channel count must be positive")
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    public var description: String { "\(sampleRate) Hz, \(channelCount) ch" }
}
