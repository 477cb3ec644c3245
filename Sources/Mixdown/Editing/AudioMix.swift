import Foundation

/// How a composition's tracks are mixed (AVAudioMix). A track with no parameters plays
/// at volume 1.0 throughout.
public struct AudioMix: Sendable, Equatable {
    public var inputParameters: [AudioMixInputParameters] = []

    public init(inputParameters: [AudioMixInputParameters] = []) { self.inputParameters = inputParameters }

    /// The parameters of `trackID`, created empty on first use.
    public subscript(trackID id: Int32) -> AudioMixInputParameters {
        get { inputParameters.first { $0.trackID == id } ?? AudioMixInputParameters(trackID: id) }
        set {
            if let i = inputParameters.firstIndex(where: { $0.trackID == id }) { inputParameters[i] = newValue }
            else { inputParameters.append(newValue) }
        }
    }

    /// A gain: linear, or in decibels (linear = 10^(dB/20)).
    public enum Level: Sendable, Equatable {
        case linear(Float)
        case decibels(Float)

        public var linear: Float {
            switch self {
            case .linear(let v): return v
            case .decibels(let db): return Float(Foundation.pow(10.0, Double(db) / 20))
            }
        }
    }

    /// Ducking, written as ordinary volume events on `trackID`: wherever `trigger` has a
    /// file segment, `trackID` ramps from its current volume down to `level` across the
    /// `rampDown` before the segment starts (look-ahead: the render is offline), holds it,
    /// and ramps back across the `rampUp` after it ends. Trigger segments closer together
    /// than `rampDown + rampUp` are ducked as one. The volume ducked from is what the
    /// track's existing events hold at that time (1.0 with none); an existing event inside
    /// a duck is an `overlappingAutomation` error. A ramp that would start before 0 starts at 0.
    public mutating func duck(_ trackID: Int32, to level: Level, whileAudioOn trigger: Int32, in composition: Composition,
                              rampDown: MediaTime, rampUp: MediaTime) throws(MixdownError) {
        guard let ducked = composition.track(withID: trackID), let source = composition.track(withID: trigger) else {
            let missing = composition.track(withID: trackID) == nil ? trackID : trigger
            throw .invalidParameter(name: "ducking", value: "track \(missing)", reason: "no such track in the composition")
        }
        let g = level.linear
        guard g.isFinite, g >= 0 else {
            throw .invalidParameter(name: "ducking level", value: "\(level)", reason: "must be a finite gain of 0 or more")
        }
        for (name, t) in [("ramp down", rampDown), ("ramp up", rampUp)] {
            guard t.isNumeric, t >= .zero else {
                throw .invalidParameter(name: "ducking \(name)", value: t.clockDescription, reason: "must be a time of 0 or more")
            }
        }
        // The trigger's audible spans, merged where the ramps between them would meet.
        var spans: [(start: MediaTime, end: MediaTime)] = []
        for s in source.placedSegments where !s.isEmpty {
            // Touching spans merge too (a segment split by a scale is still one stretch of audio).
            if let last = spans.last, s.target.start - last.end <= rampDown + rampUp {
                spans[spans.count - 1].end = max(last.end, s.target.end)
            } else {
                spans.append((s.target.start, s.target.end))
            }
        }
        var params = self[trackID: trackID]
        let existing = params.volume.events
        for span in spans {
            let downStart = max(.zero, span.start - rampDown)
            let upEnd = span.end + rampUp
            // Without a ramp up, the restoring set lands on upEnd itself: an event there clashes too.
            let restoresAtEnd = rampUp == .zero
            if let clash = existing.first(where: { e in
                switch e {
                case .set(_, let t): return t >= downStart && (t < upEnd || (restoresAtEnd && t == upEnd))
                case .ramp(_, _, let r): return (r.start < upEnd || (restoresAtEnd && r.start == upEnd)) && r.end > downStart
                }
            }) {
                throw .overlappingAutomation(first: clash.label,
                                             second: "ducking of \(ducked.label) under \(source.label) from \(downStart.clockDescription) to \(upEnd.clockDescription)")
            }
            let from = existing.volume(at: downStart)
            if span.start > downStart {
                try params.setVolumeRamp(from: from, to: g, timeRange: MediaTimeRange(start: downStart, end: span.start))
            } else {
                try params.setVolume(g, at: downStart)
            }
            if rampUp > .zero {
                try params.setVolumeRamp(from: g, to: from, timeRange: MediaTimeRange(start: span.end, end: upEnd))
            } else {
                try params.setVolume(from, at: span.end)
            }
        }
        self[trackID: trackID] = params
    }
}

extension Array where Element == VolumeAutomation.Event {
    /// The volume the events hold at `t` (1.0 before any), for a `t` outside every ramp.
    func volume(at t: MediaTime) -> Float {
        var best: (start: MediaTime, value: Float)?
        for e in self {
            let (start, value): (MediaTime, Float) = switch e {
            case .set(let v, let at): (at, v)
            case .ramp(_, let v1, let r): (r.start, v1)
            }
            if start <= t, best.map({ start > $0.start }) ?? true { best = (start, value) }
        }
        return best?.value ?? 1
    }
}
