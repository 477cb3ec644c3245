import Foundation

/// Reads an OpenTimelineIO timeline (`.otio`, OTIO's JSON) as a composition document, with
/// exact rational time where OTIO's own are Doubles (rules in `docs/otio.md`).
///
/// What is read: Timeline (its `global_start_time` checked and reported), the top Stack,
/// Tracks of kind Audio (Video tracks are ignored, with a note), Clips with an
/// ExternalReference (`file://` URLs and paths, relative ones from the .otio file's
/// directory) or a MissingReference (an error naming the clip), Gaps, Transitions
/// (SMPTE_Dissolve: an equal-power crossfade over in_offset before and out_offset after the
/// cut), nested Stacks, `source_range`, `available_range`, `enabled`, LinearTimeWarp, and
/// gains under `metadata.mixdown.volume`. Editors' metadata (gains, record windows) is read
/// by the dialects in `OTIODialects/`. Every error names the file and the path of the
/// object at fault (`tracks[1].children[4].source_range`).
///
/// The data flows one way: the walk of OTIO's tree places clips on lanes in exact time
/// (`Rational`, refused rather than rounded), the lanes become a `CompositionDraft`, and
/// `CompositionDocument.assemble` checks and builds it, as it does a `.json` document's.
public enum OTIOTimeline {
    /// What `--explain` adds: where a Double was not exact and how it was rounded, what was ignored.
    public struct Notes: Sendable, Equatable {
        public var lines: [String] = []
    }

    /// Whether `bytes` look like an OTIO document (a top object with "OTIO_SCHEMA").
    public static func isOTIO(_ bytes: [UInt8]) -> Bool {
        let head = String(decoding: bytes.prefix(4096), as: UTF8.self)
        return head.contains("\"OTIO_SCHEMA\"")
    }

    /// Reads the timeline in `bytes`; `path` names it in messages and anchors relative
    /// paths. Its notes are the document's `translationNotes`.
    public static func document(bytes: [UInt8], path: String, relinking: MediaRelinking = MediaRelinking(),
                                from: String? = nil) throws(MixdownError) -> CompositionDocument {
        var reader = Reader(file: path)
        reader.relinking = relinking
        reader.from = from
        var document = CompositionDocument(emptyAt: path)
        try reader.read(bytes, into: &document)
        document.translationNotes = reader.notes.lines
        return document
    }

    /// A clip placed on a lane (a composition track), in the lane's time.
    struct Placed {
        var file: String
        var sourceStart: Rational
        var sourceDuration: Rational
        var at: Rational
        var duration: Rational
        var gain: Double
        var fadeIn = Rational.zero
        var fadeOut = Rational.zero
        /// The OTIO object its errors name (the clip, or its source range).
        var origin: JSONCursor
        /// The exact place Mixdown wrote beside OTIO's values (used while they agree to 1 µs,
        /// or to `placeTolerance`).
        var exactPlace: (at: Rational, duration: Rational)?
        /// Seconds OTIO's start and end may lie from the exact place for it to be used: half
        /// a unit of the rate Mixdown wrote the track at (it rounds each position to that
        /// rate, so a coarse rate puts them more than 1 µs off); 0 for a place Mixdown wrote
        /// as rounded to an edit rate.
        var placeTolerance = 0.0
        /// How far (less than a frame) the clip runs past its media's available range: the
        /// clip ends that much early, and silence fills its place.
        var overrun = Rational.zero
        /// Keyframed clip gain (a dialect's keys): times from the clip's start, linear
        /// gains; `steps` holds each value to the next key (constant interpolation) instead
        /// of ramping to it.
        var gainKeys: [(Rational, Double)] = []
        var steps = false
        /// The one channel of its file it plays (nil: the whole file, or not known yet).
        var route: ChannelRoute?
        /// Whether Mixdown's metadata or a dialect said what it plays (else the split rule
        /// may give it a channel).
        var channelKnown = false
        var scaled: Bool { sourceDuration != duration }
    }

    /// A lane's gain: constant, keyframes (Mixdown's `metadata.mixdown.volume.keyframes`),
    /// or Mixdown's own volume events (`metadata.mixdown.volume.events`, read once the
    /// output rate is known).
    enum LaneGain { case constant(Double), keyframes([(Rational, Double)], origin: JSONCursor), events(JSONCursor) }

