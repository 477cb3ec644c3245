import Foundation

/// A device that recorded several clips on one clock (a camera that stopped and started):
/// its clips share one drift and each has its own offset.
public struct SyncDevice: Sendable, Codable, Equatable {
    public let name: String
    public let clips: [String]

    public init(name: String, clips: [String]) {
        self.name = name
        self.clips = clips
    }

    /// `NAME=CLIP,CLIP,...` (`sync --device`); `resolve` maps each clip's path (a batch
    /// manifest's lines are relative to the manifest).
    public init(parsing text: String, resolve: (String) -> String = { $0 }) throws(MixdownError) {
        guard let eq = text.firstIndex(of: "="), eq != text.startIndex else {
            throw .invalidEvent(parameter: "--device \(text)", reason: "must be NAME=CLIP,CLIP,...")
        }
        self.init(name: String(text[..<eq]), clips: text[text.index(after: eq)...].split(separator: ",").map { resolve(String($0)) })
    }
}

/// Where one recording of an event lies on the reference's clock, and how it was found.
public struct Placement: Sendable, Encodable {
    public let recording: String
    /// The estimate on REF's clock (for a recording placed through another, composed along
    /// the path; for a device's clip, with the device's shared drift); nil when not placed.
    public let estimate: DriftEstimate?
    /// The device the recording belongs to (`SyncDevice.name`), if any.
    public let device: String?
    /// The recordings it was placed through, from REF's side: empty when placed directly.
    public let placedVia: [String]
    /// Why it could not be placed.
    public let error: String?

    public var isPlaced: Bool { estimate != nil }

    enum Keys: String, CodingKey { case recording, device, placedVia = "placed_via", error }

    /// Today's `sync --json` fields, then device, placed_via (null when not placed) and error.
    public func encode(to encoder: Encoder) throws {
        if let estimate { try estimate.encode(to: encoder) }
        var c = encoder.container(keyedBy: Keys.self)
        if estimate == nil { try c.encode(recording, forKey: .recording) }
        try c.encode(device, forKey: .device)
        // null for a recording that was not placed: it was placed through nothing.
        try c.encode(estimate == nil ? nil : placedVia.isEmpty ? "reference" : placedVia.joined(separator: " > "), forKey: .placedVia)
        try c.encode(error, forKey: .error)
    }
}

/// A recording placed on REF's clock: REF time = offset + ratio · its time.
struct PlacedNode {
    var offset: Double
    var ratio: Double
    /// Indices of the recordings it was placed through.
    var via: [Int]
    var estimate: DriftEstimate?
    /// −1 when its polarity is inverted against REF's (the product along the path).
    var polarity = 1
}

/// Places every recording of an event on the reference's clock (`mixdown sync REF REC
/// REC ...`). Every file is read once for its first pass (several at once, one per core);
/// every recording is estimated against REF (pairs on all cores); a recording that REF
/// cannot place is estimated against the recordings that were placed, round after round,
/// and placed through the one that matched it best (its estimate composed with that one's:
/// REF time = o_j + r_j · (o_ji + r_ji · t)). The clips of one device then share one drift,
/// fitted across all of their windows (common slope, one intercept per clip); the
/// reference's own device keeps REF's clock exactly (ratio 1).
public struct EventSync: Sendable {
    public var reference: String
    /// Every other recording, devices' clips included, in the order reported.
    public var recordings: [String]
    public var devices: [SyncDevice] = []
    /// The search, the drift range, the window spacing and the confidence that places a
    /// recording. `tuning.maxOffset` nil (the default): 60 s first, then, for the
    /// recordings that were not placed, any offset at which two recordings overlap at all
    /// (a clip that starts an hour into the event). The wide search reads REF once more at
    /// 2 kHz: about 1.5 s a pair-hour on this machine.
    public var tuning = SyncTuning()
    /// Pairs estimated at once (default: one per core).
    public var parallel = ProcessInfo.processInfo.activeProcessorCount

    public init(reference: String, recordings: [String]) {
        self.reference = reference
        self.recordings = recordings
    }

    public struct Result: Sendable, Encodable {
        public let reference: String
        public let placements: [Placement]
        public let seconds: Double

        /// The placements that failed.
        public var unplaced: [Placement] { placements.filter { !$0.isPlaced } }

        /// Throws `unplaced` naming every recording that was not placed, and why.
        public func requireAllPlaced() throws(MixdownError) {
            let failed = unplaced
            guard failed.isEmpty else { throw .unplaced(recordings: failed.map(\.recording), reasons: failed.map { $0.error ?? "not placed" }) }
        }
    }

