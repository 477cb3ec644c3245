import Foundation
import Mixdown

/// Pulls a composition document's whole render through `RenderStream` into one block of
/// caller-owned memory and discards it: the Swift side of the C pull API's comparison
/// (`tools/bench/c-api`, whose C client does the same through `mixdown_render_pull`).
public struct PullBench: Sendable {
    public struct Report: Sendable, Codable, Equatable {
        public let frames: Int64
        public let blockFrames: Int
        public let seconds: Double
        /// Seconds of audio per second of wall time.
        public let realtimeFactor: Double
        /// The sum of every sample, in pull order, in Double: equal in the C client when
        /// the samples are.
        public let checksum: Double
    }

    public var document: String
    public var blockFrames = 4096

    public init(document: String, blockFrames: Int = 4096) {
        self.document = document
        self.blockFrames = blockFrames
    }

    public func run() throws(MixdownError) -> Report {
        guard blockFrames > 0 && blockFrames <= 1 << 20 else {
            throw .invalidParameter(name: "--block", value: "\(blockFrames)", reason: "must lie in 1...\(1 << 20) frames")
        }
        let clock = Stopwatch()
        let stream = try RenderStream(render: CompositionDocument(contentsOf: document).render(to: ""))
        let channels = stream.format.channelCount
        let planes = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: blockFrames) }
        defer { planes.forEach { $0.deallocate() } }
        var sum = 0.0
        var done: Int64 = 0
        while true {
            let status = try planes.withUnsafeBufferPointer { p throws(MixdownError) in try stream.pull(into: p.baseAddress!, frames: blockFrames) }
            for c in 0..<channels { for i in 0..<status.frames { sum += Double(planes[c][i]) } }
            done += Int64(status.frames)
            if status.ended { break }
        }
        let seconds = clock.seconds
        let audio = Double(done) / Double(stream.format.sampleRate)
        return Report(frames: done, blockFrames: blockFrames, seconds: seconds,
                      realtimeFactor: seconds > 0 ? audio / seconds : 0, checksum: sum)
    }
}
