import CSampleRate
import MixdownKernels

/// libsamplerate's sinc converters (`best`, `medium`, `fastest`): the reference that
/// `Resampler` is tested against, and a choice (`ResamplerEngine.libsamplerate`).
///
/// libsamplerate takes the ratio as a Double (R = numerator / denominator rounded once);
/// its output starts aligned with its input, and at the end its tail is flushed with
/// `end_of_input`. The node then trims or pads to exactly `outputFrames` frames.
public final class LibsamplerateResampler: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let quality: ResamplerQuality
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }

    private let input: AudioNode
    private let inputFrames: Int64
    private var state: OpaquePointer?
    private var upstream: AudioBuffer?
    private var inInterleaved: UnsafeMutablePointer<Float>?
    private var outInterleaved: UnsafeMutablePointer<Float>?
    private var pending: PlanarFIFO?
    private var inQueued = 0
    private var pulled: Int64 = 0
    private var produced: Int64 = 0
    private var flushed = false
    private var blockCapacity = 0
    private var outCapacity = 0

    /// Resamples `input` by `ratio` (output frames / input frames) and labels the output
    /// `outputRate` (default: the input's rate, a varispeed). The ratio may lie anywhere in
    /// libsamplerate's [1/256, 256] for a rate change, [1/4, 4] for a varispeed.
    public init(input: AudioNode, ratio: StretchRatio, outputRate: Int? = nil, quality: ResamplerQuality = .best,
                outputFrames: Int64? = nil) throws(MixdownError) {
        let (n, total) = try ratio.lengths(of: input, outputFrames: outputFrames,
                                           node: outputRate == nil ? "varispeed" : "sample-rate conversion",
                                           limit: StretchRatio.limit(convertingRate: outputRate != nil))
        self.input = ContractCheck.wrap(input)
        self.ratio = ratio
        self.quality = quality
        inputFrames = n
        format = AudioFormat(sampleRate: outputRate ?? input.format.sampleRate, channelCount: input.format.channelCount)
        self.outputFrames = total
    }

    deinit {
        if let state { src_delete(state) }
        inInterleaved?.deallocate()
        outInterleaved?.deallocate()
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(state == nil, "prepare is called once")
        let converter: Int32 = switch quality {
        case .best: Int32(SRC_SINC_BEST_QUALITY)
        case .medium: Int32(SRC_SINC_MEDIUM_QUALITY)
        case .fastest: Int32(SRC_SINC_FASTEST)
        }
        var error: Int32 = 0
        guard let s = src_new(converter, Int32(format.channelCount), &error) else {
            throw .invalidParameter(name: "libsamplerate", value: "\(quality)", reason: String(cString: src_strerror(error)))
        }
        state = s
        try input.prepare(maximumFrames: maximumFrames)
        blockCapacity = maximumFrames
        upstream = AudioBuffer(format: format, capacity: maximumFrames)
        inInterleaved = .allocate(capacity: maximumFrames * format.channelCount)
        outCapacity = Int(ratio.doubleValue * Double(maximumFrames)) + 64
        outInterleaved = .allocate(capacity: outCapacity * format.channelCount)
        pending = PlanarFIFO(channelCount: format.channelCount, capacity: maximumFrames + outCapacity)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let want = Int(min(Int64(frames), outputFrames - produced))
        guard want > 0, let fifo = pending, let s = state else { return RenderStatus(frames: 0, ended: true) }
        let k = mx_kernels_active().pointee
        let ch = format.channelCount
        while fifo.count < want && !flushed {
            if inQueued == 0 && pulled < inputFrames {
                let n = Int(min(Int64(blockCapacity), inputFrames - pulled))
                let got = try input.renderRequired(into: upstream!, frames: n, label: "varispeed input", position: pulled, total: inputFrames)
                k.interleave(inInterleaved, UnsafePointer(OpaquePointer(upstream!.channelPointers)), ch, got)
                inQueued = got
                pulled += Int64(got)
            }
            let room = min(outCapacity, fifo.space)
            var data = SRC_DATA()
            data.data_in = UnsafePointer(inInterleaved)
            data.input_frames = inQueued
            data.data_out = outInterleaved
            data.output_frames = room
            data.end_of_input = pulled == inputFrames ? 1 : 0
            data.src_ratio = ratio.doubleValue
            let err = src_process(s, &data)
            guard err == 0 else {
                throw .invalidParameter(name: "libsamplerate", value: "ratio \(ratio.doubleValue)", reason: String(cString: src_strerror(err)))
            }
            let used = Int(data.input_frames_used), made = Int(data.output_frames_gen)
            if used > 0 && used < inQueued {
                inInterleaved!.update(from: inInterleaved! + used * ch, count: (inQueued - used) * ch)
            }
            inQueued -= used
            if made > 0 {
                k.deinterleave(UnsafePointer(fifo.prepareWrite()), outInterleaved, ch, made)
                fifo.didWrite(made)
            } else if data.end_of_input == 1 && inQueued == 0 {
                flushed = true
            }
        }
        // The tail is flushed: pad to the exact length if libsamplerate gave fewer frames.
        if fifo.count < want { fifo.appendSilence(want - fifo.count) }
        fifo.pop(into: buffer, frames: want)
        produced += Int64(want)
        return RenderStatus(frames: want, ended: produced == outputFrames)
    }
}
