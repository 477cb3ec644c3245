import Foundation
import Testing

/// Issue 45: no job destroys its own inputs, no Ctrl-C is lost, no damaged file reads as a
/// good one, and messages name the thing at fault. Each test fails on the code before it.
@Suite(.serialized) struct HardeningTests {
    // MARK: - Batch jobs that would destroy their inputs

    /// Runs `batch m.jsonl` over `lines` in a fresh directory with in0.wav; the batch must
    /// be refused naming `line` and `reason`, with every file as it was.
    static func refusedBatch(_ lines: [[String]], line: Int, reason: String, results: String? = nil) throws {
        let dir = ScratchDir()
        try BatchCLITests.inputs(2, in: dir.path)
        try BatchCLITests.write(lines, to: dir.file("m.jsonl"))
        var args = ["batch", "m.jsonl"]
        if let results { args += ["--results", results] }
        let before = try BatchCLITests.files(dir.path).map { ($0, try Data(contentsOf: URL(fileURLWithPath: dir.file($0)))) }
        let r = try CLI.run(args, in: dir.path)
        #expect(r.code == 1, "\(lines): \(r.stderr)")
        #expect(r.stderr.contains("'m.jsonl': line \(line): "), "\(r.stderr)")
        #expect(r.stderr.contains(reason), "\(r.stderr)")
        let after = try BatchCLITests.files(dir.path).map { ($0, try Data(contentsOf: URL(fileURLWithPath: dir.file($0)))) }
        #expect(after.map(\.0) == before.map(\.0), "files changed: \(after.map(\.0))")
        #expect(zip(after, before).allSatisfy { $0.1 == $1.1 }, "a file's content changed")
    }

    @Test func aBatchLineThatWritesTheManifestIsRefused() throws {
        try Self.refusedBatch([["stretch", "in0.wav", "a.wav", "--ratio", "1.01"], ["stretch", "in1.wav", "m.jsonl", "--ratio", "1.01", "--type", "wav", "--overwrite"]],
                              line: 2, reason: "m.jsonl', which is the manifest itself")
    }

    @Test func aBatchLineThatWritesTheResultsFileIsRefused() throws {
        try Self.refusedBatch([["export", "in0.wav", "m.results.jsonl", "--type", "wav", "--overwrite"]],
                              line: 1, reason: "which is the batch's results file")
        try Self.refusedBatch([["export", "in0.wav", "r.jsonl", "--type", "wav", "--overwrite"]],
                              line: 1, reason: "which is the batch's results file", results: "r.jsonl")
    }

    @Test func aBatchLineThatWritesItsOwnInputIsRefusedEvenByAnotherName() throws {
        try Self.refusedBatch([["stretch", "in0.wav", "in0.wav", "--ratio", "1.01", "--overwrite"]],
                              line: 1, reason: "which it also reads")
        // The same file through another path: ./sub/../in0.wav and a hard link.
        let dir = ScratchDir()
        try BatchCLITests.inputs(1, in: dir.path)
        try FileManager.default.createDirectory(atPath: dir.file("sub"), withIntermediateDirectories: true)
        #expect(link(dir.file("in0.wav"), dir.file("sub/alias.wav")) == 0)
        try BatchCLITests.write([["stretch", "in0.wav", "sub/alias.wav", "--ratio", "1.01", "--overwrite"]], to: dir.file("m.jsonl"))
        let r = try CLI.run(["batch", "m.jsonl"], in: dir.path)
        #expect(r.code == 1 && r.stderr.contains("line 1: writes") && r.stderr.contains("which it also reads"), "\(r.stderr)")
    }

    @Test func twoBatchLinesWithOneOutputAreRefusedNamingBoth() throws {
        try Self.refusedBatch([["stretch", "in0.wav", "o.wav", "--ratio", "1.01"], ["export", "in1.wav", "sub/../o.wav"]],
                              line: 2, reason: "which line 1 writes too")
    }

