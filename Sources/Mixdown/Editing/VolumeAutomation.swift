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
