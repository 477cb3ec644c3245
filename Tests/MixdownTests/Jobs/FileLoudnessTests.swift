import Foundation
import Testing
@testable import Mixdown

/// `FileLoudness` on files: the EBU Tech 3341 and 3342 signals written to WAV and measured
/// by Mixdown, by ffmpeg's ebur128 filter and by pyloudnorm (tools/.venv), on the same
/// files; each within the tolerance of the expected value, and of each other.
@Suite(.serialized) struct FileLoudnessTests {
    typealias Tone = LoudnessMeterTests.Tone
    static let ffmpeg = ["/usr/bin/ffmpeg", "/usr/local/bin/ffmpeg"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let python = OTIOPaths.repository.appendingPathComponent("tools/.venv/bin/python").path

    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        try runProcess(executable, arguments).output
    }

    /// ffmpeg's summary: integrated loudness, loudness range, true peak.
    static func ffmpegMeasure(_ path: String) throws -> (i: Double, lra: Double, tp: Double) {
        let text = try run(ffmpeg!, ["-hide_banner", "-nostats", "-i", path, "-af", "ebur128=peak=true", "-f", "null", "-"])
        func value(_ label: String) -> Double {
            let line = text.split(separator: "\n").last { $0.trimmingCharacters(in: .whitespaces).hasPrefix(label) }
            return line.flatMap { Double($0.split(separator: " ").dropFirst().first { Double($0) != nil } ?? "") } ?? .nan
        }
        return (value("I:"), value("LRA:"), value("Peak:"))
    }

    static let cases: [(name: String, tones: [Tone], lufs: Double?, lra: Double?, peak: Double?)] = [
        ("3341-1", [Tone(dbfs: -23, seconds: 20)], -23, nil, nil),
        ("3341-2", [Tone(dbfs: -33, seconds: 20)], -33, nil, nil),
        ("3341-3", [Tone(dbfs: -36, seconds: 10), Tone(dbfs: -23, seconds: 60), Tone(dbfs: -36, seconds: 10)], -23, nil, nil),
        ("3341-4", [-72.0, -36, -23, -36, -72].enumerated().map { Tone(dbfs: $0.1, seconds: $0.0 == 2 ? 60 : 10) }, -23, nil, nil),
        ("3341-5", [Tone(dbfs: -26, seconds: 20), Tone(dbfs: -20, seconds: 20.1), Tone(dbfs: -26, seconds: 20)], -23, nil, nil),
        ("3342-1", [Tone(dbfs: -20, seconds: 20), Tone(dbfs: -30, seconds: 20)], nil, 10, nil),
        ("3342-2", [Tone(dbfs: -20, seconds: 20), Tone(dbfs: -15, seconds: 20)], nil, 5, nil),
        ("3342-3", [Tone(dbfs: -40, seconds: 20), Tone(dbfs: -20, seconds: 20)], nil, 20, nil),
        ("3342-4", [-50.0, -35, -20, -35, -50].map { Tone(dbfs: $0, seconds: 20) }, nil, 15, nil),
        ("tp-12k-45", [Tone(dbfs: -6, seconds: 5, frequency: 12_000, phaseDegrees: 45)], nil, nil, -6),
        ("tp-12k-60", [Tone(dbfs: -6, seconds: 5, frequency: 12_000, phaseDegrees: 60)], nil, nil, -6),
    ]

    @Test func mixdownFfmpegAndPyloudnormAgreeOnTheTechDocumentSignals() throws {
        #expect(Self.ffmpeg != nil, "ffmpeg is missing: tools/setup ffmpeg installs it")
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = TempDir()
        var paths: [String] = []
        for c in Self.cases {
            let path = dir.file("\(c.name).wav")
            try writeFile(path, LoudnessMeterTests.signal(c.tones), sampleRate: 48_000, format: .f32)
            paths.append(path)
        }
        let pyOut = try Self.run(Self.python, [OTIOPaths.repository.appendingPathComponent("tools/check/loudness/pyloudnorm_check.py").path] + paths)
        var pyloudnorm: [String: Double] = [:]
        for line in pyOut.split(separator: "\n") {
            let parts = line.split(separator: "\t")
            if parts.count == 2 { pyloudnorm[String(parts[0])] = Double(parts[1]) }
        }
        for (c, path) in zip(Self.cases, paths) {
            let ours = try FileLoudness(input: path).run().loudness
            let theirs = try Self.ffmpegMeasure(path)
            if let lufs = c.lufs {
                #expect(abs(ours.integrated - lufs) <= 0.1, "\(c.name): Mixdown \(ours.integrated)")
                #expect(abs(theirs.i - lufs) <= 0.1, "\(c.name): ffmpeg \(theirs.i)")
                let py = try #require(pyloudnorm[path], "\(c.name): pyloudnorm gave no value: \(pyOut)")
                #expect(abs(py - lufs) <= 0.1, "\(c.name): pyloudnorm \(py)")
            }
            if let lra = c.lra {
                #expect(abs(ours.range - lra) <= 1, "\(c.name): Mixdown \(ours.range) LU")
                #expect(abs(theirs.lra - lra) <= 1, "\(c.name): ffmpeg \(theirs.lra) LU")
            }
            if let peak = c.peak {
                #expect(ours.truePeak <= peak + 0.2 && ours.truePeak >= peak - 0.4, "\(c.name): Mixdown \(ours.truePeak) dBTP")
                // ffmpeg 5.1 over-reads these (-5.4 and -5.7 dBTP, its oversampler rings at the
                // tone's abrupt start): Mixdown's reading is the closer one.
                #expect(theirs.tp >= peak - 0.4 && abs(ours.truePeak - peak) <= abs(theirs.tp - peak) + 0.05,
                        "\(c.name): Mixdown \(ours.truePeak), ffmpeg \(theirs.tp) dBTP")
            }
            // Whatever the case, Mixdown and ffmpeg (one decimal) read the same loudness.
            if ours.integrated.isFinite { #expect(abs(ours.integrated - theirs.i) <= 0.1, "\(c.name): \(ours.integrated) vs ffmpeg \(theirs.i)") }
        }
    }

    @Test func aMissingFileIsNamed() {
        #expect(throws: MixdownError.fileNotFound(path: "/nonexistent/x.wav")) {
            _ = try FileLoudness(input: "/nonexistent/x.wav").run()
        }
    }
}

/// The repository's root, for the tools the tests run.
enum OTIOPaths {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
}
