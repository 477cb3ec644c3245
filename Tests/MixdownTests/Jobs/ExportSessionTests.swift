import CSndFile
import Foundation
import Synchronization
import Testing
@testable import Mixdown

private func t(_ s: String) -> MediaTime { try! MediaTime(parsing: s) }

/// A composition of one track playing `seconds` of a stereo 48 kHz sine.
private func composition(_ dir: TempDir, seconds: Int = 2, rate: Int = 48_000) throws -> Composition {
    let path = dir.file("src-\(seconds)-\(rate).wav")
    if !FileManager.default.fileExists(atPath: path) {
        let s = sine(440, rate: rate, frames: seconds * rate)
        try writeFile(path, [s, s], sampleRate: rate, format: .s16)
    }
    var c = Composition()
    let id = c.addTrack()
    let a = try AudioAsset(path: path)
    try c[trackID: id].addSegment(MediaTimeRange(start: .zero, duration: a.duration), of: a, at: .zero)
    return c
}

private func size(_ path: String) -> Int64 {
    var st = stat()
    return stat(path, &st) == 0 ? Int64(st.st_size) : -1
}

@Suite(.serialized) struct ExportSessionTests {
    @Test func anExportCompletesWithProgressThatNeverGoesBack() async throws {
        let dir = TempDir()
        let session = try ExportSession(asset: .composition(composition(dir, seconds: 60)), preset: .wav24)
        session.outputPath = dir.file("out.wav")
        session.blockSizes = [1024]
        #expect(session.status == .unknown)
        let seen = Mutex<[Double]>([])
        let watcher = Task {
            while !Task.isCancelled {
                let p = session.progress
                seen.withLock { $0.append(p) }
                try? await Task.sleep(for: .microseconds(200))
            }
        }
        let report = try await session.export()
        watcher.cancel()
        _ = await watcher.value
        #expect(session.status == .completed && session.progress == 1 && session.error == nil)
        #expect(report.frames == 2_880_000 && report.sampleFormat == .s24)
        let values = seen.withLock { $0 }
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(try AudioFileInfo.read(path: dir.file("out.wav")).frames == 2_880_000)
    }

    @Test func cancelStopsTheExportAndLeavesNothing() async throws {
        let dir = TempDir()
        let session = try ExportSession(asset: .composition(composition(dir, seconds: 120)), preset: .wav16)
        session.outputPath = dir.file("out.wav")
        session.blockSizes = [256]
        // Cancel from the render thread once a tenth is written: within one block it stops.
        session.progressObserver = { [unowned session] p in if p >= 0.1 { session.cancel() } }
        await #expect(throws: MixdownError.cancelled) { try await session.export() }
        #expect(session.status == .cancelled && session.error == .cancelled)
        #expect(session.progress < 1)
        #expect(dir.contents.filter { $0.hasPrefix("out") || $0.hasPrefix(".out") }.isEmpty)
    }

    @Test func extraExportsWaitForAFreeCore() async throws {
        let dir = TempDir()
        let scheduler = ExportScheduler(slots: 1)
        let c = try composition(dir, seconds: 120)
        let first = try ExportSession(asset: .composition(c), preset: .wav16, scheduler: scheduler)
        let second = try ExportSession(asset: .composition(c), preset: .wav16, scheduler: scheduler)
        let third = try ExportSession(asset: .composition(c), preset: .wav16, scheduler: scheduler)
        first.outputPath = dir.file("1.wav")
        second.outputPath = dir.file("2.wav")
        third.outputPath = dir.file("3.wav")
        first.blockSizes = [256]
        // The first export holds its core, paused after its first block, until the others wait.
        let gate = Gate()
        first.progressObserver = { _ in gate.pass() }
        let a = Task { try await first.export() }
        while first.progress == 0 { try await Task.sleep(for: .milliseconds(1)) }
        let b = Task { try await second.export() }
        let c3 = Task { try await third.export() }
        while second.status != .waiting || third.status != .waiting { try await Task.sleep(for: .milliseconds(1)) }
        #expect(first.status == .exporting)
        // A waiting export cancels at once, without ever rendering.
        third.cancel()
        await #expect(throws: MixdownError.cancelled) { try await c3.value }
        #expect(third.status == .cancelled && third.progress == 0)
        gate.open()
        _ = try await a.value
        _ = try await b.value
        #expect(first.status == .completed && second.status == .completed)
        #expect(!FileManager.default.fileExists(atPath: dir.file("3.wav")))
    }

