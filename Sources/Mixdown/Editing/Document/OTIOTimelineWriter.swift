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
        func rt(_ time: MediaTime) -> String {
            let t = time.reduced
            // A rate of d and a value of n: both whole, both exact in a Double below 2^53.
            return "{\"OTIO_SCHEMA\": \"RationalTime.1\", \"rate\": \(t.timescale).0, \"value\": \(t.value).0}"
        }
        func range(_ start: MediaTime, _ duration: MediaTime) -> String {
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
        let edit = editRate.map(\.reduced)
        let editText = edit.map { e in e.timescale == 1 ? "\(e.value).0" : "\(Double(e.value) / Double(e.timescale))" }
        /// Seconds `q` in frames at the edit rate, nearest, halves away from zero.
        func editFrames(_ q: MediaTime, _ e: MediaTime) -> Int64 {
            let num = Int128(q.value) * Int128(e.value), den = Int128(q.timescale) * Int128(e.timescale)
            return Int64((2 * num + (num < 0 ? -den : den)) / (2 * den))
        }
        for track in document.composition.tracks {
            // Items run from position to position (0, each segment's start and end), so OTIO's
            // sums land on them. One rate for the track: the positions' common denominator when
            // it is at most 2^53 (then every value is exact), else the positions rounded to the
            // finest of their own timescales; the clips then carry their exact place in metadata.
            let segments = track.placedSegments
            var positions: [MediaTime] = [.zero]
            for s in segments { positions += [s.target.start.reduced, s.target.end.reduced] }
            var rate: Int64 = 1, exact = true
            for q in positions {
                let (m, overflow) = (rate / gcd(rate, Int64(q.timescale))).multipliedReportingOverflow(by: Int64(q.timescale))
                if overflow || m > 1 << 53 { exact = false; break }
                rate = m
            }
            if !exact { rate = Int64(positions.map(\.timescale).max()!) }
            func onGrid(_ q: MediaTime) -> Int64 {
                if let e = edit { return editFrames(q, e) }
                // Nearest, halves away from zero (positions are not negative).
                return Int64((Int128(q.value) * Int128(rate) * 2 + Int128(q.timescale)) / (2 * Int128(q.timescale)))
            }
            func rtAt(_ units: Int64) -> String { "{\"OTIO_SCHEMA\": \"RationalTime.1\", \"rate\": \(editText ?? "\(rate).0"), \"value\": \(units).0}" }
            /// A time that is not on the track's grid (a source in-point, a file's length).
            func anyTime(_ q: MediaTime) -> String { edit.map { rtAt(editFrames(q, $0)) } ?? rt(q) }
            func anyRange(_ start: MediaTime, _ duration: MediaTime) -> String {
                "{\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(anyTime(start)), \"duration\": \(anyTime(duration))}"
            }
            func gap(_ units: Int64) -> String {
                "{\"OTIO_SCHEMA\": \"Gap.1\", \"name\": \"\", \"source_range\": {\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(rtAt(0)), \"duration\": \(rtAt(units))}, "
                    + "\"effects\": [], \"markers\": [], \"enabled\": true, \"metadata\": {}}"
            }
            var children: [String] = []
            var at: Int64 = 0
            for s in segments {
                let a = onGrid(s.target.start), b = onGrid(s.target.end)
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
                    mixdown.append("\"source_duration\": \"\(source.range.duration.rationalText)\"")
                }
                // The OTIO duration is end - start on the grid; the composition's own duration
                // (whose sum with the start gives the end) is kept when that is not it.
                if let e = edit {
                    /// `frames` of the edit rate, seconds, exactly.
                    func seconds(_ frames: Int64) -> MediaTime? { MediaTime(exactly: Int128(frames) * Int128(e.timescale), over: Int128(e.value)) }
                    let sourceIn = editFrames(source.range.start, e)
                    let onFrames = seconds(a) == s.target.start && seconds(b - a) == s.target.duration
                        && seconds(sourceIn) == source.range.start
                    if !onFrames {
                        roundedClips += 1
                        mixdown.append("\"at\": \"\(s.target.start.rationalText)\", \"duration\": \"\(s.target.duration.rationalText)\", "
                            + "\"source_start\": \"\(source.range.start.rationalText)\", \"rounded\": true")
                    }
                } else if !exact || Int128(b - a) * Int128(s.target.duration.timescale) != Int128(s.target.duration.value) * Int128(rate) {
                    mixdown.append("\"at\": \"\(s.target.start.rationalText)\", \"duration\": \"\(s.target.duration.rationalText)\"")
                }
                // The channel a segment plays (from 1, as the reader takes it); "all" where a
                // track's name would make a reader take one (a CMX 3600 name, A2).
                if let r = source.route {
                    mixdown.append("\"channel\": \(r.sourceChannel + 1)" + (r.outputChannel.map { ", \"output_channel\": \($0 + 1)" } ?? ""))
                } else if CMX3600.isChannel(track.name) {
                    mixdown.append("\"channel\": \"all\"")
                }
                let metadata = mixdown.isEmpty ? "{}" : "{\"mixdown\": {\(mixdown.joined(separator: ", "))}}"
                let reference = "{\"OTIO_SCHEMA\": \"ExternalReference.1\", \"name\": \"\", \"target_url\": \(quote(url(source.asset.path))), "
                    + "\"available_range\": \(edit == nil ? range(.zero, info.duration) : anyRange(.zero, info.duration)), \"metadata\": {}}"
                children.append("{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \(quote((source.asset.path as NSString).lastPathComponent)), "
                    + "\"source_range\": {\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(anyTime(source.range.start)), \"duration\": \(rtAt(b - a))}, "
                    + "\"effects\": \(effects), \"markers\": [], \"enabled\": true, "
                    + "\"metadata\": \(metadata), \"active_media_reference_key\": \"DEFAULT_MEDIA\", \"media_references\": {\"DEFAULT_MEDIA\": \(reference)}}")
            }
            var events: [String] = []
            for e in document.audioMix[trackID: track.trackID].volume.events {
                switch e {
                case .set(let v, let t): events.append("{\"volume\": \(v), \"at\": \"\(t.rationalText)\"}")
                case .ramp(let a, let b, let r):
                    events.append("{\"ramp\": {\"from\": \(a), \"to\": \(b), \"start\": \"\(r.start.rationalText)\", \"duration\": \"\(r.duration.rationalText)\"}}")
                }
            }
            let trackMetadata = events.isEmpty ? "{}" : "{\"mixdown\": {\"volume\": {\"events\": [\(events.joined(separator: ", "))]}}}"
            tracks.append("{\"OTIO_SCHEMA\": \"Track.1\", \"name\": \(quote(track.name)), \"kind\": \"Audio\", \"source_range\": null, "
                + "\"effects\": [], \"markers\": [], \"enabled\": true, \"metadata\": \(trackMetadata), \"children\": [\(children.joined(separator: ", "))]}")
        }
        // The document's own settings, as its members, under the timeline's metadata.mixdown.
        var settings: [String] = []
        var output: [String] = []
        if let f = document.outputFormat { output += ["\"sample_rate\": \(f.sampleRate)", "\"channels\": \(f.channelCount)"] }
        if let v = document.type { output.append("\"type\": \"\(v.rawValue)\"") }
        if let v = document.sampleFormat { output.append("\"sample_format\": \"\(v.rawValue)\"") }
        if let v = document.preset { output.append("\"preset\": \(quote(v.name))") }
        if let v = document.bitrate { output.append("\"bitrate\": \(v)") }
        if let v = document.codec { output.append("\"codec\": \"\(v.rawValue)\"") }
        if let v = document.videoFrom { output.append("\"video_from\": \(quote(url(v, asURL: false)))") }
        if !output.isEmpty { settings.append("\"output\": {\(output.joined(separator: ", "))}") }
        if let r = document.timeRange {
            settings.append("\"time_range\": {\"start\": \"\(r.start.rationalText)\", \"duration\": \"\(r.duration.rationalText)\"}")
        }
        if let v = document.timePitchAlgorithm { settings.append("\"time_pitch_algorithm\": \"\(v.rawValue)\"") }
        if let v = document.resampler { settings.append("\"resampler\": \"\(v.rawValue)\"") }
        if let v = document.resamplerQuality { settings.append("\"resampler_quality\": \"\(v.rawValue)\"") }
        if let v = document.fileLengthLimit { settings.append("\"file_length_limit\": \(v)") }
        if let e = edit { settings.append("\"edit_rate\": \"\(e.rationalText)\", \"rounded\": \(roundedClips)") }
        let m = document.metadata
        let tags = [("title", m.title), ("artist", m.artist), ("album", m.album), ("comment", m.comment), ("date", m.date), ("software", m.software)]
            .compactMap { k, v in v.map { "\(quote(k)): \(quote($0))" } }
        if m != AudioMetadata() { settings.append("\"metadata\": {\(tags.joined(separator: ", "))}") }
        return "{\"OTIO_SCHEMA\": \"Timeline.1\", \"name\": \(quote(((document.path as NSString).lastPathComponent as NSString).deletingPathExtension)), "
            + "\"global_start_time\": null, \"metadata\": {\"mixdown\": {\(settings.joined(separator: ", "))}}, "
            + "\"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"name\": \"tracks\", \"source_range\": null, \"effects\": [], \"markers\": [], \"enabled\": true, "
            + "\"metadata\": {}, \"children\": [\(tracks.joined(separator: ",\n"))]}}\n"
    }

    /// `s` as a JSON string literal.
    static func quote(_ s: String) -> String {
        String(decoding: (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8), as: UTF8.self)
    }
}
