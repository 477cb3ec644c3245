import Foundation

/// Renders a composition through an audio mix to a file: the work behind `ExportSession`
/// and `mixdown render`.
///
/// Frames, by the documented rule (round half away from zero) at the output rate R:
/// - a segment with target range [t0, t1) covers output frames round(t0·R)..<round(t1·R);
/// - the render covers round(start·R)..<round(end·R) of the time range (default: the
///   whole composition, 0..<round(duration·R));
/// - volume events are placed as `VolumeAutomation` documents, on timeline frames.
/// Each file segment becomes a chain: decoder → (time-pitch stretch, when scaled) →
/// libsamplerate to R (when its rate differs) → channel mapping; then the tracks are
/// summed through their gain envelopes by `Mixer`.
public struct CompositionRender: Sendable {
    public var composition: Composition
    public var audioMix = AudioMix()
    public var output: String
    /// Nil: `composition.defaultOutputFormat` (highest rate; stereo if any file is).
    public var outputFormat: AudioFormat?
    /// True when `outputFormat`'s rate was taken from the media, not asked for (a document
    /// without `output.sample_rate`): an Opus output may then render at 48 kHz.
    public var outputRateIsDefault = false
    /// Nil: the whole composition.
    public var timeRange: MediaTimeRange?
    /// How scaled ranges are stretched (`auto`: varispeed for a tiny change, else the
    /// pitch-keeping stretcher, decided per segment).
    public var timePitchAlgorithm = TimeScaleAlgorithm.pitchKeeping
    /// The resampler's quality for rate changes and varispeed segments.
    public var quality: ResamplerQuality = .best
    /// Which resampler converts rates and runs varispeed segments.
    public var resampler: ResamplerEngine = .auto
    /// The output file never exceeds this many bytes: the render stops at the last whole
    /// frame that fits, and the report says so. PCM types only (their size is exact).
    public var fileLengthLimit: Int64?
    /// The document these settings came from, when one did: a bitrate or file length limit
    /// it gave that the output cannot take is then its fault, named by its JSON path.
    public var document: DocumentOrigin?

    public struct DocumentOrigin: Sendable {
        public var path: String
        public var bitrate: Int?
        public var fileLengthLimit: Int64?
        public init(path: String, bitrate: Int?, fileLengthLimit: Int64?) {
            self.path = path
            self.bitrate = bitrate
            self.fileLengthLimit = fileLengthLimit
        }
    }
    /// How the file is written. A nil sample format: the highest precision among the
    /// files (f32 > s24 > s16) that the type stores.
    public var settings: OutputSettings

    /// A render of `composition` through `audioMix` to `output`: the one place where
    /// `ExportSession` and `CompositionDocument` settings become a render.
    public init(composition: Composition, output: String, audioMix: AudioMix = AudioMix(),
                outputFormat: AudioFormat? = nil, timeRange: MediaTimeRange? = nil,
                timePitchAlgorithm: TimeScaleAlgorithm? = nil, resampler: ResamplerEngine? = nil,
                quality: ResamplerQuality? = nil, fileLengthLimit: Int64? = nil,
                settings: OutputSettings = OutputSettings()) {
        self.composition = composition
        self.output = output
        self.audioMix = audioMix
        self.outputFormat = outputFormat
        self.timeRange = timeRange
        if let timePitchAlgorithm { self.timePitchAlgorithm = timePitchAlgorithm }
        if let resampler { self.resampler = resampler }
        if let quality { self.quality = quality }
        self.fileLengthLimit = fileLengthLimit
        self.settings = settings
    }