    /// Checks the lists before any file is read: devices with one name, clips that exist
    /// and belong to one device, no recording twice.
    public func validate() throws(MixdownError) {
        guard !recordings.isEmpty else {
            throw .invalidEvent(parameter: "recording", reason: "sync needs at least one recording besides the reference")
        }
        var seen = Set<String>([reference])
        for r in recordings {
            guard seen.insert(r).inserted else {
                throw .invalidEvent(parameter: "recording '\(r)'", reason: "is given twice (or is the reference)")
            }
        }
        var names = Set<String>(), owner: [String: String] = [:]
        for d in devices {
            guard !d.name.isEmpty else { throw .invalidEvent(parameter: "--device =\(d.clips.joined(separator: ","))", reason: "a device needs a name") }
            guard names.insert(d.name).inserted else {
                throw .invalidEvent(parameter: "--device \(d.name)", reason: "two devices are named '\(d.name)'; names must be unique")
            }
            guard !d.clips.isEmpty else { throw .invalidEvent(parameter: "--device \(d.name)", reason: "lists no clips") }
            for c in d.clips {
                guard FileManager.default.fileExists(atPath: c) else {
                    throw .invalidEvent(parameter: "--device \(d.name)", reason: "names '\(c)', which does not exist")
                }
                if let other = owner[c] {
                    throw .invalidEvent(parameter: "--device \(d.name)", reason: "'\(c)' is already a clip of device '\(other)'")
                }
                owner[c] = d.name
            }
        }
        for r in [reference] + recordings where !FileManager.default.fileExists(atPath: r) { throw .fileNotFound(path: r) }
        try tuning.validate()
    }

    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Result {
        let stopwatch = Stopwatch()
        try validate()
        let refInfo = try AudioFileInfo.read(path: reference)
        let grid = AnalysisGrid(sampleRate: refInfo.sampleRate, spacing: tuning.windowSpacing)
        let paths = [reference] + recordings
        // Progress: first passes 60 %, pairs 40 % (a second round, if any, reuses the last part).
        var files = try RecordingAnalysis.run(paths: paths, grid: grid, parallel: parallel, cancellation: cancellation) { progress?(0.6 * $0) }
        // Short clips (a phone's few seconds): read again in windows of their own, searched
        // for over the whole of what they are matched against.
        var grids = [AnalysisGrid](repeating: grid, count: paths.count)
        for i in 1..<paths.count {
            if let clip = try DriftEstimator.clipGrid(sampleRate: refInfo.sampleRate, recording: paths[i], seconds: files[i].duration,
                                                      spacing: tuning.windowSpacing) {
                grids[i] = clip
                files[i] = try RecordingAnalysis(path: paths[i], grid: clip, cancellation: cancellation) { _ in }
            }
        }
        var estimator = DriftEstimator(reference: reference, recording: reference)
        estimator.tuning = tuning

        // Node 0 is REF. placed[i]: REF time = offset + ratio · (i's time), and the path.
        var placed: [Int: PlacedNode] = [0: PlacedNode(offset: 0, ratio: 1, via: [], estimate: nil)]
        var lastError: [Int: String] = [:]
        var tried = Set<[Int]>()
        var round = 0
        // Narrow searches first; then, with no --max-offset, wide ones for what is left.
        var wide = false
        while true {
            let pending = (1..<paths.count).filter { placed[$0] == nil }
            // This round: every pending recording against every placed one not yet tried.
            let pairs = pending.flatMap { i in placed.keys.sorted().filter { !tried.contains([$0, i, wide ? 1 : 0]) }.map { [$0, i] } }
            guard !pairs.isEmpty else {
                if !wide && tuning.maxOffset == nil && !pending.isEmpty { wide = true; continue }
                break
            }
            pairs.forEach { tried.insert($0 + [wide ? 1 : 0]) }
            let shares = ProgressShares(count: pairs.count) { p in progress?(round == 0 ? 0.6 + 0.4 * p : 0.9 + 0.1 * p) }
            let base = estimator, limit = tuning.maxOffset, anyOverlap = wide, grids = grids, files = files
            let results = ParallelMap.run(count: pairs.count, parallel: parallel) { k throws(MixdownError) -> DriftEstimate in
                let (a, b) = (pairs[k][0], pairs[k][1])
                var job = base
                // Any overlap: REC may start anywhere from REF's end back to its own length before REF.
                job.tuning.maxOffset = limit ?? (anyOverlap ? MediaTime(seconds: Int64((files[a].duration + files[b].duration).rounded(.up)) + 1)
                                                     : SyncTuning.pairMaxOffset)
                if grids[b].firstCentre != nil && limit == nil {
                    job.tuning.maxOffset = MediaTime(seconds: Int64((files[a].duration + files[b].duration).rounded(.up)) + 1)
                }
                let full = try job.estimate(files[a], files[b], grid: grids[b], cancellation: cancellation,
                                            progress: { shares.set(k, $0) }, started: Stopwatch())
                guard DriftEstimator.inDoubt(full) else { return full }
                // In doubt: both files of the pair analysed again above the high band's corner,
                // as a pair estimate is (`DriftEstimator.run`).
                var highA = grid, highB = grids[b]
                highA.highPassHz = DriftEstimator.highBandHz
                highB.highPassHz = DriftEstimator.highBandHz
                let ra = try RecordingAnalysis(path: paths[a], grid: highA, keepingWindows: false, cancellation: cancellation) { _ in }
                let rb = try RecordingAnalysis(path: paths[b], grid: highB, cancellation: cancellation) { _ in }
                let high = try job.estimate(ra, rb, grid: highB, cancellation: cancellation, progress: nil, started: Stopwatch())
                return DriftEstimator.better(full: full, high: high)
            }
            if cancellation?.isCancelled == true { throw .cancelled }
            // Each pending recording goes through its most confident accepted estimate.
            var best: [Int: (from: Int, estimate: DriftEstimate)] = [:]
            for (k, r) in results.enumerated() {
                let (a, b) = (pairs[k][0], pairs[k][1])
                switch r {
                case .failure(let e):
                    if case .cancelled = e { throw e }
                    lastError[b] = e.description
                case .success(let e):
                    do throws(MixdownError) {
                        try e.requireConfidence(tuning.minimumConfidence)
                        if best[b].map({ e.confidence > $0.estimate.confidence }) ?? true { best[b] = (a, e) }
                    } catch {
                        if lastError[b] == nil || a == 0 { lastError[b] = error.description }
                    }
                }
            }
            for (b, via) in best {
                let j = placed[via.from]!
                let o = j.offset + j.ratio * via.estimate.offsetSeconds, r = j.ratio * via.estimate.ratio
                placed[b] = PlacedNode(offset: o, ratio: r, via: via.from == 0 ? [] : j.via + [via.from],
                                 estimate: Self.composed(via.estimate, offset: o, ratio: r, through: j, reference: reference,
                                                         referenceRate: refInfo.sampleRate),
                                 polarity: j.polarity * via.estimate.polarity)
            }
            round += 1
        }

        // Devices: one drift across all clips.
        var estimates: [Int: DriftEstimate] = placed.compactMapValues { $0.estimate }
        for d in devices {
            let members = d.clips.compactMap { c in paths.firstIndex(of: c) }
            let sharesReference = d.clips.contains(reference)
            if let fitted = Self.shareDrift(members.compactMap { i in estimates[i].map { (i, $0) } }, fixedRatio: sharesReference) {
                for (i, e) in fitted { estimates[i] = e }
            }
        }
        let deviceOf = Dictionary(devices.flatMap { d in d.clips.map { ($0, d.name) } }, uniquingKeysWith: { a, _ in a })
        let placements = (1..<paths.count).map { i in
            Placement(recording: paths[i], estimate: estimates[i], device: deviceOf[paths[i]],
                      placedVia: placed[i]?.via.map { paths[$0] } ?? [],
                      error: estimates[i] == nil ? (lastError[i] ?? "not placed") : nil)
        }
        progress?(1)
        return Result(reference: reference, placements: placements, seconds: stopwatch.seconds)
    }

