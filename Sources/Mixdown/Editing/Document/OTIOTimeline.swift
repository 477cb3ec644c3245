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
/// gains under `metadata.mixdown.volume`. Every error names the file and the path of the
/// object at fault (`tracks[1].children[4].source_range`).
///
/// The timeline becomes Mixdown's own document (the same reader checks it, so a file, rate
/// or channel problem is found as in a `.json` document, and named by its OTIO path).
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

    /// Reads the timeline in `bytes`; `path` names it in messages and anchors relative paths.
    public static func document(bytes: [UInt8], path: String, relinking: MediaRelinking = MediaRelinking()) throws(MixdownError) -> (document: CompositionDocument, notes: Notes) {
        var reader = Reader(file: path)
        reader.relinking = relinking
        let json: String
        do { json = try reader.translate(bytes) } catch {
            // Q's overflow knows no place: it is the tracks' times.
            if case .invalidDocument("", _, let reason) = error { throw .invalidDocument(file: path, location: "tracks", reason: reason) }
            throw error
        }
        do {
            return (try CompositionDocument(bytes: Array(json.utf8), path: path), reader.notes)
        } catch {
            // The document's paths back to the timeline's.
            if case .invalidDocument(let file, let location, let reason) = error {
                let otio = reader.origins.first { location == $0.generated || location.hasPrefix($0.generated + ".") }
                throw .invalidDocument(file: file, location: otio?.otio ?? location, reason: reason)
            }
            throw error
        }
    }

    /// A rational number of seconds, for the times the translation computes.
    struct Q: Comparable {
        var n: Int64, d: Int64
        init(_ n: Int64, _ d: Int64) {
            var a = n.magnitude, b = d.magnitude
            while b != 0 { (a, b) = (b, a % b) }
            let g = Int64(max(a, 1))
            self.n = n / g * (d < 0 ? -1 : 1)
            self.d = d.magnitude == 0 ? 1 : Int64(d.magnitude) / g
        }
        init(_ t: MediaTime) { self.init(t.value, Int64(t.timescale)) }
        static let zero = Q(0, 1)
        // Exact or refused: a sum whose reduced numerator or denominator leaves 64 bits (rates
        // too fine, or too many unrelated ones) is an error, never a wrapped value or a trap.
        static func + (a: Q, b: Q) throws(MixdownError) -> Q {
            let g = Int128(gcd(a.d, b.d))
            return try make(Int128(a.n) * (Int128(b.d) / g) + Int128(b.n) * (Int128(a.d) / g), Int128(a.d) / g * Int128(b.d))
        }
        static func - (a: Q, b: Q) throws(MixdownError) -> Q {
            let g = Int128(gcd(a.d, b.d))
            return try make(Int128(a.n) * (Int128(b.d) / g) - Int128(b.n) * (Int128(a.d) / g), Int128(a.d) / g * Int128(b.d))
        }
        static func * (a: Q, k: Int64) throws(MixdownError) -> Q { try make(Int128(a.n) * Int128(k), Int128(a.d)) }
        static func * (a: Q, b: Q) throws(MixdownError) -> Q { try make(Int128(a.n) * Int128(b.n), Int128(a.d) * Int128(b.d)) }
        static func / (a: Q, b: Q) throws(MixdownError) -> Q { try make(Int128(a.n) * Int128(b.d), Int128(a.d) * Int128(b.n)) }
        static func / (a: Q, k: Int64) throws(MixdownError) -> Q { try make(Int128(a.n), Int128(a.d) * Int128(k)) }
        static func make(_ n: Int128, _ d: Int128) throws(MixdownError) -> Q {
            var a = n.magnitude, b = d.magnitude
            while b != 0 { (a, b) = (b, a % b) }
            let g = Int128(max(a, 1))
            guard let rn = Int64(exactly: n / g), let rd = Int64(exactly: d / g) else { throw overflow }
            return Q(rn, rd)
        }
        static let overflow = MixdownError.invalidDocument(file: "", location: "", reason: "its times, added exactly, leave 64 bits (rates too fine or too many unrelated ones)")
        static func < (a: Q, b: Q) -> Bool { Int128(a.n) * Int128(b.d) < Int128(b.n) * Int128(a.d) }
        var text: String { d == 1 ? "\(n)" : "\(n)/\(d)" }
        var seconds: Double { Double(n) / Double(d) }
    }

    /// A clip placed on a lane (a composition track), in the lane's time.
    struct Placed {
        var file: String
        var sourceStart: Q
        var sourceDuration: Q
        var at: Q
        var duration: Q
        var gain: Double
        var fadeIn: Q = .zero
        var fadeOut: Q = .zero
        var origin: String
        /// The exact place Mixdown wrote beside OTIO's values (used while they agree to 1 µs,
        /// or to `placeTolerance`).
        var exactPlace: (at: Q, duration: Q)?
        /// Seconds OTIO's start and end may lie from the exact place for it to be used: half
        /// a unit of the rate Mixdown wrote the track at (it rounds each position to that
        /// rate, so a coarse rate puts them more than 1 µs off); 0 for a place Mixdown wrote
        /// as rounded to an edit rate.
        var placeTolerance = 0.0
        /// How far (less than a frame) the clip runs past its media's available range: the
        /// clip ends that much early, and silence fills its place.
        var overrun: Q = .zero
        /// Keyframed clip gain (an AAF "Audio Gain" with a varying Amplitude): times from
        /// the clip's start, linear gains; `steps` holds each value to the next key
        /// (constant interpolation) instead of ramping to it.
        var gainKeys: [(Q, Double)] = []
        var steps = false
        var scaled: Bool { sourceDuration != duration }
    }

    struct Reader {
        let file: String
        let base: String
        var notes = Notes()
        /// Where to look for media that is not where the timeline says.
        var relinking = MediaRelinking()
        /// Media headers read for their timecode, by path.
        var fileInfo: [String: AudioFileInfo] = [:]
        /// Generated document path → OTIO path, for errors found by the document reader.
        var origins: [(generated: String, otio: String)] = []
        /// Each lane: its name, gain, clips, and where its track ends in output time (a trailing
        /// gap lasts, as in OTIO, where a track is as long as its items).
        private var lanes: [(name: String, gain: Volume, clips: [Placed], end: Q)] = []
        /// Each top-level audio track's record timecode (0 unless the CMX 3600 adapter gave
        /// one) and the edit rate it was given at.
        private var recordStarts: [(start: Q, rate: (num: Int64, den: Int64)?)] = []

        init(file: String) {
            self.file = file
            base = (file as NSString).deletingLastPathComponent
        }

        enum Volume { case constant(Double), keyframes([(Q, Double)]), events(String) }
        /// Timeline-level settings Mixdown wrote (`metadata.mixdown`: output, time_pitch_algorithm), as document members.
        private var settings: [String] = []

        mutating func translate(_ bytes: [UInt8]) throws(MixdownError) -> String {
            let root: JSONValue
            // opentimelineio writes Infinity and NaN for non-finite floats (in metadata Mixdown
            // never reads): accepted here, and refused wherever a time or a level is one.
            do { root = try JSONParser.parse(bytes, nonFinite: true) } catch {
                throw .invalidDocument(file: file, location: error.location, reason: "is not valid JSON (line \(error.line), column \(error.column)): \(error.reason)")
            }
            let top = JSONCursor(value: root, path: "", file: file)
            let t = try members(top)
            try expect(top, t, "Timeline")
            if let g = top.member("global_start_time", in: t), g.value != .null {
                let start = try time(g)
                notes.lines.append("global_start_time \(start.text) s (\(String(format: "%.6f", start.seconds)) s): the timeline's first frame; the render starts there")
            }
            if let md = top.member("metadata", in: t), case .object(let m) = md.value,
               let mx = md.member("mixdown", in: m), case .object(let x) = mx.value {
                // The document settings Mixdown wrote, as they were, with their origin for errors.
                for key in ["output", "time_range", "time_pitch_algorithm", "resampler", "resampler_quality", "file_length_limit", "metadata"] {
                    guard let v = mx.member(key, in: x) else { continue }
                    settings.append("\(Self.quote(key)): \(Self.text(v.value))")
                    origins.append((key, v.path))
                }
            }
            let stack = try top.required("tracks", in: t)
            let s = try members(stack)
            try expect(stack, s, "Stack")
            let children = try stack.required("children", in: s).array()
            for (i, child) in children.enumerated() {
                let c = JSONCursor(value: child.value, path: "tracks[\(i)]", file: file)
                try track(c, offset: .zero, window: nil, parentGain: 1)
            }
            if !lanes.contains(where: { !$0.clips.isEmpty }) {
                // Only generators, muted clips or gaps: an editor renders silence of the
                // timeline's length; so does Mixdown, at 48 kHz stereo unless it was told.
                let length = lanes.map(\.end).max() ?? .zero
                guard length > .zero else { throw top.fail("has no enabled audio clip to render, and no length", at: "tracks") }
                notes.lines.append("no enabled audio clip: the render is \(String(format: "%.6f", length.seconds)) s of silence, the timeline's length")
                if !settings.contains(where: { $0.hasPrefix("\"output\"") }) {
                    settings.append("\"output\": {\"sample_rate\": 48000, \"channels\": 2}")
                    notes.lines.append("no media gives the rate: 48000 Hz, 2 channels (output.sample_rate and output.channels in metadata.mixdown set others)")
                }
            }
            // Record timecodes: the earliest track starts the render.
            if let first = recordStarts.min(by: { $0.start < $1.start }), first.start > .zero, let rate = first.rate {
                // The sequence starts at the hour of its first record in (01:00:00:00, or
                // 00:00:00:00 for a sequence whose audio starts a little after it): every event
                // lands at its record timecode relative to that.
                let start = try Self.hourStart(of: first.start, rate: rate)
                notes.lines.append("the render starts at \(Self.timecode(start, rate: rate)), the hour of the first record in (\(Self.timecode(first.start, rate: rate))): every event lands at its record timecode")
                for i in lanes.indices {
                    for j in lanes[i].clips.indices { lanes[i].clips[j].at = try lanes[i].clips[j].at - start }
                    lanes[i].end = max(.zero, try lanes[i].end - start)
                }
            }
            // A time read twice (a clip's length, then the clip) is noted once.
            var seen = Set<String>()
            notes.lines = notes.lines.filter { seen.insert($0).inserted }
            return try emit()
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
        mutating func time(_ c: JSONCursor) throws(MixdownError) -> Q {
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
                notes.lines.append("\(c.path).value \(value) at \(rate) is not a whole frame: rounded to \((try Q.make(milli, 1000)).text) frames")
            }
            if Double(num) != rate { if !notes.lines.contains(where: { $0.hasPrefix("rate \(rate)") }) {
                notes.lines.append("rate \(rate) read as \(num)/\(den) exactly")
            } }
            return try Q.make(milli * Int128(den), 1000 * Int128(num))
        }


        /// A time_scalar as an exact rational: the shortest decimal that reads back as the
        /// Double (what a person or an adapter wrote: 1.0, 0.5, 1.25), when it has at most 9
        /// decimal places; else the Double rounded to 1e-9 (`rounded`).
        static func exactScalar(_ s: Double) -> (value: Q, rounded: Bool) {
            let text = "\(s)"
            if !text.contains("e"), let dot = text.firstIndex(of: ".") {
                let decimals = text[text.index(after: dot)...]
                if decimals.count <= 9, let whole = Int64(text[..<dot]), let fraction = Int64(decimals) {
                    var scale: Int64 = 1
                    for _ in 0..<decimals.count { scale *= 10 }
                    return (Q(whole * scale + fraction, scale), false)
                }
            }
            return (Q(Int64((s * 1e9).rounded(.toNearestOrAwayFromZero)), 1_000_000_000), true)
        }

        /// A TimeRange: its start and duration (which must not be negative).
        mutating func range(_ c: JSONCursor) throws(MixdownError) -> (start: Q, duration: Q) {
            let o = try members(c)
            try expect(c, o, "TimeRange")
            let start = try time(c.required("start_time", in: o))
            let duration = try time(c.required("duration", in: o))
            guard !(duration < .zero) else { throw c.fail("a negative duration (\(duration.seconds) s)", at: "duration") }
            return (start, duration)
        }

        // MARK: Tracks

        func volume(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> JSONCursor? {
            guard let md = c.member("metadata", in: o), case .object(let m) = md.value,
                  let mx = md.member("mixdown", in: m), case .object(let x) = mx.value else { return nil }
            return mx.member("volume", in: x)
        }




        /// A clip gain a dialect reads (OTIODialects/): constant, or keys (times as
        /// fractions of the clip, linear gains; `steps`: each held to the next).
        enum ClipGain { case constant(Double), keyframes([(Double, Double)], steps: Bool) }

        func gain(_ c: JSONCursor) throws(MixdownError) -> Double {
            try linear(try c.number(), at: c)
        }

        /// `g` when it is a linear gain Mixdown takes (0 to 16), else an error at `c`
        /// calling it a `noun` ("gain", or FCP's "level").
        func linear(_ g: Double, at c: JSONCursor, noun: String = "gain") throws(MixdownError) -> Double {
            guard g >= 0, g <= 16 else { throw c.fail("a \(noun) of \(g): must lie between 0 and 16 (linear)") }
            return g
        }

        /// An item of a track: its object, schema, and place in the track's time (transitions take none).
        typealias TrackItem = (cursor: JSONCursor, members: JSONObject, kind: String, start: Q, duration: Q)

        mutating func track(_ c: JSONCursor, offset: Q, window: (start: Q, duration: Q)?, parentGain: Double,
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
                notes.lines.append("\(c.path): a \(kind) track, ignored")
                return
            }
            guard try enabled(c, o) else {
                notes.lines.append("\(c.path): disabled, not rendered")
                return
            }
            var trackGain = Volume.constant(parentGain)
            if !lone, let v = try volume(c, o) {
                if case .object(let vo) = v.value, let events = v.member("events", in: vo) {
                    guard window == nil, parentGain == 1 else { throw v.fail("volume events on a track inside a nested stack are not supported") }
                    trackGain = .events(Self.text(events.value))
                    origins.append(("tracks[\(lanes.count)].volume", events.path))
                } else if case .object(let vo) = v.value {
                    guard window == nil, parentGain == 1 else { throw v.fail("keyframes on a track inside a nested stack are not supported") }
                    var keys: [(Q, Double)] = []
                    for k in try v.required("keyframes", in: vo).array() {
                        let ko = try members(k)
                        keys.append((try time(k.required("time", in: ko)), try gain(k.required("value", in: ko))))
                    }
                    guard !keys.isEmpty, zip(keys, keys.dropFirst()).allSatisfy({ $0.0 < $1.0 }) else {
                        throw v.fail("keyframes must be given in increasing time")
                    }
                    trackGain = .keyframes(keys)
                } else {
                    trackGain = .constant(parentGain * (try gain(v)))
                }
            }
            var trim: (start: Q, duration: Q)?
            if !lone, let sr = c.member("source_range", in: o), sr.value != .null { trim = try range(sr) }
            let children = lone ? [c] : try c.required("children", in: o).array()
            // Each item's place on the track (transitions take no time).
            var t = Q.zero
            var items: [TrackItem] = []
            for child in children {
                let co = try members(child)
                let k = try schema(child, co)
                switch k {
                case "Clip", "Gap", "Stack", "Track":
                    let d = try itemDuration(child, co, kind: k)
                    items.append((child, co, k, t, d))
                    t = try t + d
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
            if window == nil { recordStarts.append((.zero, nil)) }
            if let r = trim, r.start < .zero, let sr = c.member("source_range", in: o),
               try !(r.start + r.duration > .zero) || (window == nil && r.duration == t && Self.isCMXChannel(laneName(c, o))) {
                // The CMX 3600 adapter writes a track's record timecode as a window starting at
                // -(its first record in) and exactly as long as the track. Read as the whole
                // track placed at its record time; the render starts at the hour of the earliest.
                // Such a window is the adapter's when it lies wholly before the track (OTIO
                // itself finds no child inside it), or on a track the adapter named (A1, A2...).
                // Elsewhere a window that reaches into the track (-7 frames for 9 on a track
                // named "a") is OTIO's own: silence, then the track.
                guard window == nil, r.duration == t else {
                    throw sr.fail("lies wholly before the track (\(String(format: "%.6f", -r.start.seconds)) s before it, \(String(format: "%.6f", r.duration.seconds)) s long) and is not as long as the track, as a CMX 3600 record timecode is: a window with nothing in it", at: "start_time")
                }
                notes.lines.append("\(sr.path).start_time \(String(format: "%.6f", r.start.seconds)) s: a record timecode (the CMX 3600 adapter writes one); the track is placed at it, and the render starts at the earliest track")
                offset = try offset - r.start
                var rate: (num: Int64, den: Int64)?
                if case .object(let so) = sr.value, let st = sr.member("start_time", in: so), case .object(let sto) = st.value,
                   let rv = try st.member("rate", in: sto)?.number() {
                    rate = Self.exactRate(rv)
                }
                recordStarts[recordStarts.count - 1] = (try Q.zero - r.start, rate)
                trim = nil
            }
            let trimStart = trim?.start ?? .zero, trimEnd = try trim.map { (r: (start: Q, duration: Q)) throws(MixdownError) -> Q in try r.start + r.duration } ?? t
            var visible = (start: trimStart, end: trimEnd)
            if let w = window {
                visible = try (trimStart + w.start, min(trimEnd, trimStart + w.start + w.duration))
            }
            let laneA = lanes.count
            lanes.append((name: laneName(c, o), gain: trackGain, clips: [], end: visible.end > visible.start ? try offset + (visible.end - visible.start) : offset))
            var lane = laneA
            var laneB: Int?
            var pendingFadeIn: (Q, Q)?
            for (index, item) in items.enumerated() {
                switch item.kind {
                case "Transition":
                    let ty = try item.cursor.member("transition_type", in: item.members)?.string() ?? "SMPTE_Dissolve"
                    guard ty == "SMPTE_Dissolve" else { throw item.cursor.fail("transition type '\(ty)': only SMPTE_Dissolve is read", at: "transition_type") }
                    let before = index > 0 ? items[index - 1] : nil, after = index + 1 < items.count ? items[index + 1] : nil
                    let inOffset = try time(item.cursor.required("in_offset", in: item.members))
                    let outOffset = try time(item.cursor.required("out_offset", in: item.members))
                    guard !(inOffset < .zero), !(outOffset < .zero), try inOffset + outOffset > .zero else {
                        throw item.cursor.fail("in_offset and out_offset must not be negative, and not both 0")
                    }
                    // A side with no clip is a gap or the track's edge: the dissolve is a fade
                    // from or to silence (Avid writes every fade so), over the same span and
                    // with the same equal-power curve as a crossfade.
                    let clipBefore = before?.kind == "Clip", clipAfter = after?.kind == "Clip"
                    func silentSide(_ side: TrackItem?,
                                    needs offset: Q, _ name: String) throws(MixdownError) {
                        if let g = side {
                            guard g.kind == "Gap" else { throw item.cursor.fail("a transition beside a nested stack is not supported") }
                            guard !(g.duration < offset) else {
                                throw item.cursor.fail("\(name) \(offset.seconds) s reaches past the \(g.duration.seconds) s gap beside it")
                            }
                        } else if offset > .zero {
                            throw item.cursor.fail("\(name) \(offset.seconds) s reaches past the \(index == 0 ? "start" : "end") of the track")
                        }
                    }
                    guard clipBefore || clipAfter else { throw item.cursor.fail("a transition between two gaps fades nothing: it needs a clip on one side") }
                    if let a = before, clipBefore, a.duration < inOffset {
                        throw item.cursor.fail("overlaps more than its clips: in_offset \(inOffset.seconds) s of a \(a.duration.seconds) s clip")
                    }
                    if let b = after, clipAfter, b.duration < outOffset {
                        throw item.cursor.fail("overlaps more than its clips: out_offset \(outOffset.seconds) s of a \(b.duration.seconds) s clip")
                    }
                    if !clipBefore { try silentSide(before, needs: inOffset, "in_offset") }
                    if !clipAfter { try silentSide(after, needs: outOffset, "out_offset") }
                    guard window == nil else { throw item.cursor.fail("a transition inside a nested stack is not supported") }
                    if clipBefore {
                        // The outgoing clip runs on out_offset after the cut and fades out.
                        guard var last = lanes[lane].clips.popLast() else { throw item.cursor.fail("the clip before it is not rendered (disabled?)") }
                        guard !last.scaled else { throw item.cursor.fail("a transition beside a time-warped clip is not supported") }
                        last.duration = try last.duration + outOffset
                        last.sourceDuration = try last.sourceDuration + outOffset
                        last.fadeOut = try inOffset + outOffset
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
                                lanes.append((name: lanes[laneA].name + " (B)", gain: trackGain, clips: [], end: .zero))
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
                    var inner: (start: Q, duration: Q)?
                    if item.kind == "Stack", let sr = item.cursor.member("source_range", in: so), sr.value != .null { inner = try range(sr) }
                    // The stack's own time: its window starts at its source range's start.
                    let innerStart = inner?.start ?? .zero
                    let lo = max(visible.start, item.start), hi = try min(visible.end, item.start + item.duration)
                    guard lo < hi else { continue }
                    let nestedWindow = try (start: innerStart + (lo - item.start), duration: hi - lo)
                    let nestedOffset = try offset + (lo - visible.start)
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
                    guard var clip = try self.clip(item.cursor, item.members, duration: item.duration) else {
                        if pendingFadeIn != nil { throw item.cursor.fail("a transition into a generator clip is not supported") }
                        continue
                    }
                    // Placed in the output's time: the track's visible part starts at `offset`.
                    var start = item.start, end = try item.start + item.duration
                    if let (inOffset, outOffset) = pendingFadeIn {
                        start = try start - inOffset
                        clip.sourceStart = try clip.sourceStart - inOffset
                        clip.sourceDuration = try clip.sourceDuration + inOffset
                        clip.fadeIn = try inOffset + outOffset
                        guard !(clip.sourceStart < .zero) else {
                            throw try item.cursor.fail("the transition before it needs \(inOffset.seconds) s of media before its source range, which starts \((clip.sourceStart + inOffset).seconds) s into the file", at: "source_range")
                        }
                        pendingFadeIn = nil
                    }
                    let lo = max(start, visible.start), hi = min(end, visible.end)
                    guard lo < hi else { continue }
                    if lo != start || hi != end {
                        guard !clip.scaled, clip.fadeIn == .zero, clip.fadeOut == .zero, clip.gainKeys.isEmpty else {
                            throw item.cursor.fail("a time-warped clip, a crossfade or keyframed gain cut by a source range is not supported")
                        }
                        clip.sourceStart = try clip.sourceStart + (lo - start)
                        clip.sourceDuration = try hi - lo
                        start = lo
                        end = hi
                    }
                    clip.at = try offset + (start - visible.start)
                    clip.duration = try end - start
                    // A clip whose end is played stops where its media does (less than a frame early).
                    let itemEnd = try item.start + item.duration
                    if clip.overrun > .zero && hi == itemEnd && clip.fadeOut == .zero {
                        // A time-warped clip keeps its ratio: its timeline length shrinks in proportion.
                        let kept = try clip.sourceDuration - clip.overrun
                        clip.duration = try clip.duration * kept / clip.sourceDuration
                        clip.sourceDuration = kept
                    }
                    lanes[lane].clips.append(clip)
                }
            }
            if pendingFadeIn != nil { throw c.fail("ends with a transition") }
        }

        func laneName(_ c: JSONCursor, _ o: JSONObject) -> String {
            let given = (try? c.member("name", in: o)?.string()) ?? nil
            let name = (given?.isEmpty ?? true) ? c.path : given!
            var unique = name, k = 2
            while lanes.contains(where: { $0.name == unique }) { unique = "\(name) \(k)"; k += 1 }
            return unique
        }

        /// How long an item lasts on its track: its source range's duration, else its
        /// media's available range (a clip), else an error.
        mutating func itemDuration(_ c: JSONCursor, _ o: JSONObject, kind: String) throws(MixdownError) -> Q {
            if let sr = c.member("source_range", in: o), sr.value != .null { return try range(sr).duration }
            if kind == "Clip", let ref = try reference(c, o), let ar = ref.cursor.member("available_range", in: ref.members), ar.value != .null {
                return try range(ar).duration
            }
            if kind == "Clip", let ref = try reference(c, o), let url = ref.cursor.member("target_url", in: ref.members) {
                let path = try self.path(url)
                do { return Q(try AudioAsset(path: path).duration) } catch { throw url.fail("\(error)") }
            }
            if kind == "Track" {
                var total = Q.zero
                for item in try c.required("children", in: o).array() {
                    let io = try members(item)
                    let k = try schema(item, io)
                    if k != "Transition" { total = try total + (try itemDuration(item, io, kind: k)) }
                }
                return total
            }
            if kind == "Stack" {
                var longest = Q.zero
                for child in try c.required("children", in: o).array() {
                    let co = try members(child)
                    var total = Q.zero
                    for item in try child.required("children", in: co).array() {
                        let io = try members(item)
                        let k = try schema(item, io)
                        if k != "Transition" { total = try total + (try itemDuration(item, io, kind: k)) }
                    }
                    longest = max(longest, total)
                }
                return longest
            }
            throw c.fail("has no source_range, and nothing gives its length", at: "source_range")
        }

        /// The clip's active media reference.
        func reference(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> (cursor: JSONCursor, members: JSONObject)? {
            if let refs = c.member("media_references", in: o), case .object(let r) = refs.value {
                let key = try c.member("active_media_reference_key", in: o)?.string() ?? "DEFAULT_MEDIA"
                guard let ref = refs.member(key, in: r) else { throw c.fail("has no media reference '\(key)'", at: "media_references") }
                return (ref, try members(ref))
            }
            if let ref = c.member("media_reference", in: o), ref.value != .null { return (ref, try members(ref)) }
            return nil
        }

        func path(_ url: JSONCursor) throws(MixdownError) -> String {
            var s = try url.string()
            if s.hasPrefix("file://") {
                s = String(s.dropFirst("file://".count))
                if !s.hasPrefix("/"), let slash = s.firstIndex(of: "/") { s = String(s[slash...]) }   // file://host/path
                s = s.removingPercentEncoding ?? s
            } else if s.contains("://") {
                throw url.fail("'\(s)': only file:// URLs and paths are read")
            }
            return s.hasPrefix("/") || base.isEmpty ? s : base + "/" + s
        }

        /// The clip as placed media; nil for a generator (bars and tone, a countdown leader),
        /// which renders as silence of its length, noted.
        mutating func clip(_ c: JSONCursor, _ o: JSONObject, duration: Q) throws(MixdownError) -> Placed? {
            guard let ref = try reference(c, o) else { throw c.fail("has no media reference", at: "media_reference") }
            let kind = try schema(ref.cursor, ref.members)
            if kind == "GeneratorReference" {
                let generator = (try? ref.cursor.member("generator_kind", in: ref.members)?.string()).flatMap { $0 } ?? "a generator"
                notes.lines.append("\(ref.cursor.path): \(generator) (a GeneratorReference): rendered as silence of the clip's length")
                return nil
            }
            let clipName = try c.member("name", in: o)?.string() ?? ""
            let given: String?
            if kind == "MissingReference" {
                guard !relinking.directories.isEmpty else {
                    throw ref.cursor.fail("clip '\(clipName.isEmpty ? c.path : clipName)' has a MissingReference: its media is not linked (--media DIR looks it up by the clip's name)")
                }
                given = nil
            } else {
                guard kind == "ExternalReference" else { throw ref.cursor.fail("a \(kind): only ExternalReference media is read", at: "OTIO_SCHEMA") }
                given = try path(ref.cursor.required("target_url", in: ref.members))
            }
            var file = given ?? ""
            if !relinking.isEmpty {
                switch relinking.resolve(path: given, clip: clipName) {
                case .found(let path, let how):
                    file = path
                    if let how { notes.lines.append("\(ref.cursor.path): clip '\(clipName)' \(how)") }
                case .notFound(let tried):
                    throw ref.cursor.fail("clip '\(clipName.isEmpty ? c.path : clipName)': its media was not found; looked at \(tried.map { "'\($0)'" }.joined(separator: ", "))")
                }
            }
            var available: (start: Q, duration: Q)?
            if let ar = ref.cursor.member("available_range", in: ref.members), ar.value != .null { available = try range(ar) }
            let sr = c.member("source_range", in: o).flatMap { $0.value == .null ? nil : $0 }
            var source: (start: Q, duration: Q) = (available?.start ?? .zero, duration)
            if let sr { source = try range(sr) }
            // Media consumed: the clip's duration times the warp's scalar (OTIO's rule: a
            // LinearTimeWarp changes the rate media is read, not the clip's length).
            var consumed = duration
            var levels = 1.0   // Final Cut 7 / Premiere XML Audio Levels, AAF Audio Gain, Resolve clip volume
            var gainKeys: [(Double, Double)] = [], steps = false
            if let effects = c.member("effects", in: o) {
                for e in try effects.array() {
                    let eo = try members(e)
                    let k = try schema(e, eo)
                    var level = k == "Effect" ? try audioLevels(e, eo) : nil
                    var clipGain: ClipGain?
                    if k == "Effect", level == nil {
                        clipGain = try resolveVolume(e, eo, duration: duration, frame: try sr.flatMap { (r: JSONCursor) throws(MixdownError) -> Q? in try frameLength(r) })
                    }
                    if k == "Effect", level == nil, clipGain == nil { clipGain = try aafAudioGain(e, eo) }
                    if let g = clipGain {
                        switch g {
                        case .constant(let v): level = v
                        case .keyframes(let keys, let hold):
                            guard gainKeys.isEmpty else { throw e.fail("two keyframed Audio Gains on one clip are not supported") }
                            (gainKeys, steps, level) = (keys, hold, 1)
                        }
                    }
                    switch k {
                    case "LinearTimeWarp":
                        let s = try e.required("time_scalar", in: eo).number()
                        guard s > 0, s.isFinite else {
                            throw e.fail(s == 0 ? "a time_scalar of 0 (a freeze) is not supported" : "a time_scalar of \(s): reverse and non-finite speeds are not supported", at: "time_scalar")
                        }
                        // Mixdown scales between 0.25 and 4 (the document refuses the rest too; here before any arithmetic on it).
                        guard s >= 0.25 * (1 - 1e-9), s <= 4 * (1 + 1e-9) else {
                            throw e.fail("a time_scalar of \(s): a scale must lie between 0.25 and 4", at: "time_scalar")
                        }
                        if let exact = try exactSource(c, o) {
                            consumed = exact
                        } else {
                            // The scalar as the decimal it was written as (1.0 is exactly 1: no
                            // scale at all; 4.0 on one frame is exactly 4 frames), times the
                            // clip's exact duration: never a float product of frames.
                            let scalar = Self.exactScalar(s)
                            consumed = try duration * scalar.value
                            if scalar.rounded {
                                notes.lines.append("\(e.path): time_scalar \(s) read as \(scalar.value.text) (to 1e-9)")
                            }
                            if consumed != duration {
                                notes.lines.append("\(e.path): time_scalar \(scalar.value.text) consumes \(consumed.text) s of media for \(duration.text) s")
                            }
                        }
                    case "FreezeFrame":
                        throw e.fail("a FreezeFrame is not supported", at: "OTIO_SCHEMA")
                    case "Effect" where level != nil:
                        levels *= level!
                    default:
                        notes.lines.append("\(e.path): effect '\(effectName(e, eo, schema: k))' ignored")
                    }
                }
            }
            let origin = available?.start ?? .zero
            var fileStart = try source.start - origin
            if available == nil, let tc = try sourceTimecode(file, from: fileStart, consumed: consumed) {
                notes.lines.append("\(sr?.path ?? c.path): \(source.start.seconds) s lies past '\(file)' but within its timecode (\(fileInfo[file]?.timeReferenceSource ?? "start timecode") \(String(format: "%.6f", tc.seconds)) s): read on that clock")
                fileStart = try fileStart - tc
            }
            var overrun = Q.zero
            if let available {
                // A 29.97 sequence over 23.976 media can ask for a fraction of a frame past the
                // media's end: editors play silence (or hold the last frame) there.
                let past = try fileStart + consumed - available.duration
                if past > .zero, let sr, let frame = try frameLength(sr), past < frame {
                    overrun = past
                    notes.lines.append("\(sr.path): runs \(String(format: "%.6f", past.seconds)) s (less than a frame) past its media's available range: silence there")
                }
                guard !(fileStart < .zero), overrun > .zero || !(past > .zero) else {
                    throw try (sr ?? c).fail("\(source.start.seconds)-\((source.start + consumed).seconds) s lies outside its media's available range \(available.start.seconds)-\((available.start + available.duration).seconds) s")
                }
            } else if fileStart < .zero {
                throw (sr ?? c).fail("starts before its media")
            }
            // A range rounded to whole frames (a timeline written at 29.97 over 3.000 s of
            // media says 90 frames, 3.003 s) must not push the clip past its own media: the
            // media's real length clamps it, as the sub-frame rule above does.
            if overrun == .zero, let sr, let frame = try frameLength(sr), let length = mediaLength(file) {
                let past = try fileStart + consumed - length
                if past > .zero, past < frame {
                    overrun = past
                    notes.lines.append("\(sr.path): runs \(String(format: "%.6f", past.seconds)) s (less than a frame: its range rounded to whole frames) past the end of '\(file)': silence there")
                }
            }
            var gain = levels
            if let v = try volume(c, o) { gain *= try self.gain(v) }
            var placed = Placed(file: file, sourceStart: fileStart, sourceDuration: consumed, at: .zero, duration: duration, gain: gain,
                                origin: sr?.path ?? c.path)
            placed.exactPlace = try exactPlace(c, o)
            if placed.exactPlace != nil, !placeWasRounded(c, o), let sr, let unit = try frameLength(sr) {
                placed.placeTolerance = unit.seconds / 2
            }
            placed.overrun = overrun
            if !gainKeys.isEmpty {
                // Key times are fractions of the clip, to the microsecond of its length.
                placed.gainKeys = gainKeys.map { (t, g) in
                    (Q(Int64((duration.seconds * t * 1e6).rounded(.toNearestOrAwayFromZero)), 1_000_000), g)
                }
                placed.steps = steps
                notes.lines.append("\(c.path): keyframed Audio Gain, \(gainKeys.count) keys (\(steps ? "held" : "linear ramps") between them)")
            }
            return placed
        }

        /// What an ignored effect is called: its `effect_name` ("Reverb"); a Resolve effect's
        /// own name ("Fairlight Clip Pan"); its `name` (AAF operations: "Audio Pan"); else its schema.
        func effectName(_ e: JSONCursor, _ o: JSONObject, schema: String) -> String {
            func string(_ c: JSONCursor?) -> String? {
                guard let c, case .string(let s) = c.value, !s.isEmpty else { return nil }
                return s
            }
            let effectName = string(e.member("effect_name", in: o))
            if effectName == nil || effectName == "Resolve Effect",
               let md = e.member("metadata", in: o), case .object(let m) = md.value,
               let r = md.member("Resolve_OTIO", in: m), case .object(let ro) = r.value,
               let own = string(r.member("Effect Name", in: ro)) {
                return own
            }
            return effectName ?? string(e.member("name", in: o)) ?? schema
        }

        /// The start of `file` on its recorder's clock (seconds) when a source range of
        /// `consumed` from `start` lies past the file's end but within its span on that
        /// clock: an EDL or AAF addresses media by its timecode. nil otherwise.
        /// `file`'s header, read once (nil when it cannot be read: the document reader then
        /// names the file).
        mutating func header(_ file: String) -> AudioFileInfo? {
            if let known = fileInfo[file] { return known }
            guard let read = try? AudioFileInfo.read(path: file) else { return nil }
            fileInfo[file] = read
            return read
        }

        /// `file`'s length in seconds, exactly (nil: unreadable).
        mutating func mediaLength(_ file: String) -> Q? {
            header(file).map { Q($0.frames, Int64($0.sampleRate)) }
        }

        mutating func sourceTimecode(_ file: String, from start: Q, consumed: Q) throws(MixdownError) -> Q? {
            guard let info = header(file) else { return nil }   // the document names a missing file
            guard let reference = info.timeReference, reference > 0 else { return nil }
            let duration = Q(info.frames, Int64(info.sampleRate)), tc = Q(reference, Int64(info.sampleRate))
            guard try start + consumed > duration, !(start < tc), !(try tc + duration < start + consumed) else { return nil }
            return tc
        }

        /// One frame of a source range's duration rate, seconds (nil when it is not a
        /// RationalTime with a rate).
        func frameLength(_ sr: JSONCursor) throws(MixdownError) -> Q? {
            guard case .object(let o) = sr.value, let d = sr.member("duration", in: o), case .object(let dobj) = d.value,
                  let r = d.member("rate", in: dobj), case .number(let rate) = r.value, rate > 0,
                  let (num, den) = Self.exactRate(rate) else { return nil }
            return try Q.make(Int128(den), Int128(num))
        }

        /// `metadata.mixdown.<name>` of an item, where Mixdown keeps what OTIO cannot say.
        func mixdownMember(_ name: String, _ c: JSONCursor, _ o: JSONObject) -> JSONCursor? {
            guard let md = c.member("metadata", in: o), case .object(let m) = md.value,
                  let mx = md.member("mixdown", in: m), case .object(let x) = mx.value else { return nil }
            return mx.member(name, in: x)
        }

        /// `metadata.mixdown.at` and `.duration` ("n/d" seconds): a clip's exact place, which
        /// Mixdown writes when OTIO's sums of values at one rate cannot say it.
        func exactPlace(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> (at: Q, duration: Q)? {
            guard let at = mixdownMember("at", c, o), let d = mixdownMember("duration", c, o) else { return nil }
            return (Q(try at.time(frameRate: nil)), Q(try d.time(frameRate: nil)))
        }

        /// `metadata.mixdown.rounded`: Mixdown rounded the clip to an edit rate (`--otio-rate`).
        func placeWasRounded(_ c: JSONCursor, _ o: JSONObject) -> Bool {
            guard let r = mixdownMember("rounded", c, o), case .bool(let rounded) = r.value else { return false }
            return rounded
        }

        /// `metadata.mixdown.source_duration` ("n/d" seconds): the exact media a warped clip
        /// consumes, as Mixdown writes it.
        func exactSource(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> Q? {
            guard let sd = mixdownMember("source_duration", c, o) else { return nil }
            return Q(try sd.time(frameRate: nil))
        }

        // MARK: The document

        /// Mixdown's document for the lanes: one track per lane, its clips as segments (the
        /// warped ones with their own timeline duration), and its gains.
        mutating func emit() throws(MixdownError) -> String {
            var tracks: [String] = []
            // A lane of gaps alone still lasts (a timeline is as long as its longest track).
            for lane in lanes where !lane.clips.isEmpty || lane.end > .zero {
                let ti = tracks.count
                let clips = lane.clips.sorted { $0.at < $1.at }
                // A warped clip is a segment with its own timeline duration (scaled alone, so
                // every clip keeps the exact place the timeline gives it).
                var segments: [String] = []
                var clipsEnd = Q.zero
                for (j, var c) in clips.enumerated() {
                    // Start and end within a microsecond (or half a unit of the track's rate) of
                    // where OTIO's values put them: the place Mixdown wrote (farther, the clip
                    // was moved or trimmed since, by a unit at least, and OTIO's values are taken).
                    let tolerance = max(1e-6, c.placeTolerance)
                    if let p = c.exactPlace, abs(p.at.seconds - c.at.seconds) <= tolerance,
                       abs((p.at.seconds + p.duration.seconds) - (c.at.seconds + c.duration.seconds)) <= tolerance {
                        if !c.scaled { c.sourceDuration = p.duration }
                        (c.at, c.duration) = p
                    }
                    segments.append("{\"file\": \(Self.quote(c.file)), \"source\": {\"start\": \"\(c.sourceStart.text)\", \"duration\": \"\(c.sourceDuration.text)\"}, \"at\": \"\(c.at.text)\""
                                    + (c.scaled ? ", \"duration\": \"\(c.duration.text)\"}" : "}"))
                    origins.append(("tracks[\(ti)].segments[\(j)]", c.origin))
                    clipsEnd = max(clipsEnd, try c.at + c.duration)
                }
                // The track's trailing gap, as an empty edit to its end (more than a microsecond:
                // a place Mixdown wrote exactly may differ from OTIO's sums by less).
                if lane.end.seconds - clipsEnd.seconds > 1e-6 {
                    segments.append("{\"empty\": {\"start\": \"\(clipsEnd.text)\", \"end\": \"\(lane.end.text)\"}}")
                }
                var volume: [String] = []
                switch lane.gain {
                case .events(let text):
                    guard clips.allSatisfy({ $0.gain == 1 && $0.fadeIn == .zero && $0.fadeOut == .zero && $0.gainKeys.isEmpty }) else {
                        throw .invalidDocument(file: file, location: clips[0].origin, reason: "track volume events with clip gains or crossfades are not supported")
                    }
                    volume.append(String(text.dropFirst().dropLast()))
                case .keyframes(let keys):
                    guard clips.allSatisfy({ $0.gain == 1 && $0.fadeIn == .zero && $0.fadeOut == .zero && $0.gainKeys.isEmpty }) else {
                        throw .invalidDocument(file: file, location: clips[0].origin, reason: "track volume keyframes with clip gains or crossfades are not supported")
                    }
                    // The first value holds from 0 to the first keyframe (a ramp from 0 needs no set before it).
                    if keys[0].0 > .zero || keys.count == 1 { volume.append("{\"volume\": \(keys[0].1), \"at\": \"0\"}") }
                    for (a, b) in zip(keys, keys.dropFirst()) {
                        volume.append("{\"ramp\": {\"from\": \(a.1), \"to\": \(b.1), \"start\": \"\(a.0.text)\", \"end\": \"\(b.0.text)\"}}")
                    }
                case .constant(let g):
                    for c in clips {
                        let level = g * c.gain
                        let end = try c.at + c.duration
                        if !c.gainKeys.isEmpty {
                            guard c.fadeIn == .zero, c.fadeOut == .zero else {
                                throw .invalidDocument(file: file, location: c.origin, reason: "keyframed Audio Gain on a clip with a fade or crossfade is not supported")
                            }
                            // The first value holds from the clip's start to the first key (a ramp from
                            // the start sets it itself); the last holds to the clip's end.
                            if c.steps || c.gainKeys[0].0 > .zero || c.gainKeys.count == 1 {
                                volume.append("{\"volume\": \(level * c.gainKeys[0].1), \"at\": \"\(c.at.text)\"}")
                            }
                            for (a, b) in zip(c.gainKeys, c.gainKeys.dropFirst()) {
                                let ta = try c.at + a.0, tb = try c.at + b.0
                                if c.steps || !(ta < tb) {
                                    volume.append("{\"volume\": \(level * b.1), \"at\": \"\(tb.text)\"}")
                                } else {
                                    volume.append("{\"ramp\": {\"from\": \(level * a.1), \"to\": \(level * b.1), \"start\": \"\(ta.text)\", \"end\": \"\(tb.text)\"}}")
                                }
                            }
                            continue
                        }
                        volume += try Self.fade(from: c.at, length: c.fadeIn, to: level, rising: true)
                        // A fade-out from the clip's very start (a dissolve whose in_offset is
                        // the whole outgoing clip, as Avid writes) sets the level itself.
                        if c.fadeIn == .zero && c.fadeOut < c.duration { volume.append("{\"volume\": \(level), \"at\": \"\(c.at.text)\"}") }
                        if try c.fadeIn + c.fadeOut > c.duration {
                            throw .invalidDocument(file: file, location: c.origin, reason: "its fade-in (\(String(format: "%.6f", c.fadeIn.seconds)) s) and fade-out (\(String(format: "%.6f", c.fadeOut.seconds)) s) overlap in a \(String(format: "%.6f", c.duration.seconds)) s clip: two transitions cover more than the clip")
                        }
                        volume += try Self.fade(from: end - c.fadeOut, length: c.fadeOut, to: level, rising: false)
                    }
                }
                tracks.append("{\"name\": \(Self.quote(lane.name)), \"segments\": [\(segments.joined(separator: ", "))]"
                              + (volume.isEmpty ? "" : ", \"volume\": [\(volume.joined(separator: ", "))]") + "}")
            }
            return "{\"version\": 1, " + settings.map { $0 + ", " }.joined() + "\"tracks\": [\(tracks.joined(separator: ",\n"))]}"
        }

        /// An equal-power fade (sin rising, cos falling) as 16 linear ramps.
        static func fade(from start: Q, length: Q, to level: Double, rising: Bool) throws(MixdownError) -> [String] {
            guard length > .zero else { return [] }
            let pieces: Int64 = 16
            return try (0..<pieces).map { (k: Int64) throws(MixdownError) -> String in
                func g(_ i: Int64) -> Double {
                    let x = Double.pi / 2 * Double(i) / Double(pieces)
                    return level * (rising ? sin(x) : cos(x))
                }
                let a = try start + length * k / pieces, b = try start + length * (k + 1) / pieces
                return "{\"ramp\": {\"from\": \(g(k)), \"to\": \(g(k + 1)), \"start\": \"\(a.text)\", \"end\": \"\(b.text)\"}}"
            }
        }

        /// A parsed value as JSON text again (numbers in Swift's shortest form, which reads back to the same Double).
        static func text(_ v: JSONValue) -> String {
            switch v {
            case .null: "null"
            case .bool(let b): b ? "true" : "false"
            case .number(let x) where !x.isFinite: quote(x.isNaN ? "NaN" : x > 0 ? "Infinity" : "-Infinity")
            case .number(let x): x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : "\(x)"
            case .string(let s): quote(s)
            case .array(let a): "[" + a.map(text).joined(separator: ", ") + "]"
            case .object(let o): "{" + o.members.map { quote($0.key) + ": " + text($0.value) }.joined(separator: ", ") + "}"
            }
        }

        static func quote(_ s: String) -> String {
            String(decoding: (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8), as: UTF8.self)
        }
    }
}
