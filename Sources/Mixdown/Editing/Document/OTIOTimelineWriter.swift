import Foundation

extension OTIOTimeline {
    /// An edit rate as a user gives it: "24", "25", "30000/1001", or an NTSC rate as a
    /// decimal ("29.97", "23.976": k x 1000/1001 exactly). nil for anything else (0,
    /// negative, a rate that is neither whole nor NTSC).
    public static func editRate(parsing text: String) -> MediaTime? {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let n = Int64(parts[0]), let d = Int64(parts[1]), n > 0, d > 0, n <= 1_000_000, d <= 1_000_000 {
            return MediaTime(value: n, timescale: Int32(d))
        }
        guard parts.count == 1, let r = Double(text), r > 0, r <= 1_000_000, let (n, d) = Reader.exactRate(r) else { return nil }
        return MediaTime(value: n, timescale: Int32(d))
    }

    /// `document` as an OpenTimelineIO timeline (OTIO JSON, schemas of opentimelineio 0.18):
    /// one Audio track per composition track; its segments as Clips with an ExternalReference
    /// (available range: the whole file); empty edits and the time between segments as Gaps;
    /// a scaled segment as a Clip with a LinearTimeWarp (time_scalar = media / timeline
    /// length, the Double OTIO keeps) and its exact media length in
    /// `metadata.mixdown.source_duration`; the track's volume events (ducking included)
    /// verbatim in `metadata.mixdown.volume.events`; the document's settings in the
    /// timeline's `metadata.mixdown`. A track's items are written at one whole rate, so OTIO's
    /// sums land exactly on every segment's start and end (a clip also carries its exact
    /// start and duration in metadata when one rate up to 2^53 cannot say them). Reading the
    /// timeline back renders the same frames, bit for bit. Paths inside `directory` are
    /// written relative to it, others as file:// URLs. Throws only when a time overflows.
    ///
    /// With `editRate` (frames per second, `--otio-rate`: 24, 25, 30000/1001), every time is
    /// written at that rate instead, as editors' formats need (the FCP 7 XML adapter takes no
    /// other): places, lengths and source in-points on whole frames, rounded to the nearest
    /// (halves away from zero). A clip whose exact times were not whole frames carries them
    /// in `metadata.mixdown` (`at`, `duration`, `source_start`, and `rounded: true`), and the
    /// timeline's `metadata.mixdown.rounded` counts those clips.
    public static func json(for document: CompositionDocument, relativeTo directory: String,
                            editRate: MediaTime? = nil) throws(MixdownError) -> String {
        func rt(_ t: Q) -> String {
            // A rate of d and a value of n: both whole, both exact in a Double below 2^53.
            "{\"OTIO_SCHEMA\": \"RationalTime.1\", \"rate\": \(t.d).0, \"value\": \(t.n).0}"
        }
        func range(_ start: Q, _ duration: Q) -> String {
            "{\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(rt(start)), \"duration\": \(rt(duration))}"
        }
        // Paths inside the timeline's directory are written relative to it; others as file:// URLs.
        let cwd = FileManager.default.currentDirectoryPath
        func absolute(_ p: String) -> String { ((p.hasPrefix("/") ? p : cwd + "/" + p) as NSString).standardizingPath }
        let dir = absolute(directory.isEmpty ? "." : directory)
        let prefix = dir.hasSuffix("/") ? dir : dir + "/"
        func url(_ path: String, asURL: Bool = true) -> String {
            let a = absolute(path)
            if a.hasPrefix(prefix) { return String(a.dropFirst(prefix.count)) }
            return asURL ? URL(fileURLWithPath: a).absoluteString : a
        }
        var tracks: [String] = []
        var roundedClips = 0
        // The edit rate as a Double OTIO keeps (30000/1001 as 29.97002997002997, which readers
        // and adapters take for NTSC), and frames of it as exact seconds.
        let edit = editRate.map { Q($0) }
        let editText = edit.map { e in e.d == 1 ? "\(e.n).0" : "\(Double(e.n) / Double(e.d))" }
        /// Seconds `q` in frames at the edit rate, nearest, halves away from zero.
        func editFrames(_ q: Q, _ e: Q) -> Int64 {
            let num = Int128(q.n) * Int128(e.n), den = Int128(q.d) * Int128(e.d)
            return Int64((2 * num + (num < 0 ? -den : den)) / (2 * den))
        }
        for track in document.composition.tracks {
            // Items run from position to position (0, each segment's start and end), so OTIO's
            // sums land on them. One rate for the track: the positions' common denominator when
            // it is at most 2^53 (then every value is exact), else the positions rounded to the
            // finest of their own timescales; the clips then carry their exact place in metadata.
            let segments = track.placedSegments
            var positions: [Q] = [.zero]
            for s in segments { positions += [Q(s.target.start), Q(s.target.end)] }
            var rate: Int64 = 1, exact = true
            for q in positions {
                let (m, overflow) = (rate / gcd(rate, q.d)).multipliedReportingOverflow(by: q.d)
                if overflow || m > 1 << 53 { exact = false; break }
                rate = m
            }
            if !exact { rate = positions.map(\.d).max()! }
            func onGrid(_ q: Q) -> Int64 {
                if let e = edit { return editFrames(q, e) }
                // Nearest, halves away from zero (positions are not negative).
                return Int64((Int128(q.n) * Int128(rate) * 2 + Int128(q.d)) / (2 * Int128(q.d)))
            }
            func rtAt(_ units: Int64) -> String { "{\"OTIO_SCHEMA\": \"RationalTime.1\", \"rate\": \(editText ?? "\(rate).0"), \"value\": \(units).0}" }
            /// A time that is not on the track's grid (a source in-point, a file's length).
            func anyTime(_ q: Q) -> String { edit.map { rtAt(editFrames(q, $0)) } ?? rt(q) }
            func anyRange(_ start: Q, _ duration: Q) -> String {
                "{\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(anyTime(start)), \"duration\": \(anyTime(duration))}"
            }
            func gap(_ units: Int64) -> String {
                "{\"OTIO_SCHEMA\": \"Gap.1\", \"name\": \"\", \"source_range\": {\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(rtAt(0)), \"duration\": \(rtAt(units))}, "
                    + "\"effects\": [], \"markers\": [], \"enabled\": true, \"metadata\": {}}"
            }
            var children: [String] = []
            var at: Int64 = 0
            for s in segments {
                let a = onGrid(Q(s.target.start)), b = onGrid(Q(s.target.end))
                if at < a { children.append(gap(a - at)) }
                at = max(at, b)
                guard let source = s.source, b > a else {
                    if b > a { children.append(gap(b - a)) }
                    continue
                }
                let info = source.asset.info
                var effects = "[]"
                var mixdown: [String] = []
                if s.isScaled {
                    let scalar = source.range.duration.approximateSeconds / s.target.duration.approximateSeconds
                    effects = "[{\"OTIO_SCHEMA\": \"LinearTimeWarp.1\", \"name\": \"\", \"effect_name\": \"LinearTimeWarp\", \"time_scalar\": \(scalar), \"metadata\": {}}]"
                    mixdown.append("\"source_duration\": \"\(Q(source.range.duration).text)\"")
                }
                // The OTIO duration is end - start on the grid; the composition's own duration
                // (whose sum with the start gives the end) is kept when that is not it.
                if let e = edit {
                    /// `frames` of the edit rate, seconds, exactly.
                    func seconds(_ frames: Int64) -> Q { Q(frames * e.d, e.n) }
                    let sourceIn = editFrames(Q(source.range.start), e)
                    let onFrames = seconds(a) == Q(s.target.start) && seconds(b - a) == Q(s.target.duration)
                        && seconds(sourceIn) == Q(source.range.start)
                    if !onFrames {
                        roundedClips += 1
                        mixdown.append("\"at\": \"\(Q(s.target.start).text)\", \"duration\": \"\(Q(s.target.duration).text)\", "
                            + "\"source_start\": \"\(Q(source.range.start).text)\", \"rounded\": true")
                    }
                } else if !exact || Q(b - a, rate) != Q(s.target.duration) {
                    mixdown.append("\"at\": \"\(Q(s.target.start).text)\", \"duration\": \"\(Q(s.target.duration).text)\"")
                }
                let metadata = mixdown.isEmpty ? "{}" : "{\"mixdown\": {\(mixdown.joined(separator: ", "))}}"
                let reference = "{\"OTIO_SCHEMA\": \"ExternalReference.1\", \"name\": \"\", \"target_url\": \(Reader.quote(url(source.asset.path))), "
                    + "\"available_range\": \(edit == nil ? range(.zero, Q(info.frames, Int64(info.sampleRate))) : anyRange(.zero, Q(info.frames, Int64(info.sampleRate)))), \"metadata\": {}}"
                children.append("{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \(Reader.quote((source.asset.path as NSString).lastPathComponent)), "
                    + "\"source_range\": {\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(anyTime(Q(source.range.start))), \"duration\": \(rtAt(b - a))}, "
                    + "\"effects\": \(effects), \"markers\": [], \"enabled\": true, "
                    + "\"metadata\": \(metadata), \"active_media_reference_key\": \"DEFAULT_MEDIA\", \"media_references\": {\"DEFAULT_MEDIA\": \(reference)}}")
            }
            var events: [String] = []
            for e in document.audioMix[trackID: track.trackID].volume.events {
                switch e {
                case .set(let v, let t): events.append("{\"volume\": \(v), \"at\": \"\(Q(t).text)\"}")
                case .ramp(let a, let b, let r):
                    events.append("{\"ramp\": {\"from\": \(a), \"to\": \(b), \"start\": \"\(Q(r.start).text)\", \"duration\": \"\(Q(r.duration).text)\"}}")
                }
            }
            let trackMetadata = events.isEmpty ? "{}" : "{\"mixdown\": {\"volume\": {\"events\": [\(events.joined(separator: ", "))]}}}"
            tracks.append("{\"OTIO_SCHEMA\": \"Track.1\", \"name\": \(Reader.quote(track.name)), \"kind\": \"Audio\", \"source_range\": null, "
                + "\"effects\": [], \"markers\": [], \"enabled\": true, \"metadata\": \(trackMetadata), \"children\": [\(children.joined(separator: ", "))]}")
        }
        // The document's own settings, as its members, under the timeline's metadata.mixdown.
        var settings: [String] = []
        var output: [String] = []
        if let f = document.outputFormat { output += ["\"sample_rate\": \(f.sampleRate)", "\"channels\": \(f.channelCount)"] }
        if let v = document.type { output.append("\"type\": \"\(v.rawValue)\"") }
        if let v = document.sampleFormat { output.append("\"sample_format\": \"\(v.rawValue)\"") }
        if let v = document.preset { output.append("\"preset\": \(Reader.quote(v.name))") }
        if let v = document.bitrate { output.append("\"bitrate\": \(v)") }
        if let v = document.codec { output.append("\"codec\": \"\(v.rawValue)\"") }
        if let v = document.videoFrom { output.append("\"video_from\": \(Reader.quote(url(v, asURL: false)))") }
        if !output.isEmpty { settings.append("\"output\": {\(output.joined(separator: ", "))}") }
        if let r = document.timeRange {
            settings.append("\"time_range\": {\"start\": \"\(Q(r.start).text)\", \"duration\": \"\(Q(r.duration).text)\"}")
        }
        if let v = document.timePitchAlgorithm { settings.append("\"time_pitch_algorithm\": \"\(v.rawValue)\"") }
        if let v = document.resampler { settings.append("\"resampler\": \"\(v.rawValue)\"") }
        if let v = document.resamplerQuality { settings.append("\"resampler_quality\": \"\(v.rawValue)\"") }
        if let v = document.fileLengthLimit { settings.append("\"file_length_limit\": \(v)") }
        if let e = edit { settings.append("\"edit_rate\": \"\(e.text)\", \"rounded\": \(roundedClips)") }
        let m = document.metadata
        let tags = [("title", m.title), ("artist", m.artist), ("album", m.album), ("comment", m.comment), ("date", m.date), ("software", m.software)]
            .compactMap { k, v in v.map { "\(Reader.quote(k)): \(Reader.quote($0))" } }
        if m != AudioMetadata() { settings.append("\"metadata\": {\(tags.joined(separator: ", "))}") }
        return "{\"OTIO_SCHEMA\": \"Timeline.1\", \"name\": \(Reader.quote(((document.path as NSString).lastPathComponent as NSString).deletingPathExtension)), "
            + "\"global_start_time\": null, \"metadata\": {\"mixdown\": {\(settings.joined(separator: ", "))}}, "
            + "\"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"name\": \"tracks\", \"source_range\": null, \"effects\": [], \"markers\": [], \"enabled\": true, "
            + "\"metadata\": {}, \"children\": [\(tracks.joined(separator: ",\n"))]}}\n"
    }
}
