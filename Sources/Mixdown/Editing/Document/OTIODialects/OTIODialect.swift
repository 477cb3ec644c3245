import Foundation

/// An editor's metadata, as the OpenTimelineIO adapters carry it, read into what
/// Mixdown places: a clip's gain, a track's record window. Each editor is a file in this
/// folder, and `OTIOTimeline.dialects` lists them; the walk of the timeline asks each in
/// turn and knows none by name. A question a dialect does not answer is "not mine" (nil).
///
/// Adding an editor (Premiere's or Pro Tools' metadata) is a new file and a line in
/// `OTIOTimeline.dialects`, not an edit to the walk.
protocol OTIODialect: Sendable {
    /// The gain one of a clip's effects carries in this dialect, constant or keyed over the
    /// clip; nil when the effect is not this dialect's.
    static func clipGain(_ effect: JSONCursor, _ members: JSONObject, clip: OTIOTimeline.ClipContext) throws(MixdownError) -> OTIOTimeline.ClipGain?

    /// Where a top-level track is recorded, when this dialect writes that as the track's
    /// `source_range` (`trim`, whose start lies before 0); nil when the range is not this
    /// dialect's (OTIO's own window, silence then the track). `nested`: the track is inside
    /// a stack.
    static func recordStart(track: JSONCursor, sourceRange: JSONCursor, trim: (start: Rational, duration: Rational),
                            itemsLength: Rational, name: String, nested: Bool) throws(MixdownError) -> OTIOTimeline.RecordStart?

    /// What of its file a clip plays, when this dialect says: the whole file, or one
    /// channel and where it lands; nil when the clip and its track carry nothing of this
    /// dialect's.
    static func clipChannel(_ clip: JSONCursor, _ members: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest?
}

extension OTIODialect {
    static func clipGain(_ effect: JSONCursor, _ members: JSONObject, clip: OTIOTimeline.ClipContext) throws(MixdownError) -> OTIOTimeline.ClipGain? { nil }

    static func recordStart(track: JSONCursor, sourceRange: JSONCursor, trim: (start: Rational, duration: Rational),
                            itemsLength: Rational, name: String, nested: Bool) throws(MixdownError) -> OTIOTimeline.RecordStart? { nil }

    static func clipChannel(_ clip: JSONCursor, _ members: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest? { nil }
}

extension OTIOTimeline {
    /// The editors whose metadata Mixdown reads, asked in this order (the first answer wins).
    static let dialects: [any OTIODialect.Type] = [FinalCutXML.self, Resolve.self, AvidAAF.self, CMX3600.self]

    /// What a dialect knows of the clip an effect is on.
    struct ClipContext {
        /// The clip's length on its track.
        let duration: Rational
        /// One frame of its source range's rate (nil: it has none).
        let frame: Rational?
    }

    /// A clip gain a dialect reads: constant, or keys (times as fractions of the clip,
    /// linear gains; `steps`: each value held to the next key instead of ramping to it).
    enum ClipGain { case constant(Double), keyframes([(Double, Double)], steps: Bool) }

    /// What of its file a clip plays: all of it, or one channel (from 0) landing on an
    /// output channel (from 0; nil: the channel's own place in the file).
    enum ChannelRequest: Equatable { case whole, channel(source: Int, output: Int?) }

    /// The OTIO track a clip is on, as a dialect sees it.
    struct TrackContext {
        let cursor: JSONCursor
        let members: JSONObject
        /// Its name as the timeline gives it (empty when it has none).
        let name: String
        /// Inside a nested stack.
        let nested: Bool
        /// Placed by a dialect's record timecode (a CMX 3600 record window).
        var recordTimecode = false
    }

    /// `metadata.<key>` of an object, when it is an object.
    static func metadata(_ key: String, _ c: JSONCursor, _ o: JSONObject) -> (cursor: JSONCursor, members: JSONObject)? {
        guard let md = c.member("metadata", in: o), case .object(let m) = md.value,
              let k = md.member(key, in: m), case .object(let ko) = k.value else { return nil }
        return (k, ko)
    }

    /// A whole number written as a number or a string ("2", as the FCP adapter keeps XML text).
    static func whole(_ c: JSONCursor?) -> Int? {
        switch c?.value {
        case .number(let d)?: return d == d.rounded() && abs(d) < 1e9 ? Int(d) : nil
        case .string(let s)?: return Int(s.trimmingCharacters(in: .whitespaces))
        default: return nil
        }
    }

    /// Where a track's items are recorded: `start` is its first record in, on the
    /// sequence's clock; if it is the earliest track, the render starts at
    /// `sequenceStart`, and `note` says so.
    struct RecordStart {
        let start: Rational
        let sequenceStart: Rational
        let note: String
        /// The rate its timecode counts (nil: none given).
        var rate: (num: Int64, den: Int64)? = nil
    }
}