    /// What the render will do, decided before anything is opened for writing.
    public struct Plan: Sendable {
        public let format: AudioFormat
        /// Timeline frames rendered (at the output rate).
        public let frames: Range<Int64>
        /// The composition's whole length in frames.
        public let compositionFrames: Int64
        public let encoding: OutputEncoding
        /// The write this plan was made for: its type resolved, its clock started.
        let job: OutputJob
        /// True when the file length limit cut the render short.
        public let truncatedByFileLengthLimit: Bool
        /// Exact size of the output file for PCM types, nil for compressed ones.
        public let estimatedFileLength: Int64?
        /// The segment table (made when asked: a render does not need it).
        public var segments: [SegmentMapping] { tracks.flatMap { $0.mappings(outputRate: format.sampleRate) } }
        let tracks: [CompositionTrack]
        /// Each track's gains on timeline frames (with `levelled`, its loudness gain too).
        public internal(set) var envelopes: [Int32: GainEnvelope]
        /// The tracks levelled to their `loudness` (empty until `levelled(_:)` measures them).
        public internal(set) var trackLoudness: [TrackLoudness] = []
        /// Track names by ID, for the explanation.
        let trackNames: [(id: Int32, name: String)]

        /// The plan as data: segment table and gain spans, exact frame indices.
        public var explanation: Explanation {
            Explanation(sampleRate: format.sampleRate, channels: format.channelCount,
                        compositionFrames: compositionFrames, startFrame: frames.lowerBound, endFrame: frames.upperBound,
                        truncatedByFileLengthLimit: truncatedByFileLengthLimit, estimatedFileLength: estimatedFileLength,
                        segments: segments, trackLoudness: trackLoudness,
                        gains: trackNames.map { t in
                            TrackGains(trackID: t.id, trackName: t.name, spans: (envelopes[t.id] ?? .unity).segments.map {
                                GainSpan(startFrame: $0.start, endFrame: $0.end == .max ? nil : $0.end, startGain: $0.startGain,
                                         endGain: $0.end == .max || $0.step == 0 ? $0.startGain : $0.startGain + Double($0.end - $0.start) * $0.step)
                            })
                        })
        }
    }

    /// What `mixdown render --explain` prints.
    public struct Explanation: Sendable, Codable, Equatable {
        public let sampleRate: Int
        public let channels: Int
        public let compositionFrames: Int64
        public let startFrame: Int64
        public let endFrame: Int64
        public let truncatedByFileLengthLimit: Bool
        public let estimatedFileLength: Int64?
        public let segments: [SegmentMapping]
        /// The tracks levelled to their own loudness, measured.
        public let trackLoudness: [TrackLoudness]
        public let gains: [TrackGains]
    }

    /// A track levelled to its `loudness`: what its own contribution measured over the
    /// rendered frames (before its volume events and ducking) and the gain it was given.
    public struct TrackLoudness: Sendable, Codable, Equatable {
        public let trackID: Int32
        public let trackName: String
        /// The target, LUFS.
        public let target: Double
        /// The track alone, before the gain: integrated loudness (LUFS) and true peak (dBTP).
        public let measured: Double
        public let truePeak: Double
        public let gainDb: Double
    }

    public struct TrackGains: Sendable, Codable, Equatable {
        public let trackID: Int32
        public let trackName: String
        public let spans: [GainSpan]
    }

    /// Frames startFrame..<endFrame go linearly from startGain to endGain (endGain is
    /// the value the ramp reaches on frame endFrame, the first after it). A nil end is
    /// the end of time.
    public struct GainSpan: Sendable, Codable, Equatable {
        public let startFrame: Int64
        public let endFrame: Int64?
        public let startGain: Double
        public let endGain: Double
    }