    /// A composition track in the making: its name, gain, clips, where its track ends in
    /// output time (a trailing gap lasts, as in OTIO, where a track is as long as its
    /// items), and the OTIO track it comes from.
    struct Lane {
        var name: String
        var gain: LaneGain
        var clips: [Placed] = []
        var end: Rational
        let origin: JSONCursor
        /// The OTIO track it comes from, as the index of that track's first lane (a
        /// dissolve's second lane shares it).
        var family = 0
    }

    /// An item of a track: its object, schema, and place in the track's time (transitions take none).
    typealias TrackItem = (cursor: JSONCursor, members: JSONObject, kind: String, start: Rational, duration: Rational)

    struct Reader {
        let file: String
        let base: String
        var notes = Notes()
        /// Where to look for media that is not where the timeline says.
        var relinking = MediaRelinking()
        /// The media the timeline names, each read once (for its timecode and length, then
        /// for the composition).
        var assets = AssetCache()
        var lanes: [Lane] = []
        /// Tracks not read, by kind ("Video": 2), for a timeline that has no audio.
        var ignoredKinds: [String: Int] = [:]
        /// Each top-level audio track's record start, when a dialect gave one.
        var recordStarts: [OTIOTimeline.RecordStart] = []
        /// `--from`: the timecode the render starts at, on the sequence's clock.
        var from: String?
        /// Each file's first declared available range and where (a second declaration that
        /// differs is named in errors).
        var declarations: [String: (range: (start: Rational, duration: Rational), path: String)] = [:]

        init(file: String) {
            self.file = file
            base = (file as NSString).deletingLastPathComponent
        }

