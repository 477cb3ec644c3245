import Foundation

/// Avid's dialect, as otio-aaf-adapter reads Media Composer's AAF: the Audio Gain
/// operation (clip gain, constant or keyframed).
enum AvidAAF: OTIODialect {
    /// An AAF "Audio Gain" (OperationDef_MonoAudioGain) as otio-aaf-adapter reads it: an
    /// Effect named "Audio Gain" whose `metadata.AAF.Parameters.Amplitude` (Media Composer:
    /// `Amplitude multiplier`) is a linear gain
    /// ("1/2", "1", a number) or keyframes (`keyframe_values`: [time as a fraction of the
    /// clip's length, gain]) with Linear or Constant interpolation. Nil for any other effect;
    /// Bezier and Cubic keyframes are refused (not linear in the data).
    static func clipGain(_ e: JSONCursor, _ o: JSONObject, clip: OTIOTimeline.ClipContext) throws(MixdownError) -> OTIOTimeline.ClipGain? {
        guard let md = e.member("metadata", in: o), case .object(let m) = md.value,
              let aaf = md.member("AAF", in: m), case .object(let a) = aaf.value,
              let op = aaf.member("Operation", in: a), case .object(let oo) = op.value else { return nil }
        let identification = (try? op.member("Identification", in: oo)?.string()).flatMap { $0 }
        let name = (try? op.member("Name", in: oo)?.string()).flatMap { $0 }
        guard identification == "9d2ea894-0968-11d3-8a38-0050040ef7d2" || name == "Audio Gain" else { return nil }
        // Media Composer's own exports name the parameter "Amplitude multiplier".
        guard let ps = aaf.member("Parameters", in: a), case .object(let po) = ps.value,
              let amplitude = ps.member("Amplitude", in: po) ?? ps.member("Amplitude multiplier", in: po) else {
            throw e.fail("an Audio Gain without an 'Amplitude' (or 'Amplitude multiplier') parameter", at: "metadata")
        }
        func level(_ v: JSONCursor) throws(MixdownError) -> Double {
            guard case .string(let text) = v.value else { return try OTIOTimeline.Reader.linear(try v.number(), at: v) }
            let parts = text.split(separator: "/", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), let n = Double(parts[0]),
                  let d = parts.count == 2 ? Double(parts[1]) : 1, d != 0 else { throw v.fail("'\(text)' is not a gain") }
            return try OTIOTimeline.Reader.linear(n / d, at: v)
        }
        guard case .object(let ao) = amplitude.value else { return .constant(try level(amplitude)) }
        let interpolation = (try? amplitude.member("keyframe_interpolation", in: ao)?.string()).flatMap { $0 } ?? "Linear"
        guard interpolation == "Linear" || interpolation == "Constant" else {
            throw amplitude.fail("keyframed Audio Gain with \(interpolation) interpolation: only Linear and Constant keyframes are read (flatten the gain in the editor)",
                                 at: "keyframe_interpolation")
        }
        var keys: [(Double, Double)] = []
        for k in try amplitude.required("keyframe_values", in: ao).array() {
            let pair = try k.array()
            guard pair.count == 2 else { throw k.fail("a keyframe is [time, value]") }
            let t = try pair[0].number()
            guard t >= 0, t <= 1 else { throw pair[0].fail("a keyframe time of \(t): must lie between 0 and 1 (a fraction of the clip)") }
            if let last = keys.last, !(t > last.0) { throw pair[0].fail("keyframes must be given in increasing time") }
            keys.append((t, try level(pair[1])))
        }
        guard !keys.isEmpty else { throw amplitude.fail("keyframed Audio Gain without keyframes", at: "keyframe_values") }
        return .keyframes(keys, steps: interpolation == "Constant")
    }
}

extension AvidAAF {
    /// Avid's master clip channel, where otio-aaf-adapter kept it (`simplify=False`): the
    /// clip (`metadata.AAF.ClassName` "MasterMob") sits on a nested track that is the master
    /// clip's slot, whose `PhysicalTrackNumber` is the file's channel (from 1). The default
    /// conversion keeps only the timeline track's number, which is not the source channel
    /// (composite.aaf's A2 plays channel 1): there the channel is unknown, and the reader's
    /// split rule applies.
    static func clipChannel(_ clip: JSONCursor, _ members: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest? {
        guard track.nested, let ca = OTIOTimeline.metadata("AAF", clip, members),
              case .string("MasterMob")? = ca.cursor.member("ClassName", in: ca.members)?.value,
              let ta = OTIOTimeline.metadata("AAF", track.cursor, track.members),
              let n = OTIOTimeline.whole(ta.cursor.member("PhysicalTrackNumber", in: ta.members)), n >= 1, n <= 64 else { return nil }
        return .channel(source: n - 1, output: nil)
    }
}