    /// The timeline part of a plan, which needs no output: the format, the frames rendered
    /// (`frames`, when given, replaces the time range: a pull render that seeks), the
    /// composition's length and each track's gains. Every edit is checked here.
    func timeline(frames wanted: Range<Int64>? = nil) throws(MixdownError) -> Timeline {
        guard let format = outputFormat ?? composition.defaultOutputFormat else {
            throw .invalidParameter(name: "composition", value: "\(composition.tracks.count) tracks", reason: "has no file segments: there is nothing to render")
        }
        let rate = format.sampleRate
        // Each edit is within the limit; their sum (a segment placed late, a scaled range
        // rippling others) must be too, before any frame arithmetic.
        guard composition.duration.isWithinAcceptedRange else {
            throw .invalidParameter(name: "composition", value: "duration \(composition.duration.clockDescription)", reason: MediaTime.beyondLimit)
        }
        let total = composition.duration.frames(atRate: rate)
        guard total > 0 else {
            throw .invalidParameter(name: "composition", value: composition.duration.clockDescription, reason: "is shorter than one frame at \(rate) Hz")
        }
        var frames: Range<Int64> = 0..<total
        if let wanted {
            frames = wanted
        } else if let r = timeRange {
            guard r.isValid, r.start.isWithinAcceptedRange, r.duration.isWithinAcceptedRange, r.start >= .zero, r.duration > .zero else {
                throw .invalidParameter(name: "time range", value: CompositionTrack.describe(r), reason: "must start at or after 0 and last longer than 0")
            }
            frames = r.frames(atRate: rate)
            guard frames.upperBound <= total, !frames.isEmpty else {
                throw .invalidParameter(name: "time range", value: CompositionTrack.describe(r),
                                        reason: "lies outside the composition, which is \(composition.duration.clockDescription) long (\(total) frames at \(rate) Hz)")
            }
        }
        for track in composition.tracks {
            for s in track.placedSegments {
                guard let src = s.source else { continue }
                let ch = src.asset.info.channelCount
                if let route = src.route {
                    guard route.channel(inFileOf: ch) != nil else {
                        throw .invalidEdit(track: track.label, reason: "\(CompositionTrack.describe(s)) plays channel \(route.sourceChannel + 1) of '\(src.asset.path)', which has \(ch) channels")
                    }
                } else if !(ch == format.channelCount || ch == 1 || format.channelCount == 1) {
                    throw .invalidEdit(track: track.label, reason: "'\(src.asset.path)' has \(ch) channels: no mapping to \(format.channelCount) (supported: mono to any, any to mono, equal counts)")
                }
                if s.isScaled {
                    guard timePitchAlgorithm.isAvailable else {
                        throw .invalidParameter(name: "time-pitch algorithm", value: timePitchAlgorithm.rawValue,
                                                reason: "is not built into this Mixdown (the RubberBand trait is off); \(track.label) has a scaled segment")
                    }
                    guard StretchRatio.isSupportedScale(from: src.range.duration, to: s.target.duration) else {
                        let factor = s.target.duration.approximateSeconds / src.range.duration.approximateSeconds
                        throw .invalidEdit(track: track.label, reason: "\(CompositionTrack.describe(s)) is scaled by \(factor): must lie between 0.25 and 4")
                    }
                }
            }
        }
        var envelopes: [Int32: GainEnvelope] = [:]
        for p in audioMix.inputParameters {
            guard let track = composition.track(withID: p.trackID) else {
                throw .invalidParameter(name: "audio mix", value: "track \(p.trackID)", reason: "no such track in the composition")
            }
            do { envelopes[p.trackID] = try p.volume.envelope(sampleRate: rate) } catch {
                throw .invalidParameter(name: "audio mix of \(track.label)", value: "volume events", reason: "\(error)")
            }
        }
        return Timeline(format: format, frames: frames, compositionFrames: total, envelopes: envelopes)
    }

    /// What `timeline()` decides.
    struct Timeline {
        let format: AudioFormat
        let frames: Range<Int64>
        let compositionFrames: Int64
        let envelopes: [Int32: GainEnvelope]
    }

    /// This job at the rate its output is written at, when that is not the composition's
    /// own: `settings.sampleRate`, or 48 kHz for an Opus output of a rate Opus does not take
    /// (`OutputJob.outputRate`); nil when it renders as it is. A rate asked for
    /// (`outputFormat`, unless `outputRateIsDefault`) stands, and a different
    /// `settings.sampleRate` beside it is refused.
    func atOutputRate() throws(MixdownError) -> CompositionRender? {
        if let f = outputFormat, !outputRateIsDefault {
            if let r = settings.sampleRate, r != f.sampleRate {
                throw .invalidParameter(name: "--rate", value: "\(r)", reason: "the document sets its own rate (\(f.sampleRate) Hz)")
            }
            return nil
        }
        guard let natural = outputFormat ?? composition.defaultOutputFormat else { return nil }
        let rate = try OutputJob(path: output, settings: settings).outputRate(forRenderAt: natural.sampleRate)
        guard rate != natural.sampleRate else { return nil }
        var job = self
        job.outputFormat = AudioFormat(sampleRate: rate, channelCount: natural.channelCount)
        job.outputRateIsDefault = false
        return job
    }

