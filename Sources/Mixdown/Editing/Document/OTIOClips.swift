import Foundation

/// An OTIO clip read as placed media: its length, media reference, source range, effects
/// (warps, and the gains the dialects read) and Mixdown's own exact values in its metadata.
extension OTIOTimeline.Reader {
    typealias Placed = OTIOTimeline.Placed
    typealias ClipGain = OTIOTimeline.ClipGain
    typealias ClipContext = OTIOTimeline.ClipContext

    mutating func itemDuration(_ c: JSONCursor, _ o: JSONObject, kind: String) throws(MixdownError) -> Rational {
        if let sr = c.member("source_range", in: o), sr.value != .null { return try range(sr).duration }
        if kind == "Clip", let ref = try reference(c, o), let ar = ref.cursor.member("available_range", in: ref.members), ar.value != .null {
            return try range(ar).duration
        }
        if kind == "Clip", let ref = try reference(c, o), let url = ref.cursor.member("target_url", in: ref.members) {
            let path = try self.path(url)
            do { return Rational(try assets.asset(path).duration) } catch { throw url.fail("\(error)") }
        }
        if kind == "Track" { return try itemsLength(c, o) }
        if kind == "Stack" {
            var longest = Rational.zero
            for child in try c.required("children", in: o).array() {
                longest = max(longest, try itemsLength(child, try members(child)))
            }
            return longest
        }
        throw c.fail("has no source_range, and nothing gives its length", at: "source_range")
    }

