/// Volume automation for one track, with AVAudioMixInputParameters' meaning:
/// - the volume is 1.0 until an event says otherwise;
/// - `setVolume(v, at: t)` holds v from t until the next event;
/// - `setVolumeRamp(from: v0, to: v1, timeRange: r)` goes linearly from v0 at r.start to
///   v1 at r.end, and v1 holds after it.
/// Events may be added in any order but may not overlap or share a start time.
///
/// Frames (at rate R, the documented rule `FrameRounding.standard`): an event at time t
/// starts at frame a = round(t * R); a ramp over [t0, t1) covers frames a..<b with
/// a = round(t0 * R), b = round(t1 * R), and frame f in it gets v0 + (v1 - v0) * (f - a) / (b - a).
/// So frame a has exactly v0 and frame b (the first after the ramp) has exactly v1.
public struct VolumeAutomation: Sendable, Equatable {
    public enum Event: Sendable, Equatable {
        case set(volume: Float, at: MediaTime)
        case ramp(from: Float, to: Float, range: MediaTimeRange)

        public var start: MediaTime {
            switch self { case .set(_, let t): return t; case .ramp(_, _, let r): return r.start }
        }

        var label: String {
            switch self {
            case .set(let v, let t): return "volume \(v) at \(t.clockDescription)"
            case .ramp(let a, let b, let r):
                return "ramp \(a) -> \(b) from \(r.start.clockDescription) to \(r.end.clockDescription)"
            }
        }
    }

    public private(set) var events: [Event] = []

    public init() {}

    /// Holds `volume` (linear gain, 0 or more) from `time` until the next event.
    public mutating func setVolume(_ volume: Float, at time: MediaTime) throws(MixdownError) {
        try Self.check(volume, "volume")
        guard try time.checked("volume time") >= .zero else {
            throw .invalidParameter(name: "volume time", value: time.description, reason: "must be a time at or after 0")
        }
        events.append(.set(volume: volume, at: time))
    }

    /// Ramps linearly from `start` to `end` across `timeRange`; `end` holds after it.
    public mutating func setVolumeRamp(from start: Float, to end: Float, timeRange: MediaTimeRange) throws(MixdownError) {
        try Self.check(start, "ramp start volume")
        try Self.check(end, "ramp end volume")
        _ = try timeRange.duration.checked("ramp duration")
        guard try timeRange.start.checked("ramp start") >= .zero else {
            throw .invalidParameter(name: "ramp time range", value: timeRange.description, reason: "must start at or after 0")
        }
        guard timeRange.duration > .zero else {
            throw .invalidParameter(name: "ramp time range", value: timeRange.description,
                                    reason: "its end \(timeRange.end.clockDescription) is not after its start \(timeRange.start.clockDescription)")
        }
        events.append(.ramp(from: start, to: end, range: timeRange))
    }

    private static func check(_ v: Float, _ name: String) throws(MixdownError) {
        guard v.isFinite, v >= 0 else {
            throw .invalidParameter(name: name, value: "\(v)", reason: "must be a finite gain of 0 or more")
        }
    }

    /// The envelope in frames at `sampleRate`, frame 0 being time 0.
    public func envelope(sampleRate: Int) throws(MixdownError) -> GainEnvelope {
        struct Placed { let a: Int64; let b: Int64; let event: Event }
        let placed = events.map { e -> Placed in
            switch e {
            case .set(_, let t):
                let a = t.frames(atRate: sampleRate)
                return Placed(a: a, b: a, event: e)
            case .ramp(_, _, let r):
                let f = r.frames(atRate: sampleRate)
                return Placed(a: f.lowerBound, b: f.upperBound, event: e)
            }
        }.sorted { $0.a < $1.a }
        var segments: [GainEnvelope.Segment] = []
        var cursor: Int64 = 0
        var current = 1.0
        for (i, p) in placed.enumerated() {
            if i > 0 {
                let prev = placed[i - 1]
                if p.a == prev.a || p.a < prev.b {
                    throw .overlappingAutomation(first: prev.event.label, second: p.event.label)
                }
            }
            if p.a > cursor { segments.append(.init(start: cursor, end: p.a, startGain: current, step: 0)) }
            switch p.event {
            case .set(let v, _):
                current = Double(v)
                cursor = p.a
            case .ramp(let v0, let v1, _):
                if p.b > p.a {
                    segments.append(.init(start: p.a, end: p.b, startGain: Double(v0),
                                          step: (Double(v1) - Double(v0)) / Double(p.b - p.a)))
                }
                current = Double(v1)
                cursor = p.b
            }
        }
        segments.append(.init(start: cursor, end: .max, startGain: current, step: 0))
        return GainEnvelope(segments: segments)
    }
}

/// A gain per frame, as consecutive segments that cover frame 0 to the end of time.
/// In segment s, frame f gets `s.startGain + Double(f - s.start) * s.step`, evaluated in
/// Double and rounded once to Float by the kernel: the gain of a frame depends only on
/// its index, never on how a render cut the frames into blocks.
public struct GainEnvelope: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        /// First frame, inclusive.
        public let start: Int64
        /// End frame, exclusive (`Int64.max` for the last segment).
        public let end: Int64
        public let startGain: Double
        /// Gain change per frame; 0 for a held value.
        public let step: Double
    }

    public let segments: [Segment]

    /// Unity gain everywhere.
    public static let unity = GainEnvelope(segments: [.init(start: 0, end: .max, startGain: 1, step: 0)])

    /// Index of the segment holding frame `f` (f >= 0).
    public func segmentIndex(containing f: Int64) -> Int {
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].start <= f { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Walks `frames` piece by piece, each piece inside one segment: `body(offset, count,
    /// segment, position)` gets the piece's offset from `frames.lowerBound`, its length, its
    /// segment and its first frame's position inside that segment (the kernels' `offset`).
    /// `segment` is the caller's cursor: the index of the segment holding
    /// `frames.lowerBound`, advanced past every segment that ends inside `frames`.
    @inline(__always)
    func forEachPiece(of frames: Range<Int64>, segment: inout Int, _ body: (Int, Int, Segment, Int64) -> Void) {
        var f = frames.lowerBound
        while f < frames.upperBound {
            let s = segments[segment]
            let pieceEnd = min(frames.upperBound, s.end)
            body(Int(f - frames.lowerBound), Int(pieceEnd - f), s, f - s.start)
            f = pieceEnd
            if f == s.end { segment += 1 }
        }
    }

    /// The gain of frame `f`, as the kernel computes it before its final rounding to Float.
    public func gain(atFrame f: Int64) -> Double {
        let s = segments[segmentIndex(containing: f)]
        return s.startGain + Double(f - s.start) * s.step
    }
}
