import Foundation
import Testing
@testable import MixdownCommands

/// No option destroys a file it was not asked to write, and a check that cannot measure
/// fails: each case wrote over or into a file, or passed a check that read NaN, with exit 0.
@Suite struct DataSafetyTests {
    static func bytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Runs sox (Debian's, an independent tool) with `args`; its exit status.
    static func sox(_ args: [String]) throws -> Int32 {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sox")
        p.arguments = args
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// `batch --results` names the manifest, a job's input, or a file Mixdown did not write:
    /// refused, every byte of it left as it was. A results file Mixdown wrote is appended to.
    @Test func aResultsFileIsNeverAnotherFile() throws {
        let dir = ScratchDir()
        try BatchCLITests.inputs(1, in: dir.path)
        try BatchCLITests.write([["stretch", "in0.wav", "out.wav", "--ratio", "1.001"]], to: dir.file("m.jsonl"))
        try "first line\nlast line without a newline".write(toFile: dir.file("notes.txt"), atomically: true, encoding: .utf8)
        for (target, words) in [("m.jsonl", "is the manifest itself"), ("in0.wav", "which line 1 reads"), ("notes.txt", "did not write as a batch's results")] {
            let before = Self.bytes(dir.file(target))
            let r = try CLI.run(["batch", "m.jsonl", "--results", target], in: dir.path)
            #expect(r.code != 0 && r.stderr.contains(words) && r.stderr.contains(target), "\(target): \(r.stderr)")
            #expect(Self.bytes(dir.file(target)) == before, "\(target) was changed")
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.wav")), "a job ran")
        }
        // Mixdown's own results file: appended to, and a rerun skips the job.
        let first = try CLI.run(["batch", "m.jsonl", "--results", "r.jsonl"], in: dir.path)
        #expect(first.code == 0, "\(first.stderr)")
        let again = try CLI.run(["batch", "m.jsonl", "--results", "r.jsonl", "--json"], in: dir.path)
        let skipped = try BatchCLITests.summary(again)["skipped"] as? Int
        #expect(again.code == 0 && skipped == 1, "\(again.stdout)\(again.stderr)")
    }

    /// `sync --stems DIR` where DIR holds a recording: its stem would replace it. Refused
    /// before any analysis, with or without --overwrite, alone and in a batch (whose check
    /// knows every stem the job will write), the recording's bytes unchanged.
    @Test func aStemNeverReplacesItsRecording() throws {
        let dir = ScratchDir()
        let made = try CLI.run(["generate-pair", "a.wav", "b.wav", "--duration", "30", "--offset", "1", "--ppm", "30"], in: dir.path)
        #expect(made.code == 0, "\(made.stderr)")
        let before = Self.bytes(dir.file("b.wav"))
        for extra in [[], ["--overwrite"]] {
            let r = try CLI.run(["sync", "a.wav", "b.wav", "--stems", "."] + extra, in: dir.path)
            #expect(r.code != 0 && r.stderr.contains("--stems") && r.stderr.contains("b.wav") && r.stderr.contains("which this sync reads"), "\(r.stderr)")
            #expect(Self.bytes(dir.file("b.wav")) == before)
        }
        try #"{"args":["sync","a.wav","b.wav","--stems","."]}"#.appending("\n").write(toFile: dir.file("m.jsonl"), atomically: true, encoding: .utf8)
        let batch = try CLI.run(["batch", "m.jsonl"], in: dir.path)
        #expect(batch.code != 0 && batch.stderr.contains("b.wav") && batch.stderr.contains("it also reads"), "\(batch.stderr)")
        #expect(Self.bytes(dir.file("b.wav")) == before)
        // Into its own directory, the same job writes the stem.
        let ok = try CLI.run(["sync", "a.wav", "b.wav", "--stems", "stems", "-q"], in: dir.path)
        #expect(ok.code == 0 && FileManager.default.fileExists(atPath: dir.file("stems/b.wav")), "\(ok.stderr)")
    }

    /// `stretch --align` of a recording that is REF reversed, with --min-confidence 0: the
    /// check of the output cannot measure it (no window matches), so it fails; nothing is
    /// written, and --json gives no NaN.
    @Test func anAlignmentCheckThatCannotMeasureFails() throws {
        let dir = ScratchDir()
        let made = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "30", "--offset", "1", "--ppm", "30"], in: dir.path)
        #expect(made.code == 0, "\(made.stderr)")
        #expect(try Self.sox([dir.file("ref.wav"), dir.file("rev.wav"), "reverse"]) == 0)
        for json in [[], ["--json"]] {
            let r = try CLI.run(["stretch", "rev.wav", "out.wav", "--align", "ref.wav", "--min-confidence", "0"] + json, in: dir.path)
            #expect(r.code != 0, "exit 0: \(r.stdout)")
            #expect(!r.stdout.lowercased().contains("nan") && !r.stderr.lowercased().contains("nan"), "\(r.stdout)\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: dir.file("out.wav")))
        }
    }

    /// A 1-frame input stretched by 0.25 has no output frames: refused before writing.
    @Test func aStretchToZeroFramesIsRefused() throws {
        let dir = ScratchDir()
        #expect(try Self.sox(["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("one.wav"), "trim", "0", "1s"]) == 0)
        let r = try CLI.run(["stretch", "one.wav", "o.wav", "--ratio", "0.25"], in: dir.path)
        #expect(r.code == 1 && r.stderr.contains("zero frames") && r.stderr.contains("one.wav"), "\(r.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("o.wav")))
    }
}

/// No JSON Mixdown prints holds NaN or Infinity (JSON has neither, and a Swift encoder
/// throws on them): a value that could not be measured is null, and a warning names it.
@Suite struct JSONNonFiniteTests {
    struct Report: Encodable { let offsetMs: Double; let lagMs: Double; let peak: Double; let name: String }

    @Test func nonFiniteNumbersAreNullAndNamed() throws {
        var warnings: [String] = []
        let text = try jsonText(Report(offsetMs: 1.5, lagMs: .nan, peak: -.infinity, name: "a"), warn: { warnings.append($0) })
        #expect(text == #"{"lag_ms":null,"name":"a","offset_ms":1.5,"peak":null}"#)
        #expect(warnings.count == 1 && warnings[0].contains("lag_ms, peak could not be measured"), "\(warnings)")
        let clean = try jsonText(Report(offsetMs: 1, lagMs: 2, peak: 3, name: "b"), warn: { warnings.append($0) })
        #expect(!clean.contains("null") && warnings.count == 1)
    }
}