    public func plan() throws(MixdownError) -> Plan {
        do { return try unattributedPlan() } catch { throw attributed(error) }
    }

    /// `error` told as the document's, when it is about a bitrate or file length limit the
    /// document gave (and the caller did not replace).
    private func attributed(_ error: MixdownError) -> MixdownError {
        guard let d = document, case .unsupportedOutput(let path, let reason) = error, path == output else { return error }
        if reason.hasPrefix("a bitrate"), let b = d.bitrate, b == settings.encoder.bitrate {
            return .invalidDocument(file: d.path, location: "output.bitrate", reason: "\(reason) (writing '\(output)')")
        }
        if reason.hasPrefix("a file length limit"), let l = d.fileLengthLimit, l == fileLengthLimit {
            return .invalidDocument(file: d.path, location: "file_length_limit", reason: "\(reason) (writing '\(output)')")
        }
        return error
    }

    private func unattributedPlan() throws(MixdownError) -> Plan {
        try settings.checkLoudnessReport(output: output, inputs: composition.assets.map(\.path))
        if let job = try atOutputRate() { return try job.plan() }
        let timeline = try timeline()
        let format = timeline.format, total = timeline.compositionFrames, envelopes = timeline.envelopes
        var frames = timeline.frames
        let job = try OutputJob(path: output, settings: settings)
        let type = job.type, encoder = settings.encoder, metadata = settings.metadata
        guard AudioFileWriter.canWrite(type, format: format, codec: encoder.codec) else {
            throw .unsupportedOutput(path: output, reason: "\(type.rawValue) cannot hold \(format); set the output's sample rate or channels")
        }
        let sampleFormat = settings.sampleFormat ?? (type.takesSampleFormat(codec: encoder.codec) ? defaultSampleFormat(for: type) : nil)
        var encoding = try job.encoding(frames: Int64(frames.count), channels: format.channelCount, natural: sampleFormat)
        var truncated = false
        if let limit = fileLengthLimit {
            guard limit > 0 else { throw .invalidParameter(name: "file length limit", value: "\(limit)", reason: "must be more than 0 bytes") }
            guard encoding.dataBytes != nil else {
                throw .unsupportedOutput(path: output, reason: "a file length limit needs a PCM type (wav, aiff, caf, w64, rf64), whose size is exact; \(type.rawValue) is compressed")
            }
            let fit = try OutputEncoding.maximumFrames(fitting: limit, path: output, type: type, sampleFormat: sampleFormat,
                                                       format: format, metadata: metadata)
            guard fit > 0 else {
                throw .unsupportedOutput(path: output, reason: "a file length limit of \(limit) bytes does not hold the header and one frame")
            }
            if fit < Int64(frames.count) {
                frames = frames.lowerBound..<(frames.lowerBound + fit)
                truncated = true
                encoding = try job.encoding(frames: fit, channels: format.channelCount, natural: sampleFormat)
            }
        }
        let estimate = try encoding.dataBytes == nil ? nil
            : OutputEncoding.fileLength(path: output, type: encoding.type, sampleFormat: encoding.sampleFormat!,
                                        format: format, metadata: metadata, frames: Int64(frames.count))
        return Plan(format: format, frames: frames, compositionFrames: total, encoding: encoding, job: job,
                    truncatedByFileLengthLimit: truncated, estimatedFileLength: estimate,
                    tracks: composition.tracks, envelopes: envelopes, trackNames: composition.tracks.map { ($0.trackID, $0.name) })
    }

