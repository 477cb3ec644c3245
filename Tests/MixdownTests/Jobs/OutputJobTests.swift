import Foundation
import Testing
@testable import Mixdown

/// The one runner and the one settings type: every file job resolves its output the same
/// way, in the same order, and the decisions that used to rest on a Double rest on the
/// exact ratio.
@Suite struct OutputJobTests {
    /// The output's type is resolved before any input is opened: every job names the bad
    /// output, not the missing input.
    @Test func everyJobRefusesABadOutputBeforeReadingItsInput() throws {
        let dir = TempDir()
        let missing = dir.file("missing.wav"), bad = dir.file("out.xyz")
        let expected = MixdownError.unsupportedOutput(path: bad, reason: "unknown extension '.xyz'; pass --type (\(AudioFileType.allCases.map(\.rawValue).joined(separator: ", ")))")
        #expect(throws: expected) { try FileExport(input: missing, output: bad).run() }
        #expect(throws: expected) { try FileStretch(input: missing, output: bad, target: .ratio(StretchRatio(2, 1))).run() }
        #expect(throws: expected) { try FileAlign(input: missing, reference: missing, output: bad).run() }
        #expect(dir.contents.isEmpty)
    }

    /// The settings reach the file: type and sample format set on a job's
    /// `settings` (or through the job's own properties) are what the file holds.
    @Test func settingsReachTheFile() throws {
        let dir = TempDir()
        try writeFile(dir.file("in.wav"), [sine(440, frames: 4_800)], format: .s16)
        var job = FileExport(input: dir.file("in.wav"), output: dir.file("out.data"))
        job.settings.type = .caf
        job.sampleFormat = .s24
        let report = try job.run()
        #expect(report.type == .caf && report.sampleFormat == .s24 && report.frames == 4_800)
        let info = try AudioFileInfo.read(path: dir.file("out.data"))
        #expect(info.type == "caf" && info.sampleFormat == "pcm_24" && info.frames == 4_800)
    }

    /// A preset becomes settings in one place; what is given beside it wins.
    @Test func presetsBecomeSettingsWithOverrides() {
        let p = OutputSettings(preset: .mp3_192)
        #expect(p.type == .mp3 && p.encoder.bitrate == 192_000 && p.sampleFormat == nil)
        let o = OutputSettings(preset: .wav16, type: .flac, sampleFormat: .s24, bitrate: nil, codec: nil)
        #expect(o.type == .flac && o.sampleFormat == .s24 && o.encoder == EncoderSettings())
    }

    /// `auto` decides on the exact ratio: |R − 1| < 29/10000 is varispeed, exactly 29/10000
    /// is not; the pitch-keeping stretcher from there, near 1 too (the splice only by name);
    /// and a ratio whose Double rounds to 1 is still judged exactly.
    @Test func autoDecidesOnTheExactRatio() {
        let keep = TimeScaleAlgorithm.pitchKeeping
        #expect(keep == .spectral)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(10_028, 10_000)) == .varispeed)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(10_029, 10_000)) == keep)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(9_971, 10_000)) == keep)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(1_003, 1_000)) == keep)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(203, 200)) == keep)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(99, 100)) == keep)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(79, 80)) == keep)
        #expect(TimeScaleAlgorithm.splice.resolved(for: StretchRatio(1_003, 1_000)) == .splice)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(9_972, 10_000)) == .varispeed)
        #expect(TimeScaleAlgorithm.auto.resolved(for: StretchRatio(Int64.max - 1, Int64.max)) == .varispeed)
        #expect(TimeScaleAlgorithm.wsola.resolved(for: StretchRatio(1, 1)) == .wsola)
        #expect(TimeScaleAlgorithm(name: "timeDomain") == .wsola && TimeScaleAlgorithm(name: "spectral") == .spectral)
        #expect(TimeScaleAlgorithm(name: "auto") == .auto && TimeScaleAlgorithm(name: "fast") == nil)
    }

    /// One exact range rule: a scale of exactly 4 (or 1/4) is taken, one flick more is
    /// not, though its Double is 4.0.
    @Test func theScaleRangeIsExact() {
        let one = MediaTime(value: 1, timescale: 1)
        let flick = MediaTime.flickTimescale
        #expect(StretchRatio.isSupportedScale(from: one, to: MediaTime(value: 4, timescale: 1)))
        #expect(StretchRatio.isSupportedScale(from: one, to: MediaTime(value: 1, timescale: 4)))
        #expect(!StretchRatio.isSupportedScale(from: one, to: MediaTime(value: 4 * Int64(flick) + 1, timescale: flick)))
        // (2^62 + 1) / 2^60 is 4 + 2^-60: 4.0 as a Double, refused exactly.
        let long = MediaTime(value: 1 << 60, timescale: 1), over = MediaTime(value: (1 << 62) + 1, timescale: 1)
        #expect(over.approximateSeconds / long.approximateSeconds == 4.0)
        #expect(!StretchRatio.isSupportedScale(from: long, to: over))
        #expect(StretchRatio.isSupportedScale(from: long, to: MediaTime(value: 1 << 62, timescale: 1)))
        #expect(!StretchRatio.isSupportedScale(from: one, to: MediaTime(value: Int64(flick) / 4 - 1, timescale: flick)))
        #expect(throws: MixdownError.invalidParameter(name: "--ratio", value: "4000001/1000000", reason: "must lie between 0.25 and 4")) {
            try StretchRatio(4_000_001, 1_000_000).validate()
        }
        #expect(throws: MixdownError.invalidParameter(name: "varispeed", value: "ratio 5/1", reason: "must lie between 1/4 and 4")) {
            try StretchRatio(5, 1).validate(limit: StretchRatio.limit(convertingRate: false), parameter: "varispeed")
        }
        #expect((try? StretchRatio(256, 1).validate(limit: StretchRatio.limit(convertingRate: true), parameter: "x")) != nil)
    }
}
