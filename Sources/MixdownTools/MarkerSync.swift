import Mixdown
/// Measures sync: where each marker of an original recording landed in a stretched copy.
///
/// For every marker frame m of the original (a 20 ms burst at each multiple of
/// `interval`), the burst is cross-correlated with the stretched file around m · R
/// (R = output frames / input frames unless given), and the correlation peak is refined
/// by a parabola. Only small windows are read, so any length runs in constant memory.
public struct MarkerSync: Sendable {
    public struct Marker: Sendable, Codable, Equatable {
        /// Where the marker starts in the original, in frames.
        public let sourceFrame: Int64
        /// Where it should start in the stretched file: sourceFrame · R.
        public let expectedFrame: Double
        /// Where it was found.
        public let foundFrame: Double
        /// found − expected, in frames of the stretched file.
        public let errorFrames: Double
        public let errorMilliseconds: Double
    }

    public struct Result: Sendable, Codable, Equatable {
        public let ratio: Double
        public let originalFrames: Int64
        public let stretchedFrames: Int64
        public let markers: [Marker]
        /// The largest |error| over all markers, in milliseconds.
        public let worstMilliseconds: Double
    }

    public var original: String
    public var stretched: String
    /// Time between markers in the original (the generator's default is 60 s).
    public var interval: MediaTime = MediaTime(seconds: 60)
    /// How far from the expected position to look.
    public var search: MediaTime = MediaTime(value: 50, timescale: 1000)
    /// Output / input length; nil takes stretched frames / original frames.
    public var ratio: StretchRatio?

    public init(original: String, stretched: String) {
        self.original = original
        self.stretched = stretched
    }

    public func run() throws(MixdownError) -> Result {
        let a = try AudioFileInfo.read(path: original), b = try AudioFileInfo.read(path: stretched)
        guard a.sampleRate == b.sampleRate else {
            throw .invalidParameter(name: "stretched", value: "'\(stretched)'", reason: "is at \(b.sampleRate) Hz, the original at \(a.sampleRate) Hz")
        }
        guard interval.isNumeric, interval > .zero, search.isNumeric, search > .zero else {
            throw .invalidParameter(name: "--interval", value: interval.clockDescription, reason: "must be longer than 0")
        }
        let rate = a.sampleRate
        let r = ratio?.doubleValue ?? Double(b.frames) / Double(a.frames)
        let step = interval.frames(atRate: rate), len = Int64(rate / 50), reach = search.frames(atRate: rate)
        var markers: [Marker] = []
        var m = step
        while m + len < a.frames {
            let expected = Double(m) * r
            let lo = Int64(expected.rounded(.down)) - reach
            let hi = lo + 2 * reach + len + 1
            guard lo >= 0, hi <= b.frames else { break }
            let template = try Self.read(original, m..<(m + len))
            let window = try Self.read(stretched, lo..<hi)
            let corr = CrossCorrelation.plain(template, window, lags: Int(2 * reach + 1))
            let found = Double(lo) + CrossCorrelation.parabolicPeak(corr, clampingEdges: true)!.index
            markers.append(Marker(sourceFrame: m, expectedFrame: expected, foundFrame: found, errorFrames: found - expected,
                                  errorMilliseconds: (found - expected) * 1000 / Double(rate)))
            m += step
        }
        return Result(ratio: r, originalFrames: a.frames, stretchedFrames: b.frames, markers: markers,
                      worstMilliseconds: markers.map { abs($0.errorMilliseconds) }.max() ?? 0)
    }

    /// Channel 0 of `range` of a file, in Double.
    static func read(_ path: String, _ range: Range<Int64>) throws(MixdownError) -> [Double] {
        let source = try FileSource(path: path, range: range)
        try source.prepare(maximumFrames: range.count)
        let buffer = AudioBuffer(format: source.format, capacity: range.count)
        let status = try source.render(into: buffer, frames: range.count)
        return (0..<status.frames).map { Double(buffer[channel: 0][$0]) }
    }
}