    /// `plan` with every track that has a `loudness` measured and levelled: each such track
    /// is rendered alone over the plan's frames (with unity gain: before its volume events
    /// and ducking) into a loudness meter, and its gain envelope is multiplied by the gain
    /// that brings it to its target. A track silent over those frames is an error.
    public func levelled(_ plan: Plan) throws(MixdownError) -> Plan {
        var out = plan
        (out.envelopes, out.trackLoudness) = try levelling(Timeline(format: plan.format, frames: plan.frames,
                                                                    compositionFrames: plan.compositionFrames, envelopes: plan.envelopes))
        return out
    }

    /// The envelopes of `timeline` with the levelled tracks' gains, and what was measured.
    func levelling(_ timeline: Timeline) throws(MixdownError) -> ([Int32: GainEnvelope], [TrackLoudness]) {
        var envelopes = timeline.envelopes
        var measured: [TrackLoudness] = []
        for track in composition.tracks {
            guard let target = track.loudness else { continue }
            let alone = Timeline(format: timeline.format, frames: timeline.frames, compositionFrames: timeline.compositionFrames, envelopes: [:])
            let m = try LoudnessPass.measure(try makeGraph(alone, only: track.trackID), expectedFrames: Int64(timeline.frames.count),
                                             threads: settings.threads)
            guard let gain = m.gain(reaching: target) else {
                throw .silentAudio(what: "\(track.label) over the rendered frames \(timeline.frames.lowerBound)..<\(timeline.frames.upperBound)",
                                   target: "\(target) LUFS")
            }
            envelopes[track.trackID] = (timeline.envelopes[track.trackID] ?? .unity).scaled(by: pow(10, gain / 20))
            measured.append(TrackLoudness(trackID: track.trackID, trackName: track.name, target: target,
                                          measured: m.integrated, truePeak: m.truePeak, gainDb: gain))
        }
        return (envelopes, measured)
    }

    private func defaultSampleFormat(for type: AudioFileType) -> SampleFormat {
        let natural = composition.assets.compactMap { $0.info.naturalSampleFormat(for: type, codec: settings.encoder.codec) }
        for f in [SampleFormat.f32, .s24] where natural.contains(f) && type.supportedSampleFormats.contains(f) { return f }
        return .s16
    }

    /// The render graph for `plan`: a `Mixer` over one `TrackPlayer` per track that plays
    /// something inside the rendered frames. Not yet prepared; `run` prepares and pulls it
    /// (benchmarks and embedders may pull it themselves).
    public func makeGraph(_ plan: Plan) throws(MixdownError) -> AudioNode {
        try makeGraph(Timeline(format: plan.format, frames: plan.frames, compositionFrames: plan.compositionFrames,
                               envelopes: plan.envelopes))
    }

    /// `only`: the graph of that one track, with unity gain (the levelling pass).
    func makeGraph(_ plan: Timeline, only: Int32? = nil) throws(MixdownError) -> AudioNode {
        let rate = plan.format.sampleRate
        let o = plan.frames.lowerBound, e = plan.frames.upperBound
        var inputs: [Mixer.Input] = []
        // The mixer shares tracks between the cores; a single playing track gets them for its resampler.
        let playing = composition.tracks.filter { t in
            t.placedSegments.contains { $0.source != nil && $0.target.frames(atRate: rate).overlaps(plan.frames) }
        }.count
        let resamplerThreads = playing <= 1 ? settings.threads : 1
        for track in composition.tracks where only == nil || track.trackID == only {
            var items: [TrackPlayer.Item] = []
            let shelf = DecoderShelf()
            for s in track.placedSegments {
                guard let src = s.source else { continue }
                let t = s.target.frames(atRate: rate)
                let a = max(t.lowerBound, o), b = min(t.upperBound, e)
                guard a < b else { continue }
                if let item = try chain(for: src, scaled: s.isScaled, frames: t, skipping: a - t.lowerBound,
                                        count: b - a, format: plan.format, at: (a - o)..<(b - o), threads: resamplerThreads,
                                        shelf: shelf) {
                    items.append(item)
                }
            }
            guard !items.isEmpty else { continue }
            let player = TrackPlayer(format: plan.format, length: Int64(plan.frames.count), items: items, label: track.label)
            inputs.append(Mixer.Input(node: player, envelope: plan.envelopes[track.trackID] ?? .unity))
        }
        return Mixer(format: plan.format, inputs: inputs, length: Int64(plan.frames.count), startFrame: o, threads: settings.threads)
    }

