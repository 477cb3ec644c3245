/// Passes its input through untouched and records its peaks in `envelope` (the input of a
/// guarded stretch: see `PeakGuard`). Frames in and out are the same; the end is its input's.
final class PeakTap: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length }
    let envelope: PeakEnvelope
    private let input: AudioNode

    init(input: AudioNode, envelope: PeakEnvelope) {
        self.input = ContractCheck.wrap(input)
        self.envelope = envelope
        format = input.format
    }

    func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    func prepare(maximumFrames: Int) throws(MixdownError) { try input.prepare(maximumFrames: maximumFrames) }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let status = try input.render(into: buffer, frames: frames)
        envelope.record(buffer, frames: status.frames)
        if status.ended { envelope.markComplete() }
        return status
    }
}
