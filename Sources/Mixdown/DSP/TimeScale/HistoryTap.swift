/// Passes its input through untouched and records it in `history` (the input of a stretch
/// whose output `QuietEdges` finishes). Frames in and out are the same; the end is its
/// input's.
final class HistoryTap: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length }
    let history: InputHistory
    private let input: AudioNode

    init(input: AudioNode, history: InputHistory) {
        self.input = ContractCheck.wrap(input)
        self.history = history
        format = input.format
    }

    func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    func prepare(maximumFrames: Int) throws(MixdownError) { try input.prepare(maximumFrames: maximumFrames) }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let status = try input.render(into: buffer, frames: frames)
        history.record(buffer, frames: status.frames)
        if status.ended { history.markComplete() }
        return status
    }
}
