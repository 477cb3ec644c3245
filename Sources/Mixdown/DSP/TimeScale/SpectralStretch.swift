import Foundation
import MixdownKernels

/// Mixdown's spectral time-stretch: changes duration, keeps pitch, in the frequency domain
/// (the C kernel's `mx_pvoc`, docs/spectral.md).
///
/// Frames of `frameSize` input frames (a power of two near 43 ms; periodic Hann) are
/// synthesised at a fixed output hop H = frameSize / 8 (measured: an eighth beats a
/// quarter on round-trip PESQ at every ratio from 0.5 to 2, and 43 ms beats 21 and 85 ms on
/// speech). Synthesis frame j is centred on
/// output frame j·H and analyses the input centred on round(j·H / R), computed exactly in
/// integers: no error accumulates along the file, and output frame t plays the input near
/// t / R. Phases come from the phase gradient (PGHI): each bin's instantaneous frequency
/// carries its phase from frame to frame, and the log magnitude's slope in time carries it
/// across bins, strongest bins first, so partials stay coherent (no phasiness). One phase
/// field, the channels' sum's, serves every channel, each keeping its own phase offset from
/// the sum: the stereo image and the mono sum are kept.
///
/// Before frame 0 and past the input's end the input is silence; the node gives exactly
/// `outputFrames` frames, the same at every block size (frames are fixed by position, not
/// by the calls).
///
/// With `threads` 2, a helper thread analyses frame j + 2 while frame j is synthesised: a
/// pipeline, about half the work on each core, and the same samples as one thread (no
/// joins: the engine runs one pass over the file, as with one thread).
public final class SpectralStretch: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }
    /// The analysis and synthesis frame, in frames (a power of two), and the output hop.
    public let frameSize: Int
    public let hop: Int

    private let input: AudioNode
    private let inputFrames: Int64
    private let channels: Int

    private var engine: OpaquePointer?
    private var inputWindow: InputWindow?
    private var accumulator: AudioBuffer?
    private var pending: PlanarFIFO?
    /// The input of the frame being analysed, a pointer per channel (read by the helper).
    private let inPointers: UnsafeMutablePointer<UnsafePointer<Float>?>
    private var analysisCenter: Int64 = 0
    private let threads: Int
    private var helper: HelperThread?
    private var outPointers: [UnsafeMutablePointer<Float>?] = []
    private var gain: Float = 1
    /// The next frame to analyse and to synthesise.
    private var nextAnalysed: Int64 = 0
    private var nextSynthesised: Int64 = 0
    private var produced: Int64 = 0

    /// `frameSeconds`: the frame's length, rounded to a power of two of frames.
    /// `threads`: 1, or 2 for the analysis on a helper thread (more are taken as 2).
    public init(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil, frameSeconds: Double = 0.0427,
                threads: Int = 1) throws(MixdownError) {
        let (n, total) = try ratio.lengths(of: input, outputFrames: outputFrames, node: "spectral stretch")
        self.input = ContractCheck.wrap(input)
        self.ratio = ratio
        inputFrames = n
        format = input.format
        channels = format.channelCount
        self.outputFrames = total
        let target = max(64.0, frameSeconds * Double(format.sampleRate))
        var size = 64
        while Double(size) * 1.5 < target { size *= 2 }
        frameSize = size
        hop = size / 8
        self.threads = max(1, min(2, threads))
        inPointers = .allocate(capacity: channels)
        inPointers.initialize(repeating: nil, count: channels)
    }

    deinit {
        helper?.stop()
        if let engine { mx_pvoc_destroy(engine) }
        inPointers.deallocate()
    }

    /// Input frame at the centre of synthesis frame j: round(j·H / R), halves away from zero.
    private func center(_ j: Int64) -> Int64 {
        Int64(FrameRounding.standard.divide(Int128(j) * Int128(hop) * Int128(ratio.denominator), by: Int128(ratio.numerator)))
    }

    /// The first synthesis frame that reaches output frame 0.
    private var firstFrame: Int64 { -Int64(frameSize / 2 / hop) }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(engine == nil, "prepare is called once")
        try input.prepare(maximumFrames: maximumFrames)
        guard let e = mx_pvoc_create(frameSize, hop, channels) else {
            throw .invalidParameter(name: "spectral stretch", value: "\(frameSize) frames, \(channels) channels", reason: "cannot be made (1 to 64 channels)")
        }
        engine = e
        gain = Float(1 / mx_pvoc_window_gain(frameSize, hop))
        let advance = Int((Double(hop) / ratio.doubleValue).rounded(.up)) + 2
        let capacity = frameSize + 2 * advance + 16
        nextAnalysed = firstFrame
        nextSynthesised = firstFrame
        inputWindow = InputWindow(input: input, length: inputFrames, capacity: capacity, maximumPull: maximumFrames,
                                  start: center(firstFrame) - Int64(frameSize / 2), label: "spectral stretch input")
        accumulator = AudioBuffer(format: format, capacity: frameSize + hop)
        pending = PlanarFIFO(channelCount: channels, capacity: maximumFrames + frameSize)
        outPointers = Array(repeating: nil, count: channels)
        if threads > 1 {
            let engine = e, pointers = inPointers
            helper = HelperThread(name: "mixdown.spectral", spins: 2_000) { [unowned self] in
                mx_pvoc_analyse(engine, pointers, Double(self.analysisCenter))
            }
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        try pending.renderHops(into: buffer, frames: frames, produced: &produced, total: outputFrames, step: step)
    }

    /// Brings the next frame's input into the window and points `inPointers` at it.
    private func prepareAnalysis() throws(MixdownError) {
        let c = center(nextAnalysed)
        let start = c - Int64(frameSize / 2)
        let window = inputWindow!
        try window.slide(from: start, to: start + Int64(frameSize))
        for ch in 0..<channels { inPointers[ch] = UnsafePointer(window.pointer(ch, at: start)) }
        analysisCenter = c
    }

    /// Analyses the next frame's input, on this thread.
    private func analyse() throws(MixdownError) {
        try prepareAnalysis()
        mx_pvoc_analyse(engine, inPointers, Double(analysisCenter))
        nextAnalysed += 1
    }

    /// Synthesises one frame into the overlap-add and moves the finished hop to the FIFO.
    private func step() throws(MixdownError) {
        // One frame of look-ahead, read at the first step: prepare pulls nothing (a preroll
        // may still come between prepare and the first render).
        while nextAnalysed < nextSynthesised + 2 { try analyse() }
        let acc = accumulator!
        for ch in 0..<channels { outPointers[ch] = acc[channel: ch] }
        if let helper {
            // Frame j + 2 is analysed on the helper while frame j is synthesised here.
            try prepareAnalysis()
            helper.start()
            outPointers.withUnsafeBufferPointer { p in mx_pvoc_synthesise(engine, p.baseAddress, 0) }
            helper.wait()
            nextAnalysed += 1
        } else {
            outPointers.withUnsafeBufferPointer { p in mx_pvoc_synthesise(engine, p.baseAddress, 0) }
        }
        // The accumulator starts at output frame j·H − n/2; its first hop is now complete.
        let j = nextSynthesised
        let first = j * Int64(hop) - Int64(frameSize / 2)
        let fifo = pending!
        let skip = Int(max(0, min(Int64(hop), -first)))
        if skip < hop {
            let destination = fifo.prepareWrite()
            for ch in 0..<channels {
                let a = acc[channel: ch]
                for i in 0..<(hop - skip) { destination[ch]![i] = a[skip + i] * gain }
            }
            fifo.didWrite(hop - skip)
        }
        for ch in 0..<channels {
            let a = acc[channel: ch]
            a.update(from: a + hop, count: frameSize - hop)
            (a + frameSize - hop).update(repeating: 0, count: hop)
        }
        nextSynthesised += 1
    }
}
