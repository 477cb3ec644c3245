import Foundation

/// A composition document: Mixdown's own JSON format (version 1, schema in
/// `docs/composition.schema.json`, described in `docs/composition.md`) that says a whole
/// render: tracks and their segments, empty edits, scaled ranges, volume events,
/// ducking, output format, time range and metadata. Times are exact strings. File paths
/// are relative to the document's directory.
///
/// Every error names the JSON path at fault, for example `tracks[1].segments[3].source`.
public struct CompositionDocument: Sendable {
    public static let version = 1

    public var composition: Composition
    public var audioMix: AudioMix
    public var outputFormat: AudioFormat?
    /// Whether the document gave `output.sample_rate` (else `outputFormat`'s rate is its
    /// media's, which an Opus output may replace with 48 kHz).
    public var outputRateGiven = false
    public var timeRange: MediaTimeRange?
    public var timePitchAlgorithm: TimeScaleAlgorithm?
    /// The resampler for rate changes and varispeed segments (`resampler`), and its quality (`resampler_quality`).
    public var resampler: ResamplerEngine?
    public var resamplerQuality: ResamplerQuality?
    public var type: AudioFileType?
    public var sampleFormat: SampleFormat?
    public var preset: ExportPreset?
    public var bitrate: Int?
    /// The codec for m4a, mp4, mov, mkv and webm outputs (`output.codec`).
    public var codec: AudioCodec?
    /// MP4/MOV outputs: the file whose video is copied beside the render (`output.video_from`,
    /// relative to the document).
    public var videoFrom: String?
    public var fileLengthLimit: Int64?
    public var metadata: AudioMetadata
    /// `output.loudness`: the integrated loudness (LUFS) and true-peak ceiling (dBTP) the
    /// render is brought to, and whether a limiter may hold the peaks.
    public var loudness: LoudnessTarget?
    /// Where the document was read from.
    public let path: String

    /// The document's output settings: its preset, with `type`, `sample_format`,
    /// `bitrate` and `codec` given beside it taking precedence.
    public var outputSettings: OutputSettings {
        var settings = OutputSettings(preset: preset, type: type, sampleFormat: sampleFormat, bitrate: bitrate, codec: codec)
        settings.videoFrom = videoFrom
        settings.metadata = metadata
        settings.loudness = loudness
        return settings
    }

