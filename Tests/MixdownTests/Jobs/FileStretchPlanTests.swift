import Foundation
@testable import Mixdown
import Testing

/// `FileStretch.plan()`: what a stretch will do, said before it starts; a notice when
/// `auto` chose a slow algorithm for a long file.
struct FileStretchPlanTests {
    /// A 16-bit PCM WAV of `frames` frames of silence, written sparse (a header and a hole):
    /// an hour costs no disk and no time to make.
    static func silentWAV(frames: Int64, rate: Int, channels: Int) throws -> String {
        let path = NSTemporaryDirectory() + "plan-\(UUID().uuidString).wav"
        let dataBytes = UInt32(frames * Int64(channels) * 2)
        var h = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { h.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { h.append(contentsOf: $0) } }
        h.append(contentsOf: Array("RIFF".utf8)); u32(36 + dataBytes); h.append(contentsOf: Array("WAVEfmt ".utf8))
        u32(16); u16(1); u16(UInt16(channels)); u32(UInt32(rate)); u32(UInt32(rate * channels * 2)); u16(UInt16(channels * 2)); u16(16)
        h.append(contentsOf: Array("data".utf8)); u32(dataBytes)
        #expect(FileManager.default.createFile(atPath: path, contents: h))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: UInt64(h.count) + UInt64(dataBytes))
        try handle.close()
        return path
    }

    @Test func autoSaysSoWhenItChoseASlowAlgorithmForALongFile() throws {
        let path = try Self.silentWAV(frames: 48_000 * 1800, rate: 48_000, channels: 2)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let job = FileStretch(input: path, output: "unused.wav", target: .ratio(StretchRatio(51, 50)))
        let plan = try job.plan()
        #expect(plan.algorithm == TimeScaleAlgorithm.pitchKeeping)
        #expect(plan.outputFrames == 88_128_000)
        #expect(plan.ratio == StretchRatio(51, 50))
        let expected = plan.algorithm.estimatedSeconds(outputFrames: plan.outputFrames, sampleRate: 48_000, channels: 2, quality: .best)
        #expect(plan.estimatedSeconds == expected && expected >= FileStretch.slowNoticeSeconds)
        let notice = try #require(plan.notice)
        #expect(notice.hasPrefix("auto chose \(plan.algorithm.rawValue) to keep the pitch (the ratio 1.02 changes the length by 2 %"), "\(notice)")
        #expect(notice.contains("for 0:30:00.000000 of 2 channels") && notice.contains("--algorithm varispeed takes under a second and moves the pitch by -34.3 cents"), "\(notice)")
        // Near 1 too auto keeps the pitch through the spectral stretch, and says so for a
        // long file; the splice, chosen by name, is fast: no notice.
        let near = try FileStretch(input: path, output: "unused.wav", target: .ratio(StretchRatio(1003, 1000))).plan()
        #expect(near.algorithm == .spectral && near.outputFrames == 86_659_200)
        let nearNotice = try #require(near.notice)
        #expect(nearNotice.hasPrefix("auto chose spectral to keep the pitch (the ratio 1.003 changes the length by 0.3 %"), "\(nearNotice)")
        var spliced = FileStretch(input: path, output: "unused.wav", target: .ratio(StretchRatio(1003, 1000)))
        spliced.algorithm = .splice
        #expect(try spliced.plan().notice == nil)

        // Chosen by name: the user knows what they asked for.
        var named = job
        named.algorithm = plan.algorithm
        #expect(try named.plan().notice == nil)
        // Drift correction: varispeed, fast, no notice.
        let drift = try FileStretch(input: path, output: "unused.wav", target: .ratio(StretchRatio(10_001_309, 10_000_000))).plan()
        #expect(drift.algorithm == .varispeed && drift.notice == nil && drift.outputFrames == 86_411_310)
    }

    @Test func aShortFileGetsNoNotice() throws {
        let path = try Self.silentWAV(frames: 48_000 * 5, rate: 48_000, channels: 2)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let plan = try FileStretch(input: path, output: "unused.wav", target: .frames(300_000)).plan()
        #expect(plan.notice == nil && plan.outputFrames == 300_000 && plan.ratio == StretchRatio(300_000, 240_000))
        #expect(throws: MixdownError.invalidParameter(name: "--to-frames", value: "1200000",
                                                      reason: "gives 1200000 frames from 240000, a ratio (output / input) of 5; the ratio must lie between 0.25 and 4")) {
            try FileStretch(input: path, output: "unused.wav", target: .frames(1_200_000)).plan()
        }
    }
}
