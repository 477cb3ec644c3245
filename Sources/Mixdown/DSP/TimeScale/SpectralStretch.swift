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
/// Two resolutions (docs/spectral.md): below `crossoverHz` the frame above, and above it a
/// frame half as long at half the hop, each engine synthesising its side of a raised-cosine
/// crossover (`mx_pvoc_set_band`), the two summed; the short frame's bins in the crossover
/// take the long frame's phases (`mx_pvoc_follow`), so the two sum in phase. Long frames
/// resolve the harmonics of a voice and the bass; short ones keep consonants, noise and
/// attacks tight in time. Measured on round-trip PESQ of 20 espeak-ng sentences against the
/// long frame alone: +0.11 to +0.27 from 0.5 to 2, every sentence better at 0.5 and 0.8.
/// Near ratio 1 the jobs take the long frame alone (`crossover(for:)`).
///
/// With `threads` 2, a helper thread analyses the frames after the ones being synthesised
/// (each engine's next step's worth) while they are synthesised: a pipeline, about half
/// the work on each core, and the same samples as one thread (no joins: the engines run
/// one pass over the file, as with one thread).
public final class SpectralStretch: AudioNode {
    public let format: AudioFormat
    public let ratio: StretchRatio
    public let outputFrames: Int64
    public var length: Int64? { outputFrames }
    /// The long analysis and synthesis frame, in frames (a power of two), and its output
    /// hop (an eighth of it).
    public let frameSize: Int
    public let hop: Int
    /// Long-frame hops in a step: the frames a step synthesises, and the helper analyses
    /// meanwhile. Eight, not one: each step hands a job to the helper and waits for it, and
    /// at one hop a step the handovers (a wake-up through the kernel when the helper has
    /// gone to sleep) cost an hour's stretch 17 s of system time. Steps are fixed by
    /// position, so the samples are the same at any step length.
    static let stepHops = 8
    /// Output frames in a step.
    private var stepLength: Int { hop * Self.stepHops }
    /// Where the long and short frames' engines cross over, Hz; nil for the long frame alone.
    public let crossoverHz: Double?
    /// Whether the output after an onset is divided by the window products of the frames
    /// that hold it (`mx_pvoc_set_deficit`), so that an attack keeps its level: with the
    /// long frame alone at the full rate (no crossover).
    public var renormalises: Bool { crossoverHz == nil }
    /// The long frame's engine runs on the input decimated by this factor (1: at the full
    /// rate). With a crossover it sounds only the band below it, so it can: 8 at 44.1 and
    /// 48 kHz, where it costs an eighth of its transforms (docs/spectral.md, "The long frame
    /// at a lower rate").
    public let longFrameDecimation: Int
    private let decimationFilters: DecimationFilters?
    private var decimatedInput: DecimatedInput?
    private var decimatedOutput: DecimatedOutput?
    private var onsetScratch: [Float] = []

    private let input: AudioNode
    private let inputFrames: Int64
    private let channels: Int

    /// One engine at one frame size: frame i is centred on output frame i·hop and on input
    /// frame round(i·hop / R); it completes output frames [i·hop − size/2, +hop). `size`
    /// and `hop` are in frames of the full rate; a lane decimated by D runs its engine on
    /// the input decimated by D (`DecimatedInput`), at size / D and hop / D, and its
    /// accumulator holds decimated frames.
    private final class Lane {
        let size: Int
        let hop: Int
        let decimation: Int
        var engineSize: Int { size / decimation }
        var engineHop: Int { hop / decimation }
        let engine: OpaquePointer
        let accumulator: AudioBuffer
        /// The band below the crossover as this lane makes it near onsets (the short frame's
        /// lane only; `mx_pvoc_synthesise_low`), overlap-added as `accumulator`.
        let low: AudioBuffer?
        /// The last frame that added to `low`; Int64.min once `low` is all zero again (it is
        /// moved with `accumulator` only while a frame's tail may be in it: an onset is rare,
        /// and the move cost the stretch 2 % of its instructions).
        var lastLow = Int64.min
        let gain: Float
        /// The window products the frames' cut inputs left out (`mx_pvoc_set_deficit`), one
        /// channel overlap-added as `accumulator`; nil where the lane does not renormalise.
        let deficit: AudioBuffer?
        var nextAnalysed: Int64
        var nextSynthesised: Int64
        /// The inputs of the frames the helper analyses: a pointer per channel, per frame, the
        /// frame's centre in the engine's input frames (rounded as analysed, and unrounded
        /// where the time map puts it), and its first onset ahead of the centre from its first
        /// frame (a decimated lane's, found on the full rate; NaN: the engine finds it).
        var jobs: [(pointers: UnsafeMutablePointer<UnsafePointer<Float>?>, position: Double, exact: Double, onset: Double)] = []
        var jobCount = 0
        /// Where the next frame adds its output: `accumulator` from `base` on. The frames
        /// before it left their tails in [base, base + size − hop); the rest is zero. The
        /// accumulator holds `slack` hops past a frame, so the tails move to its start once
        /// every `slack` frames, not a frame's length at every frame.
        var base = 0
        static let slack = 16
        var outPointers: [UnsafeMutablePointer<Float>?]
        var lowPointers: [UnsafeMutablePointer<Float>?]