    @Test(arguments: [(AudioFileType.wav, SampleFormat.s16, 1), (.wav, .s24, 1), (.aiff, .s24, 1), (.caf, .f32, 2), (.w64, .s24, 1), (.wav, .f32, 2)])
    func theEstimatedLengthIsExactAndTheLimitIsNeverPassed(type: AudioFileType, format: SampleFormat, channels: Int) async throws {
        let dir = TempDir()
        var job = CompositionRender(composition: try composition(dir, seconds: 1), output: dir.file("o.\(type.rawValue)"))
        job.outputFormat = AudioFormat(sampleRate: 48_000, channelCount: channels)
        job.sampleFormat = format
        job.metadata = AudioMetadata(title: "A title", artist: "An artist")
        job.timeRange = MediaTimeRange(start: .zero, duration: MediaTime(frames: 12_345, sampleRate: 48_000))  // an odd frame count
        let estimate = try #require(try job.plan().estimatedFileLength)
        let report = try job.run()
        #expect(size(job.output) == estimate && report.fileBytes == estimate)
        // The limit: the largest whole number of frames that fits, and it says so.
        for limit in [estimate - 1, estimate - 7, 10_001] {
            var cut = job
            cut.output = dir.file("cut.\(type.rawValue)")
            cut.overwrite = true
            cut.fileLengthLimit = limit
            let r = try cut.run()
            #expect(r.truncatedByFileLengthLimit)
            #expect(r.fileBytes <= limit)
            let bpf = Int64(channels * format.bytesPerSample)
            #expect(r.fileBytes + bpf + (type == .wav || type == .aiff ? 1 : 0) > limit, "one more frame would have fitted")
            #expect(try AudioFileInfo.read(path: cut.output).frames == r.frames)
        }
        var whole = job
        whole.fileLengthLimit = estimate
        whole.output = dir.file("whole.\(type.rawValue)")
        #expect(try whole.run().truncatedByFileLengthLimit == false)
    }

    @Test func aLimitOnACompressedTypeIsRefused() throws {
        let dir = TempDir()
        var job = CompositionRender(composition: try composition(dir), output: dir.file("o.flac"))
        job.fileLengthLimit = 100_000
        #expect(throws: MixdownError.self) { try job.plan() }
        #expect(dir.contents.filter { $0.hasPrefix("o") || $0.hasPrefix(".o") }.isEmpty)
    }

    @Test func presetsWriteTheirTypesAndSettings() async throws {
        let dir = TempDir()
        let c = try composition(dir, seconds: 10)
        let mp3 = try ExportSession(asset: .composition(c), preset: .mp3_192)
        mp3.outputPath = dir.file("o.mp3")
        try await mp3.export()
        let bytes = Double(size(dir.file("o.mp3")))
        #expect(abs(bytes * 8 / 10 - 192_000) < 192_000 * 0.05, "\(bytes * 8 / 10) bit/s")

        let opus = try ExportSession(asset: .composition(c), preset: .opusVoice)
        opus.outputPath = dir.file("o.opus")
        try await opus.export()
        let info = try AudioFileInfo.read(path: dir.file("o.opus"))
        #expect(info.channelCount == 1 && info.sampleRate == 48_000 && info.sampleFormat == "opus")
        #expect(Double(size(dir.file("o.opus"))) * 8 / 10 < 48_000)

        let flac = try ExportSession(asset: .composition(c), preset: .flac)
        flac.outputPath = dir.file("o.flac")
        flac.metadata = AudioMetadata(title: "Title", artist: "Artist", album: "Album", comment: "Comment", date: "2026-11-22")
        try await flac.export()
        #expect(try AudioFileInfo.read(path: dir.file("o.flac")).sampleFormat == "pcm_16")
        var sfinfo = SF_INFO()
        let h = try #require(sf_open(dir.file("o.flac"), Int32(SFM_READ), &sfinfo))
        defer { sf_close(h) }
        #expect(String(cString: sf_get_string(h, Int32(SF_STR_TITLE))) == "Title")
        #expect(String(cString: sf_get_string(h, Int32(SF_STR_ARTIST))) == "Artist")
        #expect(String(cString: sf_get_string(h, Int32(SF_STR_SOFTWARE))).hasPrefix("Mixdown"))
    }