    /// How long a track's items last together (transitions take no time).
    mutating func itemsLength(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> Rational {
        var total = Rational.zero
        for item in try c.required("children", in: o).array() {
            let io = try members(item)
            let k = try schema(item, io)
            if k != "Transition" { total = try total.adding(try itemDuration(item, io, kind: k)) }
        }
        return total
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
    mutating func clip(_ c: JSONCursor, _ o: JSONObject, duration: Rational, track: OTIOTimeline.TrackContext) throws(MixdownError) -> Placed? {
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
        var available: (start: Rational, duration: Rational)?
        var otherDeclaration = ""
        if let ar = ref.cursor.member("available_range", in: ref.members), ar.value != .null {
            let a = try range(ar)
            available = a
            // One file declared twice with different lengths (an XML's <file> given in full
            // twice): an error about either names both declarations.
            if let first = declarations[file] {
                if first.range.duration != a.duration || first.range.start != a.start {
                    otherDeclaration = "; '\(file)' is declared twice with different lengths: \(ar.path) says \(a.start.approximateSeconds)-\(try a.start.adding(a.duration).approximateSeconds) s, \(first.path) says \(first.range.start.approximateSeconds)-\(try first.range.start.adding(first.range.duration).approximateSeconds) s"
                }
            } else {
                declarations[file] = (a, ar.path)
            }
        }
        let sr = c.member("source_range", in: o).flatMap { $0.value == .null ? nil : $0 }
        var source: (start: Rational, duration: Rational) = (available?.start ?? .zero, duration)
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
                // An editor's gain, as the first dialect that knows the effect reads it.
                var level: Double?
                if k == "Effect" {
                    let context = ClipContext(duration: duration, frame: try sr.flatMap { (r: JSONCursor) throws(MixdownError) -> Rational? in try frameLength(r) })
                    for dialect in OTIOTimeline.dialects {
                        guard let g = try dialect.clipGain(e, eo, clip: context) else { continue }
                        switch g {
                        case .constant(let v): level = v
                        case .keyframes(let keys, let hold):
                            guard gainKeys.isEmpty else { throw e.fail("two keyframed clip gains on one clip are not supported") }
                            (gainKeys, steps, level) = (keys, hold, 1)
                        }
                        break
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
                        consumed = try duration.multiplied(by: scalar.value)
                        if scalar.rounded {
                            notes.lines.append("\(e.path): time_scalar \(s) read as \(scalar.value.description) (to 1e-9)")
                        }
                        if consumed != duration {
                            notes.lines.append("\(e.path): time_scalar \(scalar.value.description) consumes \(consumed.description) s of media for \(duration.description) s")
                        }
                    }
                case "FreezeFrame":
                    // A freeze frame holds a picture: Premiere's Frame Hold, Final Cut's and
                    // Avid's freeze frames apply to video alone, and the clip's sound plays
                    // on at its own speed. So it does here, noted (not a 548-clip refusal).
                    notes.lines.append("\(e.path): a FreezeFrame holds the picture; editors apply it to video alone, so the clip's audio plays at its own speed")
                case "Effect" where level != nil:
                    levels *= level!
                default:
                    notes.lines.append("\(e.path): effect '\(effectName(e, eo, schema: k))' ignored")
                }
            }
        }
        let origin = available?.start ?? .zero
        var fileStart = try source.start.subtracting(origin)
        if available == nil, let tc = try sourceTimecode(file, from: fileStart, consumed: consumed) {
            let clock = header(file)?.timeReferenceSource ?? "start timecode"
            notes.lines.append("\(sr?.path ?? c.path): \(source.start.approximateSeconds) s lies past '\(file)' but within its timecode (\(clock) \(String(format: "%.6f", tc.approximateSeconds)) s): read on that clock")
            fileStart = try fileStart.subtracting(tc)
        }
        var overrun = Rational.zero
        if let available {
            // A 29.97 sequence over 23.976 media can ask for a fraction of a frame past the
            // media's end: editors play silence (or hold the last frame) there.
            let past = try fileStart.adding(consumed).subtracting(available.duration)
            if past > .zero, let sr, let frame = try frameLength(sr), past < frame {
                overrun = past
                notes.lines.append("\(sr.path): runs \(String(format: "%.6f", past.approximateSeconds)) s (less than a frame) past its media's available range: silence there")
            }
            guard !(fileStart < .zero), overrun > .zero || !(past > .zero) else {
                throw try (sr ?? c).fail("\(source.start.approximateSeconds)-\(source.start.adding(consumed).approximateSeconds) s lies outside its media's available range \(available.start.approximateSeconds)-\(available.start.adding(available.duration).approximateSeconds) s" + otherDeclaration)
            }
        } else if fileStart < .zero {
            throw (sr ?? c).fail("starts before its media")
        }
        // A range rounded to whole frames (a timeline written at 29.97 over 3.000 s of
        // media says 90 frames, 3.003 s) must not push the clip past its own media: the
        // media's real length clamps it, as the sub-frame rule above does.
        if overrun == .zero, let sr, let frame = try frameLength(sr), let length = mediaLength(file) {
            let past = try fileStart.adding(consumed).subtracting(length)
            if past > .zero, past < frame {
                overrun = past
                notes.lines.append("\(sr.path): runs \(String(format: "%.6f", past.approximateSeconds)) s (less than a frame: its range rounded to whole frames) past the end of '\(file)': silence there")
            }
        }
        var gain = levels
        if let v = volume(c, o) { gain *= try self.gain(v) }
        var placed = Placed(file: file, sourceStart: fileStart, sourceDuration: consumed, at: .zero, duration: duration, gain: gain,
                            origin: sr ?? c)
        placed.exactPlace = try exactPlace(c, o)
        if placed.exactPlace != nil, !placeWasRounded(c, o), let sr, let unit = try frameLength(sr) {
            placed.placeTolerance = unit.approximateSeconds / 2
        }
        placed.overrun = overrun
        if let request = try channelRequest(c, o, track: track) {
            placed.channelKnown = true
            if case .channel(let source, let output) = request {
                placed.route = ChannelRoute(sourceChannel: source, outputChannel: output)
            }
        }
        if !gainKeys.isEmpty {
            // Key times are fractions of the clip, to the microsecond of its length.
            for (t, g) in gainKeys {
                placed.gainKeys.append((try Rational(Int128((duration.approximateSeconds * t * 1e6).rounded(.toNearestOrAwayFromZero)), over: 1_000_000), g))
            }
            placed.steps = steps
            notes.lines.append("\(c.path): keyframed clip gain, \(gainKeys.count) keys (\(steps ? "held" : "linear ramps") between them)")
        }
        return placed
    }

