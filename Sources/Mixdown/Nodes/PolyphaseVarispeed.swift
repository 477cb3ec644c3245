import MixdownKernels

/// Varispeed (pitch follows speed) with Mixdown's own band-limited resampler: a Farrow
/// filter (`FarrowFilter`) run by the C kernel, vectorised across consecutive outputs.
///
/// Output frame j is the input, band-limited, at position j / R, kept exactly as an
/// integer frame and a remainder of the ratio's numerator; the filter is centred on that
/// position, so there is no delay to absorb, and the input is zero outside its frames.
/// The node produces exactly `outputFrames` frames (default round(N · R), N the input's
/// length), then ends. The same output comes out at any block size and thread count.
public final class PolyphaseVarispeed: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let filter: FarrowFilter
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }

    private let input: AudioNode
    private let inputFrames: Int64
    private let threads: Int
    private let channels: Int
    private let halfTaps: Int64

    // Phase of the next output: input frame and remainder (of ratio.numerator).
    private var produced: Int64 = 0
    private var nextFrame: Int64 = 0
    private var nextRemainder: Int64 = 0
    private let stepFrames: Int64, stepRemainder: Int64, twoOverNumerator: Double

    private var window: InputWindow?
    private var base: UnsafeMutablePointer<Int32>?
    private var fraction: UnsafeMutablePointer<Float>?
    private var coefficients: UnsafeMutablePointer<Float>?
    private var destination: AudioBuffer?
    private var split = (from: 0, to: 0)
    private var helper: HelperThread?

    /// Stretches `input` (of known length) by `ratio`. `outputFrames` overrides the length
    /// (for `--to-frames`, where the ratio is output/input exactly anyway). `threads` > 1
    /// splits each block between two cores, with bit-identical output.
    /// `outputRate` labels the output with another sample rate: the same filter then
    /// converts rates (R = outputRate / input rate) or changes speed and rate at once.
    public init(input: AudioNode, ratio: StretchRatio, quality: ResamplerQuality = .best,
                outputFrames: Int64? = nil, threads: Int = 1, outputRate: Int? = nil) throws(MixdownError) {
        let (n, total) = try ratio.lengths(of: input, outputFrames: outputFrames, node: "varispeed")
        self.input = input
        self.ratio = ratio
        inputFrames = n
        self.outputFrames = total
        filter = FarrowFilter(quality: quality, ratio: ratio)
        format = AudioFormat(sampleRate: outputRate ?? input.format.sampleRate, channelCount: input.format.channelCount)
        channels = format.channelCount
        self.threads = max(1, min(2, threads))
        halfTaps = Int64(filter.taps / 2)
        stepFrames = ratio.denominator / ratio.numerator
        stepRemainder = ratio.denominator % ratio.numerator
        twoOverNumerator = 2 / Double(ratio.numerator)
    }

    deinit {
        helper?.stop()
        base?.deallocate()
        fraction?.deallocate()
        coefficients?.deallocate()
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(base == nil, "prepare is called once")
        try input.prepare(maximumFrames: maximumFrames)
        // A block of F outputs spans (F - 1) / R + 1 input frames, plus the filter; the
        // window starts with the zeros before input frame 0.
        let span = Int((Int128(maximumFrames) * Int128(ratio.denominator) / Int128(ratio.numerator))) + 2
        window = InputWindow(input: input, length: inputFrames, capacity: span + filter.taps + 8,
                             maximumPull: maximumFrames, start: -(halfTaps - 1), label: "varispeed input")
        base = .allocate(capacity: maximumFrames)
        fraction = .allocate(capacity: maximumFrames)
        coefficients = .allocate(capacity: filter.coefficients.count)
        coefficients!.initialize(from: filter.coefficients, count: filter.coefficients.count)
        if threads > 1 {
            helper = HelperThread(name: "mixdown.varispeed") { [unowned self] in self.runKernel(from: self.split.from, to: self.split.to) }
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let count = Int(min(Int64(frames), outputFrames - produced))
        guard count > 0 else { return RenderStatus(frames: 0, ended: true) }
        // Input frames this block reads: from the first output's first tap to the last output's last tap.
        let lastFrame = ratio.inputPosition(ofOutput: produced + Int64(count) - 1).frame
        let window = window!
        try window.slide(from: nextFrame - (halfTaps - 1), to: lastFrame + halfTaps + 1)

        let b = base!, u = fraction!
        var n = nextFrame, r = nextRemainder
        let offset = window.start + (halfTaps - 1)
        for i in 0..<count {
            b[i] = Int32(truncatingIfNeeded: n - offset)
            u[i] = Float(Double(r) * twoOverNumerator - 1)
            n += stepFrames
            r += stepRemainder
            if r >= ratio.numerator { r -= ratio.numerator; n += 1 }
        }
        nextFrame = n
        nextRemainder = r

        destination = buffer
        if let helper, count >= 2048 {
            let mid = count / 2
            split = (mid, count)
            helper.start()
            runKernel(from: 0, to: mid)
            helper.wait()
        } else {
            runKernel(from: 0, to: count)
        }
        destination = nil
        produced += Int64(count)
        return RenderStatus(frames: count, ended: produced == outputFrames)
    }

    /// Outputs `from..<to` of the current block, every channel.
    private func runKernel(from: Int, to: Int) {
        guard to > from, let dst = destination else { return }
        let k = mx_kernels_active().pointee
        for c in 0..<channels {
            k.farrow(dst[channel: c] + from, window!.channels[c], base! + from, fraction! + from, to - from,
                     coefficients!, Int32(filter.taps), Int32(filter.order))
        }
    }
}