    @Test func passthroughKeepsTheFilesFormatAndNeedsAFile() async throws {
        let dir = TempDir()
        try writeFile(dir.file("in.caf"), [sine(300, rate: 44_100, frames: 44_100)], sampleRate: 44_100, type: .caf, format: .s24)
        let asset = try AudioAsset(path: dir.file("in.caf"))
        let session = try ExportSession(asset: .file(asset), preset: .passthrough)
        session.outputPath = dir.file("out.caf")
        let report = try await session.export()
        #expect(report.type == .caf && report.sampleFormat == .s24 && report.sampleRate == 44_100 && report.channels == 1)
        #expect(try readFile(dir.file("out.caf")).planes == readFile(dir.file("in.caf")).planes)
        #expect(throws: MixdownError.self) {
            try ExportSession(asset: .composition(composition(dir)), preset: .passthrough)
        }
        #expect(ExportSession.exportPresets(compatibleWith: .file(asset)).contains(.passthrough))
        #expect(session.supportedFileTypes.contains(.flac) && !session.supportedFileTypes.contains(.opus))
    }

    @Test func anExistingFileIsNotReplacedUnlessAsked() async throws {
        let dir = TempDir()
        FileManager.default.createFile(atPath: dir.file("out.wav"), contents: Data("keep".utf8))
        let session = try ExportSession(asset: .composition(composition(dir)), preset: .wav16)
        session.outputPath = dir.file("out.wav")
        await #expect(throws: MixdownError.outputExists(path: dir.file("out.wav"))) { try await session.export() }
        #expect(session.status == .failed && session.error == .outputExists(path: dir.file("out.wav")))
        #expect(FileManager.default.contents(atPath: dir.file("out.wav")) == Data("keep".utf8))
        let again = try ExportSession(asset: .composition(composition(dir)), preset: .wav16)
        again.outputPath = dir.file("out.wav")
        again.overwrite = true
        try await again.export()
        #expect(try AudioFileInfo.read(path: dir.file("out.wav")).frames == 96_000)
    }

    @Test func theCompletionHandlerSpellingWorksToo() async throws {
        let dir = TempDir()
        let session = try ExportSession(asset: .composition(composition(dir)), preset: .wav16)
        session.outputURL = URL(fileURLWithPath: dir.file("done.wav"))
        #expect(session.outputPath == dir.file("done.wav"))
        await withCheckedContinuation { c in session.exportAsynchronously { c.resume() } }
        #expect(session.status == .completed)
        #expect(try AudioFileInfo.read(path: dir.file("done.wav")).frames == 96_000)
    }

    @Test func maxDurationFollowsTheFileLengthLimit() throws {
        let dir = TempDir()
        let session = try ExportSession(asset: .composition(composition(dir)), preset: .wav16)
        session.outputPath = dir.file("o.wav")
        #expect(try session.maxDuration() == t("2"))
        let header = try #require(try session.estimatedOutputFileLength()) - 96_000 * 4
        session.fileLengthLimit = header + 48_000 * 4
        #expect(try session.maxDuration() == t("1"))
        #expect(try session.estimatedOutputFileLength() == header + 48_000 * 4)
    }
}

/// Stops the first thread that passes until `open()`; later ones pass freely.
final class Gate: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let closed = Atomic<Bool>(true)
    func pass() {
        if closed.load(ordering: .acquiring) { semaphore.wait() }
    }
    func open() {
        closed.store(false, ordering: .releasing)
        semaphore.signal()
    }
}
