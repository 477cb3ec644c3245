import Foundation

/// The Final Cut Pro 7 XML dialect (Premiere and Resolve export it too), as
/// otio-fcp-adapter writes it: the Audio Levels filter.
enum FinalCutXML: OTIODialect {
    /// An FCP 7 XML "Audio Levels" filter as otio-fcp-adapter reads it (an Effect with
    /// `metadata.fcp_xml.effectid` "audiolevels" and a parameter "level": a linear gain,
    /// 1 = 0 dB, written as a string). Nil for any other effect; keyframed levels are refused.
    static func clipGain(_ e: JSONCursor, _ o: JSONObject, clip: OTIOTimeline.ClipContext) throws(MixdownError) -> OTIOTimeline.ClipGain? {
        guard let md = e.member("metadata", in: o), case .object(let m) = md.value,
              let fx = md.member("fcp_xml", in: m), case .object(let x) = fx.value,
              let id = fx.member("effectid", in: x), case .string("audiolevels") = id.value,
              let p = fx.member("parameter", in: x) else { return nil }
        let parameters: [JSONCursor]
        if case .array = p.value { parameters = try p.array() } else { parameters = [p] }
        for q in parameters {
            guard case .object(let qo) = q.value, let pid = q.member("parameterid", in: qo), case .string("level") = pid.value else { continue }
            if q.member("keyframe", in: qo) != nil { throw q.fail("keyframed Audio Levels are not supported", at: "keyframe") }
            let v = try q.required("value", in: qo)
            var level: Double
            switch v.value {
            case .string(let text):
                guard let d = Double(text) else { throw v.fail("'\(text)' is not a level") }
                level = d
            default: level = try v.number()
            }
            return .constant(try OTIOTimeline.Reader.linear(level, at: v, noun: "level"))
        }
        throw p.fail("an Audio Levels filter without a 'level' parameter")
    }
}

extension FinalCutXML {
    /// Final Cut Pro 7's routing, as otio-fcp-adapter keeps it: a clip plays its file's
    /// `sourcetrack.trackindex` (from 1) on a mono track, landing on the track's
    /// `outputchannelindex` (from 1) where it has one. A track of an exploded stereo pair
    /// (`@totalExplodedTrackCount` above 1: Premiere's, which the adapter gangs into one
    /// track, the pair's first) plays the whole file.
    static func clipChannel(_ clip: JSONCursor, _ members: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest? {
        let trackXML = OTIOTimeline.metadata("fcp_xml", track.cursor, track.members)
        if let t = trackXML, let count = OTIOTimeline.whole(t.cursor.member("@totalExplodedTrackCount", in: t.members)), count > 1 {
            return .whole
        }
        guard let x = OTIOTimeline.metadata("fcp_xml", clip, members),
              let st = x.cursor.member("sourcetrack", in: x.members), case .object(let so) = st.value else { return nil }
        if case .string(let kind)? = st.member("mediatype", in: so)?.value, kind != "audio" { return nil }
        guard let index = OTIOTimeline.whole(st.member("trackindex", in: so)) else { return nil }
        guard index >= 1, index <= 64 else { throw st.fail("a source track index of \(index): channels count from 1", at: "trackindex") }
        var output: Int?
        if let t = trackXML, let o = OTIOTimeline.whole(t.cursor.member("outputchannelindex", in: t.members)) {
            guard o >= 1, o <= 64 else { throw t.cursor.fail("an output channel index of \(o): channels count from 1", at: "outputchannelindex") }
            output = o - 1
        }
        return .channel(source: index - 1, output: output)
    }
}
