/// One audio track of a composition (AVMutableCompositionTrack).
///
/// Segments never overlap. Two ways to edit:
/// - AVFoundation's, which ripple: `insertTimeRange`, `insertEmptyTimeRange`,
///   `removeTimeRange` and `scaleTimeRange` move everything after the edit point, splitting
///   a segment that straddles it;
/// - `addSegment` / `addEmptySegment`, which place an edit at a time without moving
///   anything (what a composition document does), and refuse an overlap.
/// Gaps between segments are silence; `segments` lists them as empty edits, as
/// AVFoundation does.
public struct CompositionTrack: Sendable, Equatable {
    public let trackID: Int32
    public var name: String
    /// The edits as placed, in timeline order, without the implied empty edits.
    public private(set) var placedSegments: [CompositionSegment] = []
    /// The integrated loudness (LUFS) the track is levelled to before the mix: measured on
    /// its own contribution over the rendered frames, before its volume events and ducking,
    /// then one gain for the whole track. Nil leaves the track as it is.
    public var loudness: Double?

    public init(trackID: Int32, name: String) {
        self.trackID = trackID
        self.name = name
    }

    /// "track 2 'voice'", for messages.
    public var label: String { "track \(trackID) '\(name)'" }

    /// The end of the last segment (empty edits included).
    public var duration: MediaTime { placedSegments.last?.target.end ?? .zero }

    /// Every segment from time 0 to `duration`, gaps listed as empty edits.
    public var segments: [CompositionSegment] {
        var out: [CompositionSegment] = []
        var cursor = MediaTime.zero
        for s in placedSegments {
            if s.target.start > cursor { out.append(.init(source: nil, target: MediaTimeRange(start: cursor, end: s.target.start))) }
            out.append(s)
            cursor = s.target.end
        }
        return out
    }

    // MARK: Placing without rippling

    /// Places `range` of `asset` at timeline time `time`, moving nothing. Throws
    /// `invalidEdit` for a bad range or time and `overlappingSegments` when it would cover
    /// part of another segment.
    /// `route`: the one channel of the file the segment plays, and where (nil: the whole
    /// file); a channel the file does not have is an `invalidEdit` naming the track and file.
    public mutating func addSegment(_ range: MediaTimeRange, of asset: AudioAsset, at time: MediaTime,
                                    route: ChannelRoute? = nil) throws(MixdownError) {
        let segment = try checkedSegment(range, of: asset, at: time, route: route)
        try place(segment)
    }

    /// Places `range` of `asset` at `time` lasting `duration` on the timeline (scaled, when
    /// that is not the range's length), moving nothing. The segment's target is exactly
    /// (`time`, `duration`): unlike `scaleTimeRange`, no arithmetic rounds it, so a document
    /// or timeline that gives a scaled segment's place reproduces it exactly.
    public mutating func addSegment(_ range: MediaTimeRange, of asset: AudioAsset, at time: MediaTime,
                                    duration: MediaTime, route: ChannelRoute? = nil) throws(MixdownError) {
        let segment = try checkedSegment(range, of: asset, at: time, route: route)
        guard duration.isNumeric, duration > .zero, duration.isWithinAcceptedRange else {
            throw .invalidEdit(track: label, reason: "placing \(Self.describe(range)) of '\(asset.path)' at \(time.clockDescription) for \(duration.clockDescription): the duration must be longer than 0 and within the accepted range")
        }
        try checkTimelineRange(MediaTimeRange(start: time, duration: duration), "segment")
        try place(CompositionSegment(source: segment.source, target: MediaTimeRange(start: time, duration: duration)))
    }

    /// Places an empty edit (silence that counts toward the track's duration), moving nothing.
    public mutating func addEmptySegment(_ range: MediaTimeRange) throws(MixdownError) {
        try checkTimelineRange(range, "empty edit")
        try place(CompositionSegment(source: nil, target: range))
    }

