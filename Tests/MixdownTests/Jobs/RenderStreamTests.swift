import Foundation
import Testing
@testable import Mixdown

private func t(_ s: String) -> MediaTime { try! MediaTime(parsing: s) }
private func range(_ a: String, _ b: String) -> MediaTimeRange { MediaTimeRange(start: t(a), end: t(b)) }

/// Pulls `count` frames (or to the end) with pull sizes cycling through `sizes`, into the
/// caller's planar arrays as an embedder would; checks the pull contract on the way.
private func pull(_ stream: RenderStream, sizes: [Int], count: Int64? = nil) throws -> [[Float]] {
    let channels = stream.format.channelCount
    let maxSize = sizes.max()!
    let storage = (0..<channels).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: maxSize) }
    defer { storage.forEach { $0.deallocate() } }
    var out = [[Float]](repeating: [], count: channels)
    var i = 0
    let wanted = count ?? (stream.frames - stream.position)
    while Int64(out[0].count) < wanted {
        let want = Int(min(Int64(sizes[i % sizes.count]), wanted - Int64(out[0].count)))
        i += 1
        let status = try storage.withUnsafeBufferPointer { try stream.pull(into: $0.baseAddress!, frames: want) }
        #expect(status.frames == want || status.ended, "a short pull before the end")
        for c in 0..<channels { out[c] += Array(UnsafeBufferPointer(start: storage[c], count: status.frames)) }
        if status.ended { break }
    }
    return out
}

private func slice(_ planes: [[Float]], _ r: Range<Int>) -> [[Float]] { planes.map { Array($0[r]) } }