        mutating func read(_ bytes: [UInt8], into document: inout CompositionDocument) throws(MixdownError) {
            let root: JSONValue
            // opentimelineio writes Infinity and NaN for non-finite floats (in metadata Mixdown
            // never reads): accepted here, and refused wherever a time or a level is one.
            do { root = try JSONParser.parse(bytes, nonFinite: true) } catch {
                throw .invalidDocument(file: file, location: error.location, reason: "is not valid JSON (line \(error.line), column \(error.column)): \(error.reason)")
            }
            let top = JSONCursor(value: root, path: "", file: file)
            let t = try members(top)
            try expect(top, t, "Timeline")
            var globalStart: (seconds: Rational, rate: (num: Int64, den: Int64))?
            if let g = top.member("global_start_time", in: t), g.value != .null {
                let start = try time(g)
                if case .object(let go) = g.value, let r = try g.member("rate", in: go)?.number(), let rate = Self.exactRate(r) {
                    globalStart = (start, rate)
                }
                notes.lines.append("global_start_time \(start.description) s (\(String(format: "%.6f", start.approximateSeconds)) s): the timeline's first frame; the render starts there")
            }
            // The document settings Mixdown wrote (`metadata.mixdown`: output, time_range,
            // time_pitch_algorithm...), read as a document's, at their own paths.
            var request = CompositionDocument.OutputRequest()
            var timeRange: JSONCursor?
            if let md = top.member("metadata", in: t), case .object(let m) = md.value,
               let mx = md.member("mixdown", in: m), case .object(let x) = mx.value {
                request = try document.readSettings(mx, x)
                timeRange = mx.member("time_range", in: x)
            }
            let stack = try top.required("tracks", in: t)
            let s = try members(stack)
            try expect(stack, s, "Stack")
            let children = try stack.required("children", in: s).array()
            do throws(MixdownError) {
                for (i, child) in children.enumerated() {
                    let c = JSONCursor(value: child.value, path: "tracks[\(i)]", file: file)
                    try track(c, offset: .zero, window: nil, parentGain: 1)
                }
                // Tracks that each hold one channel of a file, where the conversion lost which.
                try routeSplitTracks()
                // Record timecodes: the earliest track starts the render.
                // Record timecodes: the sequence starts at the earliest track's start (or
                // at --from, or at global_start_time when it lies at or before it).
                var shift: Rational?
                if let first = recordStarts.min(by: { $0.start < $1.start }), first.start > .zero, !first.note.isEmpty, let rate = first.rate {
                    if let from {
                        let f = try Self.timecodeSeconds(from, rate: rate)
                        guard !(first.start < f) else {
                            throw MixdownError.invalidParameter(name: "--from", value: from, reason: "lies after the first record in, \(CMX3600.timecode(first.start, rate: rate)): the render would cut events")
                        }
                        shift = f
                        notes.lines.append("the render starts at \(from) (--from); the first record in is \(CMX3600.timecode(first.start, rate: rate))")
                    } else if let g = globalStart, !(first.start < g.seconds) {
                        shift = g.seconds
                        notes.lines.append("the render starts at global_start_time \(CMX3600.timecode(g.seconds, rate: g.rate)); the first record in is \(CMX3600.timecode(first.start, rate: rate))")
                    } else {
                        shift = first.sequenceStart
                        notes.lines.append(first.note)
                    }
                } else if let from {
                    // No record timecode: the sequence's clock starts at global_start_time.
                    guard let g = globalStart else {
                        throw MixdownError.invalidParameter(name: "--from", value: from, reason: "'\(file)' gives no sequence clock (no record timecode, no global_start_time) to start the render on")
                    }
                    let f = try Self.timecodeSeconds(from, rate: g.rate)
                    guard !(g.seconds < f) else {
                        throw MixdownError.invalidParameter(name: "--from", value: from, reason: "lies after the sequence's start, \(CMX3600.timecode(g.seconds, rate: g.rate)) (global_start_time): the render would cut events")
                    }
                    shift = try f.subtracting(g.seconds)
                    notes.lines.append("the render starts at \(from) (--from), \(String(format: "%.6f", try g.seconds.subtracting(f).approximateSeconds)) s before the sequence's start (global_start_time)")
                }
                if let shift, shift != .zero {
                    for i in lanes.indices {
                        for j in lanes[i].clips.indices { lanes[i].clips[j].at = try lanes[i].clips[j].at.subtracting(shift) }
                        lanes[i].end = max(.zero, try lanes[i].end.subtracting(shift))
                    }
                }
            } catch {
                // An exact sum that does not fit knows no place: it is the tracks' times.
                if case .invalidParameter("time", _, Rational.inexactReason) = error {
                    throw .invalidDocument(file: file, location: "tracks", reason: "its times, added exactly, leave 64 bits (rates too fine, or too many unrelated ones)")
                }
                throw error
            }
            if !lanes.contains(where: { !$0.clips.isEmpty }) {
                // Only generators, muted clips or gaps: an editor renders silence of the
                // timeline's length; so does Mixdown, at 48 kHz stereo unless it was told.
                let length = lanes.map(\.end).max() ?? .zero
                guard length > .zero else {
                    // Say what there was instead: an EDL or XML of picture alone is common.
                    let others = ignoredKinds.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key) track\($0.value == 1 ? "" : "s")" }
                    throw top.fail("has no enabled audio clip to render, and no length" + (others.isEmpty ? "" : " (Mixdown renders audio; it ignored \(others.joined(separator: ", ")))"), at: "tracks")
                }
                notes.lines.append("no enabled audio clip: the render is \(String(format: "%.6f", length.approximateSeconds)) s of silence, the timeline's length")
                if request.rate == nil || request.channels == nil {
                    request.rate = request.rate ?? 48_000
                    request.channels = request.channels ?? 2
                    notes.lines.append("no media gives the rate: \(request.rate!) Hz, \(request.channels!) channels (output.sample_rate and output.channels in metadata.mixdown set others)")
                }
            }
            // A time read twice (a clip's length, then the clip) is noted once.
            var seen = Set<String>()
            notes.lines = notes.lines.filter { seen.insert($0).inserted }

            var draft = try self.draft()
            try document.settle(request, media: draft.tracks.flatMap { $0.segments }.compactMap { s in
                if case .media(let asset, _, _, _) = s.content { return (asset, s.origin, s.route != nil) } else { return nil }
            })
            // Mixdown's own volume events count frames at the output rate: read now that it is known.
            for lane in lanes {
                guard case .events(let events) = lane.gain, let ti = draft.tracks.firstIndex(where: { $0.name == lane.name }) else { continue }
                draft.tracks[ti].volume = try CompositionDocument.volumeEvents(events, rate: document.outputFormat?.sampleRate)
                draft.tracks[ti].volumeOrigin = DocumentOrigin(events)
            }
            _ = try document.assemble(draft)
            if let timeRange { try document.readTimeRange(timeRange) }
        }

        // MARK: Objects

        func members(_ c: JSONCursor) throws(MixdownError) -> JSONObject {
            guard case .object(let o) = c.value else { throw c.fail("must be an object, not \(c.value.kind)") }
            return o
        }

