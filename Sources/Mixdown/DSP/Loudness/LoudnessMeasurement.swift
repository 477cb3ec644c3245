import Foundation

/// A stream's loudness as EBU R128 defines it (ITU-R BS.1770-4 with the gating of EBU Tech
/// 3341 and the loudness range of Tech 3342), and its peaks.
public struct LoudnessMeasurement: Sendable, Equatable {
    /// Integrated (programme) loudness, LUFS: the mean of the 400 ms blocks (overlapping
    /// by 75 %) above the absolute gate (-70 LUFS) and the relative gate (10 LU below the
    /// mean of those). `-infinity` when no block passes the absolute gate: silence, or a
    /// stream shorter than one block.
    public let integrated: Double
    /// Loudness range, LU: the spread between the 10th and the 95th percentiles of the
    /// 3 s short-term loudness (every 100 ms) above -70 LUFS and 20 LU below their mean;
    /// 0 when no short-term block passes.
    public let range: Double
    /// The largest absolute value of the signal reconstructed between samples (4x
    /// oversampled below 96 kHz), or of the samples when higher, dBTP; `-infinity` for
    /// digital silence.
    public let truePeak: Double
    /// The finer reading of the same peak (`TruePeakInterpolator.fine`: 8x, 64 taps), dBTP,
    /// when it was asked for: what the limiter holds and the output check reads, at or
    /// above other meters' figures. Nil when not measured.
    public let truePeakFine: Double?
    /// The largest absolute sample, dBFS; `-infinity` for digital silence.
    public let samplePeak: Double
    /// The loudest 3 s short-term window, read at 1 ms steps, LUFS (`-infinity` when the
    /// stream is shorter).
    public let shortTermMaximum: Double
    /// The loudest 400 ms momentary window, read at 1 ms steps, LUFS.
    public let momentaryMaximum: Double
    /// Frames measured (frames, not samples).
    public let frames: Int64
    /// The mean squares of the 400 ms blocks (channel-weighted), for `gain(reaching:)`;
    /// not encoded.
    let blocks: [Double]
    public let sampleRate: Int
    public let channelCount: Int

    /// Loudness of a mean square `z` (already channel-weighted): -0.691 + 10 log10 z.
    static func loudness(meanSquare z: Double) -> Double {
        z > 0 ? -0.691 + 10 * log10(z) : -.infinity
    }

    /// The mean square that has `lufs` of loudness.
    static func meanSquare(loudness lufs: Double) -> Double {
        pow(10, (lufs + 0.691) / 10)
    }

    /// The gated mean of `blocks` (mean squares): those at or above the absolute gate,
    /// then those at or above `relative` dB below the mean of the first set. Returns the
    /// blocks kept (sorted not required) and their mean.
    static func gated(_ blocks: [Double], relative: Double) -> [Double] {
        guard let threshold = relativeThreshold(blocks, relative: relative) else { return [] }
        return blocks.filter { $0 >= threshold.absolute && $0 >= threshold.relative }
    }

    /// The gates' mean squares: the absolute gate's (-70 LUFS), and `relative` dB below the
    /// mean of the blocks at or above it; nil when none is.
    static func relativeThreshold(_ blocks: [Double], relative: Double) -> (absolute: Double, relative: Double)? {
        let absolute = meanSquare(loudness: -70)
        let loud = blocks.filter { $0 >= absolute }
        guard !loud.isEmpty else { return nil }
        return (absolute, loud.reduce(0, +) / Double(loud.count) * pow(10, relative / 10))
    }

    /// The integrated loudness's relative gate of 400 ms `blocks`, LUFS: 10 LU below the
    /// mean of those above the absolute gate; nil when none is.
    static func relativeGate(of blocks: [Double]) -> Double? {
        relativeThreshold(blocks, relative: -10).map { loudness(meanSquare: $0.relative) }
    }

    /// The measurement from a stream's 100 ms segments (`segments[s]` is the
    /// channel-weighted sum of squared K-weighted samples of segment s, `segmentFrames`
    /// frames each), its linear peaks, and the mean squares of its loudest momentary and
    /// short-term windows (0 when it has none).
    init(segments: [Double], segmentFrames: Int, truePeak: Double, truePeakFine: Double?, samplePeak: Double,
         momentaryMaximum: Double, shortTermMaximum: Double, frames: Int64, sampleRate: Int, channelCount: Int) {
        let momentary = Self.blocks(of: 4, segments: segments, segmentFrames: segmentFrames)
        self.blocks = momentary
        integrated = Self.integrated(of: momentary)
        range = Self.rangeBounds(Self.blocks(of: 30, segments: segments, segmentFrames: segmentFrames)).map { $0.high - $0.low } ?? 0
        self.momentaryMaximum = Self.loudness(meanSquare: momentaryMaximum)
        self.shortTermMaximum = Self.loudness(meanSquare: shortTermMaximum)
        self.truePeak = Self.decibels(truePeak)
        self.truePeakFine = truePeakFine.map(Self.decibels)
        self.samplePeak = Self.decibels(samplePeak)
        self.frames = frames
        self.sampleRate = sampleRate
        self.channelCount = channelCount
    }

