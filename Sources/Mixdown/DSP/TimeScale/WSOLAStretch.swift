import Foundation
import MixdownKernels

/// Waveform-similarity overlap-add: changes duration, keeps pitch, in the time domain.
///
/// Windows of `window` frames (40 ms) are laid at 50% overlap with a periodic Hann window,
/// which sums to exactly 1. Window k covers output frames k·H ..< k·H + W (H = W/2) and is
/// centred on its nominal input position (k·H + W/2) / R, computed exactly in integers: no
/// error accumulates along the file. It may move by at most `searchRadius` frames (1.5 ms)
/// to the offset whose first half best continues the previous window: normalised cross-
/// correlation on the average of the channels (in the C kernel), less a small pull toward
/// the nominal position, 0.02·(shift/radius)², so that among near-equal matches the one
/// nearest the exact time wins. Every channel splices at the same place.
///
/// Sync bound: output frame j plays input within searchRadius + (W/2)·|1 − 1/R| + 1 frames
/// of j / R, whatever the file's length (`syncBound`). The first window starts half a hop
/// before frame 0, so the output does not fade in; past the input's end the input is
/// silence; the node gives exactly `outputFrames` frames.
public final class WSOLAStretch: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }
    /// Window length W and hop H = W / 2, in frames.
    public let window: Int
    public var hop: Int { window / 2 }
    /// Largest shift from the nominal position, in frames.
    public let searchRadius: Int

    /// The largest distance, in frames, between where an output frame's audio came from and
    /// j / R.
    public var syncBound: Int {
        searchRadius + Int((Double(window / 2) * abs(1 - 1 / ratio.doubleValue)).rounded(.up)) + 1
    }

    private let input: AudioNode
    private let inputFrames: Int64
    private let channels: Int

    private var inputWindow: InputWindow?
    private var mono: UnsafeMutablePointer<Float>?
    private var hann: UnsafeMutablePointer<Float>?
    private var accumulator: AudioBuffer?
    private var scores: UnsafeMutablePointer<Float>?
    private var pending: PlanarFIFO?
    /// Next window index, and where the previous window started in the input.
    private var k: Int64 = -1
    private var previousStart: Int64 = 0
    private var produced: Int64 = 0

    public init(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil,
                windowSeconds: Double = 0.04, searchSeconds: Double = 0.0015) throws(MixdownError) {
        let (n, total) = try ratio.lengths(of: input, outputFrames: outputFrames, node: "WSOLA")
        self.input = ContractCheck.wrap(input)
        self.ratio = ratio
        inputFrames = n
        format = input.format
        channels = format.channelCount
        self.outputFrames = total
        window = max(16, Int((windowSeconds * Double(format.sampleRate) / 2).rounded()) * 2)
        searchRadius = max(1, Int((searchSeconds * Double(format.sampleRate)).rounded()))
    }

    deinit {
        mono?.deallocate()
        hann?.deallocate()
        scores?.deallocate()
    }

    /// Input position of window k's nominal start: round((k·H + W/2) / R) − W/2.
    private func nominalStart(_ k: Int64) -> Int64 {
        let center = Int128(k) * Int128(hop) + Int128(window / 2)
        return Int64(FrameRounding.standard.divide(center * Int128(ratio.denominator), by: Int128(ratio.numerator))) - Int64(window / 2)
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(hann == nil, "prepare is called once")
        try input.prepare(maximumFrames: maximumFrames)
        // The input one step needs: the previous continuation and the search range.
        let advance = Int((Double(hop) / ratio.doubleValue).rounded(.up)) + 2
        let capacity = 2 * window + 2 * searchRadius + advance + 16
        previousStart = nominalStart(-1)
        inputWindow = InputWindow(input: input, length: inputFrames, capacity: capacity, maximumPull: maximumFrames,
                                  start: previousStart - Int64(searchRadius), label: "WSOLA input")
        mono = .allocate(capacity: capacity)
        mono!.initialize(repeating: 0, count: capacity)
        hann = .allocate(capacity: window)
        for i in 0..<window {
            let s = sin(Double.pi * Double(i) / Double(window))
            hann![i] = Float(s * s)
        }
        scores = .allocate(capacity: 2 * searchRadius + 1)
        accumulator = AudioBuffer(format: format, capacity: window)
        pending = PlanarFIFO(channelCount: channels, capacity: maximumFrames + hop)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        try pending.renderHops(into: buffer, frames: frames, produced: &produced, total: outputFrames, step: step)
    }

    /// Adds window k to the overlap-add and moves the finished hop to the FIFO.
    private func step() throws(MixdownError) {
        let nominal = nominalStart(k)
        let r = Int64(searchRadius)
        let continuation = previousStart + Int64(hop)
        let input = inputWindow!
        let low = min(continuation, nominal - r)
        let dropped = Int(low - input.start)
        if dropped > 0 {
            // Keep the channel average in step with the window.
            mono!.update(from: mono! + dropped, count: max(0, Int(input.end - low)))
        }
        try input.slide(from: low, to: max(nominal + r + Int64(window), continuation + Int64(hop))) { at, n in
            // The channel average that the search correlates.
            let m = mono! + at
            let scale = 1 / Float(channels)
            for i in 0..<n {
                var s: Float = 0
                for c in 0..<channels { s += input.channels[c][at + i] }
                m[i] = s * scale
            }
        }
        var start = nominal
        if k > 0 {
            // Score every shift: the normalised correlation of the continuation with each
            // candidate's first half (energies kept by a running sum), less the pull to centre.
            let lags = 2 * searchRadius + 1
            let m = mono!
            let t = m + Int(continuation - input.start), x = m + Int(nominal - r - input.start)
            mx_kernels_active().pointee.xcorr(scores, t, x, hop, lags)
            var templateEnergy = 0.0, energy = 0.0
            for i in 0..<hop {
                templateEnergy += Double(t[i]) * Double(t[i])
                energy += Double(x[i]) * Double(x[i])
            }
            var best = -Double.infinity, bestLag = searchRadius
            for l in 0..<lags {
                if l > 0 {
                    let out = Double(x[l - 1]), into = Double(x[l - 1 + hop])
                    energy += into * into - out * out
                }
                let shift = Double(l - searchRadius) / Double(searchRadius)
                let score = Double(scores![l]) / (max(energy, 0) * templateEnergy + 1e-18).squareRoot() - 0.02 * shift * shift
                if score > best { best = score; bestLag = l }
            }
            start = nominal - r + Int64(bestLag)
        }
        let acc = accumulator!
        let w = hann!
        for c in 0..<channels {
            let a = acc[channel: c], s = input.pointer(c, at: start)
            for i in 0..<window { a[i] = a[i] + w[i] * s[i] }
        }
        previousStart = start
        // Output k·H ..< k·H + H is complete; window −1's first hop is before frame 0.
        if k >= 0 {
            let fifo = pending!
            let destination = fifo.prepareWrite()
            for c in 0..<channels { destination[c]!.update(from: acc[channel: c], count: hop) }
            fifo.didWrite(hop)
        }
        for c in 0..<channels {
            let a = acc[channel: c]
            a.update(from: a + hop, count: hop)
            (a + hop).update(repeating: 0, count: hop)
        }
        k += 1
    }
}
