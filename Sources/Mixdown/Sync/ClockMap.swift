import Foundation

/// REC's clock on REF's, where one offset and one ratio do not describe it (a clock that
/// wanders with temperature): a continuous, monotone, piecewise-linear map from REC's
/// frames to REF's time. Between two knots REC runs at one exact ratio; at a knot the
/// ratio changes and the position does not jump.
///
/// The first knot is REC's frame 0 and the last is REC's length in frames (the fitted
/// map's end pieces extended to them). A knot's REF time is exact: REF frames over REF's
/// rate, the fit rounded to the nearest REF frame (half away from zero), so the map
/// renders without another rounding and lies within half a REF frame of the fit.
public struct ClockMap: Sendable, Codable, Equatable {
    public struct Knot: Sendable, Codable, Equatable {
        /// A frame of REC, at REC's rate.
        public let recordingFrame: Int64
        /// Where that frame lands on REF's clock: REF frames over REF's rate.
        public let referenceTime: MediaTime

        public init(recordingFrame: Int64, referenceTime: MediaTime) {
            self.recordingFrame = recordingFrame
            self.referenceTime = referenceTime
        }

        /// The knot of REC frame `recordingFrame` landing at `referenceSeconds` on REF's
        /// clock, rounded to the nearest REF frame (half away from zero): the map's one
        /// rounding rule.
        init(recordingFrame: Int64, referenceSeconds: Double, referenceRate: Int) {
            let frames = Int64((referenceSeconds * Double(referenceRate)).rounded(.toNearestOrAwayFromZero))
            self.init(recordingFrame: recordingFrame, referenceTime: MediaTime(frames: frames, sampleRate: referenceRate))
        }
    }

    public let recordingRate: Int
    public let referenceRate: Int
    public let knots: [Knot]

    /// Refuses knots that do not rise strictly in both REC frames and REF time, fewer than
    /// two, or times not at REF's rate; `parameter` names the source in the message.
    public init(recordingRate: Int, referenceRate: Int, knots: [Knot], parameter: String = "clock map") throws(MixdownError) {
        guard recordingRate > 0, referenceRate > 0 else {
            throw .invalidParameter(name: parameter, value: "\(recordingRate)/\(referenceRate) Hz", reason: "needs positive sample rates")
        }
        guard knots.count >= 2 else {
            throw .invalidParameter(name: parameter, value: "\(knots.count) knots", reason: "needs at least two knots")
        }
        for (i, k) in knots.enumerated() {
            guard k.referenceTime.isNumeric, Int(k.referenceTime.timescale) == referenceRate else {
                throw .invalidParameter(name: "\(parameter) knot \(i)", value: k.referenceTime.description,
                                        reason: "must be a time in REF frames (timescale \(referenceRate))")
            }
            if i > 0 {
                let p = knots[i - 1]
                guard k.recordingFrame > p.recordingFrame, k.referenceTime.value > p.referenceTime.value else {
                    throw .invalidParameter(name: "\(parameter) knot \(i)", value: "\(k.recordingFrame) -> \(k.referenceTime)",
                                            reason: "must come after knot \(i - 1) (\(p.recordingFrame) -> \(p.referenceTime)) in both clocks: a map runs forward")
                }
            }
        }
        self.recordingRate = recordingRate
        self.referenceRate = referenceRate
        self.knots = knots
    }

    private enum CodingKeys: String, CodingKey { case recordingRate, referenceRate, knots }

    /// Decoded maps are checked as constructed ones are (a map read back from JSON that
    /// runs backwards is refused, not rendered).
    public init(from decoder: Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let recordingRate = try c.decode(Int.self, forKey: .recordingRate), referenceRate = try c.decode(Int.self, forKey: .referenceRate)
        let knots = try c.decode([Knot].self, forKey: .knots)
        do {
            try self.init(recordingRate: recordingRate, referenceRate: referenceRate, knots: knots)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)"))
        }
    }

    /// The map of a fit: `lags` (REC seconds, REF − REC seconds) extended to REC frame 0
    /// and `recordingFrames`, each knot's REF time rounded to the nearest REF frame.
    init(fitted lags: [(t: Double, lag: Double)], recordingRate: Int, referenceRate: Int, recordingFrames: Int64) throws(MixdownError) {
        let fr = Double(recordingRate)
        var frames = lags.map { Int64(($0.t * fr).rounded()) }.filter { $0 > 0 && $0 < recordingFrames }
        frames = [0] + frames + [recordingFrames]
        var knots: [Knot] = []
        for f in frames where knots.last.map({ f > $0.recordingFrame }) ?? true {
            let t = Double(f) / fr
            knots.append(Knot(recordingFrame: f, referenceSeconds: t + ClockMapFit.lag(at: t, knots: lags), referenceRate: referenceRate))
        }
        try self.init(recordingRate: recordingRate, referenceRate: referenceRate, knots: knots)
    }

    /// REF's time (seconds) of REC's time `t` (seconds): linear between knots, the end
    /// pieces extended beyond them.
    public func referenceSeconds(atRecordingSeconds t: Double) -> Double {
        let f = t * Double(recordingRate)
        var j = 1
        while j < knots.count - 1 && Double(knots[j].recordingFrame) < f { j += 1 }
        let a = knots[j - 1], b = knots[j]
        let ra = Double(a.referenceTime.value), rb = Double(b.referenceTime.value)
        let ref = ra + (f - Double(a.recordingFrame)) / Double(b.recordingFrame - a.recordingFrame) * (rb - ra)
        return ref / Double(referenceRate)
    }
}