    /// An estimate against another recording j, restated on REF's clock: the offset and
    /// ratio composed along the path, every window's lag mapped through j's placement
    /// (REF lag at time t = o_j + r_j · (t + lag) − t), the residuals and quality kept.
    static func composed(_ e: DriftEstimate, offset: Double, ratio: Double, through j: PlacedNode,
                         reference: String, referenceRate: Int = 0) -> DriftEstimate {
        var c = e
        c.reference = reference
        (c.offsetSeconds, c.ratio, c.ppm) = (offset, ratio, (ratio - 1) * 1e6)
        c.segments = nil
        c.windows = e.windows.map { w in
            DriftEstimate.Window(recordingTime: w.recordingTime,
                                 lag: w.lag.map { j.offset + j.ratio * (w.recordingTime + $0) - w.recordingTime },
                                 correlation: w.correlation, residual: w.residual, status: w.status)
        }
        c.rivalOffsetSeconds = nil
        c.polarity = j.polarity * e.polarity
        // A wandering REC placed through a steady j: its map restated on REF's clock, knot
        // by knot (REF = o_j + r_j · j's time), each REF time rounded to the nearest REF frame.
        // Through a j that wanders itself, only the line is composed (see docs/sync.md).
        // The same for each stretch of a REC that paused, and its jumps.
        c.map = nil
        c.lineDepartureMilliseconds = nil
        c.jumps = nil
        let steady = j.estimate?.map == nil && j.estimate?.jumps == nil && referenceRate > 0
        func restated(_ m: ClockMap) -> ClockMap? {
            let knots = m.knots.map { k in
                ClockMap.Knot(recordingFrame: k.recordingFrame, referenceSeconds: j.offset + j.ratio * k.referenceTime.approximateSeconds,
                              referenceRate: referenceRate)
            }
            return try? ClockMap(recordingRate: m.recordingRate, referenceRate: referenceRate, knots: knots)
        }
        if let m = e.map, steady {
            c.map = restated(m)
            c.lineDepartureMilliseconds = c.map == nil ? nil : e.lineDepartureMilliseconds.map { $0 * j.ratio }
        }
        if let jumps = e.jumps, let segments = e.segments, steady {
            let moved = segments.map { s -> DriftEstimate.Segment in
                var m = DriftEstimate.Segment(start: s.start, end: s.end, offsetSeconds: j.offset + j.ratio * s.offsetSeconds,
                                              ratio: j.ratio * s.ratio, ppm: (j.ratio * s.ratio - 1) * 1e6)
                m.map = s.map.flatMap(restated)
                return m
            }
            if moved.allSatisfy({ $0.map != nil }) {
                c.segments = moved
                // REC's times and the width of where a jump may lie are REC's own: they stay.
                c.jumps = jumps.map { .init(recordingTime: $0.recordingTime, seconds: $0.seconds * j.ratio, uncertaintySeconds: $0.uncertaintySeconds) }
            }
        }
        return c
    }

