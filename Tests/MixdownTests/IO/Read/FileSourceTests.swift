import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

@Suite struct FileSourceTests {
    static let pcmTypes: [AudioFileType] = [.wav, .aiff, .caf, .w64, .rf64, .flac]
    static let lossyTypes: [AudioFileType] = [.ogg, .opus, .mp3]

    /// 16-bit PCM in every lossless type reads back sample for sample (the quantised
    /// values k / 32768 are exact in Float32).
    @Test(arguments: pcmTypes)
    func losslessRoundTripIsExact(type: AudioFileType) throws {
        let dir = TempDir()
        let n = 10_007
        let planes = [sine(440, frames: n), sine(1000, frames: n, amplitude: 0.25)].map { $0.map { (($0 * 32768).rounded()) / 32768 } }
        let path = dir.file("t.\(type.rawValue)")
        try writeFile(path, planes, type: type, format: .s16)
        let (info, back) = try readFile(path)
        #expect(info.frames == Int64(n))
        #expect(info.sampleRate == 48_000 && info.channelCount == 2)
        #expect(back == planes)
    }

    /// Lossy types keep the exact frame count and stay close to the input.
    @Test(arguments: lossyTypes)
    func lossyRoundTripKeepsTheLength(type: AudioFileType) throws {
        let dir = TempDir()
        let n = 48_000
        let planes = [sine(440, frames: n), sine(440, frames: n)]
        let path = dir.file("t.\(type.rawValue)")
        try writeFile(path, planes, type: type, format: nil)
        let (info, back) = try readFile(path)
        #expect(info.frames == Int64(n))
        var err = 0.0, sig = 0.0
        for i in 4800..<(n - 4800) { err += Double(back[0][i] - planes[0][i]) * Double(back[0][i] - planes[0][i]); sig += Double(planes[0][i] * planes[0][i]) }
        #expect(10 * log10(sig / err) > 15, "\(type): SNR \(10 * log10(sig / err)) dB")
    }

    /// A source range starts on its exact frame (sample-accurate seek), at every block size.
    @Test(arguments: [AudioFileType.wav, .flac, .aiff])
    func rangeIsSampleAccurate(type: AudioFileType) throws {
        let dir = TempDir()
        let n = 50_000
        let ramp = (0..<n).map { Float($0 % 30_000 - 15_000) / 32768 }
        let path = dir.file("r.\(type.rawValue)")
        try writeFile(path, [ramp], type: type, format: .s16)
        for sizes in BlockSizes.all {
            let src = try FileSource(path: path, range: 12_345..<40_001)
            let out = try renderAll(src, blockSizes: sizes)
            #expect(out[0] == Array(ramp[12_345..<40_001]), "\(type) at block sizes \(sizes)")
        }
    }