    @Test func aBatchLineThatReadsAnotherLinesOutputIsRefused() throws {
        try Self.refusedBatch([["stretch", "in0.wav", "o.wav", "--ratio", "1.01"], ["export", "o.wav", "p.wav"]],
                              line: 2, reason: "reads '")
    }

    @Test func aNulInABatchArgumentIsRefused() throws {
        try Self.refusedBatch([["export", "in0.wav", "out/x\u{0}.wav"]], line: 1, reason: "args[2] holds a NUL character")
    }

    // MARK: - Ctrl-C

    /// SIGINT at random times over a short stretch, from the process's start to past its
    /// end: never a temporary file, an output only when complete, and never exit 0 or an
    /// output when the signal came early in the job.
    ///
    /// "Early" is the first quarter of the fastest uninterrupted run seen so far, re-timed
    /// every 25 tries: run beside a whole suite, a job's length varies twofold as the load
    /// comes and goes, and a run that finished quicker than the one timed at the start is no
    /// lost signal (CI saw one commit in 260 ms of a 552 ms median, and exit 130 afterwards).
    @Test func ctrlCAtRandomTimesIsNeverLost() throws {
        let dir = ScratchDir()
        var r = try CLI.run(["generate", "in.wav", "--duration", "120", "-q"], in: dir.path)
        #expect(r.code == 0)
        let args = ["stretch", "in.wav", "out.wav", "--ratio", "1.1", "--algorithm", "wsola", "--quiet", "--overwrite"]
        var fastest = Double.infinity
        func time() throws {
            let start = Date()
            r = try CLI.run(args, in: dir.path)
            #expect(r.code == 0, "\(r.stderr)")
            fastest = min(fastest, Date().timeIntervalSince(start))
        }
        for _ in 0..<3 { try time() }
        let size = try FileManager.default.attributesOfItem(atPath: dir.file("out.wav"))[.size] as! Int
        var g = SystemRandomNumberGenerator()
        var counts = [Int32: Int]()
        let tries = 200
        for i in 0..<tries {
            if i > 0 && i % 25 == 0 { try time() }
            try? FileManager.default.removeItem(atPath: dir.file("out.wav"))
            let early = i % 2 == 0
            let delay = Double.random(in: 0...(early ? 0.25 : 1.3) * fastest, using: &g)
            let p = Process()
            p.executableURL = CLI.executable
            p.arguments = args
            p.currentDirectoryURL = URL(fileURLWithPath: dir.path)
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(delay * 1e6))
            kill(p.processIdentifier, SIGINT)
            p.waitUntilExit()
            // Killed by the signal itself: it came before the handler was installed (the
            // dynamic loader's time), when nothing is written yet. Counted as 130.
            let killed = p.terminationReason == .uncaughtSignal && p.terminationStatus == SIGINT
            let code = killed ? 130 : p.terminationStatus
            counts[killed ? -SIGINT : code, default: 0] += 1
            #expect(code == 0 || code == 130, "try \(i): exit \(code)")
            #expect(dir.contents.filter { $0.hasPrefix(".") }.isEmpty, "try \(i): \(dir.contents)")
            let written = (try? FileManager.default.attributesOfItem(atPath: dir.file("out.wav"))[.size]) as? Int
            if let written { #expect(written == size, "try \(i): a partial output") }
            if early {
                #expect(code == 130, "try \(i): a SIGINT \(Int(delay * 1000)) ms into a run of at least \(Int(fastest * 1000)) ms was lost")
                #expect(written == nil, "try \(i): a SIGINT \(Int(delay * 1000)) ms into a run of at least \(Int(fastest * 1000)) ms left an output")
            }
        }
        print("SIGINT at \(tries) random times over a run of at least \(Int(fastest * 1000)) ms: exits \(counts.sorted { $0.key < $1.key }) (-2: killed before the handler was installed)")
    }

    // MARK: - Damaged and unusual inputs

