import Foundation
import MixdownKernels

/// The splice stretch's way through a splice no jump matches: steady partials keep their
/// phase across the jump, so nothing steps or dips.
///
/// A time-domain splice from x[q + k] to x[q + J + k] shifts every partial of frequency ω
/// (radians per frame) by ωJ. When J is a whole number of a tone's periods that is nothing;
/// for a chord or a mix of unrelated partials no J is, and the crossfade between two
/// out-of-phase copies dips and steps each partial's phase. A phase vocoder has no such step
/// (it keeps every partial's phase running), but it changes every frame it touches.
///
/// This keeps both: the output is the input delayed by `delay` frames (output frame t is
/// input frame t − delay), passed through a short-time Fourier transform (periodic Hann
/// windows of `frame` frames, hop `frame / 4`, analysis and synthesis; transforms of twice
/// the frame, so a turn's tails are cut by the synthesis window, not wrapped into the frame).
/// A jump changes the delay at the next frame. Each spectral peak of that frame that is a
/// steady partial (its frequency over the last hop within 0.6 bins of its bin's and within
/// 0.15 bins of its frequency over the hop before) is turned by what the jump did to it,
/// −ωJ, measured: the phase from the frame the jump lands on back to the frame it leaves,
/// both through a Hann window twice the frame (where a chord's notes, 2.7 frame bins
/// apart, are 5.4 apart and leak 50 dB less into each other than through the frame's own:
/// a frequency estimated over a hop and multiplied by J put such a chord's notes 0.1 cents
/// off; this, 0.01). The turn applies to the bins of its region (to the lowest bins
/// between it and its neighbouring peaks: identity phase locking). Later frames give a peak
/// the turn of the last frame's turned peak within one frame bin of it (the same partial,
/// moved), so the partial runs on as if nothing had been taken; a new partial, and one under the splice's quiet level, has no turn. Every channel
/// is turned alike, so channels keep their phase relation exactly. Where no turn is left
/// and the delay has not changed for three hops, the output equals the plain copy again
/// (within float rounding) and the caller goes back to copying the input bit for bit.
///
/// Units: frames, not samples. Ownership: the caller owns the input window and the FIFO;
/// this holds only its own buffers (a few frame lengths per channel).
final class PhaseContinuation {
    /// Frame and hop, frames.
    let frame: Int
    let hop: Int
    private let channels: Int
    /// The transform's length (twice the frame) and its bins.
    private let transform: Int
    private let bins: Int
    private let plan: OpaquePointer
    /// Periodic Hann window, and its square scaled so that hops of it sum to 1.
    private let window: UnsafeMutablePointer<Float>
    private let squared: UnsafeMutablePointer<Float>
    private let scale: Float
    /// Output [outputStart, outputStart + frame), partly summed, per channel.
    private let sum: [UnsafeMutablePointer<Float>]
    private let re: [UnsafeMutablePointer<Float>]
    private let im: [UnsafeMutablePointer<Float>]
    /// The frames one and two hops before a jump's, per channel (its partials' frequencies).
    private let earlierRe: [UnsafeMutablePointer<Float>]
    private let earlierIm: [UnsafeMutablePointer<Float>]
    private let earliestRe: [UnsafeMutablePointer<Float>]
    private let earliestIm: [UnsafeMutablePointer<Float>]
    /// A jump's frame before and after it through a window twice the frame's, per channel
    /// (each partial's turn, measured).
    private let beforeRe: [UnsafeMutablePointer<Float>]
    private let beforeIm: [UnsafeMutablePointer<Float>]
    private let afterRe: [UnsafeMutablePointer<Float>]
    private let afterIm: [UnsafeMutablePointer<Float>]
    private let longWindow: UnsafeMutablePointer<Float>
    private let scratch: UnsafeMutablePointer<Float>
    private let power: UnsafeMutablePointer<Float>
    /// The turn of each bin in the frame being made.
    private let turn: UnsafeMutablePointer<Float>
    private var peaks: [Int] = []
    /// The last frame's peaks that had a turn, in bin order.
    private var turnedPeaks: [(bin: Int, theta: Float)] = []
    private var turning = false

    private(set) var isActive = false
    /// Output frame t is input frame t − delay.
    private(set) var delay: Int64 = 0
    /// The jump the next frame makes (the sum, if several were asked before it).
    private var pendingJump: Int64 = 0
    /// The first output frame not yet handed out; the next frame starts there.
    private(set) var outputStart: Int64 = 0
    /// Consecutive frames at the current delay with no turn anywhere.
    private var plainFrames = 0
    /// Frames whose jump turned at least one partial, for tests and reports.
    private(set) var turnedJumps = 0

