/// Passes its input through untouched and records it for what finishes a stretch of it:
/// its peaks in `envelope` (for `PeakGuard`) and its recent frames in `history` (for
/// `QuietEdges`), each when given. Frames in and out are the same; the end is its input's.
final class InputTap: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length }
    let envelope: PeakEnvelope?
    let history: InputHistory?
    private let input: AudioNode

    init(input: AudioNode, envelope: PeakEnvelope? = nil, history: InputHistory? = nil) {
        self.input = ContractCheck.wrap(input)
        self.envelope = envelope
        self.history = history
        format = input.format
    }

    func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    func prepare(maximumFrames: Int) throws(MixdownError) { try input.prepare(maximumFrames: maximumFrames) }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let status = try input.render(into: buffer, frames: frames)
        envelope?.record(buffer, frames: status.frames)
        history?.record(buffer, frames: status.frames)
        if status.ended {
            envelope?.markComplete()
            history?.markComplete()
        }
        return status
    }
}
