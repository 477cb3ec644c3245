import MixdownKernels
import Synchronization

/// Sums inputs, each through its own gain envelope, with the C kernel's mix loops
/// (`mix_ramp` on ramps, `mix_gain` on held gains; a held gain of 0 is skipped).
///
/// Output frame p has envelope frame `startFrame + p`, so a render that starts inside the
/// timeline gets the same gains as a full one. Inputs are summed in their given order,
/// whatever the thread count, so the output is bit-identical with one or two threads and
/// at every block size. With two threads the render thread and a helper take the inputs'
/// renders (decoding, rate conversion) one at a time from a shared counter, so neither
/// waits on a fixed half; the summing stays on the caller.
/// An input that ends before `length` contributes silence after its end.
public final class Mixer: AudioNode {
    public struct Input {
        public let node: AudioNode
        public let envelope: GainEnvelope
        public init(node: AudioNode, envelope: GainEnvelope) {
            self.node = node
            self.envelope = envelope
        }
    }

    public let format: AudioFormat
    public var length: Int64? { total }
    private let inputs: [Input]
    private let total: Int64
    private let startFrame: Int64
    private let threads: Int
    private var scratch: [AudioBuffer] = []
    private var segment: [Int]
    /// Per input; written by whichever thread renders the input (raw memory, so two
    /// threads writing different elements never touch a shared array's storage).
    private let inputEnded: UnsafeMutablePointer<Bool>
    private var position: Int64 = 0
    private var helper: HelperThread?
    private let nextInput = Atomic<Int>(0)
    private var helperFrames = 0
    private var helperError: MixdownError?

    /// Every input must have `format`. `length` is the output's exact frame count.
    public init(format: AudioFormat, inputs: [Input], length: Int64, startFrame: Int64 = 0, threads: Int = 1) {
        precondition(inputs.allSatisfy { $0.node.format == format }, "every mixer input must have the mixer's format")
        precondition(length >= 0 && startFrame >= 0)
        self.format = format
        self.inputs = inputs.map { Input(node: ContractCheck.wrap($0.node), envelope: $0.envelope) }
        total = length
        self.startFrame = startFrame
        self.threads = threads
        segment = inputs.map { $0.envelope.segmentIndex(containing: startFrame) }
        inputEnded = .allocate(capacity: max(1, inputs.count))
        inputEnded.initialize(repeating: false, count: max(1, inputs.count))
    }

    deinit {
        helper?.stop()
        inputEnded.deallocate()
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { for input in inputs { try input.node.preroll(preroll) } }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(scratch.isEmpty, "prepare is called once")
        for input in inputs { try input.node.prepare(maximumFrames: maximumFrames) }
        scratch = inputs.map { _ in AudioBuffer(format: format, capacity: maximumFrames) }
        if threads > 1 && inputs.count > 1 {
            helper = HelperThread(name: "mixdown.mixer") { [unowned self] in
                do throws(MixdownError) { try self.renderSharedInputs(frames: self.helperFrames) }
                catch { self.helperError = error }
            }
        }
    }

    /// Renders inputs taken one at a time from `nextInput` until none is left.
    private func renderSharedInputs(frames: Int) throws(MixdownError) {
        while true {
            let i = nextInput.add(1, ordering: .relaxed).oldValue
            guard i < inputs.count else { return }
            try renderInput(i, frames: frames)
        }
    }

    private func renderInput(_ i: Int, frames: Int) throws(MixdownError) {
        var got = 0
        if !inputEnded[i] {
            let status = try inputs[i].node.render(into: scratch[i], frames: frames)
            got = status.frames
            inputEnded[i] = status.ended
        }
        if got < frames { scratch[i].clear(got..<frames) }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let want = Int(min(Int64(frames), total - position))
        guard want > 0 else { return RenderStatus(frames: 0, ended: true) }
        nextInput.store(0, ordering: .relaxed)
        if let helper {
            helperFrames = want
            helper.start()
            var mine: MixdownError?
            do throws(MixdownError) { try renderSharedInputs(frames: want) } catch { mine = error }
            helper.wait()
            if let e = mine ?? helperError { throw e }
        } else {
            try renderSharedInputs(frames: want)
        }
        buffer.clear(0..<want)
        let k = mx_kernels_active().pointee
        let first = startFrame + position, end = first + Int64(want)
        for i in inputs.indices {
            let src = scratch[i]
            inputs[i].envelope.forEachPiece(of: first..<end, segment: &segment[i]) { offset, n, s, at in
                if s.step != 0 {
                    for c in 0..<format.channelCount {
                        k.mix_ramp(buffer[channel: c] + offset, src[channel: c] + offset, n, s.startGain, s.step, at)
                    }
                } else if s.startGain != 0 {
                    let g = Float(s.startGain)
                    for c in 0..<format.channelCount { k.mix_gain(buffer[channel: c] + offset, src[channel: c] + offset, n, g) }
                }
            }
        }
        position += Int64(want)
        return RenderStatus(frames: want, ended: position == total)
    }
}
