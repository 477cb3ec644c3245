import MixdownKernels

/// Applies a `GainEnvelope` to its input in place, with the C kernel's ramp and constant
/// gain loops. Frame 0 of the input is frame `startFrame` of the envelope.
public final class GainAutomation: AudioNode {
    public var format: AudioFormat { input.format }
    public var length: Int64? { input.length }
    private let input: AudioNode
    private let envelope: GainEnvelope
    private var position: Int64
    private var segment: Int

    public init(input: AudioNode, envelope: GainEnvelope, startFrame: Int64 = 0) {
        self.input = ContractCheck.wrap(input)
        self.envelope = envelope
        position = startFrame
        segment = envelope.segmentIndex(containing: startFrame)
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let status = try input.render(into: buffer, frames: frames)
        let k = mx_kernels_active().pointee
        let blockEnd = position + Int64(status.frames)
        envelope.forEachPiece(of: position..<blockEnd, segment: &segment) { offset, n, s, at in
            if s.step != 0 {
                for c in 0..<buffer.channelCount { k.apply_ramp(buffer[channel: c] + offset, n, s.startGain, s.step, at) }
            } else if s.startGain != 1 {
                let g = Float(s.startGain)
                for c in 0..<buffer.channelCount { k.apply_gain(buffer[channel: c] + offset, n, g) }
            }
        }
        position = blockEnd
        return status
    }
}
