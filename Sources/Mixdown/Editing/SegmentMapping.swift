/// One row of a track's segment table (the CMTimeMapping view): which frames of which
/// file play on which frames of the output. Target frames are at the output rate, source
/// frames at the file's own rate, both by the documented rule (round half away from
/// zero, start and end rounded alike, so adjacent segments share their boundary frame).
public struct SegmentMapping: Sendable, Equatable, Codable {
    public let trackID: Int32
    public let trackName: String
    /// Position in the track's `segments` list (empty edits for gaps included).
    public let index: Int
    /// Nil for an empty edit.
    public let file: String?
    public let sourceStart: MediaTime?
    public let sourceEnd: MediaTime?
    public let sourceSampleRate: Int?
    public let sourceStartFrame: Int64?
    public let sourceEndFrame: Int64?
    public let targetStart: MediaTime
    public let targetEnd: MediaTime
    public let outputSampleRate: Int
    public let targetStartFrame: Int64
    public let targetEndFrame: Int64
    /// Target duration / source duration, when it is not 1.
    public let scale: Double?
    /// The one channel of the file played, and where (nil: the whole file).
    public let route: ChannelRoute?
}

extension CompositionTrack {
    /// The segment table at `outputRate`.
    public func mappings(outputRate: Int) -> [SegmentMapping] {
        segments.enumerated().map { i, s in
            let target = s.target.frames(atRate: outputRate)
            let src = s.source
            let rate = src?.asset.info.sampleRate
            let sourceFrames = src.map { $0.range.frames(atRate: $0.asset.info.sampleRate) }
            return SegmentMapping(
                trackID: trackID, trackName: name, index: i, file: src?.asset.path,
                sourceStart: src?.range.start, sourceEnd: src?.range.end, sourceSampleRate: rate,
                sourceStartFrame: sourceFrames?.lowerBound, sourceEndFrame: sourceFrames?.upperBound,
                targetStart: s.target.start, targetEnd: s.target.end, outputSampleRate: outputRate,
                targetStartFrame: target.lowerBound, targetEndFrame: target.upperBound,
                scale: s.isScaled ? s.target.duration.approximateSeconds / src!.range.duration.approximateSeconds : nil,
                route: src?.route)
        }
    }
}
