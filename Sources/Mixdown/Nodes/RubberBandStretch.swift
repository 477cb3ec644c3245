#if RubberBand
import CRubberBand

/// Rubber Band's pitch-preserving stretcher (librubberband, GPL-2.0-or-later: built only
/// with the `RubberBand` trait), in offline mode with the exact expected input duration,
/// so that its output is aligned with its input and its length is known. The node trims
/// or pads what Rubber Band gives to exactly `outputFrames` frames.
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

    private let input: AudioNode
    private let inputFrames: Int64
    private var state: RubberBandState?
    private var upstream: AudioBuffer?
    private var pending: PlanarFIFO?
    private var pulled: Int64 = 0
    private var produced: Int64 = 0
    private var finished = false
    private var blockCapacity = 0

    public init(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil, engine: Engine = .finer) throws(MixdownError) {
        guard let n = input.length else {
            throw .invalidParameter(name: "input", value: "stream", reason: "Rubber Band needs an input of known length")
        }
        guard n <= Int64(UInt32.max) else {
            throw .invalidParameter(name: "input", value: "\(n) frames", reason: "Rubber Band takes at most 2^32 - 1 input frames")
        }
        try ratio.validate()
        self.input = input
        self.ratio = ratio
        self.engine = engine
        inputFrames = n
        format = input.format
        self.outputFrames = outputFrames ?? ratio.outputFrames(forInput: n)
    }

    deinit { if let state { rubberband_delete(state) } }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(state == nil, "prepare is called once")
        var options = Int32(RubberBandOptionProcessOffline.rawValue) | Int32(RubberBandOptionThreadingAuto.rawValue)
        options |= engine == .finer ? Int32(RubberBandOptionEngineFiner.rawValue) : Int32(RubberBandOptionEngineFaster.rawValue)
        state = rubberband_new(UInt32(format.sampleRate), UInt32(format.channelCount), options, ratio.doubleValue, 1.0)
        rubberband_set_expected_input_duration(state, UInt32(inputFrames))
        rubberband_set_max_process_size(state, UInt32(maximumFrames))
        try input.prepare(maximumFrames: maximumFrames)
        blockCapacity = maximumFrames
        upstream = AudioBuffer(format: format, capacity: maximumFrames)
        pending = PlanarFIFO(channelCount: format.channelCount, capacity: 2 * maximumFrames)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let want = Int(min(Int64(frames), outputFrames - produced))
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
                let n = Int(min(Int64(blockCapacity), inputFrames - pulled))
                let status = try input.render(into: upstream!, frames: n)
                guard status.frames > 0 else {
                    throw .readFailed(path: "Rubber Band input", reason: "the input ended at frame \(pulled) of \(inputFrames)")
                }
                pulled += Int64(status.frames)
                rubberband_process(s, UnsafePointer(OpaquePointer(upstream!.channelPointers)), UInt32(status.frames),
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
