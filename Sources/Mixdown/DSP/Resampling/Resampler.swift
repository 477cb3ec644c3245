import MixdownKernels

/// Mixdown's resampler: every rate change and varispeed, one pass at one exact ratio.
///
/// R = `ratio` = output frames / input frames, exact (a rate change and a drift multiply
/// into one ratio: 48000/44100 × 10001309/10000000 is one pass). Output frame j is the
/// input, band-limited by `ResamplerFilter`, at position j / R, kept exactly as a whole
/// frame and a remainder of R's numerator (no drift over hours). The filter is centred
/// on that position: an impulse at input frame k comes out at k · R, with no delay. The
/// input is zero outside its frames. The C kernel's `resample` (exact phases) or
/// `resample_lerp` (dense table) computes the outputs, vectorised for any input step.
///
/// Length: `outputFrames` frames (default round(N · R), half away from zero, N the input's
/// length in frames), then the stream ends. A node made with `startingAt: j0` produces
/// frames j0 ..< outputFrames of that stream, bit-identical to the same frames of a node
/// that started at 0; its input must begin at input frame `inputStart(forOutput: j0)`.
/// The output does not depend on block sizes or on `threads`.
public final class Resampler: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let filter: ResamplerFilter
    /// The length of the whole output stream, in frames; this node renders `startFrame..<outputFrames`.
    public let outputFrames: Int64
    public let startFrame: Int64
    public var length: Int64? { outputFrames - startFrame }

    private let input: AudioNode
    private let inputFrames: Int64
    private let inputOrigin: Int64
    private let threads: Int
    private let channels: Int
    private let halfTaps: Int64
    private let interpolatedPhases: Int64?

    // The input position of the next output: whole frame, row and excess (see `render`).
    private var produced: Int64
    private var nextFrame: Int64
    private var nextRow: Int64
    private var nextExcess: UInt64
    private let rows: Int64
    private let stepFrames: Int64, stepRows: Int64, stepExcess: UInt64

    private var window: InputWindow?
    private var base: UnsafeMutablePointer<Int32>?
    private var phase: UnsafeMutablePointer<Int32>?
    private var fraction: UnsafeMutablePointer<Float>?
    private var bank: UnsafeMutablePointer<Float>?
    private var destination: AudioBuffer?
    private var split = (from: 0, to: 0)
    private var helper: HelperThread?

    /// Resamples `input` by `ratio` and labels the output `outputRate` (default: the input's
    /// rate, a varispeed). `inputFrames` is the length of the whole input stream (default:
    /// the input's length); `startingAt` is the first output frame to render, for a render
    /// that begins inside the stream: `input` then begins at input frame
    /// `inputStart(forOutput: startingAt)` and holds the rest of the stream. `threads` > 1
    /// splits each block between two cores, with bit-identical output.
    public init(input: AudioNode, ratio: StretchRatio, outputRate: Int? = nil, quality: ResamplerQuality = .best,
                inputFrames: Int64? = nil, outputFrames: Int64? = nil, startingAt startFrame: Int64 = 0,
                threads: Int = 1) throws(MixdownError) {
        let node = outputRate == nil ? "varispeed" : "sample-rate conversion"
        guard let total = inputFrames ?? input.length else {
            throw .invalidParameter(name: "input", value: "stream", reason: "\(node) needs an input of known length")
        }
        try ratio.validate(limit: StretchRatio.limit(convertingRate: outputRate != nil), parameter: node)
        self.input = ContractCheck.wrap(input)
        self.ratio = ratio
        self.inputFrames = total
        self.outputFrames = outputFrames ?? ratio.outputFrames(forInput: total)
        guard startFrame >= 0 && startFrame <= self.outputFrames else {
            throw .invalidParameter(name: "start frame", value: "\(startFrame)", reason: "must lie in 0...\(self.outputFrames)")
        }
        self.startFrame = startFrame
        filter = ResamplerFilter(ratio: ratio, quality: quality)
        format = AudioFormat(sampleRate: outputRate ?? input.format.sampleRate, channelCount: input.format.channelCount)
        channels = format.channelCount
        self.threads = max(1, min(2, threads))
        halfTaps = Int64(filter.taps / 2)
        if case .interpolated(let p) = filter.layout { interpolatedPhases = Int64(p) } else { interpolatedPhases = nil }
        rows = interpolatedPhases ?? ratio.numerator
        let num = Int128(ratio.numerator)
        stepFrames = ratio.denominator / ratio.numerator
        let stepRemainder = Int128(ratio.denominator % ratio.numerator) * Int128(rows)
        stepRows = Int64(stepRemainder / num)
        stepExcess = UInt64(stepRemainder % num)
        produced = startFrame
        let (n0, r0) = ratio.inputPosition(ofOutput: startFrame)
        nextFrame = n0
        nextRow = Int64(Int128(r0) * Int128(rows) / num)
        nextExcess = UInt64(Int128(r0) * Int128(rows) % num)
        inputOrigin = Self.inputStart(forOutput: startFrame, ratio: ratio, filter: filter)
        if let n = input.length, n != total - inputOrigin {
            throw .invalidParameter(name: "input", value: "\(n) frames",
                                    reason: "a resampler starting at output frame \(startFrame) needs input frames \(inputOrigin)..<\(total) (\(total - inputOrigin) frames)")
        }
    }

    /// The first input frame that output frame `j` reads: where the input of a node made
    /// with `startingAt: j` must begin.
    public static func inputStart(forOutput j: Int64, ratio: StretchRatio, quality: ResamplerQuality = .best) -> Int64 {
        inputStart(forOutput: j, ratio: ratio, filter: ResamplerFilter(ratio: ratio, quality: quality))
    }

    static func inputStart(forOutput j: Int64, ratio: StretchRatio, filter: ResamplerFilter) -> Int64 {
        max(0, ratio.inputPosition(ofOutput: j).frame - Int64(filter.taps / 2 - 1))
    }

    deinit {
        helper?.stop()
        base?.deallocate()
        phase?.deallocate()
        fraction?.deallocate()
        bank?.deallocate()
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(base == nil, "prepare is called once")
        try input.prepare(maximumFrames: maximumFrames)
        // A block of F outputs spans (F − 1) / R + 1 input frames, plus the filter.
        let span = Int(Int128(maximumFrames) * Int128(ratio.denominator) / Int128(ratio.numerator)) + 2
        window = InputWindow(input: input, length: inputFrames, capacity: span + filter.taps + 8, maximumPull: maximumFrames,
                             start: nextFrame - (halfTaps - 1), origin: inputOrigin, label: "resampler input")
        base = .allocate(capacity: maximumFrames)
        phase = .allocate(capacity: maximumFrames)
        fraction = .allocate(capacity: maximumFrames)
        // Rows are whole cache lines (16 floats), so on a 64-byte boundary no row load splits.
        bank = UnsafeMutableRawPointer.allocate(byteCount: filter.bank.count * 4, alignment: 64)
            .bindMemory(to: Float.self, capacity: filter.bank.count)
        bank!.initialize(from: filter.bank, count: filter.bank.count)
        if threads > 1 {
            helper = HelperThread(name: "mixdown.resampler") { [unowned self] in self.runKernel(from: self.split.from, to: self.split.to) }
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let count = Int(min(Int64(frames), outputFrames - produced))
        guard count > 0 else { return RenderStatus(frames: 0, ended: true) }
        // Input frames this block reads: from the first output's first tap to the last output's last tap.
        let lastFrame = ratio.inputPosition(ofOutput: produced + Int64(count) - 1).frame
        let window = window!
        try window.slide(from: nextFrame - (halfTaps - 1), to: lastFrame + halfTaps + 1)

        // Output i reads input frames n − (taps/2 − 1) ... and row q: the position's
        // remainder r (of the ratio's numerator) as r · rows = q · numerator + e, stepped
        // exactly. With exact rows, rows = numerator, so q = r and e = 0.
        // Positions stay within the window (checked by its slide), so the arithmetic is
        // wrapping on purpose: no overflow checks in the per-frame loop.
        let b = base!, p = phase!, f = fraction!
        var n = nextFrame, q = nextRow, e = nextExcess
        let offset = window.start + (halfTaps - 1), num = UInt64(ratio.numerator), scale = 1 / Double(ratio.numerator)
        let interpolating = interpolatedPhases != nil
        for i in 0..<count {
            b[i] = Int32(truncatingIfNeeded: n &- offset)
            p[i] = Int32(truncatingIfNeeded: q)
            if interpolating { f[i] = Float(Double(e) * scale) }
            n &+= stepFrames
            q &+= stepRows
            e &+= stepExcess
            if e >= num { e &-= num; q &+= 1 }
            if q >= rows { q &-= rows; n &+= 1 }
        }
        nextFrame = n
        nextRow = q
        nextExcess = e

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
        let taps = Int32(filter.taps)
        for c in 0..<channels {
            if interpolatedPhases != nil {
                k.resample_lerp(dst[channel: c] + from, window!.channels[c], base! + from, phase! + from, fraction! + from,
                                to - from, bank!, taps)
            } else {
                k.resample(dst[channel: c] + from, window!.channels[c], base! + from, phase! + from, to - from, bank!, taps)
            }
        }
    }
}
