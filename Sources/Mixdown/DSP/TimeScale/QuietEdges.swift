import Foundation

/// Finishes a stretch where its input is quiet (docs/spectral.md, "Quiet edges"): quiet
/// stays quiet, and a sound that starts after quiet starts as the input does.
///
/// A phase vocoder spreads each frame's sound over the frame: a chord after silence comes
/// out with energy before its onset (-31 dB 20-2 ms before it at 1.003) and a soft start
/// (its first 3 ms 3 to 19 dB low from 1.05 to 2), and a tone that stops rings on into the
/// silence after it (-26 dB 12-18 ms after the end at 2). Here, on the stretch's output:
/// - **The gate.** Output block k (32 output frames from 32k) whose input, from 2 ms of
///   output before where the time map puts it to 2 ms after, lies in quiet blocks (every
///   channel's energy summed under -60 dBFS, `quietLevel`, over 32 input frames) is scaled
///   so that its energy is at most 6 dB above the loudest of those input blocks: leakage
///   from the sound beside it falls to the input's own floor (to zero where the input is
///   digital silence), and the stretch's own quiet, a floor's noise, passes as it is. The
///   gain moves linearly across each block from the last block's.
/// - **The onset copy** (stretching only: shortening, the vocoder's first 3 ms are within
///   0.4 dB already; and not for a stretch that renormalises after onsets, the long frame
///   alone near ratio 1, whose attacks keep their level: there a copy handed over to a
///   stretch some frames apart combed noise bursts). After at least 20 ms of quiet blocks
///   (the start of the input counts as after silence), the first frame p of the sound
///   (the first over -60 dBFS) plays at output frame o = round(p·R), and the output from
///   1 ms before o is the input's own frames, bit for bit, played at their own speed.
///   Between 3 and 6 ms after o it hands over to the stretch through a 6 ms raised-cosine
///   crossfade, at the frame where the two agree best over the fade (2·Σab / (Σa² + Σb²)
///   over every channel: shape and level).
///   The copy runs ahead of the time map by at most 6·(1 − 1/R) ms and takes it back in
///   the fade. Short, because the hand-over costs: copies handed over between 10 and 25 ms
///   lost 0.07 of round-trip PESQ at 5/4 against the gate alone; 3 to 6 ms, 0.04, and the
///   chord's 3-6 ms after its onset stay within 0.8 dB from 1.05 to 2 (`sweep.py`, docs/
///   spectral.md). A copy never overlaps the next one; one with no room for its fade runs
///   on to the next (its end lies in quiet).
///
/// Frames out equal frames in (exact length), the same at every block size: each decision
/// waits for the input and the stretch output it reads, however the calls fell.
final class QuietEdges: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length }
    /// The level, per sample of each channel, under which a block is quiet (-60 dBFS).
    static let quietLevel: Float = 1e-6
    /// The gate's allowance over the input's energy (6 dB).
    static let headroom: Float = 4
    static let outputBlock: Int64 = 32

    private let input: AudioNode
    private let history: InputHistory
    private let ratio: StretchRatio
    private let channels: Int
    private let copies: Bool
    private let quietBlockEnergy: Float
    /// Input frames of quiet before a sound that the copy starts (20 ms), in blocks.
    private let quietBlocksBeforeOnset: Int64
    /// Input frames either side of a gated block's place that must be quiet.
    private let gateMargin: Int64
    /// Output frames the copy starts before the onset, the earliest and latest hand-over
    /// after it, and the crossfade.
    private let lead: Int64, earliest: Int64, latest: Int64, fade: Int64
    /// Output frames decided ahead of those given, and input frames ahead of where the
    /// time map puts the last of those.
    private let lookAhead: Int64
    private let inputAhead: Int64

    private var held: AudioBuffer?
    private var view: AudioBuffer?
    private var heldStart: Int64 = 0
    private var heldCount = 0
    private var stretchEnded = false
    private var position: Int64 = 0
    private var maximumFrames = 0

    /// A copy: output frames from `start` are input frames t − `output` + `input` up to
    /// `handOver` (nil: to `end`), then fade into the stretch's over `fade` frames.
    private struct Copy {
        let input: Int64
        let output: Int64
        var start: Int64
        var handOver: Int64?
        var decided = false
        var end: Int64 = .max
    }
    private var copiesAhead: [Copy] = []
    /// The next input block the onset scan judges, and how many quiet blocks end just
    /// before it (blocks before frame 0 are silence).
    private var scannedBlocks: Int64 = 0
    private var quietRun: Int64
    /// The gate's gain of output block `gainBlock` as `gateGain` gave it (nil: silent output
    /// where the input is digital silence), and the gain its ramp starts from.
    private var gainBlock = Int64.min
    private var previousGain: Float = 1
    private var blockOwnGain: Float? = 1
    /// The input a hand-over search reads (allocated in `prepare`).
    private var fadeScratch: AudioBuffer?

    /// `input`: the stretch, by `ratio`, of the input `history` records. `copies`: whether a
    /// sound after quiet starts as the input's own frames when stretching (false: the gate
    /// alone, for a stretch whose attacks keep their level: `SpectralStretch.renormalises`).
    init(input: AudioNode, history: InputHistory, ratio: StretchRatio, copies: Bool = true) {
        self.input = ContractCheck.wrap(input)
        self.history = history
        self.ratio = ratio
        format = input.format
        channels = format.channelCount
        self.copies = copies && ratio.numerator > ratio.denominator
        let rate = Double(format.sampleRate)
        func frames(_ ms: Double) -> Int64 { max(1, Int64((ms * rate / 1000).rounded())) }
        quietBlockEnergy = Self.quietLevel * Float(InputHistory.blockFrames) * Float(channels)
        quietBlocksBeforeOnset = (frames(20) + InputHistory.blockFrames - 1) / InputHistory.blockFrames
        quietRun = quietBlocksBeforeOnset
        gateMargin = max(1, Int64((2 * rate / 1000 / ratio.doubleValue).rounded(.up)))
        lead = frames(1)
        earliest = frames(3)
        latest = frames(6)
        fade = frames(6)
        lookAhead = self.copies ? 2 * lead + latest + fade + 2 * Self.outputBlock : 2 * Self.outputBlock
        inputAhead = latest + fade + gateMargin + 4 * InputHistory.blockFrames
    }

    func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
        self.maximumFrames = maximumFrames
        held = AudioBuffer(format: format, capacity: 2 * maximumFrames + Int(lookAhead) + 8192)
        view = AudioBuffer(viewWithChannelCount: channels, capacity: maximumFrames)
        fadeScratch = AudioBuffer(format: format, capacity: Int(latest - earliest + fade + 1))
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
    /// Input frame of output frame t, rounded down or up.
    private func inputFrame(_ t: Int64, _ rounding: FrameRounding) -> Int64 {
        Int64(rounding.divide(Int128(t) * Int128(ratio.denominator), by: Int128(ratio.numerator)))
    }
    /// Output frame of input frame p, to the nearest.
    private func outputFrame(_ p: Int64) -> Int64 {
        Int64(FrameRounding.standard.divide(Int128(p) * Int128(ratio.numerator), by: Int128(ratio.denominator)))
    }

    /// Pulls the stretch until its output is held through `end` (or it ends) and the input
    /// is recorded through what the output before `end − lookAhead` needs.
    private func fill(through end: Int64, inputThrough needed: Int64) throws(MixdownError) {
        while true {
            let (recorded, complete) = history.recorded
            let enoughInput = complete || recorded >= needed
            if (stretchEnded || heldStart + Int64(heldCount) >= end) && enoughInput { return }
            if stretchEnded {
                // The stretch read no further: what it did not read is taken as silence.
                history.markComplete()
                return
            }
            var buffer = held!
            // Two blocks before `position` stay: the gate reads the block before the next.
            let keep = Int(max(0, min(Int64(heldCount), position - 2 * Self.outputBlock - heldStart)))
            if buffer.capacity - heldCount < maximumFrames {
                if keep >= buffer.capacity / 2 {
                    for c in 0..<channels { buffer[channel: c].update(from: buffer[channel: c] + keep, count: heldCount - keep) }
                    heldStart += Int64(keep)
                    heldCount -= keep
                } else {
                    // The stretch gives output before it reads the input that output needs
                    // here: hold more (rare; the same samples either way).
                    let bigger = AudioBuffer(format: format, capacity: 2 * buffer.capacity)
                    for c in 0..<channels { bigger[channel: c].update(from: buffer[channel: c], count: heldCount) }
                    held = bigger
                    buffer = bigger
                }
            }
            view!.aim(into: buffer, offset: heldCount)
            let status = try input.render(into: view!, frames: maximumFrames)
            heldCount += status.frames
            if status.ended || status.frames < maximumFrames { stretchEnded = true }
        }
    }

    /// Judges the input blocks measured so far for onsets after quiet (stretching only).
    private func scanOnsets() {
        guard copies else { return }
        let measured = history.measuredBlocks
        let b = InputHistory.blockFrames
        while scannedBlocks < measured {
            let k = scannedBlocks
            if history.energies(k..<(k + 1), quietUnder: quietBlockEnergy).allQuiet {
                quietRun += 1
            } else {
                if quietRun >= quietBlocksBeforeOnset {
                    let p = history.firstAbove(Self.quietLevel.squareRoot(), in: max(0, (k - 1) * b)..<((k + 1) * b)) ?? k * b
                    let o = outputFrame(p)
                    copiesAhead.append(Copy(input: p, output: o, start: o - lead))
                }
                quietRun = 0
            }
            scannedBlocks += 1
        }
    }

    /// Where copy `index` hands over to the stretch (its output and the input are held).
    private func decide(_ index: Int) {
        var copy = copiesAhead[index]
        let total = input.length ?? .max
        var last = min(copy.output + latest, total - fade)
        let next = index + 1 < copiesAhead.count ? copiesAhead[index + 1].start : nil
        if let next { last = min(last, next - fade) }
        let first = copy.output + earliest
        if last < first {
            copy.handOver = nil
            copy.end = next ?? total
        } else {
            let span = Int(last - first + fade)
            let source = copy.input + (first - copy.output)
            let inputs = fadeScratch!
            for c in 0..<channels { history.copy(channel: c, from: source, count: span, to: inputs[channel: c]) }
            let buffer = held!, offset = Int(first - heldStart), n = Int(fade)
            var best = first, bestScore = -Double.infinity
            for j in 0...Int(last - first) {
                var ab: Float = 0, aa: Float = 0, bb: Float = 0
                for c in 0..<channels {
                    let a = inputs[channel: c] + j, v = buffer[channel: c] + offset + j
                    for t in 0..<n {
                        ab += a[t] * v[t]; aa += a[t] * a[t]; bb += v[t] * v[t]
                    }
                }
                // 1 only for the same samples: a shape that matches at another level scores less.
                let score = aa + bb > 0 ? 2 * Double(ab) / Double(aa + bb) : 0
                if score > bestScore { bestScore = score; best = first + Int64(j) }
            }
            copy.handOver = best
            copy.end = best + fade
        }
        copy.decided = true
        copiesAhead[index] = copy
    }

    /// The gate's gains of output blocks k − 1 and k (each from its own frames: a block
    /// after a copy does not depend on where the calls fell).
    /// A block after a silent one starts at its own gain (nothing sounded to ramp from): a
    /// block whose stretch output happened to be exactly 0 took gain 1, and the next, where
    /// the long frame's leakage began (1e-11), ramped from 1 to 0 instead of being silence.
    private func blockGain(_ k: Int64) -> (previous: Float, current: Float) {
        if gainBlock != k {
            let before = gainBlock == k - 1 ? blockOwnGain : gateGain(k - 1)
            blockOwnGain = gateGain(k)
            previousGain = before ?? blockOwnGain ?? 0
            gainBlock = k
        }
        return (previousGain, blockOwnGain ?? 0)
    }

    /// Block k's gain: 1 unless its input is quiet and its output louder than the input
    /// allows; nil where the input is digital silence and the output already is (any gain).
    private func gateGain(_ k: Int64) -> Float? {
        let from = k * Self.outputBlock, to = from + Self.outputBlock
        let b = InputHistory.blockFrames
        let inFrom = inputFrame(from, .down) - gateMargin, inTo = inputFrame(to, .up) + gateMargin
        let (largest, allQuiet) = history.energies(floorDiv(inFrom, b)..<(floorDiv(inTo - 1, b) + 1), quietUnder: quietBlockEnergy)
        guard allQuiet else { return 1 }
        let buffer = held!
        let lo = Int(max(from, heldStart) - heldStart), hi = Int(min(to, heldStart + Int64(heldCount)) - heldStart)
        guard hi > lo else { return 1 }
        var energy: Float = 0
        for c in 0..<channels {
            let p = buffer[channel: c]
            for t in lo..<hi { energy += p[t] * p[t] }
        }
        let allowed = Self.headroom * largest / Float(b) * Float(hi - lo)
        if allowed == 0 { return energy == 0 ? nil : 0 }
        return energy <= allowed ? 1 : (allowed / energy).squareRoot()
    }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let total = input.length
        var want = frames
        if let total { want = Int(min(Int64(frames), max(0, total - position))) }
        let end = position + Int64(want)
        try fill(through: end + lookAhead, inputThrough: inputFrame(end + lookAhead, .up) + inputAhead)
        scanOnsets()
        want = min(want, Int(heldStart + Int64(heldCount) - position))
        let stop = position + Int64(want)
        var t = position
        while t < stop {
            // The copies that end before t are done.
            while let first = copiesAhead.first, first.decided, first.end <= t { copiesAhead.removeFirst() }
            if let copy = copiesAhead.first, copy.start <= t {
                if !copy.decided { decide(0) }
                let c = copiesAhead[0]
                let runEnd = min(stop, c.end)
                render(copy: c, from: t, to: runEnd, into: buffer)
                t = runEnd
            } else {
                let runEnd = min(stop, copiesAhead.first?.start ?? stop)
                renderGated(from: t, to: runEnd, into: buffer)
                t = runEnd
            }
        }
        position = stop
        let b = InputHistory.blockFrames
        var keepInput = inputFrame(position - 2 * Self.outputBlock, .down) - gateMargin - 4 * b
        if let copy = copiesAhead.first { keepInput = min(keepInput, copy.input - lead - 2 * b) }
        history.release(before: keepInput)
        let ended = total.map { position >= $0 } ?? (stretchEnded && position >= heldStart + Int64(heldCount))
        return RenderStatus(frames: want, ended: ended)
    }

    /// Output frames [from, to) outside copies: the stretch's, through the gate.
    private func renderGated(from: Int64, to: Int64, into out: AudioBuffer) {
        let src = held!
        var t = from
        while t < to {
            let k = floorDiv(t, Self.outputBlock)
            let blockEnd = min(to, (k + 1) * Self.outputBlock)
            let (g0, g1) = blockGain(k)
            let n = Int(blockEnd - t)
            let o = Int(t - position), s = Int(t - heldStart)
            if g0 == 1 && g1 == 1 {
                for c in 0..<channels { (out[channel: c] + o).update(from: src[channel: c] + s, count: n) }
            } else {
                let inBlock = Int(t - k * Self.outputBlock)
                for c in 0..<channels {
                    let d = out[channel: c] + o, p = src[channel: c] + s
                    for j in 0..<n {
                        let g = g0 + (g1 - g0) * Float(inBlock + j + 1) / Float(Self.outputBlock)
                        d[j] = p[j] * g
                    }
                }
            }
            t = blockEnd
        }
    }

    /// Output frames [from, to) of a copy: the input's frames, then the fade into the
    /// stretch's (through the gate).
    private func render(copy: Copy, from: Int64, to: Int64, into out: AudioBuffer) {
        // Where the fade starts in this call (a call may begin inside the fade).
        let copied = max(from, min(to, copy.handOver ?? to))
        if copied > from {
            for c in 0..<channels {
                history.copy(channel: c, from: copy.input + (from - copy.output), count: Int(copied - from), to: out[channel: c] + Int(from - position))
            }
        }
        guard let handOver = copy.handOver, to > copied else { return }
        // The stretch's frames first (gated), then the input's faded out under them.
        renderGated(from: copied, to: to, into: out)
        let n = Int(to - copied)
        withUnsafeTemporaryAllocation(of: Float.self, capacity: n) { scratch in
            for c in 0..<channels {
                history.copy(channel: c, from: copy.input + (copied - copy.output), count: n, to: scratch.baseAddress!)
                let d = out[channel: c] + Int(copied - position)
                for j in 0..<n {
                    let u = Double(copied - handOver + Int64(j)) + 0.5
                    let w = Float(0.5 - 0.5 * cos(Double.pi * u / Double(fade)))
                    d[j] = (1 - w) * scratch[j] + w * d[j]
                }
            }
        }
    }
}