    @Test func rangeOutsideTheFileIsRefused() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [[Float](repeating: 0.1, count: 1000)])
        #expect {
            _ = try FileSource(path: dir.file("a.wav"), range: 500..<1001)
        } throws: { error in
            guard case MixdownError.rangeOutsideSource(let p, _, let avail) = error else { return false }
            return p.hasSuffix("a.wav") && avail.contains("1000 frames")
        }
    }

    @Test func badFilesGiveErrorsThatNameThem() throws {
        let dir = TempDir()
        let fm = FileManager.default
        fm.createFile(atPath: dir.file("empty.wav"), contents: Data())
        fm.createFile(atPath: dir.file("text.wav"), contents: Data("hello, not audio\n".utf8))
        try fm.createDirectory(atPath: dir.file("folder.wav"), withIntermediateDirectories: false)
        try writeFile(dir.file("full.wav"), [sine(440, frames: 20_000)], format: .s16)
        let full = try Data(contentsOf: URL(fileURLWithPath: dir.file("full.wav")))
        fm.createFile(atPath: dir.file("header.wav"), contents: full.prefix(30))
        fm.createFile(atPath: dir.file("cut.wav"), contents: full.prefix(20_000))

        func expectError(_ name: String, _ matches: (MixdownError) -> Bool) {
            #expect(performing: { _ = try FileSource(path: dir.file(name)) },
                    throws: { ($0 as? MixdownError).map(matches) ?? false })
        }
        expectError("missing.wav") { $0 == .fileNotFound(path: dir.file("missing.wav")) }
        expectError("empty.wav") { $0 == .emptyFile(path: dir.file("empty.wav")) }
        expectError("folder.wav") { $0 == .notAFile(path: dir.file("folder.wav")) }
        expectError("text.wav") { if case .unreadableFile(let p, let r) = $0 { return p == dir.file("text.wav") && r.contains("not recognised") }; return false }
        expectError("header.wav") { if case .unreadableFile(let p, _) = $0 { return p == dir.file("header.wav") }; return false }
        expectError("cut.wav") {
            // 20,000 bytes hold at most 10,000 16-bit mono frames, less the header.
            if case .truncatedAudio(let p, 20_000, let read) = $0 { return p == dir.file("cut.wav") && read < 10_000 && read > 9_900 }
            return false
        }
    }

    /// A WAV whose header says 1 Hz is described by `info` but refused by every job, naming
    /// the file (before, each part refused it in its own words without the name).
    @Test func aOneHertzWAVIsRefusedNamingIt() throws {
        let dir = TempDir()
        try writeFile(dir.file("hz1.wav"), [[Float](repeating: 0.1, count: 10)], sampleRate: 1, format: .s16)
        #expect(try AudioFileInfo.read(path: dir.file("hz1.wav")).sampleRate == 1)
        let refusal = MixdownError.unsupportedInput(path: dir.file("hz1.wav"), reason: "its sample rate, 1 Hz, is outside the 8000 to 768000 Hz Mixdown renders (`mixdown info` still describes it)")
        #expect(throws: refusal) { _ = try FileSource(path: dir.file("hz1.wav")) }
        for output in ["o.wav", "o.opus", "o.flac"] {
            var job = FileExport(input: dir.file("hz1.wav"), output: dir.file(output))
            job.settings.loudness = output == "o.wav" ? LoudnessTarget(integrated: -16) : nil
            #expect(throws: refusal) { _ = try job.run() }
            #expect(!FileManager.default.fileExists(atPath: dir.file(output)))
        }
        var stretch = FileStretch(input: dir.file("hz1.wav"), output: dir.file("s.wav"), target: .ratio(StretchRatio(11, 10)))
        // Rubber Band wrote it before; without the trait the job refuses the algorithm first.
        stretch.algorithm = TimeScaleAlgorithm.rubberband.isAvailable ? .rubberband : .wsola
        #expect(throws: refusal) { _ = try stretch.run() }
    }

    /// A FLAC whose STREAMINFO promises 2^36 - 1 frames (397 hours at 48 kHz) in a file of
    /// 100,000 frames is refused as damaged when opened, with the frames it holds: before, an
    /// export to WAV blamed the disk ("the output needs 412 GB and its filesystem has ...").
    @Test func aFLACWhoseHeaderPromisesMoreThanItHoldsIsRefusedAsTruncated() throws {
        let dir = TempDir()
        try writeFile(dir.file("ok.flac"), [sine(440, rate: 48_000, frames: 100_000)], sampleRate: 48_000, type: .flac, format: .s16)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: dir.file("ok.flac"))))
        // STREAMINFO's 36-bit total: the low nibble of byte 21, then bytes 22-25.
        #expect(bytes[0..<4] == [0x66, 0x4C, 0x61, 0x43][...])
        bytes[21] |= 0x0F
        for i in 22...25 { bytes[i] = 0xFF }
        FileManager.default.createFile(atPath: dir.file("damaged.flac"), contents: Data(bytes))
        #expect(throws: MixdownError.truncatedAudio(path: dir.file("damaged.flac"), expectedFrames: (1 << 36) - 1, readFrames: 100_000)) {
            _ = try FileSource(path: dir.file("damaged.flac"))
        }
        let export = FileExport(input: dir.file("damaged.flac"), output: dir.file("out.wav"))
        #expect(throws: MixdownError.truncatedAudio(path: dir.file("damaged.flac"), expectedFrames: (1 << 36) - 1, readFrames: 100_000)) {
            _ = try export.run()
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.wav")))
        // The undamaged file opens, whole.
        #expect(try FileSource(path: dir.file("ok.flac")).info.frames == 100_000)
    }
}

@Suite struct ChannelMapperTests {
    @Test(arguments: BlockSizes.all)
    func monoToStereoDuplicates(blockSizes: [Int]) throws {
        let mono = sine(440, frames: 5000)
        let out = try renderAll(try ChannelMapper(input: ArraySource(planes: [mono]), channelCount: 2), blockSizes: blockSizes)
        #expect(out == [mono, mono])
    }

    @Test(arguments: BlockSizes.all)
    func stereoToMonoAverages(blockSizes: [Int]) throws {
        let l = sine(440, frames: 5000), r = sine(1000, frames: 5000, amplitude: 0.3)
        let out = try renderAll(try ChannelMapper(input: ArraySource(planes: [l, r]), channelCount: 1), blockSizes: blockSizes)
        #expect(out.count == 1)
        for i in 0..<5000 { #expect(abs(Double(out[0][i]) - (Double(l[i]) + Double(r[i])) / 2) <= 1e-7) }
        // A sine and its inverted twin cancel exactly.
        let cancel = try renderAll(try ChannelMapper(input: ArraySource(planes: [l, l.map { -$0 }]), channelCount: 1), blockSizes: blockSizes)
        #expect(cancel[0].allSatisfy { $0 == 0 })
    }

    @Test func unsupportedCountsAreAnError() {
        let six = ArraySource(planes: [[Float]](repeating: [0], count: 6))
        #expect(throws: MixdownError.unsupportedChannelMapping(from: 6, to: 2)) { try ChannelMapper(input: six, channelCount: 2) }
    }
}

@Suite struct SilenceAndSignalTests {
    @Test(arguments: BlockSizes.all)
    func silenceHasItsExactLength(blockSizes: [Int]) throws {
        let out = try renderAll(Silence(format: AudioFormat(sampleRate: 44_100, channelCount: 2), length: 10_001), blockSizes: blockSizes)
        #expect(out[0].count == 10_001 && out[1].allSatisfy { $0 == 0 })
    }

    @Test func testSignalMarkersLandOnTheirFrames() throws {
        let sig = TestSignal(format: AudioFormat(sampleRate: 8_000, channelCount: 1), length: 40_000, tones: [], markerInterval: 10_000)
        #expect(sig.markerFrames == [10_000, 20_000, 30_000])
        let out = try renderAll(sig, blockSizes: BlockSizes.irregular)
        #expect(out[0][9_999] == 0 && out[0][10_000] != 0 && out[0][10_159] != 0 && out[0][10_160] == 0)
    }
}
