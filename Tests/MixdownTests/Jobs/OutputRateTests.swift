import Foundation
import Testing
@testable import Mixdown

/// `--rate` on export and stretch, and Opus from any input rate: the output is resampled by
/// Mixdown's resampler to exactly round(frames x R' / R) frames, a tone keeps its pitch, the
/// report says so, and a bad rate is refused with nothing written.
@Suite struct OutputRateTests {
    /// 3 s of a 1 kHz sine at 0.5 in stereo, at `rate`.
    static func tone(_ dir: TempDir, rate: Int) throws -> String {
        let path = dir.file("tone\(rate).wav")
        let plane = (0..<(3 * rate)).map { i in Float(0.5 * sin(2 * .pi * 1000 * Double(i) / Double(rate))) }
        try writeFile(path, [plane, plane], sampleRate: rate, format: .f32)
        return path
    }

    /// The tone's frequency, from its upward zero crossings over the middle second.
    static func frequency(_ plane: [Float], rate: Int) -> Double {
        var crossings: [Double] = []
        for i in rate..<(2 * rate) where plane[i - 1] < 0 && plane[i] >= 0 {
            crossings.append(Double(i - 1) + Double(-plane[i - 1] / (plane[i] - plane[i - 1])))
        }
        return Double(rate) * Double(crossings.count - 1) / (crossings.last! - crossings.first!)
    }

    @Test(arguments: [(44_100, 32_000), (44_100, 96_000), (48_000, 44_100)])
    func exportAtAnotherRate(from: Int, to: Int) throws {
        let dir = TempDir()
        var job = FileExport(input: try Self.tone(dir, rate: from), output: dir.file("out.wav"))
        job.settings.sampleRate = to
        let report = try job.run()
        let expected = StretchRatio(Int64(to), Int64(from)).outputFrames(forInput: Int64(3 * from))
        #expect(report.sampleRate == to && report.frames == expected && report.resampledFrom == from)
        let written = try readFile(dir.file("out.wav"))
        #expect(written.info.sampleRate == to && Int64(written.planes[0].count) == expected)
        #expect(abs(Self.frequency(written.planes[0], rate: to) - 1000) < 0.01)
        // The level is kept: the resampler's passband is flat.
        let peak = written.planes[0][to..<(2 * to)].map { abs($0) }.max()!
        #expect(abs(peak - 0.5) < 0.002, "\(peak)")
    }

    /// An Opus output of 44.1 kHz input is written at 48 kHz, exactly 3 s long; so is a
    /// WebM's, and a stretch's.
    @Test func opusFromAnyRateIsResampledTo48kHz() throws {
        let dir = TempDir()
        let input = try Self.tone(dir, rate: 44_100)
        let export = try FileExport(input: input, output: dir.file("out.opus")).run()
        #expect(export.sampleRate == 48_000 && export.frames == 144_000 && export.resampledFrom == 44_100)
        let decoded = try readFile(dir.file("out.opus"))
        #expect(decoded.info.sampleRate == 48_000 && decoded.info.frames == 144_000)
        #expect(abs(Self.frequency(decoded.planes[0], rate: 48_000) - 1000) < 0.05)
        #if FFmpeg
        let webm = try FileExport(input: input, output: dir.file("out.webm")).run()
        #expect(webm.sampleRate == 48_000 && webm.frames == 144_000)
        #endif
        var stretch = FileStretch(input: input, output: dir.file("s.opus"), target: .ratio(StretchRatio(1001, 1000)))
        stretch.algorithm = .varispeed
        let s = try stretch.run()
        // 132,300 frames stretched to 132,432, then to 48 kHz: round(132,432 x 480 / 441).
        #expect(s.sampleRate == 48_000 && s.outputFrames == StretchRatio(48_000, 44_100).outputFrames(forInput: 132_432))
        #expect(try AudioFileInfo.read(path: dir.file("s.opus")).frames == s.outputFrames)
    }

