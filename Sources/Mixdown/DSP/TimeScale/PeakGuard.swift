import MixdownKernels

/// Bounds a time-scale node's peaks by its input's: output frame t may peak at most 0.9 dB
/// above the input's largest peak from `reachBack` input frames before t / R (R = output /
/// input) to `reach` after it (half a second back, half a frame ahead), and never at full
/// scale where the input stays below it.
///
/// Why: a phase vocoder keeps each partial's level but not the phases between partials
/// (vertical coherence), and a waveform whose peak is made by partials in phase (a square
/// wave, a sawtooth, a click train) comes out with the same level and a higher peak: +6.6
/// to +8.4 dB on a 100 Hz square stretched by 1.25, clipped in 16-bit. The guard is a
/// look-ahead peak limiter keyed to the input: each frame's required gain
/// (ceiling / |peak|, or 1), its minimum over the next `lookAhead` frames, averaged over
/// `lookAhead` frames: a gain that falls and recovers over 2.7 ms (at 48 kHz), never above
/// what any frame needs. Where the output stays under the ceiling (almost everywhere on
/// speech and music) it is passed bit for bit.
///
/// The output is delayed inside by `lookAhead` frames and given back aligned: frame t out
/// is frame t in, scaled. Frames out equal frames in, the same at every block size (the
/// ceilings are taken per output block at whole multiples of 64 frames).
final class PeakGuard: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length }
    /// The headroom over the input's peak, linear (0.9 dB).
    static let headroom: Float = 1.1092898   // 10^(0.9/20)
    /// The largest sample an integer output holds below its clipping point (32767/32768).
    static let belowFullScale: Float = 32767.0 / 32768.0
    /// A gain a hair under its value, so a product's rounding cannot pass the ceiling.
    static let rounding: Float = 1 - 1e-6
    private let input: AudioNode
    private let envelope: PeakEnvelope
    private let ratio: StretchRatio
    /// Input frames after and before t / R whose peak bounds output frame t.
    private let reach: Int64
    private let reachBack: Int64
    private let lookAhead: Int
    /// Whether a ceiling is never under the input's own peak there (the splice's guard: a
    /// frame it copies passes bit for bit, a full-scale one too).
    private let keepsInputPeaks: Bool
    /// Output frames held beyond a call's needs while the stretch reads on to the input a
    /// ceiling needs (it reads about half a frame ahead of what it gives).
    private var slack: Int { Int(min(Int64(1 << 20), 8 * reach * max(1, (ratio.numerator + ratio.denominator - 1) / ratio.denominator))) + 8192 }
    private var held: AudioBuffer?
    private var required: [Float] = []
    private var view: AudioBuffer?
    /// Scratch of a call (allocated in `prepare`): required gains over its span, their
    /// sliding minima, the gains applied, the minimum's deque.
    private var spanGains: [Float] = []
    private var minima: [Float] = []
    private var gains: [Float] = []
    private var deque: [Int] = []
    /// Frames of `held` (and `required`), from absolute frame `heldStart`; the first
    /// `computedCount` have their required gain (their ceilings' input is recorded).
    private var heldStart: Int64 = 0
    private var heldCount = 0
    private var computedCount = 0
    /// The last frame whose required gain is below 1 (Int64.min: none yet).
    private var lastCut = Int64.min
    private var position: Int64 = 0
    private var inputEnded = false
    private var maximumFrames = 0

    /// `ratio`: output / input of the stretch `input` (whose own input `envelope` records);
    /// `reach`, `reachBack`: input frames after and before t / R whose peak bounds output
    /// frame t (ahead: no further than the stretch has read when it gives t, so the bound
    /// does not depend on how far it read: the same samples at every block size; behind,
    /// half a second unless given).
    /// `keepsInputPeaks`: no ceiling under the input's own peak (by default a full-scale
    /// input's is just under full scale, so an integer output clips nowhere).
    init(input: AudioNode, envelope: PeakEnvelope, ratio: StretchRatio, reach: Int64, reachBack: Int64? = nil, lookAhead: Int = 128,
         keepsInputPeaks: Bool = false) {
        self.keepsInputPeaks = keepsInputPeaks
        self.input = ContractCheck.wrap(input)
        self.envelope = envelope
        self.ratio = ratio
        self.reach = reach
        self.reachBack = reachBack ?? Int64(input.format.sampleRate / 2)
        self.lookAhead = lookAhead
        format = input.format
    }

    func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
        self.maximumFrames = maximumFrames
        // What a call needs: its frames, the look-ahead after them, the history before,
        // and the output the stretch gives before it has read the input a ceiling needs.
        let capacity = maximumFrames + 2 * lookAhead + maximumFrames + slack
        held = AudioBuffer(format: format, capacity: capacity)
        view = AudioBuffer(viewWithChannelCount: format.channelCount, capacity: maximumFrames)
        required = [Float](repeating: 1, count: capacity)
        spanGains = [Float](repeating: 1, count: maximumFrames + 2 * lookAhead)
        minima = [Float](repeating: 1, count: maximumFrames + 2 * lookAhead)
        gains = [Float](repeating: 1, count: maximumFrames)
        // A call's span holds at most maximumFrames + 2·lookAhead indices: the deque never wraps.
        deque = [Int](repeating: 0, count: maximumFrames + 2 * lookAhead + 1)
    }

    /// Input frame of output frame t: t / R, rounded down.
    private func inputFrame(_ t: Int64) -> Int64 {
        Int64(FrameRounding.down.divide(Int128(t) * Int128(ratio.denominator), by: Int128(ratio.numerator)))
    }

    /// The ceiling of output frames `range` (one block of 64): the input's peak near them,
    /// with the headroom, below full scale where the input is.
    private func ceiling(_ range: Range<Int64>, back: Int64? = nil) -> Float {
        let peak = envelope.peak((inputFrame(range.lowerBound) - (back ?? reachBack))..<(inputFrame(range.upperBound - 1) + reach + 1))
        let c = peak * Self.headroom
        let limit = peak <= 1 ? min(c, Self.belowFullScale) : c
        return keepsInputPeaks ? max(limit, peak) : limit
    }

    /// The ceiling a block's output `peak` passes, or nil when it stays under it. The
    /// ceiling over the last `reach` input frames first (a few blocks of the envelope): the
    /// whole half second back only raises it, so it is read only when that one is passed.
    private func passedCeiling(_ peak: Float, _ range: Range<Int64>) -> Float? {
        guard peak > 0, peak > ceiling(range, back: reach) else { return nil }
        let limit = ceiling(range)
        return peak > limit ? limit : nil
    }

    /// Pulls the input until frame `end` is held with its required gain (or the input
    /// ends). A frame's gain waits until its ceiling's input is recorded, whatever the
    /// stretch had read when it gave the frame: the same samples at every block size.
    private func fill(through end: Int64) throws(MixdownError) {
        let buffer = held!
        while true {
            computeAvailable()
            if heldStart + Int64(computedCount) >= end || (inputEnded && computedCount == heldCount) { break }
            // Keep `lookAhead` frames of history before the next output frame; move what is
            // held to the front only when a block no longer fits after it.
            let keepFrom = max(heldStart, position - Int64(lookAhead))
            let drop = Int(keepFrom - heldStart)
            if drop > 0 && buffer.capacity - heldCount < maximumFrames {
                for c in 0..<format.channelCount { buffer[channel: c].update(from: buffer[channel: c] + drop, count: heldCount - drop) }
                required.withUnsafeMutableBufferPointer { r in
                    r.baseAddress!.update(from: r.baseAddress! + drop, count: heldCount - drop)
                }
                heldStart += Int64(drop)
                heldCount -= drop
                computedCount -= drop
            }
            if inputEnded || heldCount == buffer.capacity {
                // Nothing more to read (or no room: never in practice): what is recorded serves.
                computeRequired(from: computedCount, count: heldCount - computedCount)
                computedCount = heldCount
                break
            }
            let n = min(maximumFrames, buffer.capacity - heldCount)   // > 0: not full, above
            view!.aim(into: buffer, offset: heldCount)
            let status = try input.render(into: view!, frames: n)
            heldCount += status.frames
            if status.ended || status.frames < n { inputEnded = true }
        }
    }

    /// Computes the required gains of the held frames whose ceilings' input is recorded.
    private func computeAvailable() {
        let (recorded, complete) = envelope.recorded
        var ready = heldCount
        if !complete {
            // The last held frame whose block's ceiling reads only recorded input.
            ready = computedCount
            while ready < heldCount {
                let blockEnd = (PeakEnvelope.block(of: heldStart + Int64(ready)) + 1) * PeakEnvelope.blockFrames
                guard inputFrame(blockEnd - 1) + reach + 1 <= recorded else { break }
                ready = min(heldCount, Int(blockEnd - heldStart))
            }
        }
        if ready > computedCount {
            computeRequired(from: computedCount, count: ready - computedCount)
            computedCount = ready
        }
    }

    private func computeRequired(from offset: Int, count: Int) {
        guard count > 0 else { return }
        let buffer = held!
        var i = offset
        while i < offset + count {
            let t = heldStart + Int64(i)
            // The ceiling of t's whole block of 64 (whichever call brought t in: the same samples).
            let blockStart = PeakEnvelope.block(of: t) * PeakEnvelope.blockFrames
            let blockEnd = blockStart + PeakEnvelope.blockFrames
            let n = min(offset + count - i, Int(blockEnd - t))
            var peak: Float = 0
            let kernels = mx_kernels_active().pointee
            for c in 0..<buffer.channelCount { peak = max(peak, kernels.peak(buffer[channel: c] + i, n)) }
            if let limit = passedCeiling(peak, blockStart..<blockEnd) {
                let channels = (0..<buffer.channelCount).map { buffer[channel: $0] + i }
                var cut = lastCut
                required.withUnsafeMutableBufferPointer { required in
                    for k in 0..<n {
                        var m: Float = 0
                        for channel in channels { m = max(m, abs(channel[k])) }
                        required[i + k] = m > limit ? limit / m : 1
                        if m > limit { cut = max(cut, heldStart + Int64(i + k)) }
                    }
                }
                lastCut = cut
            } else {
                required.withUnsafeMutableBufferPointer { required in
                    for k in 0..<n { required[i + k] = 1 }
                }
            }
            i += n
        }
    }

    /// The gains of the next `want` output frames into `gains`, from the required gains
    /// around them; false (and `gains` not written) where none is below 1. m(s) = the least
    /// required gain over s ..< s + L (a sliding minimum: a deque of indices whose gains
    /// rise), for s from position - L + 1; then g(t) = the mean of m over t - L + 1 ... t (a
    /// running sum): no g exceeds any frame's need. On the arrays' buffers, borrowed once:
    /// an access per frame to the properties was checked for exclusivity each time (a
    /// quarter of this node's instructions).
    private func smoothGains(want: Int) -> Bool {
        let L = lookAhead, span = want + 2 * L - 2, first = position - Int64(L) + 1 - heldStart
        let known = Int64(computedCount)
        return required.withUnsafeBufferPointer { required in
            spanGains.withUnsafeMutableBufferPointer { spanGains in
                var anyCut = false
                for j in 0..<span {
                    let i = first + Int64(j)
                    let r = i >= 0 && i < known ? required[Int(i)] : 1
                    spanGains[j] = r
                    if r < 1 { anyCut = true }
                }
                guard anyCut else { return false }
                deque.withUnsafeMutableBufferPointer { deque in minima.withUnsafeMutableBufferPointer { minima in
                    gains.withUnsafeMutableBufferPointer { gains in
                        var head = 0, tail = 0
                        let mCount = want + L - 1
                        for j in 0..<span {
                            while tail > head && spanGains[deque[tail - 1]] >= spanGains[j] { tail -= 1 }
                            deque[tail] = j
                            tail += 1
                            let s = j - L + 1
                            if s >= 0 {
                                while deque[head] < s { head += 1 }
                                minima[s] = spanGains[deque[head]]
                            }
                        }
                        // In Double: a running sum in Float drifts by 1e-5 over a block, enough to
                        // pass a ceiling just below full scale.
                        var sum = 0.0
                        for s in 0..<mCount {
                            sum += Double(minima[s])
                            if s >= L { sum -= Double(minima[s - L]) }
                            // A frame whose window needs no cut keeps gain 1 exactly (untouched).
                            if s >= L - 1 {
                                let mean = sum / Double(L)
                                gains[s - (L - 1)] = mean >= 1 - 1e-12 ? 1 : Float(mean) * Self.rounding
                            }
                        }
                    }
                } }
                return true
            }
        }
    }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let total = input.length
        var want = frames
        if let total { want = Int(min(Int64(frames), max(0, total - position))) }
        try fill(through: position + Int64(want + lookAhead))
        let available = Int(heldStart + Int64(computedCount) - position)
        want = min(want, max(0, available))
        // The required gains from position - L + 1 to the end + L - 1; where none is below 1
        // the frames pass untouched. No frame since the window's first needs a cut (the
        // common case): nothing to compute.
        let anyCut = lastCut >= position - Int64(lookAhead) + 1 && smoothGains(want: want)
        let offset = Int(position - heldStart)
        for c in 0..<format.channelCount {
            let src = held![channel: c] + offset, dst = buffer[channel: c]
            if !anyCut {
                dst.update(from: src, count: want)
            } else {
                gains.withUnsafeBufferPointer { gains in
                    for k in 0..<want { dst[k] = gains[k] == 1 ? src[k] : src[k] * gains[k] }
                }
            }
        }
        position += Int64(want)
        envelope.drop(before: inputFrame(max(0, position - Int64(lookAhead))) - reachBack - PeakEnvelope.blockFrames)
        let ended = total.map { position >= $0 } ?? (inputEnded && position >= heldStart + Int64(computedCount))
        return RenderStatus(frames: want, ended: ended)
    }
}
