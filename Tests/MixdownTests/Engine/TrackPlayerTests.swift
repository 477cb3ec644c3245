import Foundation
import Testing
@testable import Mixdown

/// `TrackPlayer` directly: items play on exactly their frames, silence between them, a
/// chain is made only when the playhead reaches its item and released after it (one open
/// chain at a time), at every block size.
@Suite(.serialized) struct TrackPlayerTests {
    /// A ramp node whose sample k is `base + k`, that records when it lives.
    final class Counted: AudioNode {
        let format = AudioFormat(sampleRate: 48_000, channelCount: 1)
        let length: Int64?
        let base: Float
        private var position: Int64 = 0
        nonisolated(unsafe) static var alive = 0
        nonisolated(unsafe) static var mostAlive = 0
        init(base: Float, length: Int64) {
            self.base = base
            self.length = length
            Self.alive += 1
            Self.mostAlive = max(Self.mostAlive, Self.alive)
        }
        deinit { Self.alive -= 1 }
        func prepare(maximumFrames: Int) throws(MixdownError) {}
        func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
            let n = Int(min(Int64(frames), length! - position))
            for i in 0..<n { buffer[channel: 0][i] = base + Float(position + Int64(i)) }
            position += Int64(n)
            return RenderStatus(frames: n, ended: position == length!)
        }
    }

    @Test(arguments: BlockSizes.all)
    func itemsPlayOnTheirFramesAndOpenOneAtATime(blockSizes: [Int]) throws {
        // (frames, source base, frames the chain gives: one ends early and is padded)
        let plan: [(Range<Int64>, Float, Int64)] = [(10..<110, 1_000, 100), (110..<300, 2_000, 190), (500..<520, 3_000, 5), (900..<1_000, 4_000, 100)]
        var made: [Int] = []
        let items = plan.enumerated().map { i, p in
            TrackPlayer.Item(frames: p.0) { () throws(MixdownError) in
                made.append(i)
                // Opened only when the playhead reaches the item: everything before it is done.
                #expect(Counted.alive == 0, "item \(i) opened while another chain was open")
                return Counted(base: p.1, length: p.2)
            }
        }
        Counted.mostAlive = 0
        let player = TrackPlayer(format: AudioFormat(sampleRate: 48_000, channelCount: 1), length: 1_100, items: items, label: "t")
        let out = try renderAll(player, blockSizes: blockSizes)[0]
        #expect(out.count == 1_100)
        #expect(made == [0, 1, 2, 3])
        #expect(Counted.mostAlive == 1)
        var expected = [Float](repeating: 0, count: 1_100)
        for (frames, base, given) in plan {
            for k in 0..<given { expected[Int(frames.lowerBound + k)] = base + Float(k) }
        }
        #expect(out == expected)
        #expect(Counted.alive == 0, "the last chain is released after its item")
    }

    /// A render that starts inside an item drops `skip` frames of its chain when it opens.
    @Test func aSkippedHeadIsDroppedWhenTheChainOpens() throws {
        let item = TrackPlayer.Item(frames: 0..<50, skip: 30) { () throws(MixdownError) in Counted(base: 0, length: 80) }
        let player = TrackPlayer(format: AudioFormat(sampleRate: 48_000, channelCount: 1), length: 60, items: [item], label: "t")
        let out = try renderAll(player, blockSizes: [7])[0]
        #expect(out == (30..<80).map(Float.init) + [Float](repeating: 0, count: 10))
    }
}
