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