        /// The schema's name ("Clip" of "Clip.2"), refusing an unknown one where `wanted` is given.
        func schema(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> String {
            guard let s = c.member("OTIO_SCHEMA", in: o) else { throw c.fail("has no OTIO_SCHEMA") }
            let name = String(try s.string().split(separator: ".").first ?? "")
            // OTIO's legacy name for a Track, which opentimelineio still reads as one.
            return name == "Sequence" ? "Track" : name
        }

        func expect(_ c: JSONCursor, _ o: JSONObject, _ wanted: String) throws(MixdownError) {
            let s = try schema(c, o)
            guard s == wanted else { throw c.fail("is a \(s), where a \(wanted) was expected", at: "OTIO_SCHEMA") }
        }

        func enabled(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> Bool {
            guard let e = c.member("enabled", in: o) else { return true }
            guard case .bool(let b) = e.value else { throw e.fail("must be true or false") }
            return b
        }

        // MARK: Time

        /// OTIO's rate as an exact rational: whole numbers as they are; the NTSC family
        /// (k·1000/1001: 23.976, 29.97, 47.952, 59.94, 119.88) within 0.005 of it.
        static func exactRate(_ r: Double) -> (num: Int64, den: Int64)? {
            // Whole rates up to 2^53 (every whole Double below it is exact): Mixdown writes a
            // time's own timescale as its rate.
            guard r.isFinite, r > 0, r <= 9_007_199_254_740_992 else { return nil }
            if r == r.rounded() { return (Int64(r), 1) }
            let k = (r * 1.001).rounded()
            if k >= 1, abs(r - k * 1000 / 1001) < 0.005 { return (Int64(k) * 1000, 1001) }
            return nil
        }

        /// A RationalTime in seconds, exactly: value frames at the exact rate, the value
        /// rounded to the nearest 1/1000 frame (half away from zero) and noted when it was not
        /// a whole frame.
        mutating func time(_ c: JSONCursor) throws(MixdownError) -> Rational {
            let o = try members(c)
            try expect(c, o, "RationalTime")
            let rate = try c.required("rate", in: o).number()
            let value = try c.required("value", in: o).number()
            guard rate > 0 else { throw c.fail("a rate of \(rate): must be above 0", at: "rate") }
            guard let (num, den) = Self.exactRate(rate) else {
                throw c.fail("a rate of \(rate) is neither a whole number nor an NTSC rate (k x 1000/1001)", at: "rate")
            }
            // Whole Doubles are exact below 2^53; and no time may pass Mixdown's limit, 1,000,000 hours.
            guard value.isFinite, abs(value) < 9_007_199_254_740_992, abs(value) / rate <= 3.6e9 else {
                throw c.fail("\(value) frames at \(rate): beyond the largest time Mixdown accepts, 1,000,000 hours", at: "value")
            }
            let whole = value.rounded()
            let milli: Int128
            if abs(value - whole) <= 1e-9 * max(1, abs(value)) {
                milli = Int128(Int64(whole)) * 1000
                if value != whole { notes.lines.append("\(c.path).value \(value) at \(rate): read as the whole frame \(Int64(whole))") }
            } else {
                milli = Int128(Int64((value * 1000).rounded(.toNearestOrAwayFromZero)))   // a Double that is not whole lies below 2^52: x 1000 fits
                notes.lines.append("\(c.path).value \(value) at \(rate) is not a whole frame: rounded to \((try? Rational(milli, over: 1000))?.description ?? "\(milli)/1000") frames")
            }
            if Double(num) != rate { if !notes.lines.contains(where: { $0.hasPrefix("rate \(rate)") }) {
                notes.lines.append("rate \(rate) read as \(num)/\(den) exactly")
            } }
            return try Rational(milli * Int128(den), over: 1000 * Int128(num))
        }

        /// `--from`'s timecode in seconds at `rate`, or an error naming it.
        static func timecodeSeconds(_ text: String, rate: (num: Int64, den: Int64)) throws(MixdownError) -> Rational {
            guard let t = CMX3600.seconds(ofTimecode: text, rate: rate) else {
                throw .invalidParameter(name: "--from", value: text, reason: "is not a timecode HH:MM:SS:FF at the sequence's \(String(format: "%g", Double(rate.num) / Double(rate.den))) fps (HH:MM:SS;FF for drop-frame)")
            }
            return t
        }

        /// A time_scalar as an exact rational: the shortest decimal that reads back as the
        /// Double (what a person or an adapter wrote: 1.0, 0.5, 1.25), when it has at most 9
        /// decimal places; else the Double rounded to 1e-9 (`rounded`).
        static func exactScalar(_ s: Double) -> (value: Rational, rounded: Bool) {
            let text = "\(s)"
            if !text.contains("e"), let dot = text.firstIndex(of: ".") {
                let decimals = text[text.index(after: dot)...]
                if decimals.count <= 9, let whole = Int64(text[..<dot]), let fraction = Int64(decimals) {
                    var scale: Int64 = 1
                    for _ in 0..<decimals.count { scale *= 10 }
                    if let exact = try? Rational(Int128(whole) * Int128(scale) + Int128(fraction), over: Int128(scale)) { return (exact, false) }
                }
            }
            return ((try? Rational(Int128((s * 1e9).rounded(.toNearestOrAwayFromZero)), over: 1_000_000_000)) ?? .zero, true)
        }

        /// A TimeRange: its start and duration (which must not be negative).
        mutating func range(_ c: JSONCursor) throws(MixdownError) -> (start: Rational, duration: Rational) {
            let o = try members(c)
            try expect(c, o, "TimeRange")
            let start = try time(c.required("start_time", in: o))
            let duration = try time(c.required("duration", in: o))
            guard !(duration < .zero) else { throw c.fail("a negative duration (\(duration.approximateSeconds) s)", at: "duration") }
            return (start, duration)
        }

        // MARK: Gains

        /// `metadata.mixdown.volume` of a track or clip.
        func volume(_ c: JSONCursor, _ o: JSONObject) -> JSONCursor? { mixdownMember("volume", c, o) }

        func gain(_ c: JSONCursor) throws(MixdownError) -> Double {
            try Self.linear(try c.number(), at: c)
        }

        /// `g` when it is a linear gain Mixdown takes (0 to 16), else an error at `c`
        /// calling it a `noun` ("gain", or FCP's "level").
        static func linear(_ g: Double, at c: JSONCursor, noun: String = "gain") throws(MixdownError) -> Double {
            guard g >= 0, g <= 16 else { throw c.fail("a \(noun) of \(g): must lie between 0 and 16 (linear)") }
            return g
        }

        // MARK: Tracks

        /// Places the audio of the track at `c` on lanes: its items from output time
        /// `offset`, only what lies in `window` (a nested stack's, in the track's trimmed
        /// time), its gain times `parentGain`.
        mutating func track(_ c: JSONCursor, offset: Rational, window: (start: Rational, duration: Rational)?, parentGain: Double,
                            defaultKind: String = "Video") throws(MixdownError) {
            let o = try members(c)
            // A Clip (or Gap) directly inside a Stack is a track of that one item, as
            // opentimelineio flattens it; it has no kind, and is read as audio.
            let lone = ["Clip", "Gap"].contains(try schema(c, o))
            if lone {
                notes.lines.append("\(c.path): a \(try schema(c, o)) directly inside a Stack, read as a track of one")
            } else {
                try expect(c, o, "Track")
            }
            let kind = lone ? "Audio" : try c.member("kind", in: o)?.string() ?? defaultKind
            guard kind == "Audio" else {
                ignoredKinds[kind, default: 0] += 1
                notes.lines.append("\(c.path): a \(kind) track, ignored")
                return
            }
            guard try enabled(c, o) else {
                notes.lines.append("\(c.path): disabled, not rendered")
                return
            }
            var trackGain = LaneGain.constant(parentGain)
            if !lone, let v = volume(c, o) {
                if case .object(let vo) = v.value, let events = v.member("events", in: vo) {
                    guard window == nil, parentGain == 1 else { throw v.fail("volume events on a track inside a nested stack are not supported") }
                    trackGain = .events(events)
                } else if case .object(let vo) = v.value {
                    guard window == nil, parentGain == 1 else { throw v.fail("keyframes on a track inside a nested stack are not supported") }
                    var keys: [(Rational, Double)] = []
                    for k in try v.required("keyframes", in: vo).array() {
                        let ko = try members(k)
                        keys.append((try time(k.required("time", in: ko)), try gain(k.required("value", in: ko))))
                    }
                    guard !keys.isEmpty, zip(keys, keys.dropFirst()).allSatisfy({ $0.0 < $1.0 }) else {
                        throw v.fail("keyframes must be given in increasing time")
                    }
                    trackGain = .keyframes(keys, origin: v)
                } else {
                    trackGain = .constant(parentGain * (try gain(v)))
                }
            }
            var trim: (start: Rational, duration: Rational)?
            if !lone, let sr = c.member("source_range", in: o), sr.value != .null { trim = try range(sr) }
            let children = lone ? [c] : try c.required("children", in: o).array()
            // Each item's place on the track (transitions take no time).
            var t = Rational.zero
            var items: [TrackItem] = []
            for child in children {
                let co = try members(child)
                let k = try schema(child, co)
                switch k {
                case "Clip", "Gap", "Stack", "Track":
                    let d = try itemDuration(child, co, kind: k)
                    items.append((child, co, k, t, d))
                    t = try t.adding(d)
                case "Transition":
                    items.append((child, co, k, t, .zero))
                default:
                    throw child.fail("an unknown schema '\(k)' (a track holds Clip, Gap, Transition, Stack and Track)", at: "OTIO_SCHEMA")
                }
            }
            // What is rendered, in this track's time: its own trim, and inside a nested stack
            // the stack's window (in the stack's time, where the trimmed track starts at 0).
            // `visible.start` plays at output time `offset`.
            var offset = offset
            let name = laneName(c, o)
            // A top-level track without a record start starts at 0 (then no track moves).
            if window == nil { recordStarts.append(OTIOTimeline.RecordStart(start: .zero, sequenceStart: .zero, note: "")) }
            var recorded = false
            if let r = trim, r.start < .zero, let sr = c.member("source_range", in: o) {
                // A window before the track may be an editor's record timecode (a CMX 3600
                // EDL's): the whole track placed at it.
                for dialect in OTIOTimeline.dialects {
                    guard let record = try dialect.recordStart(track: c, sourceRange: sr, trim: r, itemsLength: t, name: name, nested: window != nil) else { continue }
                    notes.lines.append("\(sr.path).start_time \(String(format: "%.6f", r.start.approximateSeconds)) s: a record timecode; the track is placed at it, and the render starts at the earliest track")
                    offset = try offset.adding(record.start)
                    recordStarts[recordStarts.count - 1] = record
                    trim = nil
                    recorded = true
                    break
                }
            }
            let trimStart = trim?.start ?? .zero
            let trimEnd = try trim.map { (r: (start: Rational, duration: Rational)) throws(MixdownError) -> Rational in try r.start.adding(r.duration) } ?? t
            var visible = (start: trimStart, end: trimEnd)
            if let w = window {
                let start = try trimStart.adding(w.start)
                visible = (start, min(trimEnd, try start.adding(w.duration)))
            }
            let laneA = lanes.count
            lanes.append(Lane(name: name, gain: trackGain, end: visible.end > visible.start ? try offset.adding(visible.end.subtracting(visible.start)) : offset, origin: c, family: lanes.count))
            let context = OTIOTimeline.TrackContext(cursor: c, members: o, name: lone ? "" : ((try? c.member("name", in: o)?.string()) ?? nil) ?? "",
                                                    nested: window != nil, recordTimecode: recorded)
            var lane = laneA
            var laneB: Int?
            var pendingFadeIn: (Rational, Rational)?
            for (index, item) in items.enumerated() {
                switch item.kind {
                case "Transition":
                    let before = index > 0 ? items[index - 1] : nil, after = index + 1 < items.count ? items[index + 1] : nil
                    let (inOffset, outOffset) = try transition(item, before: before, after: after, index: index, nested: window != nil)
                    let clipBefore = before?.kind == "Clip", clipAfter = after?.kind == "Clip"
                    if clipBefore {
                        // The outgoing clip runs on out_offset after the cut and fades out.
                        guard var last = lanes[lane].clips.popLast() else { throw item.cursor.fail("the clip before it is not rendered (disabled?)") }
                        guard !last.scaled else { throw item.cursor.fail("a transition beside a time-warped clip is not supported") }
                        last.duration = try last.duration.adding(outOffset)
                        last.sourceDuration = try last.sourceDuration.adding(outOffset)
                        if let length = mediaLength(last.file), try last.sourceStart.adding(last.sourceDuration) > length {
                            let past = try last.sourceStart.adding(last.sourceDuration).subtracting(length)
                            throw item.cursor.fail("the file is too short: this transition needs \(String(format: "%.6f", outOffset.approximateSeconds)) s of '\(last.file)' past the outgoing clip's out point, and the file ends \(String(format: "%.6f", past.approximateSeconds)) s before that")
                        }
                        last.fadeOut = try inOffset.adding(outOffset)
                        lanes[lane].clips.append(last)
                        if !clipAfter { notes.lines.append("\(item.cursor.path): a dissolve into a gap, rendered as a fade-out") }
                    } else {
                        notes.lines.append("\(item.cursor.path): a dissolve from a gap, rendered as a fade-in")
                    }
                    if clipAfter {
                        // The incoming clip starts in_offset before the cut and fades in: on the
                        // other lane when it overlaps an outgoing clip.
                        if clipBefore {
                            if laneB == nil {
                                laneB = lanes.count
                                lanes.append(Lane(name: lanes[laneA].name + " (B)", gain: trackGain, end: .zero, origin: c, family: laneA))
                            }
                            lane = lane == laneA ? laneB! : laneA
                        }
                        pendingFadeIn = (inOffset, outOffset)
                    }
                case "Gap":
                    if pendingFadeIn != nil { throw item.cursor.fail("a transition before a gap") }
                case "Stack", "Track":
                    // A Track directly inside a Track is a Stack of one (as opentimelineio reads
                    // it); its own source range trims it inside, so the window starts at 0.
                    guard pendingFadeIn == nil else { throw item.cursor.fail("a transition into a nested stack is not supported") }
                    let so = item.members
                    var inner: (start: Rational, duration: Rational)?
                    if item.kind == "Stack", let sr = item.cursor.member("source_range", in: so), sr.value != .null { inner = try range(sr) }
                    // The stack's own time: its window starts at its source range's start.
                    let innerStart = inner?.start ?? .zero
                    let lo = max(visible.start, item.start), hi = min(visible.end, try item.start.adding(item.duration))
                    guard lo < hi else { continue }
                    let nestedWindow = (start: try innerStart.adding(lo.subtracting(item.start)), duration: try hi.subtracting(lo))
                    let nestedOffset = try offset.adding(lo.subtracting(visible.start))
                    let g: Double
                    if case .constant(let v) = trackGain { g = v } else { throw item.cursor.fail("a nested stack on a track with volume keyframes is not supported") }
                    if item.kind == "Track" {
                        notes.lines.append("\(item.cursor.path): a Track inside a Track, read as a Stack of one")
                        try track(item.cursor, offset: nestedOffset, window: nestedWindow, parentGain: g, defaultKind: "Audio")
                    } else {
                        for child in try item.cursor.required("children", in: so).array() {
                            try track(child, offset: nestedOffset, window: nestedWindow, parentGain: g)
                        }
                    }
                default:
                    guard try enabled(item.cursor, item.members) else {
                        if pendingFadeIn != nil { throw item.cursor.fail("a transition into a disabled clip") }
                        continue
                    }
                    guard var clip = try self.clip(item.cursor, item.members, duration: item.duration, track: context) else {
                        if pendingFadeIn != nil { throw item.cursor.fail("a transition into a generator clip is not supported") }
                        continue
                    }
                    // Placed in the output's time: the track's visible part starts at `offset`.
                    var start = item.start, end = try item.start.adding(item.duration)
                    if let (inOffset, outOffset) = pendingFadeIn {
                        start = try start.subtracting(inOffset)
                        clip.sourceStart = try clip.sourceStart.subtracting(inOffset)
                        clip.sourceDuration = try clip.sourceDuration.adding(inOffset)
                        clip.fadeIn = try inOffset.adding(outOffset)
                        guard !(clip.sourceStart < .zero) else {
                            throw item.cursor.fail("the file is too short: the transition before it (\(items[index - 1].cursor.path)) needs \(String(format: "%.6f", inOffset.approximateSeconds)) s of '\(clip.file)' before the clip's in point, which lies \(String(format: "%.6f", try clip.sourceStart.adding(inOffset).approximateSeconds)) s into the file", at: "source_range")
                        }
                        pendingFadeIn = nil
                    }
                    let lo = max(start, visible.start), hi = min(end, visible.end)
                    guard lo < hi else { continue }
                    if lo != start || hi != end {
                        guard !clip.scaled, clip.fadeIn == .zero, clip.fadeOut == .zero, clip.gainKeys.isEmpty else {
                            throw item.cursor.fail("a time-warped clip, a crossfade or keyframed gain cut by a source range is not supported")
                        }
                        clip.sourceStart = try clip.sourceStart.adding(lo.subtracting(start))
                        clip.sourceDuration = try hi.subtracting(lo)
                        start = lo
                        end = hi
                    }
                    clip.at = try offset.adding(start.subtracting(visible.start))
                    clip.duration = try end.subtracting(start)
                    // A clip whose end is played stops where its media does (less than a frame early).
                    let itemEnd = try item.start.adding(item.duration)
                    if clip.overrun > .zero && hi == itemEnd && clip.fadeOut == .zero {
                        // A time-warped clip keeps its ratio: its timeline length shrinks in proportion.
                        let kept = try clip.sourceDuration.subtracting(clip.overrun)
                        clip.duration = try clip.duration.multiplied(by: kept).divided(by: clip.sourceDuration)
                        clip.sourceDuration = kept
                    }
                    lanes[lane].clips.append(clip)
                }
            }
            if pendingFadeIn != nil { throw c.fail("ends with a transition") }
        }

        /// A Transition's in and out offsets, checked against what lies beside it. A side with
        /// no clip is a gap or the track's edge: the dissolve is a fade from or to silence
        /// (Avid writes every fade so), over the same span and with the same equal-power
        /// curve as a crossfade.
        mutating func transition(_ item: TrackItem, before: TrackItem?, after: TrackItem?, index: Int, nested: Bool) throws(MixdownError) -> (Rational, Rational) {
            let ty = try item.cursor.member("transition_type", in: item.members)?.string() ?? "SMPTE_Dissolve"
            guard ty == "SMPTE_Dissolve" else { throw item.cursor.fail("transition type '\(ty)': only SMPTE_Dissolve is read", at: "transition_type") }
            let inOffset = try time(item.cursor.required("in_offset", in: item.members))
            let outOffset = try time(item.cursor.required("out_offset", in: item.members))
            guard !(inOffset < .zero), !(outOffset < .zero), try inOffset.adding(outOffset) > .zero else {
                throw item.cursor.fail("in_offset and out_offset must not be negative, and not both 0")
            }
            let clipBefore = before?.kind == "Clip", clipAfter = after?.kind == "Clip"
            func silentSide(_ side: TrackItem?, needs offset: Rational, _ name: String) throws(MixdownError) {
                if let g = side {
                    guard g.kind == "Gap" else { throw item.cursor.fail("a transition beside a nested stack is not supported") }
                    guard !(g.duration < offset) else {
                        throw item.cursor.fail("\(name) \(offset.approximateSeconds) s reaches past the \(g.duration.approximateSeconds) s gap beside it")
                    }
                } else if offset > .zero {
                    throw item.cursor.fail("\(name) \(offset.approximateSeconds) s reaches past the \(index == 0 ? "start" : "end") of the track")
                }
            }
            guard clipBefore || clipAfter else { throw item.cursor.fail("a transition between two gaps fades nothing: it needs a clip on one side") }
            if let a = before, clipBefore, a.duration < inOffset {
                throw item.cursor.fail("overlaps more than its clips: in_offset \(inOffset.approximateSeconds) s of a \(a.duration.approximateSeconds) s clip")
            }
            if let b = after, clipAfter, b.duration < outOffset {
                throw item.cursor.fail("overlaps more than its clips: out_offset \(outOffset.approximateSeconds) s of a \(b.duration.approximateSeconds) s clip")
            }
            if !clipBefore { try silentSide(before, needs: inOffset, "in_offset") }
            if !clipAfter { try silentSide(after, needs: outOffset, "out_offset") }
            guard !nested else { throw item.cursor.fail("a transition inside a nested stack is not supported") }
            return (inOffset, outOffset)
        }

        func laneName(_ c: JSONCursor, _ o: JSONObject) -> String {
            let given = (try? c.member("name", in: o)?.string()) ?? nil
            let name = (given?.isEmpty ?? true) ? c.path : given!
            var unique = name, k = 2
            while lanes.contains(where: { $0.name == unique }) { unique = "\(name) \(k)"; k += 1 }
            return unique
        }
    }
}
