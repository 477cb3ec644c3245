/// Averages every `factor` frames of a mono input into one: a cheap decimator for
/// analysis (not for listening: it aliases, but two signals decimated alike still line up).
/// Output frame j covers input frames j·factor ..< (j + 1)·factor; a partial group at the
/// end is dropped.
final class BoxcarDecimator: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length.map { $0 / Int64(factor) } }
    private let input: AudioNode
    private let factor: Int
    private var scratch: AudioBuffer?

    init(input: AudioNode, factor: Int) {
        precondition(input.format.channelCount == 1 && factor >= 1 && input.format.sampleRate % factor == 0)
        self.input = ContractCheck.wrap(input)
        self.factor = factor
        format = AudioFormat(sampleRate: input.format.sampleRate / factor, channelCount: 1)
    }

    func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames * factor)
        scratch = AudioBuffer(channelCount: 1, capacity: maximumFrames * factor)
    }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        guard let scratch else { preconditionFailure("render before prepare") }
        let status = try input.render(into: scratch, frames: frames * factor)
        let n = status.frames / factor
        let src = scratch[channel: 0], dst = buffer[channel: 0]
        let scale = 1 / Float(factor)
        for j in 0..<n {
            var s: Float = 0
            for i in 0..<factor { s += src[j * factor + i] }
            dst[j] = s * scale
        }
        return RenderStatus(frames: n, ended: status.ended)
    }
}
