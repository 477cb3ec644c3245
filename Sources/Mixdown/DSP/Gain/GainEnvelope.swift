/// A gain per frame, as consecutive segments that cover frame 0 to the end of time.
/// In segment s, frame f gets `s.startGain + Double(f - s.start) * s.step`, evaluated in
/// Double and rounded once to Float by the kernel: the gain of a frame depends only on
/// its index, never on how a render cut the frames into blocks.
public struct GainEnvelope: Sendable, Equatable {
    public struct Segment: Sendable, Equatable {
        /// First frame, inclusive.
        public let start: Int64
        /// End frame, exclusive (`Int64.max` for the last segment).
        public let end: Int64
        public let startGain: Double
        /// Gain change per frame; 0 for a held value.
        public let step: Double
    }

    public let segments: [Segment]

    /// Unity gain everywhere.
    public static let unity = GainEnvelope(segments: [.init(start: 0, end: .max, startGain: 1, step: 0)])
    /// −1 everywhere: the polarity turned over, every sample negated exactly.
    public static let inverted = GainEnvelope(segments: [.init(start: 0, end: .max, startGain: -1, step: 0)])

    /// Every gain multiplied by `factor` (a constant gain applied on top of the envelope).
    public func scaled(by factor: Double) -> GainEnvelope {
        GainEnvelope(segments: segments.map { .init(start: $0.start, end: $0.end, startGain: $0.startGain * factor, step: $0.step * factor) })
    }

    /// Index of the segment holding frame `f` (f >= 0).
    public func segmentIndex(containing f: Int64) -> Int {
        var lo = 0, hi = segments.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if segments[mid].start <= f { lo = mid } else { hi = mid - 1 }
        }
        return lo
    }

    /// Walks `frames` piece by piece, each piece inside one segment: `body(offset, count,
    /// segment, position)` gets the piece's offset from `frames.lowerBound`, its length, its
    /// segment and its first frame's position inside that segment (the kernels' `offset`).
    /// `segment` is the caller's cursor: the index of the segment holding
    /// `frames.lowerBound`, advanced past every segment that ends inside `frames`.
    @inline(__always)
    func forEachPiece(of frames: Range<Int64>, segment: inout Int, _ body: (Int, Int, Segment, Int64) -> Void) {
        var f = frames.lowerBound
        while f < frames.upperBound {
            let s = segments[segment]
            let pieceEnd = min(frames.upperBound, s.end)
            body(Int(f - frames.lowerBound), Int(pieceEnd - f), s, f - s.start)
            f = pieceEnd
            if f == s.end { segment += 1 }
        }
    }

    /// The gain of frame `f`, as the kernel computes it before its final rounding to Float.
    public func gain(atFrame f: Int64) -> Double {
        let s = segments[segmentIndex(containing: f)]
        return s.startGain + Double(f - s.start) * s.step
    }
}