    /// About 43 ms, a power of two: 2048 frames at 44.1 and 48 kHz, long enough to tell a
    /// low voice's harmonics apart, short enough that a change of delay passes in 32 ms.
    static func frameLength(sampleRate: Int) -> Int {
        var size = 256
        while Double(size) < 0.04 * Double(sampleRate) { size *= 2 }
        return size
    }

    init(channels: Int, sampleRate: Int) {
        let size = Self.frameLength(sampleRate: sampleRate)
        frame = size
        hop = size / 4
        self.channels = channels
        // Transforms of twice the frame, the frame in the middle: a turn's tails fall in the
        // padding and are cut by the synthesis window rather than wrapped into the frame.
        let bins = size + 1, transform = 2 * size
        self.transform = transform
        self.bins = bins
        plan = mx_rfft_create(transform)!
        window = .allocate(capacity: size)
        squared = .allocate(capacity: size)
        for i in 0..<size { window[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(size))) }
        // Σ over hops of w² = 3/2 for a periodic Hann window at a quarter of its length.
        scale = 2.0 / 3.0
        for i in 0..<size { squared[i] = window[i] * window[i] * scale }
        func buffer(_ n: Int) -> UnsafeMutablePointer<Float> {
            let p = UnsafeMutablePointer<Float>.allocate(capacity: n)
            p.initialize(repeating: 0, count: n)
            return p
        }
        sum = (0..<channels).map { _ in buffer(size) }
        re = (0..<channels).map { _ in buffer(bins) }
        im = (0..<channels).map { _ in buffer(bins) }
        earlierRe = (0..<channels).map { _ in buffer(bins) }
        earlierIm = (0..<channels).map { _ in buffer(bins) }
        earliestRe = (0..<channels).map { _ in buffer(bins) }
        earliestIm = (0..<channels).map { _ in buffer(bins) }
        beforeRe = (0..<channels).map { _ in buffer(bins) }
        beforeIm = (0..<channels).map { _ in buffer(bins) }
        afterRe = (0..<channels).map { _ in buffer(bins) }
        afterIm = (0..<channels).map { _ in buffer(bins) }
        longWindow = buffer(transform)
        for i in 0..<transform { longWindow[i] = Float(0.5 - 0.5 * cos(2 * Double.pi * Double(i) / Double(transform))) }
        scratch = buffer(transform)
        power = buffer(bins)
        turn = buffer(bins)
    }

    deinit {
        mx_rfft_destroy(plan)
        for p in [window, squared, longWindow, scratch, power, turn] + sum + re + im + earlierRe + earlierIm + earliestRe + earliestIm
            + beforeRe + beforeIm + afterRe + afterIm { p.deallocate() }
    }

    /// Starts at output frame `output` with `delay`: the frames before it are summed (they
    /// were handed out as a plain copy), so the output from `output` on is whole.
    func begin(at output: Int64, delay: Int64, input: InputWindow) {
        precondition(!isActive)
        isActive = true
        self.delay = delay
        pendingJump = 0
        turning = false
        turnedPeaks.removeAll()
        turn.update(repeating: 0, count: bins)
        for p in sum { p.update(repeating: 0, count: frame) }
        outputStart = output - Int64(frame - hop)
        for _ in 0..<(frame / hop - 1) {
            addFrame(input: input)
            shift()
        }
        plainFrames = frame / hop - 1
    }

    /// Reading jumps by `j` input frames at the next frame (j < 0 repeats, j > 0 skips).
    func jump(_ j: Int64) {
        delay -= j
        pendingJump += j
    }

    /// Whether the output from `outputStart` on is the plain copy of the input at `delay`
    /// (every frame still summing there had no turn and the current delay).
    var canEnd: Bool { plainFrames >= frame / hop - 1 && pendingJump == 0 }

    func end() { isActive = false }

    /// Makes the next frame and hands out up to one hop of finished output (at most
    /// `limit` frames) to `fifo`; returns how many.
    func step(input: InputWindow, into fifo: PlanarFIFO, limit: Int) -> Int {
        addFrame(input: input)
        let count = min(hop, limit)
        let d = fifo.prepareWrite()
        for c in 0..<channels { d[c]!.update(from: sum[c], count: count) }
        fifo.didWrite(count)
        shift()
        return count
    }

    private func shift() {
        for p in sum {
            p.update(from: p + hop, count: frame - hop)
            (p + frame - hop).update(repeating: 0, count: hop)
        }
        outputStart += Int64(hop)
    }

    /// Adds the frame starting at `outputStart` (input frame outputStart − delay) to the sum.
    private func addFrame(input: InputWindow) {
        let start = outputStart - delay
        let jumping = pendingJump != 0
        guard turning || jumping else {
            // No turn: the window twice, straight from the input.
            for c in 0..<channels {
                let x = input.pointer(c, at: start), s = sum[c]
                for i in 0..<frame { s[i] += x[i] * squared[i] }
            }
            plainFrames += 1
            return
        }
        analysePeaks(input: input, at: start)
        if jumping {
            // One and two hops earlier at the new delay: each partial's frequency, twice (a
            // few transforms a second).
            analyseEarlier(input: input, at: start)
            for c in 0..<channels {
                // The frame the jump leaves and the one it lands on, through the long window.
                analyseLong(input.pointer(c, at: start - pendingJump - Int64(frame / 2)), re: beforeRe[c], im: beforeIm[c])
                analyseLong(input.pointer(c, at: start - Int64(frame / 2)), re: afterRe[c], im: afterIm[c])
            }
        }
        turn.update(repeating: 0, count: bins)
        var carried: [(bin: Int, theta: Float)] = []
        var previous = 0   // index into turnedPeaks, which is in bin order
        for (n, b) in peaks.enumerated() {
            // The turn of the last frame's turned peak within a bin of this one (the same
            // partial, moved at most a bin); none for a partial that is new.
            while previous < turnedPeaks.count && turnedPeaks[previous].bin < b - 2 { previous += 1 }
            var theta: Float = 0
            var k = previous
            var nearest = 3
            while k < turnedPeaks.count && turnedPeaks[k].bin <= b + 2 {
                if abs(turnedPeaks[k].bin - b) < nearest { nearest = abs(turnedPeaks[k].bin - b); theta = turnedPeaks[k].theta }
                k += 1
            }
            if jumping && isSteady(at: b) {
                // What the jump does to this partial, measured: the phase from the frame it
                // lands on back to the frame it leaves, summed over channels.
                var cr = 0.0, ci = 0.0
                for c in 0..<channels {
                    let br = Double(beforeRe[c][b]), bi = Double(beforeIm[c][b]), ar = Double(afterRe[c][b]), ai = Double(afterIm[c][b])
                    cr += br * ar + bi * ai
                    ci += bi * ar - br * ai
                }
                theta += Float(atan2(ci, cr))
            }
            theta = Float(remainder(Double(theta), 2 * Double.pi))
            guard theta != 0 else { continue }
            carried.append((b, theta))
            if let region = region(ofPeak: n) { for k in region { turn[k] = theta } }
        }
        turnedPeaks = carried
        let anyTurn = !carried.isEmpty
        if jumping && anyTurn { turnedJumps += 1 }
        turning = anyTurn
        for c in 0..<channels {
            let r = re[c], i = im[c]
            if anyTurn {
                // DC and Nyquist stay real.
                for k in 1..<(bins - 1) where turn[k] != 0 {
                    let cs = cos(turn[k]), sn = sin(turn[k])
                    let a = r[k], b = i[k]
                    r[k] = a * cs - b * sn
                    i[k] = a * sn + b * cs
                }
            }
            mx_rfft_inverse(plan, scratch, r, i)
            let s = sum[c]
            let middle = scratch + frame / 2
            for n in 0..<frame { s[n] += middle[n] * window[n] * scale }
        }
        if jumping {
            pendingJump = 0
            plainFrames = anyTurn ? 0 : 1
        } else {
            plainFrames = anyTurn ? 0 : plainFrames + 1
        }
    }

    /// Peak n's region: from the lowest bin between it and the peak below to the lowest
    /// between it and the peak above (identity phase locking); 16 padded bins where it has
    /// no neighbour. Nil when empty.
    private func region(ofPeak n: Int) -> ClosedRange<Int>? {
        let b = peaks[n]
        var lower = max(1, b - 16), upper = min(bins - 2, b + 16)
        if n > 0 {
            lower = b
            for k in stride(from: b, through: peaks[n - 1] + 1, by: -1) where power[k] < power[lower] { lower = k }
        }
        if n + 1 < peaks.count {
            upper = b
            for k in b..<peaks[n + 1] where power[k] <= power[upper] { upper = k }
            upper -= 1
        }
        return lower <= upper ? lower...upper : nil
    }

    /// The share of the power of the frame at input frame `start` (every channel) in the
    /// regions of its steady partials, the ones a jump there would turn: near 1 for a chord
    /// or a held tone, less with noise, attacks, gliding pitch or a decaying reverb. Only
    /// while inactive (it uses the frame buffers).
    func steadyShare(input: InputWindow, at start: Int64) -> Double {
        precondition(!isActive)
        analysePeaks(input: input, at: start)
        analyseEarlier(input: input, at: start)
        var total = 0.0, steady = 0.0
        for k in 1..<(bins - 1) { total += Double(power[k]) }
        guard total > 0 else { return 0 }
        for n in peaks.indices where isSteady(at: peaks[n]) {
            if let region = region(ofPeak: n) { for k in region { steady += Double(power[k]) } }
        }
        return steady / total
    }

    /// Every channel's frame at input frame `start` into `re`/`im`, their power summed into
    /// `power`, and its peaks.
    private func analysePeaks(input: InputWindow, at start: Int64) {
        power.update(repeating: 0, count: bins)
        for c in 0..<channels {
            analyse(input.pointer(c, at: start), re: re[c], im: im[c])
            for k in 0..<bins { power[k] += re[c][k] * re[c][k] + im[c][k] * im[c][k] }
        }
        findPeaks()
    }

    /// Every channel's frames one and two hops before `start`, for `isSteady`.
    private func analyseEarlier(input: InputWindow, at start: Int64) {
        for c in 0..<channels {
            analyse(input.pointer(c, at: start - Int64(hop)), re: earlierRe[c], im: earlierIm[c])
            analyse(input.pointer(c, at: start - Int64(2 * hop)), re: earliestRe[c], im: earliestIm[c])
        }
    }

    /// The transform of `transform` input frames from `x` through a Hann window as long.
    private func analyseLong(_ x: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        for i in 0..<transform { scratch[i] = x[i] * longWindow[i] }
        mx_rfft_forward(plan, re, im, scratch)
    }

    /// The windowed transform of `frame` input frames from `x`.
    private func analyse(_ x: UnsafePointer<Float>, re: UnsafeMutablePointer<Float>, im: UnsafeMutablePointer<Float>) {
        scratch.update(repeating: 0, count: transform)
        let middle = scratch + frame / 2
        for i in 0..<frame { middle[i] = x[i] * window[i] }
        mx_rfft_forward(plan, re, im, scratch)
    }

    /// Local maxima of `power` over four bins each side, over the power of a sine at the
    /// splice's quiet level (-60 dBFS mean square) in every channel: a partial under it
    /// keeps no turn, so turns die out in quiet.
    private func findPeaks() {
        peaks.removeAll(keepingCapacity: true)
        let amplitude = (2 * SpliceStretch.quietLevel).squareRoot() * Double(frame) / 4
        let floor = Float(amplitude * amplitude * Double(channels))
        // Two of the frame's own bins each side (four of the padded transform's): a Hann
        // window's sidelobes, 2.5 bins and more from their partial, are never peaks.
        var k = 4
        while k < bins - 4 {
            let p = power[k]
            if p > floor && p > power[k - 1] && p > power[k - 2] && p > power[k - 3] && p > power[k - 4]
                && p >= power[k + 1] && p >= power[k + 2] && p >= power[k + 3] && p >= power[k + 4] {
                peaks.append(k)
                k += 4
            } else {
                k += 1
            }
        }
    }

    /// Whether the peak at bin `b` is a steady partial, from its frequency over the last hop
    /// in its loudest channel: within 0.6 bins of its bin's and within 0.15 bins of its
    /// frequency over the hop before (noise's phases give two unrelated answers).
    private func isSteady(at b: Int) -> Bool {
        var loudest = 0
        for c in 1..<channels where re[c][b] * re[c][b] + im[c][b] * im[c][b] > re[loudest][b] * re[loudest][b] + im[loudest][b] * im[loudest][b] {
            loudest = c
        }
        let now = atan2(Double(im[loudest][b]), Double(re[loudest][b]))
        let before = atan2(Double(earlierIm[loudest][b]), Double(earlierRe[loudest][b]))
        let first = atan2(Double(earliestIm[loudest][b]), Double(earliestRe[loudest][b]))
        let centre = 2 * Double.pi * Double(b) / Double(transform)
        let binWidth = 2 * Double.pi / Double(frame)
        let deviation = remainder(now - before - centre * Double(hop), 2 * Double.pi) / Double(hop)
        let earlier = remainder(before - first - centre * Double(hop), 2 * Double.pi) / Double(hop)
        return abs(deviation) <= 0.6 * binWidth && abs(deviation - earlier) <= 0.15 * binWidth
    }
}