    /// The mean squares of the blocks of `count` segments ending at each segment from the
    /// `count`th on (4: momentary, 400 ms; 30: short-term, 3 s).
    static func blocks(of count: Int, segments: [Double], segmentFrames: Int) -> [Double] {
        guard segments.count >= count else { return [] }
        var out = [Double](repeating: 0, count: segments.count - count + 1)
        let norm = 1 / Double(count * segmentFrames)
        for end in (count - 1)..<segments.count {
            var sum = 0.0
            for s in (end - count + 1)...end { sum += segments[s] }
            out[end - count + 1] = sum * norm
        }
        return out
    }

    /// The loudness range's ends, LUFS: the 10th and 95th percentiles of the short-term
    /// blocks above -70 LUFS and 20 LU below their mean (nearest rank, rounding half up, as
    /// libebur128 and Tech 3342's example code do); nil when none passes.
    static func rangeBounds(_ shortTerm: [Double]) -> (low: Double, high: Double)? {
        let spread = gated(shortTerm, relative: -20).map { loudness(meanSquare: $0) }.sorted()
        guard !spread.isEmpty else { return nil }
        let last = Double(spread.count - 1)
        return (spread[Int(last * 0.10 + 0.5)], spread[Int(last * 0.95 + 0.5)])
    }

    /// The integrated loudness the stream would have with `gain` dB applied to every
    /// sample. Not simply `integrated + gain`: the absolute gate (-70 LUFS) does not move
    /// with the signal, so blocks cross it, and the relative gate moves with their mean.
    public func integrated(withGain gain: Double) -> Double {
        let g = pow(10, gain / 10)
        return Self.integrated(of: blocks.map { $0 * g })
    }

    /// Integrated loudness of 400 ms blocks (mean squares): their gated mean, or -infinity
    /// when none passes the gates.
    static func integrated(of blocks: [Double]) -> Double {
        let kept = gated(blocks, relative: -10)
        return kept.isEmpty ? -.infinity : loudness(meanSquare: kept.reduce(0, +) / Double(kept.count))
    }

    /// The gain (dB) that brings the integrated loudness to `target` exactly, the gating
    /// included: fixed-point steps from `target - integrated` (at most eight; the closest
    /// is kept when blocks flipping across a gate make the steps circle). Nil when silent.
    public func gain(reaching target: Double) -> Double? {
        guard integrated.isFinite else { return nil }
        var gain = target - integrated, best = gain, bestMiss = Double.infinity
        for _ in 0..<8 {
            let reached = integrated(withGain: gain)
            guard reached.isFinite else { break }
            let miss = target - reached
            if abs(miss) < bestMiss { best = gain; bestMiss = abs(miss) }
            if abs(miss) < 1e-9 { break }
            gain += miss
        }
        return best
    }

    /// 20 log10 of a linear amplitude; -infinity for 0.
    static func decibels(_ amplitude: Double) -> Double {
        amplitude > 0 ? 20 * log10(amplitude) : -.infinity
    }
}

extension LoudnessMeasurement: Codable {
    /// The keys of `--json`; a value of -infinity (silence) is written as null.
    enum CodingKeys: String, CodingKey {
        case integrated = "integratedLufs", range = "rangeLu", truePeak = "truePeakDbtp", samplePeak = "samplePeakDbfs"
        case truePeakFine = "truePeakFineDbtp"
        case shortTermMaximum = "maxShortTermLufs", momentaryMaximum = "maxMomentaryLufs"
        case frames, sampleRate, channelCount = "channels"
    }

    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        func value(_ key: CodingKeys) throws -> Double { try c.decodeIfPresent(Double.self, forKey: key) ?? -.infinity }
        integrated = try value(.integrated)
        range = try c.decodeIfPresent(Double.self, forKey: .range) ?? 0
        truePeak = try value(.truePeak)
        samplePeak = try value(.samplePeak)
        truePeakFine = c.contains(.truePeakFine) ? try value(.truePeakFine) : nil
        shortTermMaximum = try value(.shortTermMaximum)
        momentaryMaximum = try value(.momentaryMaximum)
        frames = try c.decode(Int64.self, forKey: .frames)
        sampleRate = try c.decode(Int.self, forKey: .sampleRate)
        channelCount = try c.decode(Int.self, forKey: .channelCount)
        blocks = []
    }

    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func finite(_ v: Double, _ key: CodingKeys) throws {
            if v.isFinite { try c.encode((v * 1000).rounded() / 1000, forKey: key) } else { try c.encodeNil(forKey: key) }
        }
        try finite(integrated, .integrated)
        try finite(range, .range)
        try finite(truePeak, .truePeak)
        try finite(samplePeak, .samplePeak)
        if let truePeakFine { try finite(truePeakFine, .truePeakFine) }
        try finite(shortTermMaximum, .shortTermMaximum)
        try finite(momentaryMaximum, .momentaryMaximum)
        try c.encode(frames, forKey: .frames)
        try c.encode(sampleRate, forKey: .sampleRate)
        try c.encode(channelCount, forKey: .channelCount)
    }
}
