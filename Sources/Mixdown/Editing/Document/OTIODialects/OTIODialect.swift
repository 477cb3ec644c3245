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
}

extension OTIODialect {
    static func clipGain(_ effect: JSONCursor, _ members: JSONObject, clip: OTIOTimeline.ClipContext) throws(MixdownError) -> OTIOTimeline.ClipGain? { nil }

    static func recordStart(track: JSONCursor, sourceRange: JSONCursor, trim: (start: Rational, duration: Rational),
                            itemsLength: Rational, name: String, nested: Bool) throws(MixdownError) -> OTIOTimeline.RecordStart? { nil }
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

    /// Where a track's items are recorded: `start` is its first record in, on the
    /// sequence's clock; if it is the earliest track, the render starts at
    /// `sequenceStart`, and `note` says so.
    struct RecordStart {
        let start: Rational
        let sequenceStart: Rational
        let note: String
    }
}
