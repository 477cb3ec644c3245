import Foundation
import Testing
@testable import Mixdown

/// The preroll step: work before the first frame is reported as frames of work, counted
/// into the job's progress, cancellable, and changes no output frame.
@Suite(.serialized) struct PrerollTests {
    /// A track whose render starts 30,000 frames into its first segment drops them at the
    /// preroll: the progress then stands at exactly 30,000 / (30,000 + 60,000), and the
    /// frames rendered after it are the same as without a preroll.
    @Test func aLateStartIsPrerollWorkAndLeavesTheFramesAlone() throws {
        func player() -> TrackPlayer {
            let item = TrackPlayer.Item(frames: 0..<50_000, skip: 30_000) { () throws(MixdownError) in
                TrackPlayerTests.Counted(base: 0, length: 80_000)
            }
            return TrackPlayer(format: AudioFormat(sampleRate: 48_000, channelCount: 1), length: 60_000, items: [item], label: "t")
        }
        var reported: [Double] = []
        let prerolled = player()
        try prerolled.prepare(maximumFrames: 4096)
        let preroll = Preroll(renderFrames: 60_000, progress: { reported.append($0) })
        try prerolled.preroll(preroll)
        #expect(reported.count == 8)   // ceil(30,000 / 4096) blocks of skipped frames
        #expect(reported.last == 30_000.0 / 90_000.0)
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(preroll.fraction(rendered: 60_000) == 1)
        let buffer = AudioBuffer(format: prerolled.format, capacity: 4096)
        var out: [Float] = []
        while true {
            let s = try prerolled.render(into: buffer, frames: 4096)
            out += buffer.samples(channel: 0, frames: s.frames)
            if s.ended { break }
        }
        #expect(out == (try renderAll(player(), blockSizes: [4096])[0]))
        #expect(out[0] == 30_000 && out[49_999] == 79_999 && out[50_000] == 0)
    }

    /// A cancellation during the preroll stops it at the next block, and nothing is written.
    @Test func aCancelledPrerollStopsAndWritesNothing() throws {
        let dir = TempDir()
        let item = TrackPlayer.Item(frames: 0..<10, skip: 1_000_000) { () throws(MixdownError) in
            TrackPlayerTests.Counted(base: 0, length: 2_000_000)
        }
        let player = TrackPlayer(format: AudioFormat(sampleRate: 48_000, channelCount: 1), length: 10, items: [item], label: "t")
        let token = CancellationToken()
        var calls = 0
        let encoding = try OutputEncoding.resolve(path: dir.file("x.wav"), type: .wav, sampleFormat: .s16, frames: 10, channels: 1)
        let writer = try AudioFileWriter(destination: dir.file("x.wav"), encoding: encoding, format: player.format, maximumFrames: 4096, overwrite: false)
        #expect(throws: MixdownError.cancelled) {
            try Renderer.render(player, to: writer, blockSizes: [4096], expectedFrames: 10,
                                progress: { _ in calls += 1; token.cancel() }, cancellation: token)
        }
        #expect(calls == 1, "the preroll stops at the first block after the cancellation")
        #expect(dir.contents.isEmpty)
    }

    /// A node asked to preroll after it rendered breaks the contract.
    @Test func prerollAfterRenderIsAContractViolation() throws {
        let node = ContractCheck(ArraySource(planes: [[1, 2, 3]]))
        try node.prepare(maximumFrames: 2)
        _ = try node.render(into: AudioBuffer(format: node.format, capacity: 2), frames: 2)
        #expect(throws: MixdownError.nodeContractViolated(node: "ArraySource", reason: "call 1 (after 2 frames): preroll after render")) {
            try node.preroll(Preroll())
        }
        let fresh = ContractCheck(ArraySource(planes: [[1]]))
        #expect(throws: MixdownError.nodeContractViolated(node: "ArraySource", reason: "call 0 (after 0 frames): preroll before prepare")) {
            try fresh.preroll(Preroll())
        }
    }

    /// Rubber Band's study pass runs in the preroll: the progress reaches exactly
    /// N / (N + M) (N input frames studied, M output frames) before the first block renders,
    /// and the render still gives exactly M frames.
    @Test(.enabled(if: TimeScaleAlgorithm.rubberband.isAvailable))
    func rubberBandStudiesInThePreroll() throws {
        let n = 96_000
        let planes = [sine(440, frames: n), sine(660, frames: n)]
        let ratio = StretchRatio(5, 4)
        let m = ratio.outputFrames(forInput: Int64(n))
        let node = try FileStretch.rubberBand(makeInput: { () throws(MixdownError) in ArraySource(planes: planes) },
                                              ratio: ratio, outputFrames: m, quality: .best)
        let dir = TempDir()
        let encoding = try OutputEncoding.resolve(path: dir.file("rb.wav"), type: .wav, sampleFormat: .f32, frames: m, channels: 2)
        let writer = try AudioFileWriter(destination: dir.file("rb.wav"), encoding: encoding, format: node.format, maximumFrames: 4096, overwrite: false)
        var reported: [Double] = []
        try Renderer.render(node, to: writer, blockSizes: [4096], expectedFrames: m, progress: { reported.append($0) })
        let studied = Double(n) / Double(Int64(n) + m)
        let studyReports = Int((Double(n) / 4096).rounded(.up))
        #expect(reported.count == studyReports + Int((Double(m) / 4096).rounded(.up)))
        #expect(reported[studyReports - 1] == studied)
        #expect(reported.last == 1)
        #expect(zip(reported, reported.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(try readFile(dir.file("rb.wav")).info.frames == m)
    }
}