    /// O(log n) to find the place, O(1) to append at the end (a document's segments in
    /// timeline order), O(n) to insert in the middle.
    private mutating func place(_ segment: CompositionSegment) throws(MixdownError) {
        let i = insertionIndex(for: segment.target)
        if i < placedSegments.count, placedSegments[i].target.start < segment.target.end {
            let other = placedSegments[i]
            throw .overlappingSegments(track: label, segment: Self.describe(segment), other: Self.describe(other))
        }
        if i > 0, placedSegments[i - 1].target.end > segment.target.start {
            let other = placedSegments[i - 1]
            throw .overlappingSegments(track: label, segment: Self.describe(segment), other: Self.describe(other))
        }
        placedSegments.insert(segment, at: i)
    }

    /// The first index whose segment starts at or after `range`'s start (binary search:
    /// segments are sorted and do not overlap).
    private func insertionIndex(for range: MediaTimeRange) -> Int {
        if let last = placedSegments.last, last.target.start < range.start { return placedSegments.count }
        var lo = 0, hi = placedSegments.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if placedSegments[mid].target.start < range.start { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    // MARK: AVFoundation's rippling edits

    /// Inserts `range` of `asset` at `time`; everything at or after `time` moves later by
    /// the range's duration (a segment straddling `time` is split). Past the end of the
    /// track, the gap before `time` becomes an empty edit.
    public mutating func insertTimeRange(_ range: MediaTimeRange, of asset: AudioAsset, at time: MediaTime) throws(MixdownError) {
        let segment = try checkedSegment(range, of: asset, at: time)
        try ripple(at: time, by: range.duration)
        try place(segment)
    }

    /// Inserts silence: everything at or after `range.start` moves later by its duration.
    public mutating func insertEmptyTimeRange(_ range: MediaTimeRange) throws(MixdownError) {
        try checkTimelineRange(range, "empty time range")
        try ripple(at: range.start, by: range.duration)
        try place(CompositionSegment(source: nil, target: range))
    }

    /// Removes what plays in `range`; everything after it moves earlier by its duration.
    public mutating func removeTimeRange(_ range: MediaTimeRange) throws(MixdownError) {
        try checkTimelineRange(range, "removed time range")
        try split(at: range.start)
        try split(at: range.end)
        let removed = MediaTime.zero - range.duration
        placedSegments = placedSegments.compactMap { s in
            if s.target.start >= range.end { return s.shifted(by: removed) }
            if s.target.start >= range.start { return nil }
            return s
        }
    }

    /// Changes the duration of what plays in `range` to `duration` (AVFoundation's
    /// scaleTimeRange): segments inside are scaled, those after move by the difference.
    public mutating func scaleTimeRange(_ range: MediaTimeRange, toDuration duration: MediaTime) throws(MixdownError) {
        try checkTimelineRange(range, "scaled time range")
        guard duration.isNumeric, duration > .zero else {
            throw .invalidEdit(track: label, reason: "scaling \(Self.describe(range)) to \(duration.clockDescription): the new duration must be longer than 0")
        }
        guard duration.isWithinAcceptedRange else {
            throw .invalidEdit(track: label, reason: "scaling \(Self.describe(range)) to \(duration.clockDescription): \(MediaTime.beyondLimit)")
        }
        try split(at: range.start)
        try split(at: range.end)
        let delta = duration - range.duration
        var out: [CompositionSegment] = []
        for s in placedSegments {
            if s.target.start >= range.end { out.append(s.shifted(by: delta)); continue }
            if s.target.start < range.start { out.append(s); continue }
            guard let a = (s.target.start - range.start).scaled(by: duration, over: range.duration),
                  let b = (s.target.end - range.start).scaled(by: duration, over: range.duration) else {
                throw .invalidEdit(track: label, reason: "scaling \(Self.describe(range)) to \(duration.clockDescription) overflows the time arithmetic")
            }
            out.append(CompositionSegment(source: s.source, target: MediaTimeRange(start: range.start + a, end: range.start + b)))
        }
        placedSegments = out
    }

    /// Moves everything at or after `time` later by `offset`, splitting a straddling segment.
    private mutating func ripple(at time: MediaTime, by offset: MediaTime) throws(MixdownError) {
        try split(at: time)
        placedSegments = placedSegments.map { $0.target.start >= time ? $0.shifted(by: offset) : $0 }
    }

    private mutating func split(at t: MediaTime) throws(MixdownError) {
        guard let i = placedSegments.firstIndex(where: { $0.target.start < t && t < $0.target.end }) else { return }
        guard let (a, b) = placedSegments[i].split(at: t) else {
            throw .invalidEdit(track: label, reason: "cannot cut \(Self.describe(placedSegments[i])) at \(t.clockDescription): the time arithmetic overflows")
        }
        placedSegments.replaceSubrange(i...i, with: [a, b])
    }

    // MARK: Checks

    private func checkedSegment(_ range: MediaTimeRange, of asset: AudioAsset, at time: MediaTime,
                                route: ChannelRoute? = nil) throws(MixdownError) -> CompositionSegment {
        // Built only for a message: documents check 100,000s of segments here.
        var what: String { "inserting \(Self.describe(range)) of '\(asset.path)' at \(time.clockDescription)" }
        guard range.start.isNumeric, range.duration.isNumeric, time.isNumeric else {
            throw .invalidEdit(track: label, reason: "\(what): times must be numeric")
        }
        guard range.start.isWithinAcceptedRange, range.duration.isWithinAcceptedRange, time.isWithinAcceptedRange else {
            throw .invalidEdit(track: label, reason: "\(what): \(MediaTime.beyondLimit)")
        }
        guard range.duration > .zero else {
            throw .invalidEdit(track: label, reason: "\(what): the source range's duration \(range.duration.clockDescription) must be longer than 0")
        }
        guard range.start >= .zero, range.end <= asset.duration else {
            throw .invalidEdit(track: label, reason: "\(what): the source range lies outside the file, which is \(asset.duration.clockDescription) long (\(asset.info.frames) frames)")
        }
        guard time >= .zero else {
            throw .invalidEdit(track: label, reason: "\(what): the timeline time must not be negative")
        }
        if let route {
            let ch = asset.info.channelCount
            guard route.sourceChannel >= 0, route.outputChannel.map({ $0 >= 0 }) ?? true else {
                throw .invalidEdit(track: label, reason: "\(what): channels count from 1")
            }
            guard route.channel(inFileOf: ch) != nil else {
                throw .invalidEdit(track: label, reason: "\(what): the track plays channel \(route.sourceChannel + 1) of '\(asset.path)', which has \(ch) channels")
            }
        }
        return CompositionSegment(source: .init(asset: asset, range: range, route: route), target: MediaTimeRange(start: time, duration: range.duration))
    }

    private func checkTimelineRange(_ range: MediaTimeRange, _ what: String) throws(MixdownError) {
        guard range.start.isNumeric, range.duration.isNumeric, range.start >= .zero, range.duration > .zero else {
            throw .invalidEdit(track: label, reason: "\(what) \(Self.describe(range)) must start at or after 0 and last longer than 0")
        }
        guard range.start.isWithinAcceptedRange, range.duration.isWithinAcceptedRange else {
            throw .invalidEdit(track: label, reason: "\(what) \(Self.describe(range)): \(MediaTime.beyondLimit)")
        }
    }

    static func describe(_ r: MediaTimeRange) -> String { "\(r.start.clockDescription) to \(r.end.clockDescription)" }

    static func describe(_ s: CompositionSegment) -> String {
        guard let src = s.source else { return "the empty edit at \(describe(s.target))" }
        return "'\(src.asset.path)' \(describe(src.range)) at \(describe(s.target))"
    }
}
