#if RubberBand
import CRubberBand

/// Rubber Band's pitch-preserving stretcher (librubberband, GPL-2.0-or-later: built only
/// with the `RubberBand` trait), in offline mode, like the rubberband command: `preroll`
/// (or the first `render`) reads the whole input once for Rubber Band's study pass (without it the R2 engine does
/// not follow small ratios), with the exact expected input duration; `render` then runs a
/// second, fresh copy of the input through it. Offline mode compensates Rubber Band's start
/// delay internally, so the output is aligned with the input. The node trims or pads what
/// Rubber Band gives to exactly `outputFrames` frames.
public final class RubberBandStretch: AudioNode {
    public enum Engine: String, Sendable {
        /// R2, Rubber Band's faster engine.
        case faster
        /// R3, Rubber Band's finer (higher quality, slower) engine.
        case finer
    }

    public let format: AudioFormat
    public let ratio: StretchRatio
    public let engine: Engine
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }

    private let makeInput: () throws(MixdownError) -> AudioNode
    private var input: AudioNode
    private let inputFrames: Int64
    private var state: RubberBandState?
    private var upstream: AudioBuffer?
    private var pending: PlanarFIFO?
    private var pulled: Int64 = 0
    private var produced: Int64 = 0
    private var finished = false
    private var blockCapacity = 0
    private var studied = false

    /// `makeInput` gives a new copy of the input each time it is called (twice: one to
    /// study, one to process); both copies must give the same frames.
    public init(makeInput: @escaping () throws(MixdownError) -> AudioNode, ratio: StretchRatio,
                outputFrames: Int64? = nil, engine: Engine = .finer) throws(MixdownError) {
        self.makeInput = makeInput
        let input = try makeInput()
        let (n, total) = try ratio.lengths(of: input, outputFrames: outputFrames, node: "Rubber Band")
        guard n <= Int64(UInt32.max) else {
            throw .invalidParameter(name: "input", value: "\(n) frames", reason: "Rubber Band takes at most 2^32 - 1 input frames")
        }
        self.input = ContractCheck.wrap(input)
        self.ratio = ratio
        self.engine = engine
        inputFrames = n
        format = input.format
        self.outputFrames = total
    }

    deinit { if let state { rubberband_delete(state) } }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(state == nil, "prepare is called once")
        var options = Int32(RubberBandOptionProcessOffline.rawValue) | Int32(RubberBandOptionThreadingAuto.rawValue)
        options |= engine == .finer ? Int32(RubberBandOptionEngineFiner.rawValue) : Int32(RubberBandOptionEngineFaster.rawValue)
        state = rubberband_new(UInt32(format.sampleRate), UInt32(format.channelCount), options, ratio.doubleValue, 1.0)
        rubberband_set_expected_input_duration(state, UInt32(inputFrames))
        rubberband_set_max_process_size(state, UInt32(maximumFrames))
        blockCapacity = maximumFrames
        upstream = AudioBuffer(format: format, capacity: maximumFrames)
        try input.prepare(maximumFrames: maximumFrames)
        pending = PlanarFIFO(channelCount: format.channelCount, capacity: 2 * maximumFrames)
    }

    /// The study pass: reads a first copy of the input to its end (reported as
    /// `inputFrames` frames of work), then makes and prepares the copy `render` processes.
    public func preroll(_ preroll: Preroll) throws(MixdownError) {
        guard !studied, let state, let upstream else { return }
        studied = true
        try input.preroll(preroll)
        preroll.begin(work: inputFrames)
        var done: Int64 = 0
        while done < inputFrames {
            let n = Int(min(Int64(blockCapacity), inputFrames - done))
            let got = try input.renderRequired(into: upstream, frames: n, label: "Rubber Band input", position: done, total: inputFrames)
            done += Int64(got)
            rubberband_study(state, UnsafePointer(OpaquePointer(upstream.channelPointers)), UInt32(got),
                             done == inputFrames ? 1 : 0)
            try preroll.advance(by: Int64(got))
        }
        input = ContractCheck.wrap(try makeInput())
        try input.prepare(maximumFrames: blockCapacity)
        try input.preroll(preroll)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let want = Int(min(Int64(frames), outputFrames - produced))
        if !studied { try preroll(Preroll()) }
        guard want > 0, let fifo = pending, let s = state else { return RenderStatus(frames: 0, ended: true) }
        while fifo.count < want && !finished {
            let available = rubberband_available(s)
            if available > 0 {
                let n = min(Int(available), fifo.space)
                let got = rubberband_retrieve(s, UnsafePointer(fifo.prepareWrite()), UInt32(n))
                fifo.didWrite(Int(got))
            } else if available < 0 || pulled == inputFrames {
                // -1: everything is out. 0 after the final block: nothing more will come.
                finished = available < 0 || rubberband_available(s) <= 0
            } else {
                // Feed what Rubber Band asks for, in chunks of at most 1024 frames as the
                // rubberband command does: R3 follows small ratios only when fed this way.
                let required = max(1, min(1024, Int(rubberband_get_samples_required(s))))
                let n = Int(min(Int64(min(required, blockCapacity)), inputFrames - pulled))
                let got = try input.renderRequired(into: upstream!, frames: n, label: "Rubber Band input", position: pulled, total: inputFrames)
                pulled += Int64(got)
                rubberband_process(s, UnsafePointer(OpaquePointer(upstream!.channelPointers)), UInt32(got),
                                   pulled == inputFrames ? 1 : 0)
            }
        }
        if fifo.count < want { fifo.appendSilence(want - fifo.count) }
        fifo.pop(into: buffer, frames: want)
        produced += Int64(want)
        return RenderStatus(frames: want, ended: produced == outputFrames)
    }
}
#endif
