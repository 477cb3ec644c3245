import Foundation

/// The lanes a timeline's walk placed, as a composition draft: the last step of the
/// OTIO reader, where clip gains, fades and keys become volume events.
extension OTIOTimeline.Reader {
    /// One track per lane (a lane of gaps alone still lasts: a timeline is as long as its
    /// longest track), its clips as segments (a warped one with its own timeline
    /// duration, scaled alone, so that every clip keeps the exact place the timeline gives
    /// it), and its gains. The media is opened here; an error names the clip.
    mutating func draft() throws(MixdownError) -> CompositionDraft {
        var draft = CompositionDraft()
        for lane in lanes where !lane.clips.isEmpty || lane.end > .zero {
            var track = CompositionDraft.Track(name: lane.name)
            let laneOrigin = DocumentOrigin(lane.origin, namesKeys: false)
            var clips = lane.clips.sorted { $0.at < $1.at }
            var clipsEnd = Rational.zero
            for j in clips.indices {
                // Start and end within a microsecond (or half a unit of the track's rate) of
                // where OTIO's values put them: the place Mixdown wrote (farther, the clip
                // was moved or trimmed since, by a unit at least, and OTIO's values are taken).
                let tolerance = max(1e-6, clips[j].placeTolerance)
                // (A hair over: a place exactly half a unit from the grid is a tie the writer rounded.)
                let reach = tolerance * (1 + 1e-9)
                if let p = clips[j].exactPlace, abs(p.at.approximateSeconds - clips[j].at.approximateSeconds) <= reach,
                   abs((p.at.approximateSeconds + p.duration.approximateSeconds) - (clips[j].at.approximateSeconds + clips[j].duration.approximateSeconds)) <= reach {
                    if !clips[j].scaled { clips[j].sourceDuration = p.duration }
                    (clips[j].at, clips[j].duration) = p
                }
                let c = clips[j]
                let origin = DocumentOrigin(c.origin, namesKeys: false)
                let asset: AudioAsset
                do { asset = try assets.asset(c.file) } catch { throw origin.fail("\(error)") }
                let source = MediaTimeRange(start: try Self.time(c.sourceStart, origin), duration: try Self.time(c.sourceDuration, origin))
                let at = try Self.time(c.at, origin), duration = c.scaled ? try Self.time(c.duration, origin) : nil
                track.segments.append(.init(content: .media(asset, source: source, at: at, duration: duration), origin: origin, route: c.route))
                clipsEnd = max(clipsEnd, try c.at.adding(c.duration))
            }
            // The track's trailing gap, as an empty edit to its end (more than a microsecond,
            // or than half a unit of the rate Mixdown wrote the track at: a place Mixdown
            // wrote exactly differs from OTIO's sums by up to that).
            let endTolerance = clips.map(\.placeTolerance).reduce(1e-6, max)
            if lane.end.approximateSeconds - clipsEnd.approximateSeconds > endTolerance {
                track.segments.append(.init(content: .empty(MediaTimeRange(start: try Self.time(clipsEnd, laneOrigin), end: try Self.time(lane.end, laneOrigin))), origin: laneOrigin))
            }
            track.volumeOrigin = laneOrigin
            let plain = clips.allSatisfy { $0.gain == 1 && $0.fadeIn == .zero && $0.fadeOut == .zero && $0.gainKeys.isEmpty }
            switch lane.gain {
            case .events:
                // Read by `read` once the output rate is known.
                guard plain else { throw clips[0].origin.fail("track volume events with clip gains or crossfades are not supported") }
            case .keyframes(let keys, let keysCursor):
                guard plain else { throw clips[0].origin.fail("track volume keyframes with clip gains or crossfades are not supported") }
                let origin = DocumentOrigin(keysCursor, namesKeys: false)
                // The first value holds from 0 to the first keyframe (a ramp from 0 needs no set before it).
                if keys[0].0 > .zero || keys.count == 1 { track.volume.append(.init(kind: .set(Float(keys[0].1), at: MediaTime.zero), origin: origin)) }
                for (a, b) in zip(keys, keys.dropFirst()) {
                    track.volume.append(.init(kind: .ramp(from: Float(a.1), to: Float(b.1), MediaTimeRange(start: try Self.time(a.0, origin), end: try Self.time(b.0, origin))), origin: origin))
                }
            case .constant(let g):
                for c in clips { track.volume += try clipVolume(c, trackGain: g) }
            }
            draft.tracks.append(track)
        }
        return draft
    }

