/// One edit of a composition track (AVCompositionTrackSegment): a part of a file placed
/// on the timeline, or an empty edit (silence). Its time mapping (CMTimeMapping) takes
/// `source.range` to `target`; when their durations differ the segment is scaled, and
/// the export's time-pitch algorithm stretches it.
public struct CompositionSegment: Sendable, Equatable {
    public struct Source: Sendable, Equatable {
        public let asset: AudioAsset
        /// The part of the file, in the file's own time.
        public let range: MediaTimeRange
        /// The one channel of the file it plays, and where; nil: the whole file.
        public let route: ChannelRoute?

        public init(asset: AudioAsset, range: MediaTimeRange, route: ChannelRoute? = nil) {
            self.asset = asset
            self.range = range
            self.route = route
        }
    }

    /// Nil for an empty edit.
    public let source: Source?
    /// Where the segment plays on the composition's timeline.
    public let target: MediaTimeRange

    public init(source: Source?, target: MediaTimeRange) {
        self.source = source
        self.target = target
    }

    public var isEmpty: Bool { source == nil }

    /// True when the segment plays its source faster or slower than recorded.
    public var isScaled: Bool { source.map { $0.range.duration != target.duration } ?? false }

    /// Target duration / source duration, or nil for an empty edit.
    public var scale: (numerator: MediaTime, denominator: MediaTime)? {
        source.map { (target.duration, $0.range.duration) }
    }

    /// The segment moved by `offset` on the timeline.
    func shifted(by offset: MediaTime) -> CompositionSegment {
        CompositionSegment(source: source, target: MediaTimeRange(start: target.start + offset, duration: target.duration))
    }

    /// The two parts either side of timeline time `t` (strictly inside the target range);
    /// the source is cut at the matching point, scaled like the segment.
    func split(at t: MediaTime) -> (CompositionSegment, CompositionSegment)? {
        let head = MediaTimeRange(start: target.start, end: t)
        let tail = MediaTimeRange(start: t, end: target.end)
        guard let source else { return (.init(source: nil, target: head), .init(source: nil, target: tail)) }
        guard let offset = (t - target.start).scaled(by: source.range.duration, over: target.duration) else { return nil }
        let cut = source.range.start + offset
        return (.init(source: .init(asset: source.asset, range: MediaTimeRange(start: source.range.start, end: cut), route: source.route), target: head),
                .init(source: .init(asset: source.asset, range: MediaTimeRange(start: cut, end: source.range.end), route: source.route), target: tail))
    }
}
