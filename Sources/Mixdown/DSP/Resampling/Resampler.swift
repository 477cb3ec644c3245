import MixdownKernels
import Synchronization

/// Mixdown's resampler: every rate change and varispeed, one pass at one exact ratio.
///
/// R = `ratio` = output frames / input frames, exact (a rate change and a drift multiply
/// into one ratio: 48000/44100 × 10001309/10000000 is one pass). Output frame j is the
/// input, band-limited by `ResamplerFilter`, at position j / R, kept exactly as a whole
/// frame and a remainder of R's numerator (no drift over hours). The filter is centred
/// on that position: an impulse at input frame k comes out at k · R, with no delay. The
/// input is zero outside its frames. The C kernel's `resample` (exact phases) or
/// `resample_lerp` (dense table: each output's coefficients between two rows, made once
/// for a pair of channels) computes the outputs, vectorised for any input step.
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
    /// The input frame at which output position 0 sits: output j reads input position
    /// `inputOffset` + j / R (a piece of a clock map that starts inside its input).
    public let inputOffset: Int64
    public var length: Int64? { outputFrames - startFrame }

    private let input: AudioNode
    private let inputFrames: Int64
    private let inputOrigin: Int64
    private let threads: Int
    private let channels: Int
    private let halfTaps: Int64
    private let interpolatedPhases: Int64?

    /// Output frames rendered so far, counted from frame 0 of the whole stream.
    private var produced: Int64
    private let rows: Int64
    /// One output's step in input position (frames, rows, excess; see `fillPositions`).
    private let step: mx_resample_step

    private var window: InputWindow?
    private var base: UnsafeMutablePointer<Int32>?
    private var phase: UnsafeMutablePointer<Int32>?
    private var fraction: UnsafeMutablePointer<Float>?
    private var bank: UnsafeMutablePointer<Float>?
    private var destination: AudioBuffer?
    /// The block being rendered: its first output frame, its length, and the input frame
    /// the window's first frame stands for plus taps/2 − 1. Set before chunks are claimed.
    private var block = (first: Int64(0), count: 0, offset: Int64(0))
    private let nextChunk = Atomic<Int>(0)
    private var helper: HelperThread?

    /// Resamples `input` by `ratio` and labels the output `outputRate` (default: the input's
    /// rate, a varispeed). `inputFrames` is the length of the whole input stream (default:
    /// the input's length); `startingAt` is the first output frame to render, for a render
    /// that begins inside the stream: `input` then begins at input frame
    /// `inputStart(forOutput: startingAt)` and holds the rest of the stream. `threads` > 1
    /// splits each block between two cores, with bit-identical output. `inputOffset`
    /// (whole input frames) moves every position: output j reads input position
    /// `inputOffset` + j / R, and the input before and after it is read as it is (zero only
    /// outside the stream's frames), so a piece of a clock map joins the next without a seam.
    public init(input: AudioNode, ratio: StretchRatio, outputRate: Int? = nil, quality: ResamplerQuality = .best,
                inputFrames: Int64? = nil, outputFrames: Int64? = nil, startingAt startFrame: Int64 = 0,
                inputOffset: Int64 = 0, threads: Int = 1) throws(MixdownError) {
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
        guard inputOffset >= 0 && inputOffset <= total else {
            throw .invalidParameter(name: "input offset", value: "\(inputOffset)", reason: "must lie in 0...\(total) (the input's frames)")
        }
        self.inputOffset = inputOffset
        filter = ResamplerFilter(ratio: ratio, quality: quality)
        format = AudioFormat(sampleRate: outputRate ?? input.format.sampleRate, channelCount: input.format.channelCount)
        channels = format.channelCount
        self.threads = max(1, min(2, threads))
        halfTaps = Int64(filter.taps / 2)
        if case .interpolated(let p) = filter.layout { interpolatedPhases = Int64(p) } else { interpolatedPhases = nil }
        rows = interpolatedPhases ?? ratio.numerator
        let num = Int128(ratio.numerator)
        let stepRemainder = Int128(ratio.denominator % ratio.numerator) * Int128(rows)
        step = mx_resample_step(frames: ratio.denominator / ratio.numerator, rows: Int64(stepRemainder / num), row_count: rows,
                                excess: UInt64(stepRemainder % num), numerator: UInt64(ratio.numerator))
        produced = startFrame
        inputOrigin = Self.inputStart(forOutput: startFrame, ratio: ratio, taps: filter.taps, inputOffset: inputOffset)
        if let n = input.length, n != total - inputOrigin {
            throw .invalidParameter(name: "input", value: "\(n) frames",
                                    reason: "a resampler starting at output frame \(startFrame) needs input frames \(inputOrigin)..<\(total) (\(total - inputOrigin) frames)")
        }
    }

    /// The first input frame that output frame `j` reads: where the input of a node made
    /// with `startingAt: j` (and `inputOffset`) must begin. Sizes the filter, designs none.
    public static func inputStart(forOutput j: Int64, ratio: StretchRatio, quality: ResamplerQuality = .best, inputOffset: Int64 = 0) -> Int64 {
        inputStart(forOutput: j, ratio: ratio, taps: ResamplerFilter.size(ratio: ratio, quality: quality).taps, inputOffset: inputOffset)
    }

    /// The first input frame a filter of `taps` reads for output `j`, positions starting at `inputOffset`.
    private static func inputStart(forOutput j: Int64, ratio: StretchRatio, taps: Int, inputOffset: Int64) -> Int64 {
        max(0, inputOffset + ratio.inputPosition(ofOutput: j).frame - Int64(taps / 2 - 1))
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
                             start: inputOffset + ratio.inputPosition(ofOutput: startFrame).frame - (halfTaps - 1), origin: inputOrigin, label: "resampler input")
        base = .allocate(capacity: maximumFrames)
        phase = .allocate(capacity: maximumFrames)
        fraction = .allocate(capacity: maximumFrames)
        // Rows are whole cache lines (16 floats), so on a 64-byte boundary no row load splits.
        // A dense bank becomes resample_lerp's table: each row, then its slope to the next.
        let floats = interpolatedPhases.map { Int($0) * 2 * filter.taps } ?? filter.bank.count
        bank = UnsafeMutableRawPointer.allocate(byteCount: floats * 4, alignment: 64).bindMemory(to: Float.self, capacity: floats)
        if let p = interpolatedPhases {
            filter.bank.withUnsafeBufferPointer { mx_resample_lerp_table(bank!, $0.baseAddress!, Int(p), Int32(filter.taps)) }
        } else {
            bank!.initialize(from: filter.bank, count: floats)
        }
        if threads > 1 {
            // A file render's blocks are 65,536 frames, a millisecond apart: a helper that
            // spun 0.2 ms after each took CPU time from the reading and writing threads
            // (the 1-hour WAV job: 2.7-3.1 s of CPU at 20,000 spins, 2.7-3.0 at 2,000,
            // and fewer slow runs).
            helper = HelperThread(name: "mixdown.resampler", spins: 2_000) { [unowned self] in self.runChunks() }
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let count = Int(min(Int64(frames), outputFrames - produced))
        guard count > 0 else { return RenderStatus(frames: 0, ended: true) }
        // Input frames this block reads: from the first output's first tap to the last output's last tap.
        let firstFrame = inputOffset + ratio.inputPosition(ofOutput: produced).frame
        let lastFrame = inputOffset + ratio.inputPosition(ofOutput: produced + Int64(count) - 1).frame
        let window = window!
        try window.slide(from: firstFrame - (halfTaps - 1), to: lastFrame + halfTaps + 1)

        block = (first: produced, count: count, offset: window.start + (halfTaps - 1) - inputOffset)
        destination = buffer
        nextChunk.store(0, ordering: .relaxed)
        // Both threads claim chunks until none is left: a thread the reader or the writer
        // preempts takes fewer, and neither waits for a fixed half.
        if let helper, count >= 2 * Self.chunkFrames {
            helper.start()
            runChunks()
            helper.wait()
        } else {
            runChunks()
        }
        destination = nil
        produced += Int64(count)
        return RenderStatus(frames: count, ended: produced == outputFrames)
    }

    /// Outputs per claim of `runChunks`: small enough to balance two threads, large enough
    /// that the claim and the exact start position (two 128-bit divisions) cost nothing.
    static let chunkFrames = 1024

    /// Claims chunks of the current block and renders them, until the block is done.
    private func runChunks() {
        while true {
            let from = nextChunk.wrappingAdd(1, ordering: .relaxed).oldValue * Self.chunkFrames
            guard from < block.count else { return }
            let to = min(from + Self.chunkFrames, block.count)
            fillPositions(from: from, to: to)
            runKernel(from: from, to: to)
        }
    }

    /// The kernel's inputs for outputs `from..<to` of the current block: the first
    /// output's input position is computed exactly, the rest stepped exactly by the C
    /// kernels' `resample_positions`, so any split of a block gives the same values.
    private func fillPositions(from: Int, to: Int) {
        let num = Int128(ratio.numerator)
        let (n0, r0) = ratio.inputPosition(ofOutput: block.first + Int64(from))
        let scaled = Int128(r0) * Int128(rows)
        var position = mx_resample_position(frame: n0, row: Int64(scaled / num), excess: UInt64(scaled % num))
        var step = step
        mx_kernels_active().pointee.resample_positions(base! + from, phase! + from, interpolatedPhases != nil ? fraction! + from : nil,
                              to - from, &position, block.offset, &step)
    }

    /// Outputs `from..<to` of the current block, every channel: with a dense table, two
    /// channels at a time (each output's coefficients made once for both; a channel's
    /// values are the same alone or paired).
    private func runKernel(from: Int, to: Int) {
        guard let dst = destination, let window else { return }
        let k = mx_kernels_active().pointee
        let taps = Int32(filter.taps)
        guard interpolatedPhases != nil else {
            for c in 0..<channels {
                k.resample(dst[channel: c] + from, window.channels[c], base! + from, phase! + from, to - from, bank!, taps)
            }
            return
        }
        var c = 0
        while c < channels {
            let pair = c + 1 < channels
            k.resample_lerp(dst[channel: c] + from, pair ? dst[channel: c + 1] + from : nil, window.channels[c],
                            pair ? window.channels[c + 1] : nil, base! + from, phase! + from, fraction! + from, to - from, bank!, taps)
            c += pair ? 2 : 1
        }
    }
}