    /// What of its file a clip plays: Mixdown's own `metadata.mixdown.channel` (from 1, or
    /// "all") and `output_channel`, else the first dialect that says; nil when none does.
    func channelRequest(_ c: JSONCursor, _ o: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest? {
        if let ch = mixdownMember("channel", c, o) {
            if case .string("all") = ch.value { return .whole }
            let n = try ch.integer()
            guard n >= 1, n <= 64 else { throw ch.fail("must be a channel from 1 to 64, or \"all\"") }
            var output: Int?
            if let out = mixdownMember("output_channel", c, o) {
                let k = try out.integer()
                guard k >= 1, k <= 64 else { throw out.fail("must be a channel from 1 to 64") }
                output = Int(k) - 1
            }
            return .channel(source: Int(n) - 1, output: output)
        }
        for dialect in OTIOTimeline.dialects {
            if let r = try dialect.clipChannel(c, o, track: track) { return r }
        }
        return nil
    }

    /// Tracks that split a file among them where the conversion lost which channel each
    /// plays (otio-aaf-adapter's default conversion keeps only the timeline track): clips
    /// of one multi-channel file on different tracks, in sync (the same file time at the
    /// same timeline time) and overlapping, whose channel nothing gave. Summed whole they
    /// would play the file N times over; instead each plays its channel in track order
    /// (the first track channel 1, the next channel 2), at that channel's place, and a
    /// note names them. More such tracks than the file has channels is refused.
    mutating func routeSplitTracks() throws(MixdownError) {
        struct Candidate { let lane: Int; let clip: Int; let start: Rational; let end: Rational }
        var groups: [String: [Candidate]] = [:]
        var order: [String] = []
        for (li, lane) in lanes.enumerated() {
            for (ci, clip) in lane.clips.enumerated() where !clip.channelKnown {
                guard let info = header(clip.file), info.channelCount >= 2 else { continue }
                // In sync: the file's time 0 lies at the same timeline time (a warped clip is not).
                guard !clip.scaled else { continue }
                let key = "\(clip.file)|\(try clip.at.subtracting(clip.sourceStart).description)"
                if groups[key] == nil { order.append(key) }
                groups[key, default: []].append(Candidate(lane: li, clip: ci, start: clip.at, end: try clip.at.adding(clip.duration)))
            }
        }
        for key in order {
            let group = groups[key]!
            guard Set(group.map { lanes[$0.lane].family }).count >= 2 else { continue }
            var named: [Int: [String]] = [:]   // channel -> tracks, for the note
            for a in group {
                let overlapping = group.filter { $0.start < a.end && a.start < $0.end }
                let families = Set(overlapping.map { lanes[$0.lane].family }).sorted()
                guard families.count >= 2 else { continue }
                let file = lanes[a.lane].clips[a.clip].file
                let channels = header(file)?.channelCount ?? 0
                guard families.count <= channels else {
                    let names = families.map { "'\(lanes[$0].name)'" }.joined(separator: ", ")
                    throw lanes[a.lane].clips[a.clip].origin.fail("\(families.count) tracks (\(names)) play '\(file)', which has \(channels) channels, over the same source range at the same time, and nothing says which channel each plays (an AAF converted with otio-aaf-adapter's simplify=False keeps the master clip's channels)")
                }
                let rank = families.firstIndex(of: lanes[a.lane].family)!
                lanes[a.lane].clips[a.clip].route = ChannelRoute(sourceChannel: rank)
                named[rank, default: []].append(lanes[lanes[a.lane].family].name)
            }
            guard !named.isEmpty, let first = group.first else { continue }
            let file = lanes[first.lane].clips[first.clip].file
            let parts = named.keys.sorted().map { k in "\(Array(Set(named[k]!)).sorted().map { "'\($0)'" }.joined(separator: ", ")) channel \(k + 1)" }
            notes.lines.append("tracks play '\(file)' (\(header(file)?.channelCount ?? 0) channels) over the same source range at the same time, and nothing says which channel each plays: each plays its channel in track order (\(parts.joined(separator: "; "))), at its place in the file (an AAF converted with simplify=False keeps the master clip's channels)")
        }
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

    /// `file`'s header, read once (nil when it cannot be read: the draft then names the
    /// file, at the clip).
    mutating func header(_ file: String) -> AudioFileInfo? {
        (try? assets.asset(file))?.info
    }

    /// `file`'s length in seconds, exactly (nil: unreadable).
    mutating func mediaLength(_ file: String) -> Rational? {
        header(file).map { Rational($0.duration) }
    }

    /// The start of `file` on its recorder's clock (seconds) when a source range of
    /// `consumed` from `start` lies past the file's end but within its span on that
    /// clock: an EDL or AAF addresses media by its timecode. nil otherwise.
    mutating func sourceTimecode(_ file: String, from start: Rational, consumed: Rational) throws(MixdownError) -> Rational? {
        guard let info = header(file) else { return nil }   // the document names a missing file
        guard let reference = info.timeReference, reference > 0 else { return nil }
        let duration = Rational(info.duration), tc = try Rational(Int128(reference), over: Int128(info.sampleRate))
        let end = try start.adding(consumed)
        guard end > duration, !(start < tc), !(try tc.adding(duration) < end) else { return nil }
        return tc
    }

    /// One frame of a source range's duration rate, seconds (nil when it is not a
    /// RationalTime with a rate).
    func frameLength(_ sr: JSONCursor) throws(MixdownError) -> Rational? {
        guard case .object(let o) = sr.value, let d = sr.member("duration", in: o), case .object(let dobj) = d.value,
              let r = d.member("rate", in: dobj), case .number(let rate) = r.value, rate > 0,
              let (num, den) = Self.exactRate(rate) else { return nil }
        return try Rational(Int128(den), over: Int128(num))
    }

    /// `metadata.mixdown.<name>` of an item, where Mixdown keeps what OTIO cannot say.
    func mixdownMember(_ name: String, _ c: JSONCursor, _ o: JSONObject) -> JSONCursor? {
        guard let md = c.member("metadata", in: o), case .object(let m) = md.value,
              let mx = md.member("mixdown", in: m), case .object(let x) = mx.value else { return nil }
        return mx.member(name, in: x)
    }

    /// `metadata.mixdown.at` and `.duration` ("n/d" seconds): a clip's exact place, which
    /// Mixdown writes when OTIO's sums of values at one rate cannot say it.
    func exactPlace(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> (at: Rational, duration: Rational)? {
        guard let at = mixdownMember("at", c, o), let d = mixdownMember("duration", c, o) else { return nil }
        return (Rational(try at.time(frameRate: nil)), Rational(try d.time(frameRate: nil)))
    }

    /// `metadata.mixdown.rounded`: Mixdown rounded the clip to an edit rate (`--otio-rate`).
    func placeWasRounded(_ c: JSONCursor, _ o: JSONObject) -> Bool {
        guard let r = mixdownMember("rounded", c, o), case .bool(let rounded) = r.value else { return false }
        return rounded
    }

    /// `metadata.mixdown.source_duration` ("n/d" seconds): the exact media a warped clip
    /// consumes, as Mixdown writes it.
    func exactSource(_ c: JSONCursor, _ o: JSONObject) throws(MixdownError) -> Rational? {
        guard let sd = mixdownMember("source_duration", c, o) else { return nil }
        return Rational(try sd.time(frameRate: nil))
    }
}