    #if FFmpeg
    /// Opus decodes at 48 kHz whatever rate its header says the input had (as every Opus
    /// decoder does): opusenc's file of a 44.1 kHz input.
    @Test func anOpusInputDecodesAt48kHz() throws {
        let dir = TempDir()
        let input = try Self.tone(dir, rate: 44_100)
        let pcm = dir.file("s16.wav")
        var export = FileExport(input: input, output: pcm)
        export.settings.sampleFormat = .s16
        _ = try export.run()
        _ = try tool("opusenc", ["--quiet", pcm, dir.file("enc.opus")])
        let info = try AudioFileInfo.read(path: dir.file("enc.opus"))
        #expect(info.sampleRate == 48_000 && info.frames == 144_000, "\(info)")
    }
    #endif

    /// A document of 44.1 kHz media with no output rate, rendered to Opus: at 48 kHz, 3 s
    /// exactly; with the document's own rate of 44.1 kHz it is refused, not changed.
    @Test func anOpusRenderOfA44kHzDocumentIsAt48kHz() throws {
        let dir = TempDir()
        let input = try Self.tone(dir, rate: 44_100)
        func document(_ output: String) throws -> CompositionDocument {
            try CompositionDocument(data: Data("""
            {"version": 1, \(output) "tracks": [{"name": "a", "segments": [{"file": "\(input)", "at": "0"}]}]}
            """.utf8), path: dir.file("doc.json"))
        }
        let report = try document("").render(to: dir.file("r.opus")).run()
        #expect(report.sampleRate == 48_000 && report.frames == 144_000)
        #expect(try AudioFileInfo.read(path: dir.file("r.opus")).frames == 144_000)
        #expect(throws: MixdownError.self) {
            _ = try document("\"output\": {\"sample_rate\": 44100, \"channels\": 2},").render(to: dir.file("s.opus")).run()
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("s.opus")))
    }

    @Test func badRatesAreRefusedAndNothingIsWritten() throws {
        let dir = TempDir()
        let input = try Self.tone(dir, rate: 48_000)
        var job = FileExport(input: input, output: dir.file("a.wav"))
        job.settings.sampleRate = 7
        #expect(throws: MixdownError.invalidParameter(name: "--rate", value: "7", reason: "must be a sample rate from 8000 to 768000 Hz")) {
            _ = try job.run()
        }
        // Opus takes 8, 12, 16, 24 or 48 kHz: an explicit 44.1 kHz is refused, not changed.
        var opus = FileExport(input: input, output: dir.file("b.opus"))
        opus.settings.sampleRate = 44_100
        #expect(throws: MixdownError.invalidParameter(name: "--rate", value: "44100",
                                                      reason: "Opus ('\(dir.file("b.opus"))') takes 8000, 12000, 16000, 24000 or 48000 Hz; leave --rate out to write 48000 Hz")) {
            _ = try opus.run()
        }
        // A rate Opus takes is written at that rate, whole.
        var opus24 = FileExport(input: input, output: dir.file("d.opus"))
        opus24.settings.sampleRate = 24_000
        let d = try opus24.run()
        #expect(d.sampleRate == 24_000 && d.frames == 72_000)
        let decoded = try AudioFileInfo.read(path: dir.file("d.opus"))
        #expect(decoded.frames == 72_000 && decoded.sampleRate == 24_000, "\(decoded)")
        var align = FileAlign(input: input, reference: input, output: dir.file("c.wav"))
        align.settings.sampleRate = 44_100
        #expect(throws: MixdownError.invalidParameter(name: "--rate", value: "44100", reason: "an aligned output is at its reference's rate (48000 Hz)")) {
            _ = try align.run()
        }
        for name in ["a.wav", "b.opus", "c.wav"] { #expect(!FileManager.default.fileExists(atPath: dir.file(name)), "\(name)") }
    }
}
