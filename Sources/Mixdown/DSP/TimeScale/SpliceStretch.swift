import Foundation
import MixdownKernels

/// Splicing: changes duration and keeps pitch by passing the input through untouched and
/// taking up the time at a few places, chosen where it is least heard. For ratios near 1,
/// by name (`--algorithm splice`): at 1.003 a splice of a few milliseconds every few
/// seconds, and every frame between splices is the input's, bit for bit.
///
/// A splice at input frame q jumps by J frames: J < 0 repeats the |J| frames before q
/// (lengthens), J > 0 skips the J frames after q (shortens), across a raised-cosine
/// crossfade of `crossfade` frames from x[q + k] to x[q + J + k]; reading goes on from
/// q + J + crossfade. Where splices go:
/// - **In quiet** (a run of blocks under -60 dBFS, every channel's energy summed): a splice
///   there is not heard, so it takes exactly the time that puts the sound after the quiet
///   where the ratio says (within a frame and a block of 32 frames at the ratio's slope),
///   as late in the quiet as it fits: an attack after silence keeps its place and its
///   first milliseconds whole, and nothing is added before it. No later splice touches the
///   20 ms after it.
/// - **Else where the audio repeats itself**: among up to 48 places across the span the
///   deviation allows, and every jump from `shortestJump` to `longestJump` frames (2 to
///   16 ms), the one whose crossfaded segments differ least (squared difference over every
///   channel, against their energy above a -60 dBFS floor), longer jumps slightly
///   preferred (fewer splices). A poor match (a chord or unrelated partials that no jump
///   fits) goes through `PhaseContinuation` instead of a crossfade: the partials run on
///   with their phases, and the splices after it do too until the turns have died out
///   (in quiet, or when the partials end); then the input is copied bit for bit again.
///
/// Sync bound: the deviation of output frame `out` from input frame `in`, out − in·M/N for
/// N input and M output frames, stays within `bound` frames (10 ms) at every splice's ends;
/// inside a splice's crossfade it may move by the jump more. The output has exactly
/// `outputFrames` frames; the last splice makes the sum of jumps exact. Past the input's end
/// the input is silence.
public final class SpliceStretch: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }
    /// Crossfade of a splice, frames.
    public let crossfade: Int
    /// Shortest and longest jump of a splice where the audio sounds, frames.
    public let shortestJump: Int
    public let longestJump: Int
    /// Largest |out − in·M/N| at a splice's ends, frames.
    public let bound: Int
    /// How far ahead one step looks, frames.
    public let horizon: Int

    /// Frames per block of the quiet test, and the level under which a block is quiet
    /// (mean square per channel).
    static let block = 32
    static let quietLevel = 1e-6
    /// A splice scoring above this is made only when the bound leaves no choice, and then
    /// through `PhaseContinuation`.
    static let poorMatch = 0.1
    /// A splice that matches goes through the continuation too where this share of the
    /// sound's power is in steady partials (`PhaseContinuation.steadyShare`) before, at and
    /// after it (`isHeldTone`): a held chord or tone (1.0000 on the bench's chord), whose
    /// phase a crossfade would step (0.1 to 0.3 cents of pitch over a second). Real instruments read less (a piano 0.995 to 0.999,
    /// strings 0.98, speech under 0.8); there the crossfade, which keeps the input's bits,
    /// measured better: with every matching splice through the continuation music's round
    /// trip read 1.28 / 0.58 / 0.72 dB at 0.99 / 1.003 / 1.01 against 1.02 / 0.33 / 0.28.
    static let steadyTone = 0.999

    private let input: AudioNode
    private let inputFrames: Int64
    private let channels: Int
    /// Frames kept before `inPos`: a lengthening splice reads back at most this far.
    private let history: Int

    private var window: InputWindow?
    private var pending: PlanarFIFO?
    /// Splices no jump matches, and matching ones in a held tone, go through it
    /// (`PhaseContinuation`).
    private var continuation: PhaseContinuation?
    /// How far past where it is asked to stop a continuation reads: from up to a hop beyond
    /// (it hands out whole hops), its frame and a jump's measuring window (half a frame
    /// more), and a held tone's test two frames past a splice's landing, at any rate.
    private let continuationReach: Int
    private var fade: [Float] = []
    private var scores: UnsafeMutablePointer<Float>?
    private var correlation: [Double] = []
    /// Σ over channels of x², summed from the window's start: energy[i] covers frames start..<start + i.
    private var energy: [Double] = []
    private var energyStart: Int64 = 0
    /// Next input frame to read, and output frames made.
    private var inPos: Int64 = 0
    private var outPos: Int64 = 0
    private var produced: Int64 = 0
    /// Where the last sound after quiet began: no splice touches the frames from there to
    /// `protection` after it, so an attack plays whole.
    private var onset = Int64.min / 2
    private let protection: Int64
    /// Splices made, and how many of them in quiet, for tests and reports.
    public private(set) var splices = 0
    public private(set) var quietSplices = 0
    /// Splices made through `PhaseContinuation` (a poor match, one in a held tone, or one
    /// while it runs).
    public private(set) var continuousSplices = 0

    public init(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil) throws(MixdownError) {
        let (n, total) = try ratio.lengths(of: input, outputFrames: outputFrames, node: "splice")
        self.input = ContractCheck.wrap(input)
        self.ratio = ratio
        inputFrames = n
        self.outputFrames = total
        format = input.format
        channels = format.channelCount
        let rate = Double(format.sampleRate)
        func frames(_ seconds: Double) -> Int { max(1, Int((seconds * rate).rounded())) }
        crossfade = max(2, frames(0.008))
        shortestJump = frames(0.002)
        longestJump = max(frames(0.016), shortestJump + 1)
        bound = max(frames(0.010), longestJump / 2 + 1)
        horizon = max(frames(1.5), 4 * (longestJump + crossfade))
        let frameLength = PhaseContinuation.frameLength(sampleRate: format.sampleRate)
        // Ahead: a hop past where it was asked to stop, and a jump's measuring window (twice
        // the frame, centred on it) from there; a held tone's test reads two frames past
        // where a splice lands.
        continuationReach = 2 * frameLength + frameLength / 4
        // A continuation's frames read up to a frame and a hop behind (a jump's measuring
        // window, half a frame before it and a jump back, within that).
        history = longestJump + crossfade + Self.block + frameLength + frameLength / 4
        protection = Int64(frames(0.020))
    }

    deinit { scores?.deallocate() }

    /// The jobs' splice (`--algorithm splice`): this stretch with its peaks
    /// bounded by its input's (`PeakGuard`: at most 0.9 dB above the input's peak from half
    /// a second before where the time map puts each output frame to `guardReach` after,
    /// below full scale where the input is, and never under the input's own peak there).
    /// The copied input and the crossfades (each sample between its two sources) never pass
    /// it, so they stay the input's bits; what the continuation makes can: its turned
    /// partials meet in new phases. An hour of orchestral music by 1.003 put 236 frames at
    /// full scale where the input peaked 0.4 dB under it (a 16-bit output clipped them).
    public static func guarded(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil) throws(MixdownError) -> AudioNode {
        let envelope = PeakEnvelope()
        let splice = try SpliceStretch(input: InputTap(input: input, envelope: envelope), ratio: ratio, outputFrames: outputFrames)
        return PeakGuard(input: splice, envelope: envelope, ratio: ratio, reach: Int64(splice.guardReach),
                         keepsInputPeaks: true)
    }

    /// Input frames after where the time map puts an output frame that it may hold: the
    /// deviation's bound, a skip, its crossfade, and half a continuation frame.
    var guardReach: Int {
        bound + longestJump + crossfade + PhaseContinuation.frameLength(sampleRate: format.sampleRate) / 2
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(window == nil, "prepare is called once")
        try input.prepare(maximumFrames: maximumFrames)
        let capacity = history + horizon + 2 * (longestJump + crossfade) + Self.block + continuationReach
        window = InputWindow(input: input, length: inputFrames, capacity: capacity, maximumPull: maximumFrames,
                             start: -Int64(history), label: "splice input")
        pending = PlanarFIFO(channelCount: channels, capacity: maximumFrames + horizon + 2 * crossfade + 1)
        fade = (0..<crossfade).map { k in Float(0.5 - 0.5 * cos(Double.pi * (Double(k) + 0.5) / Double(crossfade))) }
        scores = .allocate(capacity: longestJump + 1)
        correlation = [Double](repeating: 0, count: longestJump + 1)
        energy = [Double](repeating: 0, count: capacity + 1)
        continuation = PhaseContinuation(channels: channels, sampleRate: format.sampleRate)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        try pending.renderHops(into: buffer, frames: frames, produced: &produced, total: outputFrames, step: step)
    }

    // MARK: The plan

    /// N·(out − in·M/N): the deviation in units of 1/N frame.
    private func deviation(at q: Int64) -> Int128 {
        let out = Int128(outPos) + Int128(q - inPos)
        return out * Int128(inputFrames) - Int128(q) * Int128(outputFrames)
    }

    /// The jump that puts input frame z where the ratio says, reading on from here:
    /// out(z) − round(z·M/N), halves away from zero.
    private func jump(landing z: Int64) -> Int64 {
        let exact = FrameRounding.standard.divide(Int128(z) * Int128(outputFrames), by: Int128(inputFrames))
        return outPos + (z - inPos) - Int64(exact)
    }

    /// Adds at least one frame to the FIFO: copies up to the next splice and makes it, or
    /// copies part of the way when no splice is due.
    private func step() throws(MixdownError) {
        let n = inputFrames
        guard n > 0 else {
            // Nothing to splice: silence of the asked length.
            pending!.appendSilence(Int(min(outputFrames - outPos, Int64(horizon))))
            outPos = outputFrames
            return
        }
        let span = Int(min(n - inPos, Int64(horizon)))
        let w = window!
        try w.slide(from: inPos - Int64(history), to: inPos + Int64(span + longestJump + 2 * crossfade + continuationReach))
        measureEnergy()
        let unit = Int128(n)
        let m = outputFrames
        let slope = Int128(n) - Int128(m)       // change of deviation·N per frame copied
        let speed = slope < 0 ? -slope : slope
        let now = deviation(at: inPos)
        // How far the deviation lets reading go on before a splice: |dev| ≤ bound.
        var latest = Int64(span)
        if m != n {
            let room = slope < 0 ? now + Int128(bound) * unit : Int128(bound) * unit - now
            latest = min(latest, Int64(max(0, room / speed)))
        }
        // The last steps: the end is within reach, so the jumps left are about the bound.
        let isFinal = n - inPos <= latest
        if let run = quietRun(from: inPos, within: inPos + latest) {
            if continuation!.isActive {
                // Through the quiet until the turns have died out, then the plain splice in
                // what is left of it (none when the quiet is too short).
                try continueInto(run)
                return
            }
            try spliceInQuiet(run)
            return
        }
        if isFinal {
            let need = outPos + (n - inPos) - m
            if need == 0 { copy(to: n); return }
            try spliceAnywhere(jump: need, from: inPos, to: n)
            return
        }
        // Where a jump of at least shortestJump first fits inside the bound after it.
        let shortest = Int128(shortestJump) * Int128(m)
        let earliest: Int64
        if m == n {
            earliest = Int64.max
        } else {
            // Lengthening (slope < 0) raises the deviation by |J|·M; shortening lowers it.
            let need = slope < 0 ? now + shortest - Int128(bound) * unit
                                 : shortest - Int128(bound) * unit - now
            earliest = need <= 0 ? 0 : Int64(min(Int128(Int64.max), (need + speed - 1) / speed))
        }
        if earliest > latest {
            // No jump fits within the bound (a bound too tight for the slope): the shortest, at its edge.
            try spliceWhereItRepeats(from: inPos + latest, to: inPos + latest, orCopyTo: nil)
            return
        }
        if earliest >= Int64(span / 2) {
            // No splice due within reach: copy part of the way and look again.
            copy(to: inPos + max(1, Int64(span / 2)))
            return
        }
        // A poor match is taken only when the bound forces it; else reading goes on to
        // where longer jumps fit (a tone's whole periods).
        let forced = latest < Int64(span)
        try spliceWhereItRepeats(from: inPos + earliest, to: inPos + latest, orCopyTo: forced ? nil : inPos + max(1, Int64(span / 4)))
    }

    /// Fills `energy` with running sums of Σ_c x² over the window.
    private func measureEnergy() {
        let w = window!
        energyStart = w.start
        let count = Int(w.end - w.start)
        var sum = 0.0
        energy[0] = 0
        for i in 0..<count {
            var e: Float = 0
            for c in 0..<channels { let v = w.channels[c][i]; e += v * v }
            sum += Double(e)
            energy[i + 1] = sum
        }
    }

    /// Σ_c x² over input frames a..<b (held).
    @inline(__always) private func energy(_ a: Int64, _ b: Int64) -> Double {
        energy[Int(b - energyStart)] - energy[Int(a - energyStart)]
    }

    private func isQuiet(block a: Int64) -> Bool {
        energy(a, a + Int64(Self.block)) < Self.quietLevel * Double(Self.block * channels)
    }

    /// The first run of quiet blocks that starts at or after `from` and before `within`,
    /// long enough for a splice: its start and where the sound resumes (the input's end when
    /// the run reaches it).
    private func quietRun(from: Int64, within: Int64) -> (start: Int64, end: Int64)? {
        let b = Int64(Self.block)
        let limit = min(inputFrames, from + Int64(horizon))
        var a = from
        while a + b <= limit && a < within {
            guard isQuiet(block: a) else { a += b; continue }
            var z = a + b
            while z + b <= limit && isQuiet(block: z) { z += b }
            if z + b > limit && limit == inputFrames {
                // A run to the input's end ends there: its jump makes the length exact.
                z = inputFrames
            } else {
                // The sound resumes inside block z: at its first frame over the level.
                let level = Self.quietLevel * Double(channels)
                while z < limit && energy(z, z + 1) < level { z += 1 }
            }
            if z - a >= Int64(crossfade + Self.block) { return (a, z) }
            a = z
        }
        return nil
    }

    /// Runs the continuation into a quiet run until it ends (at most to the run's end), then
    /// splices in the rest of the run as `spliceInQuiet` does.
    private func continueInto(_ run: (start: Int64, end: Int64)) throws(MixdownError) {
        advance(to: run.end - Int64(crossfade + Self.block))
        if continuation!.isActive {
            advance(to: run.end)
        } else if inPos < run.end - Int64(crossfade + Self.block) {
            try spliceInQuiet((start: inPos, end: run.end))
        }
    }

    /// A splice inside the quiet run that lands the sound after it where the ratio says, as
    /// late as it fits and within the deviation's reach; copies to the run's end when no time
    /// needs taking.
    private func spliceInQuiet(_ run: (start: Int64, end: Int64)) throws(MixdownError) {
        var j = jump(landing: run.end)
        let latest = run.end - Int64(crossfade)
        if run.end < inputFrames { onset = run.end }
        if j == 0 { copy(to: run.end); return }
        // The segments read, [min(q, q + J), max(q, q + J) + C), lie in the run (skipped
        // frames too: a skip never drops sound), and behind the history kept.
        let first = max(run.start, window!.start)
        if j > 0 {
            j = min(j, latest - max(first, inPos))
            if j <= 0 { copy(to: run.end); return }
            try splice(at: latest - j, jump: j)
            quietSplices += 1
        } else {
            j = max(j, first - latest)
            if j >= 0 || latest < inPos { copy(to: run.end); return }
            try splice(at: latest, jump: j)
            quietSplices += 1
        }
    }

    /// The last steps: a jump of `need` (clamped to the longest jump; the next step does the
    /// rest) at the place in from..<to whose segments differ least.
    private func spliceAnywhere(jump need: Int64, from: Int64, to end: Int64) throws(MixdownError) {
        let longest = Int64(longestJump)
        var j = max(-longest, min(longest, need))
        // The crossfade and the frames read fit before the end and after what is held.
        let c = Int64(crossfade)
        let hi: Int64 = j > 0 ? end - j - c : end - c
        let lo: Int64 = j > 0 ? from : max(from, window!.start - j)
        if hi < lo {
            // Too little input left for a whole crossfade: a shorter one, the jump as far as it goes.
            let left = end - from
            if j > 0 {
                j = min(j, left)
                try splice(at: from, jump: j, crossfade: Int(min(c, left - j)))
            } else {
                let fadeLength = Int(min(c, left))
                let q = end - Int64(fadeLength)
                j = max(j, window!.start - q)
                try splice(at: q, jump: j, crossfade: fadeLength)
            }
            return
        }
        // Jumps beyond the longest take several splices: this one in the first share.
        let splicesLeft = (need.magnitude + UInt64(longest) - 1) / UInt64(longest)
        let share = splicesLeft > 1 ? from + (end - from) / Int64(splicesLeft) : hi
        var best = search(from: lo, to: max(lo, min(hi, share)), jumps: Int(j)...Int(j))
        if !best.score.isFinite {
            // Only places next to an attack: the least bad of them.
            best = search(from: lo, to: max(lo, min(hi, share)), jumps: Int(j)...Int(j), sparingTheOnset: false)
        }
        try splice(at: best.at, jump: best.jump, score: best.score)
    }

    /// The best splice where the audio repeats, in from...to, with jumps the bound allows there.
    private func spliceWhereItRepeats(from: Int64, to: Int64, orCopyTo fallback: Int64? = nil) throws(MixdownError) {
        let m = Int128(outputFrames), n = Int128(inputFrames)
        let lengthening = outputFrames > inputFrames
        let candidates = Self.places(from: from, to: to, count: 48, spacing: Int64(crossfade / 2))
        var best: (at: Int64, jump: Int64, score: Double)? = nil
        for q in candidates {
            // The longest jump after which the deviation is within the bound.
            let after = deviation(at: q) + Int128(crossfade) * (n - m)
            let room = lengthening ? Int128(bound) * n - after : after + Int128(bound) * n
            var most = Int(min(Int128(longestJump), max(0, room / m)))
            if lengthening { most = min(most, Int(q - window!.start)) }
            most = max(most, min(shortestJump, Int(q - window!.start)))
            guard most > 0 else { continue }
            let shortest = min(shortestJump, most)
            let found = lengthening ? search(from: q, to: q, jumps: -most...(-shortest))
                                    : search(from: q, to: q, jumps: shortest...most)
            if found.score < best?.score ?? .infinity { best = found }
        }
        guard let best, best.score <= Self.poorMatch || fallback == nil else {
            copy(to: fallback ?? from + 1)
            return
        }
        try splice(at: best.at, jump: best.jump, score: best.score)
    }

    /// Up to `count` places spread over from...to, at least `spacing` apart.
    static func places(from: Int64, to: Int64, count: Int, spacing: Int64) -> [Int64] {
        let step = max(spacing, (to - from) / Int64(count), 1)
        return Array(stride(from: from, through: to, by: Int(step)))
    }

    /// Over places from...to (every `crossfade / 2` frames, at most 48) and the jumps given,
    /// the splice whose crossfaded segments differ least: squared difference over every
    /// channel against their energy plus a -60 dBFS floor, divided by (|J| / longest)^(1/4).
    private func search(from: Int64, to: Int64, jumps: ClosedRange<Int>,
                        sparingTheOnset: Bool = true) -> (at: Int64, jump: Int64, score: Double) {
        let spared = sparingTheOnset ? onset + protection : Int64.min
        let w = window!
        let c = crossfade
        let lags = jumps.count
        let floor = 2 * Double(c * channels) * 1e-6
        var best: (at: Int64, jump: Int64, score: Double) = (from, Int64(jumps.lowerBound), .infinity)
        for q in Self.places(from: from, to: to, count: 48, spacing: Int64(c / 2)) {
            for l in 0..<lags { correlation[l] = 0 }
            for ch in 0..<channels {
                mx_kernels_active().pointee.xcorr(scores, w.pointer(ch, at: q), w.pointer(ch, at: q + Int64(jumps.lowerBound)), c, lags)
                for l in 0..<lags { correlation[l] += Double(scores![l]) }
            }
            let ea = energy(q, q + Int64(c))
            for l in 0..<lags {
                let j = jumps.lowerBound + l
                // The first frame the splice touches: not inside an attack's first 20 ms.
                if q + Int64(min(j, 0)) < spared { continue }
                let eb = energy(q + Int64(j), q + Int64(j + c))
                let difference = max(0, ea + eb - 2 * correlation[l])
                let score = difference / (ea + eb + floor) / Foundation.pow(Double(abs(j)) / Double(longestJump), 0.25)
                if score < best.score { best = (q, Int64(j), score) }
            }
        }
        return best
    }

    // MARK: Output

    /// Hands out the continuation's output, a hop at a time, until reading reaches `end`
    /// (it may pass it by less than a hop) or the continuation can end (then it ends).
    private func advance(to end: Int64) {
        let c = continuation!
        while c.isActive && inPos < end && outPos < outputFrames {
            let count = c.step(input: window!, into: pending!, limit: Int(outputFrames - outPos))
            outPos += Int64(count)
            inPos = outPos - c.delay
            if c.canEnd { c.end() }
        }
    }

    /// Copies the input from `inPos` to `end` to the output, untouched (or hands out the
    /// continuation's while it runs).
    private func copy(to end: Int64) {
        if continuation!.isActive { advance(to: end) }
        let count = Int(end - inPos)
        guard count > 0 else { return }
        let w = window!, fifo = pending!
        let d = fifo.prepareWrite()
        for c in 0..<channels { d[c]!.update(from: w.pointer(c, at: inPos), count: count) }
        fifo.didWrite(count)
        inPos = end
        outPos += Int64(count)
        precondition(outPos <= outputFrames, "splice: the plan passed the output's length")
    }

    /// Whether a splice at q with jump j falls in a held tone: the frames it leaves, lands on,
    /// and a frame after that, each at least `steadyTone` steady. (Tested where it lands
    /// only, a vowel about to end went through the continuation too: a French word's round
    /// trip at 1.01 lost 0.19 of PESQ.)
    private func isHeldTone(at q: Int64, jump j: Int64) -> Bool {
        let c = continuation!, w = window!
        return c.steadyShare(input: w, at: q + j) >= Self.steadyTone
            && c.steadyShare(input: w, at: q) >= Self.steadyTone
            && c.steadyShare(input: w, at: q + j + Int64(c.frame)) >= Self.steadyTone
    }

    /// Copies to `q`, then crossfades from x[q + k] to x[q + J + k] over `crossfade` frames;
    /// reading goes on from q + J + crossfade. A splice of a poor match (`score` over
    /// `poorMatch`), a scored splice in a held tone (`isHeldTone`), and every splice while
    /// the continuation runs, go through the continuation instead: reading goes on from
    /// q + J at its next frame.
    private func splice(at q: Int64, jump j: Int64, crossfade length: Int? = nil, score: Double = 0) throws(MixdownError) {
        let c = length ?? crossfade
        copy(to: q)
        let continuing = continuation!
        if continuing.isActive || score > Self.poorMatch || (score > 0 && isHeldTone(at: q, jump: j)) {
            if !continuing.isActive { continuing.begin(at: outPos, delay: outPos - inPos, input: window!) }
            continuing.jump(j)
            inPos = outPos - continuing.delay
            splices += 1
            continuousSplices += 1
            return
        }
        let w = window!, fifo = pending!
        if c > 0 {
            let d = fifo.prepareWrite()
            let step = Double(crossfade) / Double(c)
            for ch in 0..<channels {
                let a = w.pointer(ch, at: q), b = w.pointer(ch, at: q + j), out = d[ch]!
                for k in 0..<c {
                    let g = c == crossfade ? fade[k] : Float(0.5 - 0.5 * cos(Double.pi * (Double(k) + 0.5) * step / Double(crossfade)))
                    out[k] = a[k] + g * (b[k] - a[k])
                }
            }
            fifo.didWrite(c)
        }
        inPos = q + j + Int64(c)
        outPos += Int64(c)
        splices += 1
    }
}