    /// A clip's gain on its lane: its level (times the track's), a dialect's keys, or its
    /// fades in and out, as volume events at the clip's place.
    func clipVolume(_ c: Placed, trackGain: Double) throws(MixdownError) -> [CompositionDraft.VolumeEvent] {
        let origin = DocumentOrigin(c.origin, namesKeys: false)
        func set(_ v: Double, at t: Rational) throws(MixdownError) -> CompositionDraft.VolumeEvent { .init(kind: .set(Float(v), at: try Self.time(t, origin)), origin: origin) }
        let level = trackGain * c.gain
        let end = try c.at.adding(c.duration)
        var events: [CompositionDraft.VolumeEvent] = []
        if !c.gainKeys.isEmpty {
            guard c.fadeIn == .zero, c.fadeOut == .zero else {
                throw c.origin.fail("keyframed clip gain on a clip with a fade or crossfade is not supported")
            }
            // The first value holds from the clip's start to the first key (a ramp from
            // the start sets it itself); the last holds to the clip's end.
            if c.steps || c.gainKeys[0].0 > .zero || c.gainKeys.count == 1 { events.append(try set(level * c.gainKeys[0].1, at: c.at)) }
            for (a, b) in zip(c.gainKeys, c.gainKeys.dropFirst()) {
                let ta = try c.at.adding(a.0), tb = try c.at.adding(b.0)
                if c.steps || !(ta < tb) {
                    events.append(try set(level * b.1, at: tb))
                } else {
                    events.append(.init(kind: .ramp(from: Float(level * a.1), to: Float(level * b.1), MediaTimeRange(start: try Self.time(ta, origin), end: try Self.time(tb, origin))), origin: origin))
                }
            }
            return events
        }
        events += try Self.fade(from: c.at, length: c.fadeIn, to: level, rising: true, origin: origin)
        // A fade-out from the clip's very start (a dissolve whose in_offset is the whole
        // outgoing clip, as Avid writes) sets the level itself.
        if c.fadeIn == .zero && c.fadeOut < c.duration { events.append(try set(level, at: c.at)) }
        if try c.fadeIn.adding(c.fadeOut) > c.duration {
            throw c.origin.fail("its fade-in (\(String(format: "%.6f", c.fadeIn.approximateSeconds)) s) and fade-out (\(String(format: "%.6f", c.fadeOut.approximateSeconds)) s) overlap in a \(String(format: "%.6f", c.duration.approximateSeconds)) s clip: two transitions cover more than the clip")
        }
        events += try Self.fade(from: end.subtracting(c.fadeOut), length: c.fadeOut, to: level, rising: false, origin: origin)
        return events
    }

    /// `t` as a composition's time: exact, or refused at `origin` (a place whose
    /// denominator leaves a timescale's 32 bits).
    static func time(_ t: Rational, _ origin: DocumentOrigin) throws(MixdownError) -> MediaTime {
        guard let m = MediaTime(exactly: t) else { throw origin.fail("\(t) s has no exact timescale of 32 bits (rates too fine, or too many unrelated ones)") }
        return m
    }

    /// An equal-power fade (sin rising, cos falling) as 16 linear ramps.
    static func fade(from start: Rational, length: Rational, to level: Double, rising: Bool,
                     origin: DocumentOrigin) throws(MixdownError) -> [CompositionDraft.VolumeEvent] {
        guard length > .zero else { return [] }
        let pieces: Int64 = 16
        return try (0..<pieces).map { (k: Int64) throws(MixdownError) -> CompositionDraft.VolumeEvent in
            func g(_ i: Int64) -> Float {
                let x = Double.pi / 2 * Double(i) / Double(pieces)
                return Float(level * (rising ? sin(x) : cos(x)))
            }
            let a = try start.adding(length.multiplied(by: k).divided(by: pieces))
            let b = try start.adding(length.multiplied(by: k + 1).divided(by: pieces))
            return .init(kind: .ramp(from: g(k), to: g(k + 1), MediaTimeRange(start: try Self.time(a, origin), end: try Self.time(b, origin))), origin: origin)
        }
    }
}
