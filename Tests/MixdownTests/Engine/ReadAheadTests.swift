import Foundation
import Testing
@testable import Mixdown

/// `ReadAhead` directly: the frames are its input's whatever the block sizes, and an input
/// error reaches the render that meets it, after every frame before it.
@Suite struct ReadAheadTests {
    /// Gives a ramp, then throws on the call after `failAfter` frames.
    final class Failing: AudioNode {
        let format = AudioFormat(sampleRate: 48_000, channelCount: 2)
        let length: Int64? = 1_000_000
        let failAfter: Int64
        private var position: Int64 = 0
        init(failAfter: Int64) { self.failAfter = failAfter }
        func prepare(maximumFrames: Int) throws(MixdownError) {}
        func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
            guard position < failAfter else { throw .readFailed(path: "failing", reason: "at \(position)") }
            for i in 0..<frames {
                buffer[channel: 0][i] = Float(position + Int64(i))
                buffer[channel: 1][i] = -Float(position + Int64(i))
            }
            position += Int64(frames)
            return RenderStatus(frames: frames, ended: false)
        }
    }

    @Test(arguments: BlockSizes.all, [1, 64, 4096])
    func theFramesAreTheInputsWhateverTheBlocks(blockSizes: [Int], prepared: Int) throws {
        let n = 20_011
        let planes = [(0..<n).map { Float($0) }, (0..<n).map { -Float($0) / 3 }]
        // The read-ahead's own blocks (`prepared`) differ from the caller's.
        final class Outer: AudioNode {
            let inner: ReadAhead
            var format: AudioFormat { inner.format }
            var length: Int64? { inner.length }
            let prepared: Int
            init(_ inner: ReadAhead, prepared: Int) { self.inner = inner; self.prepared = prepared }
            func prepare(maximumFrames: Int) throws(MixdownError) { try inner.prepare(maximumFrames: prepared) }
            func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus { try inner.render(into: buffer, frames: frames) }
        }
        let out = try renderAll(Outer(ReadAhead(input: ArraySource(planes: planes)), prepared: prepared), blockSizes: blockSizes)
        #expect(out == planes)
    }

    /// A render opened and closed at once (the C API's open then free, with no pull): the
    /// read-ahead starts its thread at the preroll and is released before the thread has
    /// run. The thread must not reach for the released node (it trapped on an unowned
    /// reference), and the release waits for it to stop.
    @Test func aReadAheadReleasedBeforeItsThreadRunsStopsIt() throws {
        let planes = [(0..<50_000).map { Float($0) }]
        for _ in 0..<200 {
            let node = ReadAhead(input: ArraySource(planes: planes))
            try node.prepare(maximumFrames: 4096)
            try node.preroll(Preroll(renderFrames: 50_000))
        }
        // And one that is read after its preroll still gives its input's frames.
        let node = ReadAhead(input: ArraySource(planes: planes))
        try node.prepare(maximumFrames: 4096)
        try node.preroll(Preroll(renderFrames: 50_000))
        let buffer = AudioBuffer(format: node.format, capacity: 1000)
        let status = try node.render(into: buffer, frames: 1000)
        #expect(status.frames == 1000 && buffer.samples(channel: 0, frames: 1000) == Array(planes[0][0..<1000]))
    }

    @Test func anInputErrorReachesTheRenderThatMeetsIt() throws {
        let node = ReadAhead(input: Failing(failAfter: 5_000))
        try node.prepare(maximumFrames: 1024)
        let buffer = AudioBuffer(format: node.format, capacity: 1000)
        var got: [Float] = []
        var thrown: MixdownError?
        while thrown == nil {
            do {
                let s = try node.render(into: buffer, frames: 1000)
                got += buffer.samples(channel: 0, frames: s.frames)
            } catch { thrown = error }
        }
        // The input gave five blocks of 1024 (5120 frames) before it failed: five renders of
        // 1000 come whole, and the sixth, which reaches the failure, throws.
        #expect(got.count == 5_000)
        #expect(got.enumerated().allSatisfy { $0.element == Float($0.offset) })
        #expect(thrown == .readFailed(path: "failing", reason: "at 5120"))
    }
}