    /// Reads and checks the document at `path`; the files it names must exist. An
    /// OpenTimelineIO timeline's media that is not where it says is looked for with
    /// `relinking` (`--media`, `--relink`).
    ///
    /// `from` (`--from`): a timecode on an OpenTimelineIO timeline's sequence clock (its
    /// record timecode or `global_start_time`) where the render starts, instead of the
    /// sequence's own start (docs/otio.md); it must not lie after the first event.
    public init(contentsOf path: String, relinking: MediaRelinking = MediaRelinking(), from: String? = nil) throws(MixdownError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw errno == ENOENT || errno == ENOTDIR ? .fileNotFound(path: path) : .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notAFile(path: path) }
        // Read straight into the parser's bytes (no second copy of a 10 MB document).
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        bytes.reserveCapacity(Int(st.st_size))
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
        }
        try self.init(bytes: bytes, path: path, relinking: relinking, from: from)
    }

    /// Reads a document from `data`; `path` names it in messages and anchors relative paths.
    public init(data: Data, path: String, relinking: MediaRelinking = MediaRelinking()) throws(MixdownError) {
        try self.init(bytes: [UInt8](data), path: path, relinking: relinking)
    }

    /// What reading an OpenTimelineIO timeline noted: Doubles that were not exact and how
    /// they were rounded, tracks and effects ignored (`--explain` prints them).
    public internal(set) var translationNotes: [String] = []

    init(bytes: [UInt8], path: String, relinking: MediaRelinking = MediaRelinking(), from: String? = nil) throws(MixdownError) {
        if OTIOTimeline.isOTIO(bytes) {
            self = try OTIOTimeline.document(bytes: bytes, path: path, relinking: relinking, from: from)
            return
        }
        if let from {
            throw .invalidParameter(name: "--from", value: from, reason: "'\(path)' is a composition document, which has no sequence clock (--from starts an editor's timeline at a timecode)")
        }
        let root: JSONValue
        do { root = try JSONParser.parse(bytes) } catch {
            throw .invalidDocument(file: path, location: error.location, reason: "is not valid JSON (line \(error.line), column \(error.column)): \(error.reason)")
        }
        let top = JSONCursor(value: root, path: "", file: path)
        let m = try top.object(allowed: ["version", "output", "time_range", "time_pitch_algorithm", "resampler", "resampler_quality", "file_length_limit",
                                         "metadata", "tracks", "scale", "ducking", "comment"])
        let version = try top.required("version", in: m)
        guard try version.integer() == Int64(Self.version) else {
            throw version.fail("unknown version \(try version.number()); this Mixdown reads version \(Self.version)")
        }
        self.init(emptyAt: path)
        // Output settings first: frame times on the timeline count at the output rate.
        let request = try readSettings(top, m)

        // Tracks: first the files (their rates decide the default output rate), then times.
        let trackList = try top.required("tracks", in: m).array()
        guard !trackList.isEmpty else { throw top.fail("has no tracks", at: "tracks") }
        struct Pending { let cursor: JSONCursor; let members: JSONObject; let asset: AudioAsset?; let route: ChannelRoute? }
        var pending: [[Pending]] = []
        var trackMembers: [JSONObject] = []
        var names: [String] = []
        var assets = AssetCache()
        for t in trackList {
            let o = try t.object(allowed: ["name", "segments", "volume", "scale", "loudness"])
            trackMembers.append(o)
            let name = try t.member("name", in: o)?.string() ?? "track \(names.count + 1)"
            if names.contains(name) { throw t.fail("a second track named '\(name)'; names must be unique", at: "name") }
            names.append(name)
            var segs: [Pending] = []
            for s in try t.required("segments", in: o).array() {
                let so = try s.object(allowed: ["file", "stream", "source", "at", "duration", "empty", "channel", "output_channel"])
                var asset: AudioAsset?
                if let f = s.member("file", in: so) {
                    let given = try f.string()
                    var stream: Int?
                    if let st = s.member("stream", in: so) {
                        let v = try st.integer()
                        guard v >= 0, v < 1 << 20 else { throw st.fail("must be a stream index, 0 or more") }
                        stream = Int(v)
                    }
                    do { asset = try assets.asset(given.hasPrefix("/") || base.isEmpty ? given : base + "/" + given, stream: stream) } catch {
                        if case .noAudioStream = error, s.member("stream", in: so) != nil { throw s.fail("\(error)", at: "stream") }
                        throw f.fail("\(error)")
                    }
                } else if s.member("empty", in: so) == nil {
                    throw s.fail("needs 'file' (a part of a file) or 'empty' (an empty edit)")
                }
                segs.append(Pending(cursor: s, members: so, asset: asset, route: try Self.route(s, so, asset: asset)))
            }
            pending.append(segs)
        }
        try settle(request, media: pending.flatMap { $0.compactMap { p in p.asset.map { ($0, DocumentOrigin(p.cursor), p.route != nil) } } })
        let rate = outputFormat?.sampleRate

        // Times, now that frames have a rate.
        var draft = CompositionDraft()
        for (ti, t) in trackList.enumerated() {
            let o = trackMembers[ti]
            var track = CompositionDraft.Track(name: names[ti])
            if let l = t.member("loudness", in: o) {
                let v = try l.number()
                guard v >= LoudnessTarget.lowestIntegrated && v <= 0 else { throw l.fail("must be a loudness from -60 to 0 LUFS, not \(v)") }
                track.loudness = v
            }
            for seg in pending[ti] {
                let s = seg.cursor
                if let asset = seg.asset {
                    if s.member("empty", in: seg.members) != nil { throw s.fail("has both 'file' and 'empty'; give one") }
                    let source = try s.member("source", in: seg.members)?.timeRange(frameRate: asset.info.sampleRate)
                        ?? MediaTimeRange(start: .zero, duration: asset.duration)
                    let at = try s.required("at", in: seg.members).time(frameRate: rate)
                    let duration = try s.member("duration", in: seg.members)?.time(frameRate: rate)
                    track.segments.append(.init(content: .media(asset, source: source, at: at, duration: duration), origin: DocumentOrigin(s), route: seg.route))
                } else {
                    if ["source", "at", "duration", "channel", "output_channel"].contains(where: { s.member($0, in: seg.members) != nil }) {
                        throw s.fail("an empty edit takes only 'empty': {\"start\", \"duration\"}")
                    }
                    let range = try s.required("empty", in: seg.members).timeRange(frameRate: rate)
                    track.segments.append(.init(content: .empty(range), origin: DocumentOrigin(s)))
                }
            }
            if let scales = t.member("scale", in: o) {
                for s in try scales.array() { track.scales.append(try Self.scaleEntry(s, rate: rate)) }
            }
            if let volume = t.member("volume", in: o) {
                track.volume = try Self.volumeEvents(volume, rate: rate)
                track.volumeOrigin = DocumentOrigin(volume)
            }
            draft.tracks.append(track)
        }
        if let scales = top.member("scale", in: m) {
            for s in try scales.array() { draft.scales.append(try Self.scaleEntry(s, rate: rate)) }
        }
        let ids = try assemble(draft)

        if let ducks = top.member("ducking", in: m) {
            for d in try ducks.array() {
                let o = try d.object(allowed: ["track", "while", "level", "level_db", "ramp_down", "ramp_up"])
                func track(_ key: String) throws(MixdownError) -> Int32 {
                    let c = try d.required(key, in: o)
                    let name = try c.string()
                    guard let i = names.firstIndex(of: name) else {
                        throw c.fail("no track named '\(name)' (tracks: \(names.map { "'\($0)'" }.joined(separator: ", ")))")
                    }
                    return ids[i]
                }
                let ducked = try track("track"), trigger = try track("while")
                guard ducked != trigger else { throw d.fail("a track cannot duck under itself", at: "while") }
                let level: AudioMix.Level
                switch (d.member("level", in: o), d.member("level_db", in: o)) {
                case (let l?, nil): level = .linear(try Self.gain(l))
                case (nil, let l?):
                    let db = try l.number()
                    guard db.isFinite, db <= 0 else { throw l.fail("must be 0 dB or less, not \(db)") }
                    level = .decibels(Float(db))
                default: throw d.fail("needs one of 'level' (linear) or 'level_db'")
                }
                let down = try d.member("ramp_down", in: o)?.time(frameRate: rate) ?? .zero
                let up = try d.member("ramp_up", in: o)?.time(frameRate: rate) ?? .zero
                do { try audioMix.duck(ducked, to: level, whileAudioOn: trigger, in: composition, rampDown: down, rampUp: up) }
                catch { throw d.fail("\(error)") }
                // duck checks its events against the track's in exact time; the render places
                // them on frames, where a restore less than a frame before a ramp lands on the
                // ramp's own frame. Refuse that here, as the track's own events are refused.
                do { _ = try audioMix[trackID: ducked].volume.envelope(sampleRate: rate ?? 48_000) }
                catch { throw d.fail("\(error)") }
            }
        }
        if let r = top.member("time_range", in: m) { try readTimeRange(r) }
    }

    /// A document with nothing in it yet, read from `path` (the readers fill it).
    init(emptyAt path: String) {
        self.path = path
        composition = Composition()
        audioMix = AudioMix()
        metadata = AudioMetadata()
    }

    /// The directory relative paths in the document start from.
    var base: String { (path as NSString).deletingLastPathComponent }

    /// The output rate and channels a document asks for, and where it asked (a file they
    /// cannot be made from names that place).
    struct OutputRequest {
        var rate: Int?
        var channels: Int?
        var rateOrigin: DocumentOrigin?
        var channelsOrigin: DocumentOrigin?
    }

    /// Reads the settings among `m`, the members of the document (or of an OTIO
    /// timeline's `metadata.mixdown`): `output`, `time_pitch_algorithm`, `resampler`,
    /// `resampler_quality`, `file_length_limit` and `metadata`. Other members are the
    /// caller's. `time_range` waits for the output rate (`readTimeRange`).
    mutating func readSettings(_ top: JSONCursor, _ m: JSONObject) throws(MixdownError) -> OutputRequest {
        var request = OutputRequest()
        if let out = top.member("output", in: m) {
            let o = try out.object(allowed: ["sample_rate", "channels", "type", "sample_format", "preset", "bitrate", "codec", "video_from", "loudness"])
            if let l = out.member("loudness", in: o) {
                let lo = try l.object(allowed: ["integrated", "true_peak", "limit"])
                guard let i = l.member("integrated", in: lo) else { throw l.fail("needs \"integrated\": the target loudness in LUFS") }
                var target = LoudnessTarget(integrated: try i.number())
                if let t = l.member("true_peak", in: lo) { target.truePeak = try t.number() }
                if let b = l.member("limit", in: lo) { target.limit = try b.bool() }
                do { try target.validate() } catch { throw l.fail("\(error)") }
                loudness = target
            }
            if let r = out.member("sample_rate", in: o) {
                request.rateOrigin = DocumentOrigin(r)
                let v = try r.integer()
                guard (1...768_000).contains(v) else { throw r.fail("must be a sample rate between 1 and 768000 Hz, not \(v)") }
                request.rate = Int(v)
            }
            if let c = out.member("channels", in: o) {
                request.channelsOrigin = DocumentOrigin(c)
                let v = try c.integer()
                guard (1...64).contains(v) else { throw c.fail("must be a channel count between 1 and 64, not \(v)") }
                request.channels = Int(v)
            }
            if let t = out.member("type", in: o) { type = try t.choice(of: AudioFileType.self, "type") }
            if let f = out.member("sample_format", in: o) { sampleFormat = try f.choice(of: SampleFormat.self, "sample format") }
            if let p = out.member("preset", in: o) {
                let s = try p.string()
                guard let v = ExportPreset(name: s) else {
                    throw p.fail("unknown preset '\(s)' (\(ExportPreset.all.map(\.name).joined(separator: ", ")))")
                }
                guard v != .passthrough else { throw p.fail("passthrough needs a single file, not a composition") }
                preset = v
                request.rate = request.rate ?? v.sampleRate
                request.channels = request.channels ?? v.channels
            }
            if let b = out.member("bitrate", in: o) {
                let v = try b.integer()
                guard v > 0 else { throw b.fail("must be a positive number of bits per second") }
                bitrate = Int(v)
            }
            if let c = out.member("codec", in: o) { codec = try c.choice(of: AudioCodec.self, "codec") }
            if let v = out.member("video_from", in: o) {
                let given = try v.string()
                videoFrom = given.hasPrefix("/") || base.isEmpty ? given : base + "/" + given
            }
        }
        if let a = top.member("time_pitch_algorithm", in: m) {
            let name = try a.string()
            guard let v = TimeScaleAlgorithm(name: name) else {
                throw a.fail("unknown algorithm '\(name)' (\(TimeScaleAlgorithm.names.joined(separator: ", ")))")
            }
            guard v.isAvailable else { throw a.fail("'\(v.rawValue)' is not built into this Mixdown (the RubberBand trait is off)") }
            timePitchAlgorithm = v
        }
        if let a = top.member("resampler", in: m) { resampler = try a.choice(of: ResamplerEngine.self, "resampler") }
        if let a = top.member("resampler_quality", in: m) { resamplerQuality = try a.choice(of: ResamplerQuality.self, "quality") }
        if let l = top.member("file_length_limit", in: m) {
            let v = try l.integer()
            guard v > 0 else { throw l.fail("must be a positive number of bytes") }
            fileLengthLimit = v
        }
        if let md = top.member("metadata", in: m) {
            let o = try md.object(allowed: ["title", "artist", "album", "comment", "date", "software"])
            func text(_ k: String) throws(MixdownError) -> String? { try md.member(k, in: o)?.string() }
            metadata = AudioMetadata(title: try text("title"), artist: try text("artist"), album: try text("album"),
                                     comment: try text("comment"), date: try text("date"), software: try text("software") ?? "Mixdown")
        }
        return request
    }

    /// A segment's `channel` (the file's channel it plays, from 1) and `output_channel`
    /// (where it lands, from 1; without it, the channel's own place in the file): nil when
    /// neither is given. A channel the file does not have is refused at `channel`.
    static func route(_ s: JSONCursor, _ o: JSONObject, asset: AudioAsset?) throws(MixdownError) -> ChannelRoute? {
        let c = s.member("channel", in: o), out = s.member("output_channel", in: o)
        guard c != nil || out != nil else { return nil }
        guard let c else { throw s.fail("an output_channel needs the channel it places", at: "channel") }
        let v = try c.integer()
        guard v >= 1, v <= 64 else { throw c.fail("must be a channel from 1 to 64, not \(v)") }
        var k: Int?
        if let out {
            let w = try out.integer()
            guard w >= 1, w <= 64 else { throw out.fail("must be a channel from 1 to 64, not \(w)") }
            k = Int(w) - 1
        }
        let route = ChannelRoute(sourceChannel: Int(v) - 1, outputChannel: k)
        if let asset, route.channel(inFileOf: asset.info.channelCount) == nil {
            throw c.fail("channel \(v) of '\(asset.path)', which has \(asset.info.channelCount) channels")
        }
        return route
    }

    /// Settles the output format: the rate and channels `request` gives, else the media's
    /// (the highest rate; stereo if any file has two or more channels). Every file must
    /// convert to them: refused here, at the key that asks for it (else at the segment),
    /// not at render time.
    /// `routed`: the segment plays one channel of its file (`ChannelRoute`), which any
    /// output takes.
    mutating func settle(_ request: OutputRequest, media: [(asset: AudioAsset, origin: DocumentOrigin, routed: Bool)]) throws(MixdownError) {
        var rate = request.rate, channels = request.channels
        if rate == nil || channels == nil {
            let d = Composition().defaultFormat(of: media.map(\.asset))
            rate = rate ?? d?.sampleRate
            channels = channels ?? d?.channelCount
        }
        outputRateGiven = request.rateOrigin != nil
        guard let rate, let channels else { return }
        outputFormat = AudioFormat(sampleRate: rate, channelCount: channels)
        var checked = Set<String>()
        for (asset, origin, routed) in media where checked.insert("\(asset.stream):\(asset.path):\(routed)").inserted {
            let ratio = Double(rate) / Double(asset.info.sampleRate)
            if !(1.0 / 256...256).contains(ratio) {
                throw (request.rateOrigin ?? origin).fail("\(rate) Hz cannot be made from '\(asset.path)' at \(asset.info.sampleRate) Hz: a rate conversion goes at most 256 times up or down")
            }
            let ch = asset.info.channelCount
            if !routed, !(ch == channels || ch == 1 || channels == 1) {
                throw (request.channelsOrigin ?? origin).fail("\(channels) channels cannot be made from '\(asset.path)', which has \(ch) (supported: mono to any, any to mono, equal counts)")
            }
        }
    }

    /// `time_range`: the part of the composition rendered (frames at the output rate).
    mutating func readTimeRange(_ r: JSONCursor) throws(MixdownError) {
        let range = try r.timeRange(frameRate: outputFormat?.sampleRate)
        guard range.start >= .zero else { throw r.fail("must start at or after 0, not \(range.start.clockDescription)", at: "start") }
        guard range.duration > .zero else { throw r.fail("must last longer than 0") }
        guard range.end <= composition.duration else {
            throw r.fail("ends at \(range.end.clockDescription), after the composition, which is \(composition.duration.clockDescription) long")
        }
        timeRange = range
    }

    /// A track's `volume` array: `{"volume", "at"}` sets and `{"ramp": {"from", "to",
    /// "start", "duration" or "end"}}` ramps, times at `rate`.
    static func volumeEvents(_ volume: JSONCursor, rate: Int?) throws(MixdownError) -> [CompositionDraft.VolumeEvent] {
        var events: [CompositionDraft.VolumeEvent] = []
        for e in try volume.array() {
            let eo = try e.object(allowed: ["volume", "at", "ramp"])
            if let r = e.member("ramp", in: eo) {
                if e.member("volume", in: eo) != nil || e.member("at", in: eo) != nil {
                    throw e.fail("a ramp takes only 'ramp': {\"from\", \"to\", \"start\", \"duration\" or \"end\"}")
                }
                let ro = try r.object(allowed: ["from", "to", "start", "duration", "end"])
                let from = try gain(r.required("from", in: ro))
                let to = try gain(r.required("to", in: ro))
                var rangeMembers = ro
                rangeMembers["from"] = nil
                rangeMembers["to"] = nil
                let range = try JSONCursor(value: .object(rangeMembers), path: r.path, file: r.file).timeRange(frameRate: rate)
                events.append(.init(kind: .ramp(from: from, to: to, range), origin: DocumentOrigin(r)))
            } else {
                let v = try gain(e.required("volume", in: eo))
                let at = try e.required("at", in: eo).time(frameRate: rate)
                events.append(.init(kind: .set(v, at: at), origin: DocumentOrigin(e)))
            }
        }
        return events
    }

    private static func gain(_ c: JSONCursor) throws(MixdownError) -> Float {
        let v = try c.number()
        guard v.isFinite, v >= 0 else { throw c.fail("must be a linear gain of 0 or more, not \(v)") }
        return Float(v)
    }

    /// A `{"time_range", "to_duration"}` entry, checked: a range from 0 on, a new duration
    /// longer than 0, a factor between 0.25 and 4.
    static func scaleEntry(_ s: JSONCursor, rate: Int?) throws(MixdownError) -> CompositionDraft.Scale {
        let o = try s.object(allowed: ["time_range", "to_duration"])
        let range = try s.required("time_range", in: o).timeRange(frameRate: rate)
        let to = try s.required("to_duration", in: o)
        let duration = try to.time(frameRate: rate)
        guard duration > .zero else { throw to.fail("must be longer than 0") }
        guard range.start >= .zero else { throw s.fail("must start at or after 0", at: "time_range") }
        guard StretchRatio.isSupportedScale(from: range.duration, to: duration) else {
            let factor = duration.approximateSeconds / range.duration.approximateSeconds
            throw to.fail("scales \(CompositionTrack.describe(range)) by \(factor): a scale must lie between 0.25 and 4")
        }
        return CompositionDraft.Scale(range: range, duration: duration, origin: DocumentOrigin(s))
    }
}

/// The files a document names, each opened once however many segments cut it.
struct AssetCache {
    private var assets: [String: AudioAsset] = [:]

    /// `path`'s audio stream `stream` (nil: the first), opened on first use.
    mutating func asset(_ path: String, stream: Int? = nil) throws(MixdownError) -> AudioAsset {
        let key = "\(stream ?? -1):\(path)"
        if let known = assets[key] { return known }
        let asset = try AudioAsset(path: path, stream: stream)
        assets[key] = asset
        return asset
    }
}
