import Foundation

/// DaVinci Resolve's dialect (its own OTIO export): the Fairlight clip volume.
enum Resolve: OTIODialect {
    /// DaVinci Resolve's clip volume: the "Fairlight Clip Volume and Fades" effect
    /// (`effect_name` "Resolve Effect", `metadata.Resolve_OTIO`) with the parameter "volume"
    /// in dB. Nil for any other effect, and 0 dB for a disabled one.
    ///
    /// Keyframed volume (`Key Frames`: {"96": {"Value": 0.0}, "241": {"Value": -29.5}})
    /// is read as Resolve's own sample (OpenTimelineIO's effects.otio) shows it: keys are
    /// frames from the clip's start at the clip's rate (two copies of one clip, 374 and
    /// 253 frames long, carry the same keys 96, 194 and 241); the first value holds
    /// before the first key and the last after the last. Between keys the level moves
    /// linearly in dB (Resolve's curve is not documented; dB is how its faders move), as
    /// 16 linear-gain pieces per key interval: within 0.05 dB of it for steps up to 30 dB.
    /// The negative keys of that sample (-85200) belong to video effects, which Mixdown
    /// ignores.
    static func clipGain(_ e: JSONCursor, _ o: JSONObject, clip: OTIOTimeline.ClipContext) throws(MixdownError) -> OTIOTimeline.ClipGain? {
        let duration = clip.duration, frame = clip.frame
        guard let md = e.member("metadata", in: o), case .object(let m) = md.value,
              let r = md.member("Resolve_OTIO", in: m), case .object(let ro) = r.value,
              case .string("Fairlight Clip Volume and Fades")? = r.member("Effect Name", in: ro)?.value else { return nil }
        if case .bool(false)? = r.member("Enabled", in: ro)?.value { return .constant(1) }
        guard let ps = r.member("Parameters", in: ro) else { return .constant(1) }
        func decibels(_ v: JSONCursor) throws(MixdownError) -> Double {
            let db = try v.number()
            guard db.isFinite, db <= 30 else { throw v.fail("a clip volume of \(db) dB: must be finite and at most +30 dB") }
            return db
        }
        for p in try ps.array() {
            guard case .object(let po) = p.value, case .string("volume")? = p.member("Parameter ID", in: po)?.value else { continue }
            if let keys = p.member("Key Frames", in: po), case .object(let ko) = keys.value, !ko.members.isEmpty {
                guard let frame, duration > .zero else { throw keys.fail("keyframed clip volume on a clip without a frame rate") }
                var points: [(Double, Double)] = []   // seconds from the clip's start, dB
                for (key, value) in ko.members {
                    let kc = JSONCursor(value: value, path: keys.path + ".\(key)", file: keys.file)
                    guard let k = Int64(key) else { throw kc.fail("a key frame named '\(key)': Resolve's keys are frame numbers") }
                    guard case .object(let vo) = value else { throw kc.fail("a key frame must be an object with a Value") }
                    points.append((Double(k) * frame.approximateSeconds, try decibels(kc.required("Value", in: vo))))
                }
                points.sort { $0.0 < $1.0 }
                let length = duration.approximateSeconds
                func level(at t: Double) -> Double {
                    if t <= points[0].0 { return points[0].1 }
                    guard let i = points.firstIndex(where: { $0.0 >= t }) else { return points[points.count - 1].1 }
                    let (t0, d0) = points[i - 1], (t1, d1) = points[i]
                    return t1 == t0 ? d1 : d0 + (d1 - d0) * (t - t0) / (t1 - t0)
                }
                // The curve over the clip: its ends, each key inside it, and 16 pieces a span.
                var times = [0.0, length] + points.map(\.0).filter { $0 > 0 && $0 < length }
                times.sort()
                var dense: [Double] = []
                for (a, b) in zip(times, times.dropFirst()) where b > a {
                    for i in 0..<16 { dense.append(a + (b - a) * Double(i) / 16) }
                }
                dense.append(length)
                return .keyframes(dense.map { ($0 / length, pow(10, level(at: $0) / 20)) }, steps: false)
            }
            return .constant(pow(10, try decibels(p.required("Parameter Value", in: po)) / 20))
        }
        return .constant(1)   // Resolve writes no parameter for a clip at 0 dB
    }
}

extension Resolve {
    /// DaVinci Resolve's routing: a clip's `metadata.Resolve_OTIO.Channels` lists, for each
    /// of its track's channels, the `Source Channel ID` (from 0) it plays. One entry: that
    /// channel, at its own place in the file; the file's channels in order: the whole file.
    /// Any other list (swapped or repeated channels) is refused, naming it.
    static func clipChannel(_ clip: JSONCursor, _ members: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest? {
        guard let r = OTIOTimeline.metadata("Resolve_OTIO", clip, members),
              let chs = r.cursor.member("Channels", in: r.members), case .array = chs.value else { return nil }
        var ids: [Int] = []
        for ch in try chs.array() {
            guard case .object(let co) = ch.value, let id = OTIOTimeline.whole(ch.member("Source Channel ID", in: co)), id >= 0, id < 64 else {
                throw ch.fail("a channel without a Source Channel ID from 0 to 63")
            }
            ids.append(id)
        }
        if ids.count == 1 { return .channel(source: ids[0], output: nil) }
        if ids.isEmpty || ids == Array(0..<ids.count) { return .whole }
        throw chs.fail("plays source channels \(ids.map { "\($0 + 1)" }.joined(separator: ", ")) on one track: Mixdown routes one channel a track or the file in its own order")
    }
}