        init(size: Int, hop: Int, decimation: Int, engine: OpaquePointer, format: AudioFormat, jobs: Int, low: Bool,
             renormalise: Bool) {
            self.size = size
            self.hop = hop
            self.decimation = decimation
            self.engine = engine
            let accumulator = AudioBuffer(format: format, capacity: (size + hop * Self.slack) / decimation)
            self.accumulator = accumulator
            self.low = low ? AudioBuffer(format: format, capacity: accumulator.capacity) : nil
            gain = Float(1 / mx_pvoc_window_gain(size / decimation, hop / decimation))
            deficit = renormalise ? AudioBuffer(channelCount: 1, capacity: accumulator.capacity) : nil
            nextAnalysed = -Int64(size / 2 / hop)
            nextSynthesised = nextAnalysed
            let channels = format.channelCount
            outPointers = (0..<channels).map { accumulator[channel: $0] }
            lowPointers = outPointers
            for _ in 0..<jobs {
                let p = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: channels)
                p.initialize(repeating: nil, count: channels)
                self.jobs.append((p, 0, 0, .nan))
            }
        }

        deinit {
            mx_pvoc_destroy(engine)
            for j in jobs { j.pointers.deallocate() }
        }

        /// The first output frame that frame i completes.
        func regionStart(_ i: Int64) -> Int64 { i * Int64(hop) - Int64(size / 2) }

        /// After a frame's first hop of output is taken: the next frame starts a hop later,
        /// and the tails move to the start when a frame would run past the end.
        func advance() {
            base += engineHop
            guard base + engineSize > accumulator.capacity else { return }
            shift(accumulator)
            if let deficit { shift(deficit) }
            if let low, lastLow != .min {
                // Past the last frame's tail (size / hop frames on), it holds nothing more to add.
                if nextSynthesised - lastLow <= Int64(size / hop) {
                    shift(low)
                } else {
                    for ch in 0..<outPointers.count { low[channel: ch].update(repeating: 0, count: low.capacity) }
                    lastLow = .min
                }
            }
            base = 0
        }