    /// A FIFO with no writer (open would block) and one fed forever: refused at once.
    @Test func aFIFOIsRefusedNotRead() throws {
        let dir = ScratchDir()
        #expect(mkfifo(dir.file("pipe.wav"), 0o644) == 0)
        for args in [["info", "pipe.wav"], ["stretch", "pipe.wav", "o.wav", "--ratio", "1.1"], ["loudness", "pipe.wav"]] {
            let r = try CLI.run(args, in: dir.path)
            #expect(r.code == 1, "\(args): \(r.stderr)")
            #expect(r.stderr.contains("'pipe.wav': is a directory or not a regular file"), "\(r.stderr)")
        }
        #expect(dir.contents == ["pipe.wav"])
    }

    /// 32-bit float WAV of a sine with `bad` at the given frames.
    static func floatWAV(_ path: String, frames: Int, bad: [(Int, Float)]) throws {
        var samples = (0..<frames).map { Float(0.5 * sin(2 * Double.pi * 440 * Double($0) / 48000)) }
        for (i, v) in bad { samples[i] = v }
        var d = Data("RIFF".utf8)
        func u32(_ v: Int) { withUnsafeBytes(of: UInt32(v).littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: Int) { withUnsafeBytes(of: UInt16(v).littleEndian) { d.append(contentsOf: $0) } }
        u32(36 + 4 * frames); d.append(contentsOf: Array("WAVEfmt ".utf8)); u32(16); u16(3); u16(1); u32(48000); u32(192_000); u16(4); u16(32)
        d.append(contentsOf: Array("data".utf8)); u32(4 * frames)
        for s in samples { withUnsafeBytes(of: s.bitPattern.littleEndian) { d.append(contentsOf: $0) } }
        try d.write(to: URL(fileURLWithPath: path))
    }

    /// NaN and infinity: every command refuses the file, naming it and the first bad
    /// frame; nothing is written.
    @Test func nonFiniteSamplesAreRefusedByEveryCommand() throws {
        let dir = ScratchDir()
        try Self.floatWAV(dir.file("nan.wav"), frames: 144_000, bad: [(1000, .nan), (50_000, .nan), (90_000, .nan)])
        try Self.floatWAV(dir.file("inf.wav"), frames: 144_000, bad: [(70_000, .infinity)])
        for (file, frame, name) in [("nan.wav", 1000, "NaN"), ("inf.wav", 70_000, "+inf")] {
            for args in [["loudness", file], ["export", file, "o.wav", "--loudness", "-16"], ["stretch", file, "o.wav", "--ratio", "1.001"],
                         ["export", file, "o.flac"]] {
                let r = try CLI.run(args, in: dir.path)
                #expect(r.code == 1, "\(args): \(r.stderr)")
                #expect(r.stderr.contains("'\(file)': cannot decode the audio at") && r.stderr.contains("frame \(frame), channel 1 holds \(name)"), "\(args): \(r.stderr)")
            }
        }
        #expect(dir.contents == ["inf.wav", "nan.wav"])
    }

    /// A WebM cut at several points is refused, naming both lengths; the whole file reads.
    @Test func aTruncatedWebMIsRefused() throws {
        let dir = ScratchDir()
        var r = try CLI.run(["generate", "in.wav", "--duration", "4", "-q"], in: dir.path)
        r = try CLI.run(["export", "in.wav", "a.webm", "-q"], in: dir.path)
        guard r.code == 0 else { return }   // a build without FFmpeg writes no WebM
        r = try CLI.run(["info", "a.webm"], in: dir.path)
        #expect(r.code == 0, "\(r.stderr)")
        let whole = try Data(contentsOf: URL(fileURLWithPath: dir.file("a.webm")))
        for percent in [30, 50, 75, 90] {
            try whole.prefix(whole.count * percent / 100).write(to: URL(fileURLWithPath: dir.file("cut.webm")))
            r = try CLI.run(["info", "cut.webm"], in: dir.path)
            #expect(r.code == 1, "\(percent) %: \(r.stdout)")
            #expect(r.stderr.contains("'cut.webm': the file is truncated: its header promises "), "\(percent) %: \(r.stderr)")
        }
    }

    // MARK: - Messages name the thing at fault

    @Test func aSilentInputIsNamed() throws {
        let dir = ScratchDir()
        try Self.floatWAV(dir.file("silence.wav"), frames: 96_000, bad: [])
        // Zero the samples: a silent float file.
        var d = try Data(contentsOf: URL(fileURLWithPath: dir.file("silence.wav")))
        d.replaceSubrange(44..<d.count, with: Data(count: d.count - 44))
        try d.write(to: URL(fileURLWithPath: dir.file("silence.wav")))
        let r = try CLI.run(["stretch", "silence.wav", "o.wav", "--ratio", "1.0001", "--loudness", "-16"], in: dir.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("the input 'silence.wav' is silent"), "\(r.stderr)")
    }

    @Test func aRateTheMeterCannotMeasureNamesTheFileAndExits1() throws {
        let dir = ScratchDir()
        try Self.floatWAV(dir.file("rate1.wav"), frames: 1000, bad: [])
        var d = try Data(contentsOf: URL(fileURLWithPath: dir.file("rate1.wav")))
        d.replaceSubrange(24..<32, with: [1, 0, 0, 0, 4, 0, 0, 0])   // 1 Hz, 4 bytes a second
        try d.write(to: URL(fileURLWithPath: dir.file("rate1.wav")))
        let r = try CLI.run(["loudness", "rate1.wav"], in: dir.path)
        #expect(r.code == 1, "\(r.stderr)")
        #expect(r.stderr.contains("'rate1.wav': its sample rate, 1 Hz, is outside the 8000 to 768000 Hz"), "\(r.stderr)")
    }

    @Test func aNegativeMarkerIntervalIsRefused() throws {
        let dir = ScratchDir()
        let r = try CLI.run(["generate", "g.wav", "--duration", "10", "--marker-interval", "-1"], in: dir.path)
        #expect(r.code == 2)
        #expect(r.stderr.contains("--marker-interval -0:00:01.000000: must be at least one frame long"), "\(r.stderr)")
        #expect(dir.contents.isEmpty)
    }

    /// A document's bitrate or file length limit the output cannot take is the document's
    /// fault: the message gives its JSON path (and the output it was writing).
    @Test func documentSettingsAreNamedByTheirJSONPath() throws {
        let ws = try Workspace()
        let cases: [(String, String, String)] = [
            (#"{"version": 1, "output": {"type": "m4a", "bitrate": 1500}, "tracks": [{"name": "a", "segments": [{"file": "in.wav", "at": "0"}]}]}"#,
             "o.m4a", "'d.json': output.bitrate: a bitrate of 1500 bit/s is outside aac's"),
            (#"{"version": 1, "file_length_limit": 100000, "tracks": [{"name": "a", "segments": [{"file": "in.wav", "at": "0"}]}]}"#,
             "o.m4a", "'d.json': file_length_limit: a file length limit needs a PCM type"),
            (#"{"version": 1, "file_length_limit": 10, "tracks": [{"name": "a", "segments": [{"file": "in.wav", "at": "0"}]}]}"#,
             "o.wav", "'d.json': file_length_limit: a file length limit of 10 bytes does not hold the header"),
        ]
        for (json, output, message) in cases {
            try json.write(toFile: ws.file("d.json"), atomically: true, encoding: .utf8)
            let r = try CLI.run(["render", "d.json", output], in: ws.path)
            // A build without the FFmpeg trait writes no m4a (it says so in either words).
            if output.hasSuffix(".m4a") && (r.stderr.contains("without the FFmpeg trait") || r.stderr.contains("m4a cannot hold")) { continue }
            #expect(r.code == 1, "\(r.stderr)")
            #expect(r.stderr.contains(message) && r.stderr.contains("(writing '\(output)')"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: ws.file(output)))
        }
    }
}
