import Foundation
import Testing
@testable import Mixdown

@Suite struct FileExportTests {
    /// A 60 s mono file of constant 0.5 in float: the output divided by 0.5 is the gain.
    static func constantInput(_ dir: TempDir, seconds: Int = 60, rate: Int = 48_000) throws -> String {
        let path = dir.file("dc.wav")
        try writeFile(path, [[Float](repeating: 0.5, count: seconds * rate)], sampleRate: rate, format: .f32)
        return path
    }

    /// QA1730: 20 s from 30 s with a 10 s fade-in gives exactly 960,000 frames whose gain
    /// rises linearly from 0 at frame 0 to 1 at frame 480,000 and holds 1 after it.
    @Test func qa1730TrimWithFadeIn() throws {
        let dir = TempDir()
        var job = FileExport(input: try Self.constantInput(dir), output: dir.file("out.wav"))
        job.start = try MediaTime(parsing: "30")
        job.duration = try MediaTime(parsing: "20")
        job.fadeIn = try MediaTime(parsing: "10")
        let report = try job.run()
        #expect(report.frames == 960_000 && report.sourceStartFrame == 1_440_000 && report.sourceEndFrame == 2_400_000)
        #expect(report.sampleFormat == .f32)
        let (info, out) = try readFile(dir.file("out.wav"))
        #expect(info.frames == 960_000)
        let gains = out[0].map { Double($0) / 0.5 }
        #expect(gains[0] == 0)
        #expect(gains[480_000] == 1)
        #expect(gains[959_999] == 1)
        var worst = 0.0
        for f in 0..<960_000 { worst = max(worst, abs(gains[f] - min(1, Double(f) / 480_000))) }
        #expect(worst <= 1e-6)
    }

    /// A fade-out falls to exactly 0 on the last frame; with a fade-in on the same export.
    @Test func fadeOutEndsAtZeroOnTheLastFrame() throws {
        let dir = TempDir()
        var job = FileExport(input: try Self.constantInput(dir, seconds: 5), output: dir.file("out.wav"))
        job.fadeIn = try MediaTime(parsing: "1")
        job.fadeOut = try MediaTime(parsing: "48000f", frameRate: 48_000)
        let report = try job.run()
        #expect(report.frames == 240_000)
        let out = try readFile(dir.file("out.wav")).planes[0].map { Double($0) / 0.5 }
        #expect(out[239_999] == 0)
        #expect(out[239_999 - 48_000] == 1)
        #expect(abs(out[239_999 - 24_000] - 0.5) < 1e-6)
        #expect(out[0] == 0 && out[48_000] == 1)
    }

    @Test func outputIsIdenticalAtEveryBlockSize() throws {
        let dir = TempDir()
        try writeFile(dir.file("in.wav"), [sine(440, frames: 30_000), sine(3000, frames: 30_000)], format: .s16)
        var bytes: Data?
        for (i, sizes) in BlockSizes.all.enumerated() {
            var job = FileExport(input: dir.file("in.wav"), output: dir.file("out\(i).wav"))
            job.start = MediaTime(value: 1234, timescale: 48_000)
            job.fadeIn = MediaTime(value: 1, timescale: 10)
            job.fadeOut = MediaTime(value: 1, timescale: 7)
            job.blockSizes = sizes
            _ = try job.run()
            let data = try Data(contentsOf: URL(fileURLWithPath: dir.file("out\(i).wav")))
            if let bytes { #expect(bytes == data, "block sizes \(sizes)") } else { bytes = data }
        }
    }

    @Test func cancellationLeavesNoFile() throws {
        let dir = TempDir()
        let input = try Self.constantInput(dir, seconds: 10)
        let token = CancellationToken()
        var seen: [Double] = []
        let job = FileExport(input: input, output: dir.file("out.wav"))
        #expect(throws: MixdownError.cancelled) {
            try job.run(progress: { p in seen.append(p); if p >= 0.5 { token.cancel() } }, cancellation: token)
        }
        #expect(dir.contents == ["dc.wav"])
        #expect(seen == seen.sorted() && seen.last! >= 0.5 && seen.last! < 1)
    }

    @Test func progressRunsToOneWithoutGoingBack() throws {
        let dir = TempDir()
        var seen: [Double] = []
        _ = try FileExport(input: try Self.constantInput(dir, seconds: 2), output: dir.file("o.flac")).run { seen.append($0) }
        #expect(seen == seen.sorted() && seen.last == 1)
    }

    @Test func badParametersAreRefusedBeforeWriting() throws {
        let dir = TempDir()
        let input = try Self.constantInput(dir, seconds: 10)
        func attempt(_ configure: (inout FileExport) throws -> Void) throws -> MixdownError? {
            var job = FileExport(input: input, output: dir.file("out.wav"))
            try configure(&job)
            do { _ = try job.run(); return nil } catch { return error }
        }
        let beyond = try attempt { $0.start = MediaTime(seconds: 10) }
        if case .rangeOutsideSource(let p, let r, _)? = beyond { #expect(p == input && r.contains("0:00:10")) } else { Issue.record("\(String(describing: beyond))") }
        #expect(try attempt { $0.duration = .zero } == .invalidParameter(name: "--duration", value: "0:00:00.000000", reason: "must be longer than 0"))
        if case .invalidParameter("--duration", _, _)? = try attempt({ $0.duration = MediaTime(seconds: -2) }) {} else { Issue.record("negative duration") }
        if case .rangeOutsideSource? = try attempt({ $0.start = MediaTime(seconds: 5); $0.duration = MediaTime(seconds: 6) }) {} else { Issue.record("past the end") }
        if case .invalidParameter("--fade-in", _, let r)? = try attempt({ $0.fadeIn = MediaTime(seconds: 11) }) { #expect(r.contains("longer than the output")) } else { Issue.record("fade-in") }
        if case .invalidParameter("--fade-out", _, _)? = try attempt({ $0.fadeOut = MediaTime(seconds: 10) }) {} else { Issue.record("fade-out") }
        if case .invalidParameter("--fade-out", _, let r)? = try attempt({ $0.fadeIn = MediaTime(seconds: 6); $0.fadeOut = MediaTime(seconds: 5) }) { #expect(r.contains("overlaps --fade-in")) } else { Issue.record("overlap") }
        if case .unsupportedOutput(_, let r)? = try attempt({ $0.output = dir.file("out.xyz") }) { #expect(r.contains("'.xyz'")) } else { Issue.record("type") }
        #expect(dir.contents == ["dc.wav"])
    }
}
