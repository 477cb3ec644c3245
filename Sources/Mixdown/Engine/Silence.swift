/// Produces `length` frames of silence (or an endless stream when `length` is nil).
public final class Silence: AudioNode {
    public let format: AudioFormat
    public let length: Int64?
    private var produced: Int64 = 0

    public init(format: AudioFormat, length: Int64?) {
        precondition(length.map { $0 >= 0 } ?? true, "silence length must not be negative")
        self.format = format
        self.length = length
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {}

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        var n = frames
        if let total = length { n = Int(min(Int64(frames), total - produced)) }
        buffer.clear(0..<n)
        produced += Int64(n)
        return RenderStatus(frames: n, ended: length.map { produced >= $0 } ?? false)
    }
}