@Suite struct RenderStreamTests {
    /// Two tracks at two rates, a scaled range and a ramp: the file render's frames, pulled
    /// in any sizes; and a time range is a slice of them.
    @Test(arguments: [TimeScaleAlgorithm.varispeed, .wsola])
    func aCompositionPulledIsTheFileRender(algorithm: TimeScaleAlgorithm) throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(500, frames: 144_000), sine(700, frames: 144_000)])
        try writeFile(dir.file("m44.wav"), [sine(441, rate: 44_100, frames: 88_200)], sampleRate: 44_100)
        var c = Composition()
        let a = c.addTrack(), m = c.addTrack()
        try c[trackID: a].addSegment(range("0", "3"), of: AudioAsset(path: dir.file("a.wav")), at: .zero)
        try c[trackID: m].addSegment(range("0.5", "2"), of: AudioAsset(path: dir.file("m44.wav")), at: t("0.25"))
        try c[trackID: m].scaleTimeRange(range("0.5", "1.5"), toDuration: t("1.25"))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        job.timePitchAlgorithm = algorithm
        job.settings.sampleFormat = .f32
        try job.audioMix[trackID: a].setVolumeRamp(from: 0, to: 1, timeRange: range("0", "1/3"))
        _ = try job.run()
        let file = try readFile(dir.file("o.wav")).planes
        for sizes in BlockSizes.all + [[10_000]] {
            let stream = try RenderStream(render: job)
            #expect(stream.frames == Int64(file[0].count))
            #expect(try pull(stream, sizes: sizes) == file, "sizes \(sizes)")
            #expect(stream.position == stream.frames)
        }
        job.timeRange = range("1", "2.75")
        #expect(try pull(RenderStream(render: job), sizes: [777]) == slice(file, 48_000..<132_000))
    }

    /// A seek lands on its frame: the frames after it are the file's, in any order of seeks,
    /// inside a converted, a scaled and a plain segment, at 0 and at the end.
    @Test(arguments: [TimeScaleAlgorithm.varispeed, .wsola])
    func aCompositionSeeksToTheFrame(algorithm: TimeScaleAlgorithm) throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(500, frames: 96_000)])
        try writeFile(dir.file("m44.wav"), [sine(441, rate: 44_100, frames: 88_200)], sampleRate: 44_100)
        var c = Composition()
        let a = c.addTrack(), m = c.addTrack()
        try c[trackID: a].addSegment(range("0", "2"), of: AudioAsset(path: dir.file("a.wav")), at: .zero)
        try c[trackID: a].scaleTimeRange(range("1", "2"), toDuration: t("1.1"))
        try c[trackID: m].addSegment(range("0", "2"), of: AudioAsset(path: dir.file("m44.wav")), at: t("0.5"))
        var job = CompositionRender(composition: c, output: dir.file("o.wav"))
        job.timePitchAlgorithm = algorithm
        job.outputFormat = AudioFormat(sampleRate: 48_000, channelCount: 1)
        let whole = try renderInMemory(job)
        let n = whole[0].count
        #expect(n == 120_000)
        let stream = try RenderStream(render: job)
        for frame in [60_000, 1, 24_001, 100_000, 0, n - 5, 52_799, n] {
            try stream.seek(toFrame: Int64(frame))
            #expect(stream.position == Int64(frame))
            let got = try pull(stream, sizes: [64, 1000], count: Int64(min(3000, n - frame)))
            #expect(got == slice(whole, frame..<min(n, frame + 3000)), "after a seek to \(frame)")
        }
    }

    /// A whole-file stretch with each resampler and algorithm: the file's frames pulled,
    /// and after seeks (Mixdown's resampler starts inside the stream; the others skip).
    @Test(arguments: [(TimeScaleAlgorithm.varispeed, ResamplerEngine.polyphase), (.varispeed, .libsamplerate), (.wsola, .auto),
                      (.spectral, .auto), (.rubberband, .auto)].filter { $0.0.isAvailable })
    func aStretchPulledAndSoughtIsTheFile(algorithm: TimeScaleAlgorithm, resampler: ResamplerEngine) throws {
        let dir = TempDir()
        try writeFile(dir.file("in.wav"), [sine(500, frames: 96_000), sine(300, frames: 96_000)])
        var job = FileStretch(input: dir.file("in.wav"), output: dir.file("out.wav"), target: .ratio(StretchRatio(10_001_309, 10_000_000)))
        job.algorithm = algorithm
        job.resampler = resampler
        job.settings.sampleFormat = .f32
        let report = try job.run()
        let file = try readFile(dir.file("out.wav")).planes
        #expect(report.outputFrames == 96_013)   // round(96000 · 1.0001309) = round(96012.57)
        let stream = try RenderStream(stretch: job)
        #expect(stream.frames == 96_013 && stream.format == AudioFormat(sampleRate: 48_000, channelCount: 2))
        #expect(try pull(stream, sizes: BlockSizes.irregular) == file)
        for frame in [50_000, 7, 96_012, 0] {
            try stream.seek(toFrame: Int64(frame))
            let count = min(2_000, 96_013 - frame)
            #expect(try pull(stream, sizes: [512], count: Int64(count)) == slice(file, frame..<(frame + count)), "after a seek to \(frame)")
        }
    }

    /// Bad calls name what is wrong; the end is explicit and stays ended.
    @Test func badPullsAndSeeksAreErrorsAndTheEndIsExplicit() throws {
        let dir = TempDir()
        try writeFile(dir.file("in.wav"), [sine(500, frames: 1_000)])
        let stream = try RenderStream(stretch: FileStretch(input: dir.file("in.wav"), output: "", target: .frames(1_500)))
        #expect(stream.frames == 1_500)
        let p = UnsafeMutablePointer<Float>.allocate(capacity: 2_000)
        defer { p.deallocate() }
        var channels = [p]
        #expect(throws: MixdownError.invalidParameter(name: "frames", value: "0", reason: "must be more than 0")) {
            _ = try stream.pull(into: &channels, frames: 0)
        }
        for bad: Int64 in [-1, 1_501] {
            #expect(throws: MixdownError.invalidParameter(name: "seek frame", value: "\(bad)", reason: "must lie in 0...1500, the stream's frames")) {
                try stream.seek(toFrame: bad)
            }
        }
        #expect(try stream.pull(into: &channels, frames: 2_000) == RenderStatus(frames: 1_500, ended: true))
        #expect(try stream.pull(into: &channels, frames: 10) == RenderStatus(frames: 0, ended: true))
        try stream.seek(toFrame: 1_499)
        #expect(try stream.pull(into: &channels, frames: 10) == RenderStatus(frames: 1, ended: true))
        #expect(throws: MixdownError.fileNotFound(path: dir.file("missing.wav"))) {
            _ = try RenderStream(stretch: FileStretch(input: dir.file("missing.wav"), output: "", target: .frames(10)))
        }
    }
}