    /// The item playing `source` on output frames `t` (of which the first `skip` are
    /// before the render and `count` are rendered, at `placed`).
    private func chain(for source: CompositionSegment.Source, scaled: Bool, frames t: Range<Int64>, skipping skip: Int64,
                       count: Int64, format: AudioFormat, at placed: Range<Int64>, threads: Int,
                       shelf: DecoderShelf) throws(MixdownError) -> TrackPlayer.Item? {
        let info = source.asset.info, path = source.asset.path, stream = source.asset.stream
        let rate = format.sampleRate, channels = format.channelCount
        let s = source.range.frames(atRate: info.sampleRate)
        let n = Int64(t.count), m = Int64(s.count)
        guard m > 0 else { return nil }
        let quality = self.quality
        // A route picks its one channel first and places it last; otherwise fewer channels
        // out: map first, so the resampler does less work; more: map last.
        let route = source.route
        let mapFirst = route == nil && info.channelCount > channels
        func decoder(_ range: Range<Int64>) throws(MixdownError) -> AudioNode {
            let f = try shelf.source(path: path, range: range, stream: stream)
            if let route {
                guard let c = route.channel(inFileOf: info.channelCount) else {
                    throw .invalidEdit(track: "", reason: "'\(path)' has \(info.channelCount) channels: no channel \(route.sourceChannel + 1)")
                }
                return try ChannelPicker(input: f, channel: c)
            }
            return mapFirst ? try ChannelMapper(input: f, channelCount: channels) : f
        }
        func mapped(_ node: AudioNode) throws(MixdownError) -> AudioNode {
            if let route {
                let (to, gain) = route.placement(fileChannels: info.channelCount, outputChannels: channels)
                return try ChannelPlacer(input: node, channelCount: channels, channel: to, gain: gain)
            }
            return mapFirst || node.format.channelCount == channels ? node : try ChannelMapper(input: node, channelCount: channels)
        }
        if !scaled && info.sampleRate == rate {
            // Same rate, same speed: source frames map one to one, so a late start cuts exactly.
            let start = s.lowerBound + skip
            let end = min(start + count, info.frames)
            guard start < end else { return nil }
            return TrackPlayer.Item(frames: placed) { () throws(MixdownError) in try mapped(decoder(start..<end)) }
        }
        let algorithm = timePitchAlgorithm, engine = resampler
        // The source at the output rate: m' frames.
        let toRate = StretchRatio(Int64(rate), Int64(info.sampleRate))
        let converted = info.sampleRate == rate ? m : toRate.outputFrames(forInput: m)
        func atOutputRate() throws(MixdownError) -> AudioNode {
            let d = try decoder(s)
            return info.sampleRate == rate ? d : try engine.makeNode(input: d, ratio: toRate, outputRate: rate, quality: quality,
                                                                     outputFrames: converted, threads: threads)
        }
        // One resampling pass at `ratio`. Mixdown's resampler seeks exactly: a render that
        // starts inside the segment decodes from the first input frame it needs.
        func resampled(_ ratio: StretchRatio) -> TrackPlayer.Item {
            if engine.resolved == .libsamplerate {
                return TrackPlayer.Item(frames: placed, skip: skip) { () throws(MixdownError) in
                    try mapped(engine.makeNode(input: decoder(s), ratio: ratio, outputRate: rate, quality: quality, outputFrames: n))
                }
            }
            return TrackPlayer.Item(frames: placed) { () throws(MixdownError) in
                let first = Resampler.inputStart(forOutput: skip, ratio: ratio, quality: quality)
                return try mapped(Resampler(input: decoder(min(s.lowerBound + first, s.upperBound)..<s.upperBound), ratio: ratio,
                                            outputRate: rate, quality: quality, inputFrames: m, outputFrames: n, startingAt: skip,
                                            threads: threads))
            }
        }
        let make: () throws(MixdownError) -> AudioNode
        if !scaled {
            return resampled(toRate)
        } else {
            switch algorithm.resolved(for: StretchRatio(n, m)) {
            case .varispeed, .auto:
                return resampled(StretchRatio(n, m))
            case .wsola:
                make = { () throws(MixdownError) in
                    try mapped(WSOLAStretch(input: atOutputRate(), ratio: StretchRatio(n, converted), outputFrames: n))
                }
            case .splice:
                make = { () throws(MixdownError) in
                    try mapped(SpliceStretch.guarded(input: atOutputRate(), ratio: StretchRatio(n, converted), outputFrames: n))
                }
            case .spectral:
                make = { () throws(MixdownError) in
                    try mapped(SpectralStretch.guarded(input: atOutputRate(), ratio: StretchRatio(n, converted), outputFrames: n))
                }
            case .rubberband:
                make = { () throws(MixdownError) in
                    try mapped(FileStretch.rubberBand(makeInput: atOutputRate, ratio: StretchRatio(n, converted),
                                                      outputFrames: n, quality: quality))
                }
            }
        }
        return TrackPlayer.Item(frames: placed, skip: skip, make: make)
    }

