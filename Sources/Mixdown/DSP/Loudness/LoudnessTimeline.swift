import Foundation

/// A measurement over time, for a report to draw: the momentary (400 ms) and short-term
/// (3 s) loudness and the true peak along the stream, with the gates and the loudness
/// range's ends. Made by a `LoudnessMeter` built with `timeline`.
///
/// The meter's readings come every 100 ms segment; a long stream is drawn from at most
/// `points` points, each the loudest reading of its span of segments (so the curves'
/// maxima are the stream's at 100 ms steps, not an average that hides a peak). The
/// measurement's own maxima are read every 1 ms and can lie a little above the curve's
/// (EBU Tech 3341 case 13: 0.6 dB for a 400 ms burst).
public struct LoudnessTimeline: Sendable, Equatable {
    /// The points drawn for a stream of any length, at most.
    public static let defaultPoints = 3000

    /// `count` segments grouped into at most `points` points of whole segments: the
    /// segments per point and each point's span.
    static func spans(of count: Int, points: Int) -> (perPoint: Int, spans: [Range<Int>]) {
        precondition(points > 0)
        let perPoint = max(1, (count + points - 1) / points)
        return (perPoint, stride(from: 0, to: count, by: perPoint).map { $0..<min($0 + perPoint, count) })
    }

    /// Frames per point (whole segments: frames, not samples), and the rate.
    public let framesPerPoint: Int
    public let sampleRate: Int
    /// Per point: the loudest momentary loudness ending in its span, LUFS (nil before the
    /// first 400 ms, and -infinity for silence).
    public let momentary: [Double?]
    /// Per point: the loudest short-term loudness ending in its span (nil before 3 s).
    public let shortTerm: [Double?]
    /// Per point: the highest point of the signal reconstructed between samples (8x when
    /// the meter reads it, else 4x; a sample when higher), dBTP. Its last point holds the
    /// stream's end (an incomplete segment is drawn here, not counted in the loudness).
    public let truePeak: [Double]
    /// The absolute gate, LUFS (-70), and the relative gate of the integrated loudness (10
    /// LU under the mean of the blocks above the absolute one), nil when silent.
    public let absoluteGate: Double
    public let relativeGate: Double?
    /// The loudness range's 10th and 95th percentiles of the short-term loudness, LUFS.
    public let rangeLow: Double?
    public let rangeHigh: Double?

    /// From a meter's segments (channel-weighted sums of squares, `segmentFrames` each),
    /// its peaks per segment (linear), and its measurement.
    init(segments: [Double], segmentPeaks: [Float], measurement: LoudnessMeasurement, segmentFrames: Int, points: Int) {
        let count = max(segments.count, segmentPeaks.count)
        let (perPoint, spans) = Self.spans(of: count, points: points)
        framesPerPoint = perPoint * segmentFrames
        sampleRate = measurement.sampleRate
        let momentaryBlocks = LoudnessMeasurement.blocks(of: 4, segments: segments, segmentFrames: segmentFrames)
        let shortTermBlocks = LoudnessMeasurement.blocks(of: 30, segments: segments, segmentFrames: segmentFrames)
        /// The loudest block ending in segments [from, to) (a block of `size` segments ending
        /// at segment s is blocks[s - size + 1]).
        func loudest(_ blocks: [Double], size: Int, from: Int, to: Int) -> Double? {
            let first = max(from, size - 1), last = min(to, segments.count) - 1
            guard first <= last else { return nil }
            return LoudnessMeasurement.loudness(meanSquare: blocks[(first - size + 1)...(last - size + 1)].max()!)
        }
        var momentary: [Double?] = [], shortTerm: [Double?] = [], truePeak: [Double] = []
        for span in spans {
            let start = span.lowerBound, end = span.upperBound
            momentary.append(loudest(momentaryBlocks, size: 4, from: start, to: end))
            shortTerm.append(loudest(shortTermBlocks, size: 30, from: start, to: end))
            let peak = start < segmentPeaks.count ? segmentPeaks[start..<min(end, segmentPeaks.count)].max()! : 0
            truePeak.append(LoudnessMeasurement.decibels(Double(peak)))
        }
        self.momentary = momentary
        self.shortTerm = shortTerm
        self.truePeak = truePeak
        absoluteGate = -70
        relativeGate = measurement.integrated.isFinite ? LoudnessMeasurement.relativeGate(of: momentaryBlocks) : nil
        let bounds = LoudnessMeasurement.rangeBounds(shortTermBlocks)
        rangeLow = bounds?.low
        rangeHigh = bounds?.high
    }
}

extension LoudnessTimeline: Encodable {
    enum CodingKeys: String, CodingKey {
        case secondsPerPoint, framesPerPoint, sampleRate
        case momentary = "momentaryLufs", shortTerm = "shortTermLufs", truePeak = "truePeakDbtp"
        case absoluteGate = "absoluteGateLufs", relativeGate = "relativeGateLufs", rangeLow = "rangeLowLufs", rangeHigh = "rangeHighLufs"
    }

    /// Values to 0.01 dB; -infinity (silence) and readings not yet made as null.
    public func encode(to encoder: Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        func rounded(_ v: Double?) -> Double? { v.flatMap { $0.isFinite ? ($0 * 100).rounded() / 100 : nil } }
        try c.encode(Double(framesPerPoint) / Double(sampleRate), forKey: .secondsPerPoint)
        try c.encode(framesPerPoint, forKey: .framesPerPoint)
        try c.encode(sampleRate, forKey: .sampleRate)
        try c.encode(momentary.map(rounded), forKey: .momentary)
        try c.encode(shortTerm.map(rounded), forKey: .shortTerm)
        try c.encode(truePeak.map(rounded), forKey: .truePeak)
        try c.encode(absoluteGate, forKey: .absoluteGate)
        try c.encode(rounded(relativeGate), forKey: .relativeGate)
        try c.encode(rounded(rangeLow), forKey: .rangeLow)
        try c.encode(rounded(rangeHigh), forKey: .rangeHigh)
    }
}

extension LoudnessTimeline: Decodable {
    /// What `encode` wrote: a null reading is nil (silence and a reading not yet made are
    /// both null there), a null peak -infinity; the values are the encoded ones, to 0.01 dB.
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        framesPerPoint = try c.decode(Int.self, forKey: .framesPerPoint)
        sampleRate = try c.decode(Int.self, forKey: .sampleRate)
        momentary = try c.decode([Double?].self, forKey: .momentary)
        shortTerm = try c.decode([Double?].self, forKey: .shortTerm)
        truePeak = try c.decode([Double?].self, forKey: .truePeak).map { $0 ?? -.infinity }
        absoluteGate = try c.decode(Double.self, forKey: .absoluteGate)
        relativeGate = try c.decodeIfPresent(Double.self, forKey: .relativeGate)
        rangeLow = try c.decodeIfPresent(Double.self, forKey: .rangeLow)
        rangeHigh = try c.decodeIfPresent(Double.self, forKey: .rangeHigh)
    }
}