    /// One drift and one polarity for the clips of a device: least squares with a common
    /// slope and one intercept per clip through every used window (slope 0 for REF's own
    /// device), and the polarity most used windows found. nil when no clip has two used
    /// windows.
    static func shareDrift(_ clips: [(Int, DriftEstimate)], fixedRatio: Bool) -> [(Int, DriftEstimate)]? {
        let points = clips.map { (_, e) in
            e.windows.filter { $0.status == "used" && $0.lag != nil }.map { ($0.recordingTime, $0.lag!) }
        }
        var stl = 0.0, stt = 0.0
        for p in points where p.count >= 2 {
            let mt = p.reduce(0) { $0 + $1.0 } / Double(p.count), ml = p.reduce(0) { $0 + $1.1 } / Double(p.count)
            for (t, l) in p { stt += (t - mt) * (t - mt); stl += (t - mt) * (l - ml) }
        }
        guard fixedRatio || stt > 0 else { return nil }
        let slope = fixedRatio ? 0 : stl / stt
        // One device, one wiring: the polarity most of its used windows found (REF's own
        // device: REF's, 1).
        let votes = clips.reduce(0) { $0 + $1.1.polarity * $1.1.windowsUsed }
        let polarity = fixedRatio || votes >= 0 ? 1 : -1
        return zip(clips, points).map { clip, p in
            let (i, e) = clip
            guard !p.isEmpty else { return (i, e) }
            let intercept = p.reduce(0) { $0 + $1.1 - slope * $1.0 } / Double(p.count)
            let residuals = p.map { $0.1 - (intercept + slope * $0.0) }
            var shared = e
            (shared.offsetSeconds, shared.ratio, shared.ppm) = (intercept, 1 + slope, slope * 1e6)
            shared.windows = e.windows.map { w in
                DriftEstimate.Window(recordingTime: w.recordingTime, lag: w.lag, correlation: w.correlation,
                                     residual: w.status == "used" ? w.lag.map { $0 - (intercept + slope * w.recordingTime) } : w.residual,
                                     status: w.status)
            }
            shared.residualRMSMilliseconds = (residuals.reduce(0) { $0 + $1 * $1 } / Double(residuals.count)).squareRoot() * 1000
            shared.residualMaxMilliseconds = (residuals.map(abs).max() ?? 0) * 1000
            shared.segments = nil
            shared.rivalOffsetSeconds = nil
            shared.polarity = polarity
            return (i, shared)
        }
    }
}