        /// Moves the tails (from `base`) to the start of `buffer` and clears the rest.
        private func shift(_ buffer: AudioBuffer) {
            for ch in 0..<buffer.channelCount {
                let a = buffer[channel: ch], tail = engineSize - engineHop
                a.update(from: a + base, count: tail)
                (a + tail).update(repeating: 0, count: buffer.capacity - tail)
            }
        }
    }

    private var lanes: [Lane] = []
    /// The long frame's last synthesis phases at the short frame's bins below `followBelow`
    /// (its bin 2m as bin m; by its frame number, a ring of leaderRing): the short frame centred on
    /// the same output frame takes them, so the two sum in phase across the crossover.
    private var leaderPhases: [[Float]] = []
    private static let leaderRing = 16
    /// Long frame i's slot in the ring (i may be negative: the first frames).
    private static func leaderSlot(_ i: Int64) -> Int { Int(i & Int64(leaderRing - 1)) }
    private var leaderFrame: [Int64] = []
    /// The phases an odd short frame takes: halfway between the two long frames round it.
    private var midPhases: [Float] = []
    private var followBelow = 0
    private var inputWindow: InputWindow?
    private var pending: PlanarFIFO?
    /// The output frames of a step: a view of the FIFO's free frames, which the lanes add to.
    private var staging: AudioBuffer?
    /// The first output frame of the next step (negative at first: the frames before
    /// output frame 0 are made and dropped, as the first frames' left halves).
    private var stepStart: Int64 = 0
    private let threads: Int
    private var helper: HelperThread?
    private var produced: Int64 = 0

    /// Near an onset the short frame makes the whole band (docs/spectral.md, "Onsets"): the
    /// long frame's output is weighted by E(t) and the short frame's band below the crossover
    /// by 1 − E(t), E 0 within `handHold` of where the time map puts the onset and rising to 1
    /// either side over raised-cosine ramps `handRamp` long (output frames).
    /// Each lane's band is exact on its own, so any E sums to the whole band; where E is 0 a
    /// click is one engine's, and the two crossovers' ringing round it (-35 dB of pre-echo at
    /// a stretch of 2, the long frame weighting a click cut at its onset unlike the short
    /// one) is gone.
    private let handHold: Int64
    private let handRamp: Int64
    /// Onsets found in the input (ascending): where the time map puts each (`output`, an
    /// output frame), its input frame, and whether it is an impulse. Input blocks of
    /// `onsetBlock` frames at multiples of it that the engine's own test takes for onsets
    /// (mx_onset_block: the channels' sum 30 dB over the eight blocks before); an impulse's first two blocks hold 100 times the energy of each of the eight after
    /// them (a click; the castanets' bursts hold 2 to 4 times).
    private var onsets: [(output: Int64, input: Int64, impulse: Bool)] = []
    private static let onsetBlock = Int64(MX_ONSET_BLOCK)
    /// The next input block to scan, and the last blocks' energies (a ring by block number);
    /// the energies of up to 32 blocks scanned at once.
    private var scanned: Int64 = 0
    private var blockEnergy = [Float](repeating: 0, count: 32)
    private var scanEnergy = [Float](repeating: 0, count: 32)
    /// E(t) over the step's output frames; `handing` when some is below 1.
    private var envelope: [Float] = []
    private var handing = false

    /// The spectral stretch as the jobs run it: finished where its input is quiet
    /// (`QuietEdges`: quiet stays quiet, and a sound after quiet starts as the input's own
    /// frames), and its peaks bounded by its input's
    /// (`PeakGuard`: at most 0.9 dB above the input's peak from half a second before where
    /// the time map puts each output frame to half a long frame after, and below full
    /// scale where the input is),
    /// every other sample the stretch's own. Its crossover is `crossover(for: ratio)`: the
    /// long frame alone near ratio 1.
    public static func guarded(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil,
                               threads: Int = 1) throws(MixdownError) -> AudioNode {
        let envelope = PeakEnvelope()
        let history = InputHistory(channelCount: input.format.channelCount, length: input.length)
        let stretch = try SpectralStretch(input: InputTap(input: input, envelope: envelope, history: history),
                                          ratio: ratio, outputFrames: outputFrames, crossoverHz: crossover(for: ratio), threads: threads)
        let edges = QuietEdges(input: stretch, history: history, ratio: ratio, copies: !stretch.renormalises)
        return PeakGuard(input: edges, envelope: envelope, ratio: ratio,
                         reach: Int64(stretch.frameSize / 2))
    }

    /// The crossover the jobs' stretch (`guarded`) takes at `ratio`: none, the long frame
    /// alone, near ratio 1 (max(R, 1/R) below `nearOne`, decided in exact integers);
    /// `standardCrossoverHz` beyond. Near 1 the short frame's gain (an attack's and a
    /// consonant's time) is small and its cost is not: it does not resolve a low voice's
    /// harmonics (110 Hz apart against its 47 Hz bins), which it turns apart from each
    /// other, and the round trip comes back further from the input. Measured on the bench's
    /// quick material (docs/spectral.md, "Near ratio 1: the long frame alone"): at 0.95 and
    /// 1.05 the round trip's log-spectral distance 1.85 / 1.58 → 1.71 / 1.51 dB (speech), 2.36 / 1.97
    /// → 2.05 / 1.68 (music), 1.87 / 1.51 → 1.10 / 1.00 (synthesised), level with or ahead of
    /// Signalsmith on speech and music where it trailed; the mono sum and the phase between
    /// channels exact; PESQ 0.05 to 0.08 lower but 0.24 to 0.50 over every peer's.
    public static func crossover(for ratio: StretchRatio) -> Double? {
        let larger = Int128(max(ratio.numerator, ratio.denominator)), smaller = Int128(min(ratio.numerator, ratio.denominator))
        return larger * Int128(nearOne.denominator) < smaller * Int128(nearOne.numerator) ? nil : standardCrossoverHz
    }
    /// Where the frames renormalise, an onset's phase reset takes every bin below this, Hz,
    /// and above it only the bins whose magnitude the onset at least doubled: the room noise
    /// over a plosive keeps its level (docs/spectral.md, "An onset over noise"). From 8 kHz
    /// the round trip's log-spectral distance paid 0.017 dB on speech, from 12 kHz 0.006.
    public static let onsetBandHz = 12_000.0
    /// The two resolutions' crossover, Hz (docs/spectral.md, "Two resolutions").
    public static let standardCrossoverHz = 800.0
    /// Where the jobs' stretch takes the short frame again: 9/8, between 1.1 (0.9), where
    /// the long frame alone was still level on PESQ (+0.01 [-0.03, +0.05] and -0.06 [-0.13,
    /// +0.01]) and 0.2 to 0.3 dB closer on log-spectral distance, and 1.25 (0.8), where two
    /// resolutions gained 0.15 (0.26) of PESQ (`crossover(for:)`).
    public static let nearOne = StretchRatio(9, 8)

    /// `frameSeconds`: the long frame's length, rounded to a power of two of frames.
    /// `crossoverHz`: where a frame half as long takes over (nil: the long frame alone).
    /// `threads`: 1, or 2 for the analysis on a helper thread (more are taken as 2).
    /// `decimate`: whether the long frame may run at a lower rate (`longFrameDecimation`).
    public init(input: AudioNode, ratio: StretchRatio, outputFrames: Int64? = nil, frameSeconds: Double = 0.0427,
                crossoverHz: Double? = standardCrossoverHz, threads: Int = 1, decimate: Bool = true) throws(MixdownError) {
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
        // The crossover's raised cosine is a quarter of its frequency wide; it must lie
        // below the Nyquist frequency, and the short frame must hold 64 frames.
        if let c = crossoverHz, c > 0, c * 1.125 < Double(format.sampleRate) / 2, size >= 128 {
            self.crossoverHz = c
        } else {
            self.crossoverHz = nil
        }
        if decimate, let c = self.crossoverHz {
            // The long frame analyses its band (to the crossover's top), its phases' reach
            // (four short bins more) and the two bins its Hann and derivative windows take from
            // the rectangular one; it sounds to the crossover's top. Flat 24 of its bins past
            // what it analyses, and 4 past what it sounds (its windows' main lobes).
            let rate = Double(format.sampleRate), bin = rate / Double(size)
            decimationFilters = DecimationFilters(rate: rate, analysed: c * 1.125 + 8 * bin + 2 * bin, margin: 24 * bin,
                                                  sounded: c * 1.125, spread: 4 * bin, maximum: min(size / 128, Int(MX_ONSET_BLOCK)))
        } else {
            decimationFilters = nil
        }
        longFrameDecimation = decimationFilters?.factor ?? 1
        self.threads = max(1, min(2, threads))
        // E is 0 over the output of the short frames that keep their own phases (nearOnset).
        let short = Int64(frameSize / 2 + frameSize / 16)
        handHold = short
        handRamp = Int64((20 * Double(format.sampleRate) / 1000).rounded())
    }

    deinit {
        helper?.stop()
    }

    /// Input frame at the centre of a lane's frame i: round(i·hop / R), halves away from zero.
    private func center(_ i: Int64, _ lane: Lane) -> Int64 {
        Int64(FrameRounding.standard.divide(Int128(i) * Int128(lane.hop) * Int128(ratio.denominator), by: Int128(ratio.numerator)))
    }

    /// `center(i, lane)` unrounded: i · hop / R input frames, where the time map puts the
    /// frame's centre (the rounding's remainder, under one frame, is added to the rounded
    /// centre exactly in `Double`). The remainder is smaller than the ratio's numerator, so
    /// it is an Int64: `Double` of an Int128 takes the standard library's generic path, 4 %
    /// of a stretch's time at 0.8.
    private func exactCenter(_ i: Int64, _ lane: Lane) -> Double {
        let q = Int128(i) * Int128(lane.hop) * Int128(ratio.denominator)
        let rounded = center(i, lane)
        let rest = Int64(q - Int128(rounded) * Int128(ratio.numerator))
        return Double(rounded) + Double(rest) / Double(ratio.numerator)
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(lanes.isEmpty, "prepare is called once")
        try input.prepare(maximumFrames: maximumFrames)
        var sizes = [frameSize]
        if crossoverHz != nil { sizes.append(frameSize / 2) }
        for (k, size) in sizes.enumerated() {
            let d = k == 0 ? longFrameDecimation : 1
            guard let e = mx_pvoc_create(size / d, size / 8 / d, channels) else {
                throw .invalidParameter(name: "spectral stretch", value: "\(size) frames, \(channels) channels", reason: "cannot be made (1 to 64 channels)")
            }
            if let c = crossoverHz {
                // In cycles per frame of the engine's own rate (the rate / d).
                let rate = Double(format.sampleRate) / Double(d)
                // The long frame's phases reach four short-frame bins past the crossover's top.
                guard mx_pvoc_set_band(e, Int32(k), c / rate, c / 4 / rate, 4 * Double(d) / Double(frameSize / 2)) == 0,
                      mx_pvoc_set_decimation(e, d) == 0 else {
                    mx_pvoc_destroy(e)
                    throw .invalidParameter(name: "spectral stretch", value: "a crossover at \(c) Hz", reason: "must lie below the Nyquist frequency")
                }
            }
            // Renormalised: cut at an onset compressing too, and landed by it (docs/spectral.md).
            mx_pvoc_set_renormalised(e, renormalises && d == 1 ? 1 : 0)
            // An onset resets every bin below onsetBandHz, and above it only those it brought.
            let onsetBand = min(0.5, Self.onsetBandHz / (Double(format.sampleRate) / Double(d)))
            precondition(mx_pvoc_set_onset_band(e, onsetBand) == 0, "the onset band lies within 0 to 1/2")
            if let c = crossoverHz, k == 1 {
                // The short frame's bins to two past the crossover's top: a partial sounding in
                // the crossover has its short frame's main lobe (two bins each side) there, and
                // the long frame's phases reach two bins further (following only to the
                // crossover's top, a partial at 950 Hz lost 0.6 dB; to its middle, 840 Hz 6 dB).
                followBelow = min(Int((c * 1.125 / Double(format.sampleRate) * Double(size)).rounded(.up)) + 2, size / 2 + 1)
                // The short frame centred on a long one is synthesised up to stepHops + 2 long
                // frames after it.
                leaderPhases = Array(repeating: Array(repeating: 0, count: followBelow), count: Self.leaderRing)
                leaderFrame = Array(repeating: Int64.min, count: Self.leaderRing)
                midPhases = Array(repeating: 0, count: followBelow)
            }
            // A step is stepHops of the long frame's hops: the lane of frames half as long makes
            // twice as many.
            // (The long frame's lane synthesises ahead of the step by the interpolator's reach:
            // one frame more in the first step.)
            lanes.append(Lane(size: size, hop: size / 8, decimation: d, engine: e, format: format, jobs: stepLength / (size / 8) + 1, low: k == 1,
                              renormalise: renormalises && d == 1))
        }
        // Held at once: the frames of every lane that a step analyses, from the first one
        // any lane still needs (their centres lie within a few hops of input of each other).
        let advance = Int((Double(hop) / ratio.doubleValue).rounded(.up)) + 2
        // The onsets are scanned ahead of the frames: their hand-over reaches a short frame's
        // length, a hop and handHold + handRamp of output past a step's end.
        let scanAhead = Int((Double(frameSize / 2 + hop / 2 + Int(handHold + handRamp)) / ratio.doubleValue).rounded(.up)) + 12 * Int(Self.onsetBlock)
        let filterReach = decimationFilters.map { 2 * $0.decimator.taps } ?? 0
        let capacity = 2 * frameSize + 8 * advance * Self.stepHops + 16 + (crossoverHz != nil ? scanAhead : 0) + filterReach
        stepStart = lanes.map { $0.regionStart($0.nextSynthesised) }.min()!
        if let filters = decimationFilters {
            let long = lanes[0]
            onsetScratch = [Float](repeating: 0, count: frameSize / Int(MX_ONSET_BLOCK) + 1)
            decimatedInput = DecimatedInput(channels: channels, capacity: capacity / filters.factor + long.engineSize + 16,
                                            filter: filters.decimator, factor: filters.factor, start: dataStart(long.nextAnalysed, long))
            decimatedOutput = DecimatedOutput(channels: channels, outputs: stepLength, filter: filters.interpolator, factor: filters.factor,
                                              first: long.regionStart(long.nextSynthesised) / Int64(filters.factor))
        }
        inputWindow = InputWindow(input: input, length: inputFrames, capacity: capacity, maximumPull: maximumFrames,
                                  start: lanes.map { firstInput($0.nextAnalysed, $0) }.min()!, label: "spectral stretch input")
        staging = AudioBuffer(viewWithChannelCount: channels, capacity: stepLength)
        envelope = [Float](repeating: 1, count: stepLength)
        pending = PlanarFIFO(channelCount: channels, capacity: maximumFrames + stepLength + frameSize)
        if threads > 1 {
            let lanes = self.lanes
            helper = HelperThread(name: "mixdown.spectral", spins: 2_000) {
                for lane in lanes {
                    for j in 0..<lane.jobCount { mx_pvoc_analyse_mapped(lane.engine, lane.jobs[j].pointers, lane.jobs[j].position, lane.jobs[j].exact, lane.jobs[j].onset) }
                }
            }
        }
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        try pending.renderHops(into: buffer, frames: frames, produced: &produced, total: outputFrames, step: step)
    }

    /// The first frame of a lane's frame i's input, in the engine's input frames: the full
    /// rate's, or a decimated lane's (its frame centred on floor(c / D + 1/2), c the
    /// full-rate centre, as mx_pvoc_analyse takes it).
    private func dataStart(_ i: Int64, _ lane: Lane) -> Int64 {
        let c = center(i, lane)
        guard lane.decimation > 1 else { return c - Int64(lane.size / 2) }
        let d = Int128(lane.decimation)
        return Int64(FrameRounding.down.divide(2 * Int128(c) + d, by: 2 * d)) - Int64(lane.engineSize / 2)
    }

    /// The first full-rate input frame that a lane's frame i reads (a decimated lane: that
    /// its first decimated frame reads), and one past the last.
    private func firstInput(_ i: Int64, _ lane: Lane) -> Int64 {
        lane.decimation > 1 ? decimatedInput!.firstInput(of: dataStart(i, lane)) : dataStart(i, lane)
    }
    private func endInput(_ i: Int64, _ lane: Lane) -> Int64 {
        lane.decimation > 1 ? decimatedInput!.endInput(of: dataStart(i, lane) + Int64(lane.engineSize) - 1) : dataStart(i, lane) + Int64(lane.size)
    }

    /// Makes the window hold the input of lane frames up to input frame `end`, from the
    /// first frame any lane has still to read (the window only moves forward).
    private func hold(through end: Int64) throws(MixdownError) {
        // (A decimated lane has decimated past its next frame's start, so that frame's first
        // input is also the first its decimation and its full-rate onset search read.)
        let low = lanes.map { firstInput($0.nextAnalysed, $0) }.min()!
        let window = inputWindow!, high = max(end, window.end)
        // Frames are dropped only when the window must make room: each drop moves all it
        // holds, and the onsets' look-ahead made that a memmove per frame analysed.
        try window.slide(from: high - window.start > Int64(window.capacity) ? low : window.start, to: high)
    }

    /// A decimated lane's input, computed through its frame i (the window holds what it reads).
    private func decimate(_ lane: Lane, through i: Int64) {
        guard lane.decimation > 1 else { return }
        decimatedInput!.fill(through: dataStart(i, lane) + Int64(lane.engineSize) - 1, keeping: dataStart(lane.nextAnalysed, lane), from: inputWindow!)
    }

    /// Points a lane's job `j` at the input of its frame `i` (held in the window, or
    /// decimated).
    private func aim(_ lane: Lane, job j: Int, frame i: Int64) {
        let start = dataStart(i, lane)
        for ch in 0..<channels {
            lane.jobs[j].pointers[ch] = UnsafePointer(lane.decimation > 1 ? decimatedInput!.pointer(ch, at: start) : inputWindow!.pointer(ch, at: start))
        }
        lane.jobs[j].position = Double(center(i, lane)) / Double(lane.decimation)
        lane.jobs[j].exact = exactCenter(i, lane) / Double(lane.decimation)
        lane.jobs[j].onset = lane.decimation > 1 ? fullRateOnset(i, lane) : .nan
    }

    /// A decimated lane's frame i: its first onset at or after its centre, found as a frame
    /// of the full rate would (mx_onset_ahead_of: the decimating filter's pre-ringing starts
    /// a sound after silence a millisecond early), in decimated frames from the frame's
    /// first; the engine's length for none. Only stretching (the engine cuts at onsets only
    /// then).
    private func fullRateOnset(_ i: Int64, _ lane: Lane) -> Double {
        guard ratio.numerator > ratio.denominator else { return Double(lane.engineSize) }
        let first = center(i, lane) - Int64(lane.size / 2)
        let cut = withUnsafeTemporaryAllocation(of: UnsafePointer<Float>?.self, capacity: channels) { src in
            for c in 0..<channels { src[c] = UnsafePointer(inputWindow!.pointer(c, at: first)) }
            return onsetScratch.withUnsafeMutableBufferPointer { mx_onset_ahead_of($0.baseAddress, src.baseAddress, channels, lane.size) }
        }
        guard cut < lane.size else { return Double(lane.engineSize) }
        return Double(first + Int64(cut)) / Double(lane.decimation) - Double(dataStart(i, lane))
    }

    /// Analyses a lane's next frame, on this thread.
    private func analyse(_ lane: Lane) throws(MixdownError) {
        try hold(through: endInput(lane.nextAnalysed, lane))
        decimate(lane, through: lane.nextAnalysed)
        aim(lane, job: 0, frame: lane.nextAnalysed)
        mx_pvoc_analyse_mapped(lane.engine, lane.jobs[0].pointers, lane.jobs[0].position, lane.jobs[0].exact, lane.jobs[0].onset)
        lane.nextAnalysed += 1
    }

    /// Synthesises every lane's frames that complete output in this step, adds them to the
    /// step's frames, and moves those from output frame 0 on to the FIFO.
    private func step() throws(MixdownError) {
        let stepEnd = stepStart + Int64(stepLength)
        if lanes.count > 1 {
            let short = lanes[1]
            try scanOnsets(through: stepEnd + Int64(short.size / 2 + short.hop) + handHold + handRamp)
            shapeEnvelope(from: stepStart, to: stepEnd, reach: Int64(frameSize))
        }
        // Frames each lane synthesises in this step, with one frame of look-ahead analysed.
        // A decimated lane makes its output as far past the step as the interpolator reads.
        let counts = lanes.map { lane in
            let end = stepEnd + (lane.decimation > 1 ? decimatedOutput!.lookahead : 0)
            return Int(max(0, (end - lane.regionStart(lane.nextSynthesised) + Int64(lane.hop) - 1) / Int64(lane.hop)))
        }
        for (lane, k) in zip(lanes, counts) {
            while lane.nextAnalysed < lane.nextSynthesised + Int64(k) + 1 { try analyse(lane) }
        }
        // The step is synthesised straight into the queue's free frames (no copy after).
        let out = staging!, fifo = pending!
        fifo.aimWrite(out, room: stepLength)
        if let helper {
            // The next step's frames are analysed on the helper while these are synthesised.
            var end = Int64.min
            for (lane, k) in zip(lanes, counts) {
                lane.jobCount = k
                if k > 0 { end = max(end, endInput(lane.nextAnalysed + Int64(k) - 1, lane)) }
            }
            if end > Int64.min { try hold(through: end) }
            for (lane, k) in zip(lanes, counts) {
                if k > 0 { decimate(lane, through: lane.nextAnalysed + Int64(k) - 1) }
                for j in 0..<k { aim(lane, job: j, frame: lane.nextAnalysed + Int64(j)) }
            }
            helper.start()
            synthesise(counts)
            helper.wait()
            for (lane, k) in zip(lanes, counts) { lane.nextAnalysed += Int64(k) }
        } else {
            synthesise(counts)
        }
        let length = stepLength
        let skip = Int(max(0, min(Int64(length), -stepStart)))
        if skip < length {
            fifo.didWrite(length)
            // Frames before output frame 0: only in the first step that gives any, so the
            // queue holds this step alone.
            if skip > 0 {
                precondition(fifo.count == length, "spectral stretch: frames before the output's start after it began")
                fifo.discard(skip)
            }
        }
        stepStart = stepEnd
    }

    /// Finds the percussive onsets of the input up to where output frame `outputEnd` plays
    /// it: an onset whose first two blocks hold on average at least 4 times (6 dB) the
    /// energy of each of the eight after them (a click, a hit that falls 6 dB within 2 ms).
    /// Measured on the bench's material: every click at +308 dB, the castanets' bursts at +2
    /// to +6, the onsets of espeak-ng's words at -27 to +3 but for one plosive at +14, none
    /// in the fluidsynth pieces. An onset that rises keeps the two resolutions: handed over,
    /// the low band of 30 speech onsets in 3 s lost the long frame's resolution for 90 ms
    /// each, and round-trip PESQ 0.3; at twice, the one word at +3 dB cost its sentence 0.05.
    /// Its crossover's ringing, 35 dB below the onset, is masked by what follows it.
    private func scanOnsets(through outputEnd: Int64) throws(MixdownError) {
        let b = Self.onsetBlock, judged: Int64 = 10   // the onset's block, and nine after it
        let inputEnd = Int64(FrameRounding.up.divide(Int128(outputEnd) * Int128(ratio.denominator), by: Int128(ratio.numerator)))
        let target = (inputEnd + b) / b * b + judged * b
        guard target > scanned else { return }
        try hold(through: target)
        let window = inputWindow!
        func e(_ block: Int64) -> Float { block < 0 ? 0 : blockEnergy[Int(block & 31)] }
        while scanned < target {
            let count = Int(min(Int64(scanEnergy.count), (target - scanned) / b))
            withUnsafeTemporaryAllocation(of: UnsafePointer<Float>?.self, capacity: channels) { src in
                for c in 0..<channels { src[c] = UnsafePointer(window.pointer(c, at: scanned)) }
                scanEnergy.withUnsafeMutableBufferPointer { mx_block_energy($0.baseAddress, src.baseAddress, channels, count) }
            }
            for k in 0..<count {
                let newest = scanned / b
                blockEnergy[Int(newest & 31)] = scanEnergy[k]
                scanned += b
                // The block judged now: `judged - 1` blocks before the newest.
                let q = newest - (judged - 1)
                let before = (1...8).reduce(Float(0)) { $0 + e(q - Int64($1)) }
                guard mx_onset_block(e(q), before) != 0 else { continue }
                let after = (2..<judged).reduce(Float(0)) { $0 + e(q + $1) } / Float(judged - 2)
                guard (e(q) + e(q + 1)) / 2 >= 4 * after else { continue }
                // Input frame p plays at output frame p·R (to the nearest).
                onsets.append((output: Int64(FrameRounding.standard.divide(Int128(q * b) * Int128(ratio.numerator), by: Int128(ratio.denominator))),
                               input: q * b, impulse: (e(q) + e(q + 1)) / 2 >= 100 * after))
            }
        }
    }

    /// E(t) for output frames [start, end) into `envelope`; drops the onsets no frame from
    /// `reach` before `start` on can touch.
    private func shapeEnvelope(from start: Int64, to end: Int64, reach: Int64) {
        let reachOfOne = handHold + handRamp
        onsets.removeAll { $0.output + reachOfOne < start - reach }
        if handing { for t in envelope.indices { envelope[t] = 1 } }
        handing = false
        for o in onsets.lazy.map(\.output) where o - reachOfOne < end && o + reachOfOne > start {
            handing = true
            let from = max(start, o - reachOfOne), to = min(end, o + reachOfOne)
            for t in from..<to {
                let u = abs(t - o)
                let e = u > handHold ? Float(0.5 + 0.5 * cos(Double.pi * Double(u - handHold) / Double(handRamp))) : 0
                let i = Int(t - start)
                envelope[i] = min(envelope[i], e)
            }
        }
    }

    /// Whether the short frame i makes the band below the crossover too: its pair of frames
    /// (2m, 2m + 1; the even one takes the long frame's phases, so a run of them begins
    /// with phases for every bin) reaches an onset's hand-over.
    private func makesLow(_ i: Int64, _ lane: Lane) -> Bool {
        let pair = i & ~1
        let lo = lane.regionStart(pair), hi = lane.regionStart(pair + 1) + Int64(lane.size)
        let reach = handHold + handRamp
        return onsets.contains { $0.output - reach < hi && $0.output + reach > lo }
    }

    /// Whether the short frame i is centred within its half-length and a hop of an onset:
    /// it keeps its own phases (the long frame's, taken there, put a click's low band
    /// elsewhere: pre-echo -40 dB at 2, against -114 dB with its own). Its output lies where
    /// E is 0 (`handHold`), so the long frame does not sound with it.
    private func nearOnset(_ i: Int64, _ lane: Lane) -> Bool {
        let c = i * Int64(lane.hop), reach = Int64(lane.size / 2 + lane.hop)
        return onsets.contains { abs($0.output - c) <= reach }
    }

    /// Compressing, 1 (a phase reset) for a lane's frame i whose input holds an impulse.
    /// Each such frame then lands the click on a whole output frame of its own (`mx_land`);
    /// integrated from the first of them (the click at its far edge), the frequency-direction
    /// slope put it R d from each centre, between samples, where a band-limited click rings
    /// as a sinc: -40 to -44 dB of pre-echo at 1/2 and 4/5 (the bench's window), -118 to
    /// -120 dB with the resets. Only for an impulse: reset in every frame that held them,
    /// the castanets' bursts lost their tails' continuity (ViSQOL round trip 4.71 -> 4.56
    /// at 4/5). Stretching, the frames before the onset are cut at it, and the one centred
    /// on it resets already.
    private func holds(_ i: Int64, _ lane: Lane) -> Int32 {
        guard ratio.numerator < ratio.denominator else { return 0 }
        let c = center(i, lane), half = Int64(lane.size / 2)
        return onsets.contains { $0.impulse && $0.input > c - half && $0.input < c + half } ? 1 : 0
    }

    /// The phases the short frame i takes below `followBelow` (nil: none, when a long frame
    /// it needs is not in the ring): an even one, centred on long frame i/2, that frame's
    /// as a short frame sees them; an odd one, halfway between the long frames i/2 and
    /// i/2 + 1, halfway between theirs. The long frame's hop is the short one's bin k
    /// turning by k·π/2, so the turn between them is that plus the principal value of the
    /// rest (a partial within two long bins of the bin's centre turns by less than π/2 more).
    /// Measured against following the even frames only, with the long frame's bin 2k for
    /// bin k (a short frame's bin between two harmonics 110 Hz apart took the phase of a
    /// long bin between them, and the odd frames their own, and the two lanes cancelled
    /// across the crossover: -3 dB at 800 Hz in a sentence's round trip at 1.05): round-trip
    /// PESQ on 6 espeak-ng sentences +0.06, +0.05, +0.04, +0.06, +0.04 at 0.5, 0.8, 1.05,
    /// 1.25, 2; ViSQOL on those and 3 pieces -0.004, +0.004, +0.006, +0.004, -0.003.
    private func follow(_ i: Int64) -> [Float]? {
        let m = i >> 1   // rounded down: frame -1 lies between long frames -1 and 0
        guard leaderFrame[Self.leaderSlot(m)] == m else { return nil }
        let a = leaderPhases[Self.leaderSlot(m)]
        if i & 1 == 0 { return a }
        guard leaderFrame[Self.leaderSlot(m + 1)] == m + 1 else { return nil }
        let b = leaderPhases[Self.leaderSlot(m + 1)]
        // A long hop turns the short frame's bin k by 2π k (long hop) / (short size): π/2 a bin
        // with every hop an eighth of its frame (exactly, in Float: the ratio is a power of two).
        let turnPerBin = 2 * Float.pi * Float(lanes[0].hop) / Float(lanes[1].size)
        for k in 0..<followBelow {
            let turn = turnPerBin * Float(k)
            var rest = b[k] - a[k] - turn
            rest -= 2 * Float.pi * (rest / (2 * Float.pi)).rounded()
            midPhases[k] = a[k] + 0.5 * (turn + rest)
        }
        return midPhases
    }

    /// A lane's hop just completed (from `base`), divided by the window products of the
    /// frames that hold it where onset cuts left some out (`deficit`) rather than by the
    /// whole sum: a sound after an onset is in only the frames centred after it, and came
    /// out up to 6 dB low where it starts. The gain is at most 4 times the whole sum's.
    private func renormalise(_ lane: Lane, _ deficit: UnsafeMutablePointer<Float>) {
        let whole = 1 / lane.gain
        for ch in 0..<channels {
            let a = lane.accumulator[channel: ch] + lane.base
            for t in 0..<lane.hop where deficit[t] != 0 {
                a[t] *= whole / max(whole - deficit[t], whole / 4)
            }
        }
    }

    /// Each lane's `counts` frames into the step's frames (from output frame `stepStart`).
    private func synthesise(_ counts: [Int]) {
        let out = staging!
        for ch in 0..<channels { out[channel: ch].update(repeating: 0, count: stepLength) }
        for (index, (lane, k)) in zip(lanes, counts).enumerated() {
            let acc = lane.accumulator, h = lane.hop
            for _ in 0..<k {
                let i = lane.nextSynthesised
                // The short frame centred where a long one was (every other one): its phases;
                // the one between two long frames: halfway between theirs (`follow`).
                if index == 1, !nearOnset(i, lane), let phases = follow(i) {
                    mx_pvoc_follow(lane.engine, phases, followBelow)
                }
                for ch in 0..<channels { lane.outPointers[ch] = acc[channel: ch] + lane.base }
                mx_pvoc_set_deficit(lane.engine, lane.deficit.map { $0[channel: 0] + lane.base })
                if let low = lane.low, makesLow(i, lane) {
                    lane.lastLow = i
                    for ch in 0..<channels { lane.lowPointers[ch] = low[channel: ch] + lane.base }
                    lane.outPointers.withUnsafeBufferPointer { p in
                        lane.lowPointers.withUnsafeBufferPointer { l in mx_pvoc_synthesise_low(lane.engine, p.baseAddress, l.baseAddress, holds(i, lane)) }
                    }
                } else {
                    lane.outPointers.withUnsafeBufferPointer { p in mx_pvoc_synthesise(lane.engine, p.baseAddress, holds(i, lane)) }
                }
                if index == 0, !leaderFrame.isEmpty {
                    let slot = Self.leaderSlot(i)
                    leaderPhases[slot].withUnsafeMutableBufferPointer { mx_pvoc_phases_halved(lane.engine, $0.baseAddress, followBelow) }
                    leaderFrame[slot] = i
                }
                if lane.decimation > 1, let decimated = decimatedOutput {
                    // At the decimated rate: interpolated into the step below.
                    decimated.append({ acc[channel: $0] + lane.base }, count: lane.engineHop, gain: lane.gain, keeping: decimated.firstRead(from: stepStart))
                    lane.advance()
                    lane.nextSynthesised += 1
                    continue
                }
                let offset = Int(lane.regionStart(i) - stepStart)
                if let deficit = lane.deficit { renormalise(lane, deficit[channel: 0] + lane.base) }
                for ch in 0..<channels {
                    let a = acc[channel: ch] + lane.base, o = out[channel: ch] + offset
                    if !handing {
                        for t in 0..<h { o[t] += a[t] * lane.gain }
                    } else if let low = lane.low {
                        let l = low[channel: ch] + lane.base
                        for t in 0..<h { o[t] += (a[t] + (1 - envelope[offset + t]) * l[t]) * lane.gain }
                    } else {
                        for t in 0..<h { o[t] += a[t] * lane.gain * envelope[offset + t] }
                    }
                }
                lane.advance()
                lane.nextSynthesised += 1
            }
            if lane.decimation > 1, let decimated = decimatedOutput {
                if handing {
                    envelope.withUnsafeBufferPointer { decimated.interpolate(from: stepStart, into: out, envelope: $0.baseAddress) }
                } else {
                    decimated.interpolate(from: stepStart, into: out, envelope: nil)
                }
            }
        }
    }
}