    /// What a render did.
    public struct Report: Sendable, Codable, Equatable {
        public let output: String
        public let type: AudioFileType
        public let sampleFormat: SampleFormat?
        public let sampleRate: Int
        public let channels: Int
        public let tracks: Int
        public let segments: Int
        /// Timeline frames rendered, start inclusive, end exclusive.
        public let startFrame: Int64
        public let endFrame: Int64
        public let frames: Int64
        public let duration: MediaTime
        public let durationSeconds: Double
        public let truncatedByFileLengthLimit: Bool
        public let fileBytes: Int64
        public let seconds: Double
        public let realtimeFactor: Double
        /// Temporary files of the destination that dead runs had left, removed by this one.
        public var removedStaleTemporaryFiles: [String] = []
        /// How the output was brought to `settings.loudness` (nil without one).
        public var loudness: OutputJob.LoudnessReport? = nil
        /// The tracks levelled to their own `loudness` before the mix.
        public var trackLoudness: [TrackLoudness] = []
    }

    /// Plans, then renders. Nothing is written unless every check passes; on any error or
    /// cancellation no file is left at `output` and no temporary file stays.
    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Report {
        if let job = try atOutputRate() { return try job.run(progress: progress, cancellation: cancellation) }
        let plan = try levelled(try plan())
        let graph = try makeGraph(plan)
        let count = Int64(plan.frames.count)
        let done = try plan.job.write(graph, frames: count, encoding: plan.encoding, remake: { () throws(MixdownError) in
            try makeGraph(plan)
        }, progress: progress, cancellation: cancellation)
        let seconds = done.seconds
        let duration = MediaTime(frames: count, sampleRate: plan.format.sampleRate)
        var st = stat()
        let bytes = stat(output, &st) == 0 ? Int64(st.st_size) : 0
        var report = Report(output: output, type: plan.encoding.type, sampleFormat: plan.encoding.sampleFormat,
                      sampleRate: plan.format.sampleRate, channels: plan.format.channelCount,
                      tracks: composition.tracks.count, segments: composition.tracks.reduce(0) { $0 + $1.placedSegments.count },
                      startFrame: plan.frames.lowerBound, endFrame: plan.frames.upperBound, frames: count,
                      duration: duration, durationSeconds: duration.approximateSeconds,
                      truncatedByFileLengthLimit: plan.truncatedByFileLengthLimit, fileBytes: bytes,
                      seconds: seconds, realtimeFactor: seconds > 0 ? duration.approximateSeconds / seconds : 0)
        report.removedStaleTemporaryFiles = done.removedStaleTemporaryFiles
        report.loudness = done.loudness
        report.trackLoudness = plan.trackLoudness
        return report
    }
}
