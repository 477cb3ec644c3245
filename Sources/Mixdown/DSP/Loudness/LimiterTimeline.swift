import Foundation

/// What a `TruePeakLimiter` did over time, for a report to draw: its gain reduction along
/// the stream, in dB (0: the signal passed untouched; -3: the limiter took 3 dB off).
///
/// The limiter's gain is recorded per 100 ms segment as the lowest gain applied to any of
/// its frames (a segment's frames follow linear ramps between chunk decisions, so the
/// lowest is at a ramp's end); a long stream is drawn from at most `points` points, each the
/// deepest reduction of its span of segments, so no limited peak is averaged away.
public struct LimiterTimeline: Sendable, Equatable {
    /// Frames per point (whole segments: frames, not samples), and the rate.
    public let framesPerPoint: Int
    public let sampleRate: Int
    /// Per point: the deepest gain reduction applied in its span, dB (at most 0).
    public let gainReduction: [Double]
    /// The deepest gain reduction of the whole stream, dB (at most 0).
    public let maximumGainReduction: Double
    /// Frames whose segment the limiter reduced by more than `audibleReduction` dB: how much
    /// of the stream it worked on, in whole segments.
    public let limitedFrames: Int64
    /// The reduction from which a segment counts as limited, dB.
    public static let audibleReduction = -0.1

    /// From the lowest linear gain of each segment of `segmentFrames` frames, over a stream
    /// of `frames` frames.
    init(segmentGains: [Float], segmentFrames: Int, frames: Int64, sampleRate: Int, points: Int) {
        precondition(segmentFrames > 0)
        let (perPoint, spans) = LoudnessTimeline.spans(of: segmentGains.count, points: points)
        framesPerPoint = perPoint * segmentFrames
        self.sampleRate = sampleRate
        func decibels(_ gain: Float) -> Double { gain >= 1 ? 0 : 20 * log10(Double(gain)) }
        let reduction = spans.map { decibels(segmentGains[$0].min()!) }
        gainReduction = reduction
        maximumGainReduction = reduction.min() ?? 0
        var limited: Int64 = 0
        for (s, gain) in segmentGains.enumerated() where decibels(gain) < Self.audibleReduction {
            limited += min(Int64(segmentFrames), frames - Int64(s * segmentFrames))
        }
        limitedFrames = limited
    }
}

extension LimiterTimeline: Encodable {
    enum CodingKeys: String, CodingKey {
        case secondsPerPoint, framesPerPoint, sampleRate
        case gainReduction = "gainReductionDb", maximumGainReduction = "maximumGainReductionDb", limitedSeconds
    }

    /// Values to 0.01 dB.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func rounded(_ v: Double) -> Double { (v * 100).rounded() / 100 + 0 }
        try c.encode(Double(framesPerPoint) / Double(sampleRate), forKey: .secondsPerPoint)
        try c.encode(framesPerPoint, forKey: .framesPerPoint)
        try c.encode(sampleRate, forKey: .sampleRate)
        try c.encode(gainReduction.map(rounded), forKey: .gainReduction)
        try c.encode(rounded(maximumGainReduction), forKey: .maximumGainReduction)
        try c.encode(Double(limitedFrames) / Double(sampleRate), forKey: .limitedSeconds)
    }
}

extension LimiterTimeline: Decodable {
    /// What `encode` wrote (the values to 0.01 dB; the limited time in whole frames).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        framesPerPoint = try c.decode(Int.self, forKey: .framesPerPoint)
        sampleRate = try c.decode(Int.self, forKey: .sampleRate)
        gainReduction = try c.decode([Double].self, forKey: .gainReduction)
        maximumGainReduction = try c.decode(Double.self, forKey: .maximumGainReduction)
        limitedFrames = Int64((try c.decode(Double.self, forKey: .limitedSeconds) * Double(sampleRate)).rounded())
    }
}

/// Records a `TruePeakLimiter`'s gain as it hands frames out: the lowest gain of each
/// segment of `segmentFrames` frames (100 ms, as the loudness meter's). Owned by the one
/// job that builds the limiter; written on the thread that renders it and read (`timeline`)
/// once the render has ended.
public final class LimiterGainTrace: @unchecked Sendable {
    public let sampleRate: Int
    let segmentFrames: Int
    private(set) var segmentGains: [Float] = []
    private(set) var frames: Int64 = 0

    public init(sampleRate: Int) {
        self.sampleRate = sampleRate
        segmentFrames = LoudnessMeter.segmentFrames(sampleRate: sampleRate)
    }

    /// Output frames `range` (in order, following the last recorded) left the limiter, the
    /// lowest gain among them `gain` (linear).
    func record(_ range: Range<Int64>, lowest gain: Double) {
        guard !range.isEmpty else { return }
        assert(range.lowerBound == frames, "frames are recorded in order")
        let lastSegment = Int((range.upperBound - 1) / Int64(segmentFrames))
        while segmentGains.count <= lastSegment { segmentGains.append(1) }
        for s in Int(range.lowerBound / Int64(segmentFrames))...lastSegment {
            segmentGains[s] = min(segmentGains[s], Float(gain))
        }
        frames = range.upperBound
    }

    /// The gain reduction over time, at most `points` points.
    public func timeline(points: Int = LoudnessTimeline.defaultPoints) -> LimiterTimeline {
        LimiterTimeline(segmentGains: segmentGains, segmentFrames: segmentFrames, frames: frames, sampleRate: sampleRate, points: points)
    }
}
