import Foundation
import Mixdown
import Testing

/// Runs the built `mixdown` executable (it sits beside the test bundle).
struct CLI {
    static let executable: URL = {
        var dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        for bundle in Bundle.allBundles where bundle.bundlePath.hasSuffix(".xctest") {
            dir = bundle.bundleURL.deletingLastPathComponent()
        }
        return dir.appendingPathComponent("mixdown")
    }()

    struct Result { let code: Int32; let stdout: String; let stderr: String }

    /// Runs `mixdown args` in `dir`; with `openFiles`, under `ulimit -n openFiles` (through /bin/sh).
    /// Runs the CLI in `dir`; `openFiles` and `fileSizeBlocks` (512-byte blocks, with
    /// SIGXFSZ ignored, so that a write past it fails with EFBIG) limit the process.
    static func run(_ args: [String], in dir: String, openFiles: Int? = nil, fileSizeBlocks: Int? = nil) throws -> Result {
        let p = Process()
        if openFiles != nil || fileSizeBlocks != nil {
            let quoted = ([executable.path] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
            var limits = ""
            if let limit = openFiles { limits += "ulimit -n \(limit) && " }
            if let blocks = fileSizeBlocks { limits += "trap '' XFSZ && ulimit -f \(blocks) && " }
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", limits + "exec " + quoted.joined(separator: " ")]
        } else {
            p.executableURL = executable
            p.arguments = args
        }
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        return try collect(p)
    }

    /// Runs `p` to its end and returns its status and what it printed.
    static func collect(_ p: Process) throws -> Result {
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return Result(code: p.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }
}

/// A fresh directory holding `in.wav`, a 60 s 48 kHz stereo 16-bit recording that the
/// CLI's own `generate` made once for the whole run.
final class Workspace {
    static let shared: Result<String, Error> = Result {
        let dir = NSTemporaryDirectory() + "mixdown-cli-input-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        let r = try CLI.run(["generate", "in.wav", "--duration", "60", "--rate", "48000", "-q"], in: dir)
        guard r.code == 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: r.stderr]) }
        return dir + "/in.wav"
    }
    let path = NSTemporaryDirectory() + "mixdown-cli-" + UUID().uuidString
    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: Self.shared.get(), toPath: path + "/in.wav")
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
    func file(_ name: String) -> String { path + "/" + name }
}

@Suite(.serialized) struct CLITests {
    @Test func infoPrintsTheExactDuration() throws {
        let ws = try Workspace()
        let json = try CLI.run(["info", "in.wav", "--json"], in: ws.path)
        #expect(json.code == 0)
        let obj = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as! [String: Any]
        #expect(obj["frames"] as? Int == 2_880_000)
        #expect(obj["sample_rate"] as? Int == 48_000)
        #expect(obj["channels"] as? Int == 2)
        #expect(obj["duration"] as? String == "60/1")
        #expect(obj["sample_format"] as? String == "pcm_16" && obj["type"] as? String == "wav")
        let text = try CLI.run(["info", "in.wav"], in: ws.path)
        #expect(text.stdout.contains("frames:      2880000") && text.stdout.contains("0:01:00.000000"))
    }

    /// Apple's QA1730 job from the command line.
    @Test func exportQA1730() throws {
        let ws = try Workspace()
        let r = try CLI.run(["export", "in.wav", "out.wav", "--start", "30", "--duration", "20", "--fade-in", "10", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stderr.isEmpty, "no progress bar when stderr is not a terminal")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(obj["frames"] as? Int == 960_000)
        #expect(obj["source_start_frame"] as? Int == 1_440_000)
        #expect(obj["duration"] as? String == "960000/48000")
        #expect((obj["realtime_factor"] as? Double ?? 0) > 0)
        #expect(try AudioFileInfo.read(path: ws.file("out.wav")).frames == 960_000)
        // The input's frames, 16-bit, at gain 1 after the fade: identical to the source.
        let src = try FileSource(path: ws.file("in.wav"), range: 1_440_000 + 480_000..<1_440_000 + 480_100)
        let out = try FileSource(path: ws.file("out.wav"), range: 480_000..<480_100)
        let a = AudioBuffer(channelCount: 2, capacity: 100), b = AudioBuffer(channelCount: 2, capacity: 100)
        try src.prepare(maximumFrames: 100); try out.prepare(maximumFrames: 100)
        _ = try src.render(into: a, frames: 100); _ = try out.render(into: b, frames: 100)
        #expect(a.samples(channel: 0, frames: 100) == b.samples(channel: 0, frames: 100))
        let quiet = try CLI.run(["export", "in.wav", "q.flac", "--duration", "1440000f", "--quiet"], in: ws.path)
        #expect(quiet.code == 0 && quiet.stdout.isEmpty && quiet.stderr.isEmpty)
        #expect(try AudioFileInfo.read(path: ws.file("q.flac")).frames == 1_440_000)
    }

    /// Each bad input: the exit code, a message naming what is at fault, and nothing written.
    @Test(arguments: [
        (["export", "missing.wav", "out.wav"], Int32(1), "'missing.wav': no such file"),
        (["export", "empty.wav", "out.wav"], 1, "'empty.wav': the file is empty"),
        (["export", "header.wav", "out.wav"], 1, "'header.wav': cannot read audio"),
        (["export", "text.wav", "out.wav"], 1, "'text.wav': cannot read audio: Format not recognised"),
        (["export", "folder.wav", "out.wav"], 1, "'folder.wav': is a directory"),
        (["export", "in.wav", "/proc/mixdown-out.wav"], 1, "'/proc/mixdown-out.wav': cannot write"),
        (["export", "in.wav", "nodir/out.wav"], 1, "'nodir/out.wav': cannot write: directory 'nodir' does not exist"),
        (["export", "in.wav", "out.wav", "--start", "61"], 1, "'in.wav': the requested range start 0:01:01.000000 lies outside the source"),
        (["export", "in.wav", "out.wav", "--start", "50", "--duration", "20"], 1, "lies outside the source, which is 0:01:00.000000 long"),
        (["export", "in.wav", "out.wav", "--duration", "0"], 2, "--duration 0:00:00.000000: must be longer than 0"),
        (["export", "in.wav", "out.wav", "--duration=-5"], 2, "--duration -0:00:05.000000: must be longer than 0"),
        (["export", "in.wav", "out.wav", "--duration", "10", "--fade-in", "11"], 2, "--fade-in 0:00:11.000000: is longer than the output (0:00:10.000000)"),
        (["export", "in.wav", "out.wav", "--duration", "10", "--fade-out", "10"], 2, "--fade-out 0:00:10.000000: is not shorter than the output"),
        (["export", "in.wav", "out.wav", "--start", "nan"], 2, "--start: 'nan' is not a time"),
        (["export", "in.wav", "out.wav", "--fade-in", "1:2:3:4"], 2, "--fade-in: '1:2:3:4' is not a time"),
        (["export", "in.wav", "out.wav", "--duration", "1e3"], 2, "--duration: '1e3' is not a time"),
        (["export", "in.wav", "out.wav", "--type", "mp5"], 2, "--type: 'mp5' is not one of"),
        (["export", "in.wav", "out.wav", "--format", "s8"], 2, "--format: 's8' is not one of s16, s24, f32"),
        (["export", "in.wav", "out.flac", "--format", "f32"], 1, "'out.flac': flac does not store f32 samples"),
        (["export", "in.wav", "out.xyz"], 1, "'out.xyz': unknown extension '.xyz'"),
        (["export", "in.wav", "existing.wav"], 1, "'existing.wav': already exists (pass --overwrite to replace it)"),
        (["export", "in.wav"], 2, "Missing expected argument '<output>'"),
        (["export", "in.wav", "out.wav", "--speed", "2"], 2, "Unknown option '--speed'"),
        (["info", "text.wav"], 1, "'text.wav': cannot read audio"),
    ] as [([String], Int32, String)])
    func badInputFailsCleanly(args: [String], code: Int32, message: String) throws {
        let ws = try Workspace()
        let fm = FileManager.default
        fm.createFile(atPath: ws.file("empty.wav"), contents: Data())
        fm.createFile(atPath: ws.file("text.wav"), contents: Data("this is text, not audio\n".utf8))
        fm.createFile(atPath: ws.file("existing.wav"), contents: Data("keep me".utf8))
        try fm.createDirectory(atPath: ws.file("folder.wav"), withIntermediateDirectories: false)
        let whole = try Data(contentsOf: URL(fileURLWithPath: ws.file("in.wav")))
        fm.createFile(atPath: ws.file("header.wav"), contents: whole.prefix(30))
        let before = ws.contents

        let r = try CLI.run(args, in: ws.path)
        #expect(r.code == code, "\(args): \(r.stderr)")
        #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
        #expect(r.stdout.isEmpty)
        #expect(ws.contents == before, "\(args) wrote something")
        #expect(try String(contentsOfFile: ws.file("existing.wav"), encoding: .utf8) == "keep me")
        #expect(!fm.fileExists(atPath: "/proc/mixdown-out.wav"))
    }

    @Test func overwriteReplacesOnlyWhenAsked() throws {
        let ws = try Workspace()
        FileManager.default.createFile(atPath: ws.file("o.wav"), contents: Data("old".utf8))
        let r = try CLI.run(["export", "in.wav", "o.wav", "--duration", "1", "--overwrite", "-q"], in: ws.path)
        #expect(r.code == 0)
        #expect(try AudioFileInfo.read(path: ws.file("o.wav")).frames == 48_000)
        // --sync takes the durable path (fsync of file and directory) to the same result.
        let synced = try CLI.run(["export", "in.wav", "o.wav", "--duration", "2", "--overwrite", "--sync", "-q"], in: ws.path)
        #expect(synced.code == 0, "\(synced.stderr)")
        #expect(try AudioFileInfo.read(path: ws.file("o.wav")).frames == 96_000)
        #expect(ws.contents == ["in.wav", "o.wav"])
    }

    /// A run removes the temporary files of its destination that dead runs left behind (a
    /// SIGKILL leaves one), says so in --json, and keeps those of runs still alive.
    @Test func staleTemporaryFilesOfDeadRunsAreRemoved() throws {
        let ws = try Workspace()
        let finished = Process()
        finished.executableURL = URL(fileURLWithPath: "/bin/true")
        try finished.run()
        finished.waitUntilExit()
        let dead = ".out.wav.mixdown-\(finished.processIdentifier)-17.tmp"
        let alive = ".out.wav.mixdown-\(getpid())-18.tmp"
        let other = ".other.wav.mixdown-\(finished.processIdentifier)-19.tmp"
        for name in [dead, alive, other] {
            try Data(repeating: 7, count: 1000).write(to: URL(fileURLWithPath: ws.file(name)))
        }
        let r = try CLI.run(["export", "in.wav", "out.wav", "--duration", "1", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(obj["removed_stale_temporary_files"] as? [String] == ["./" + dead])
        #expect(ws.contents == [other, alive, "in.wav", "out.wav"].sorted())
    }

    /// Ctrl-C, a kill and a closed terminal or ssh session (SIGHUP) cancel the render:
    /// exit 130, nothing left behind. SIGPIPE is ignored: it never kills a render mid-write
    /// (the render runs to its end). The render is a 10-minute stretch (about half a second), and
    /// the signal is sent once its temporary output exists: it is certainly running.
    @Test(arguments: [SIGINT, SIGTERM, SIGHUP, SIGPIPE])
    func interruptLeavesNoFile(signalNumber: Int32) throws {
        let ws = try Workspace()
        let made = try CLI.run(["generate", "long.wav", "--duration", "600", "-q"], in: ws.path)
        #expect(made.code == 0, "\(made.stderr)")
        let p = Process()
        p.executableURL = CLI.executable
        p.arguments = ["stretch", "long.wav", "out.wav", "--ratio", "1.1", "--algorithm", "wsola", "-q"]
        p.currentDirectoryURL = URL(fileURLWithPath: ws.path)
        let err = Pipe()
        p.standardError = err
        try p.run()
        // Wait until the temporary output exists: the render has started.
        var waited = 0
        while !ws.contents.contains(where: { $0.hasPrefix(".out.wav.mixdown-") }) && waited < 10_000 {
            usleep(2_000); waited += 2
        }
        #expect(ws.contents.contains { $0.hasPrefix(".out.wav.mixdown-") })
        kill(p.processIdentifier, signalNumber)
        p.waitUntilExit()
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(p.terminationReason == .exit, "killed by signal \(signalNumber)")
        if signalNumber == SIGPIPE {
            #expect(p.terminationStatus == 0, "\(stderr)")
            #expect(ws.contents == ["in.wav", "long.wav", "out.wav"])
        } else {
            #expect(p.terminationStatus == 130, "\(stderr)")
            #expect(stderr.contains("cancelled"))
            #expect(ws.contents == ["in.wav", "long.wav"])
        }
    }
}

@Suite(.serialized) struct StretchCLITests {
    @Test func stretchHitsTheExactTargetEveryWay() throws {
        let ws = try Workspace()
        func frames(_ args: [String]) throws -> Int {
            let r = try CLI.run(["stretch", "in.wav", "out.wav", "--overwrite", "--json"] + args, in: ws.path)
            #expect(r.code == 0, "\(args): \(r.stderr)")
            let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
            #expect(obj["input_frames"] as? Int == 2_880_000)
            #expect((obj["realtime_factor"] as? Double ?? 0) > 0 && obj["algorithm"] as? String != nil)
            let n = obj["output_frames"] as! Int
            #expect(Int64(n) == (try AudioFileInfo.read(path: ws.file("out.wav")).frames))
            return n
        }
        // 2,880,000 × 1.0001309 = 2,880,376.992 → 2,880,377.
        #expect(try frames(["--ratio", "1.0001309"]) == 2_880_377)
        #expect(try frames(["--ratio", "10001309/10000000", "--resampler", "libsamplerate", "--quality", "fastest"]) == 2_880_377)
        #expect(try frames(["--to-frames", "2880377", "--algorithm", "wsola"]) == 2_880_377)
        // The spectral stretch through the file job (a preroll comes between prepare and render).
        #expect(try frames(["--ratio", "1.25", "--algorithm", "spectral"]) == 3_600_000)
        #expect(try frames(["--to-duration", "60.5"]) == 2_904_000)
        #expect(try frames(["--to-duration", "2904001f"]) == 2_904_001)
        _ = try CLI.run(["export", "in.wav", "ref.flac", "--duration", "59.5", "-q"], in: ws.path)
        #expect(try frames(["--match", "ref.flac"]) == 2_856_000)
        let rb = try CLI.run(["stretch", "in.wav", "rb.wav", "--ratio", "1.25", "--algorithm", "rubberband", "--quality", "medium", "-q"], in: ws.path)
        if TimeScaleAlgorithm.rubberband.isAvailable {
            #expect(rb.code == 0, "\(rb.stderr)")
            #expect(try AudioFileInfo.read(path: ws.file("rb.wav")).frames == 3_600_000)
        } else {
            #expect(rb.code == 2 && rb.stderr.contains("--algorithm rubberband: is not built into this Mixdown"))
            #expect(!FileManager.default.fileExists(atPath: ws.file("rb.wav")))
        }
        // The markers of the generated input land where they should.
        let sync = try CLI.run(["measure-sync", "in.wav", "out.wav", "--json"], in: ws.path)
        #expect(sync.code == 0, "\(sync.stderr)")
    }

    /// `measure-sync` finds every marker and reports what it measured: within a sample for
    /// varispeed, within WSOLA's documented 1.5 ms + (W/2)|1 - 1/R| for WSOLA, and a marker
    /// that is not where it should be shows as the error it is.
    @Test func measureSyncReportsEveryMarker() throws {
        let ws = try Workspace()
        #expect(try CLI.run(["generate", "m.wav", "--duration", "60", "--marker-interval", "10", "-q"], in: ws.path).code == 0)
        func measure(_ algorithm: String) throws -> [String: Any] {
            let s = try CLI.run(["stretch", "m.wav", "\(algorithm).wav", "--ratio", "1.0001309", "--algorithm", algorithm, "-q"], in: ws.path)
            #expect(s.code == 0, "\(s.stderr)")
            let r = try CLI.run(["measure-sync", "m.wav", "\(algorithm).wav", "--interval", "10", "--json"], in: ws.path)
            #expect(r.code == 0, "\(r.stderr)")
            return try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        }
        let v = try measure("varispeed")
        let markers = v["markers"] as! [[String: Any]]
        #expect(markers.map { $0["source_frame"] as! Int } == [480_000, 960_000, 1_440_000, 1_920_000, 2_400_000])
        #expect(markers.allSatisfy { abs(($0["expected_frame"] as! Double) - Double($0["source_frame"] as! Int) * 1.0001309027777778) < 1e-6 })
        #expect(v["stretched_frames"] as? Int == 2_880_377 && v["original_frames"] as? Int == 2_880_000)
        #expect((v["worst_milliseconds"] as! Double) < 1000.0 / 48_000, "varispeed: within one sample")
        let w = try measure("wsola")
        let worst = w["worst_milliseconds"] as! Double
        #expect(worst > 0.1 && worst <= 1.5 + 20 * (1 - 1 / 1.0001309) + 0.05, "WSOLA: \(worst) ms")
        // The original against itself, told a ratio it was not made with: every marker off by ratio x t.
        let r = try CLI.run(["measure-sync", "m.wav", "m.wav", "--interval", "10", "--ratio", "1.0001309", "--json"], in: ws.path)
        let off = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let errors = (off["markers"] as! [[String: Any]]).map { $0["error_frames"] as! Double }
        #expect(zip(errors, [480_000.0, 960_000, 1_440_000, 1_920_000, 2_400_000]).allSatisfy { abs($0 + $1 * 0.0001309) < 0.5 }, "\(errors)")
    }

    @Test(arguments: [
        (["--ratio", "nan"], Int32(2), "--ratio nan: is not a number"),
        (["--ratio", "0"], 2, "--ratio 0: must be positive"),
        (["--ratio=-1.5"], 2, "--ratio -1.5: must be positive"),
        (["--ratio", "inf"], 2, "--ratio inf: is not a number"),
        (["--ratio", "5"], 2, "--ratio 5: must lie between 0.25 and 4"),
        (["--ratio", "0.2"], 2, "--ratio 0.2: must lie between 0.25 and 4"),
        (["--to-duration", "0"], 2, "--to-duration 0:00:00.000000: must be longer than 0"),
        (["--to-duration", "nan"], 2, "--to-duration: 'nan' is not a time"),
        (["--to-frames", "0"], 2, "--to-frames 0: must be a whole number of frames above 0"),
        (["--to-frames", "100"], 2, "--to-frames 100: gives 100 frames from 2880000, a ratio (output / input) of 3.47222e-05; the ratio must lie between 0.25 and 4"),
        (["--match", "missing.wav"], 1, "'missing.wav': no such file"),
        (["--match", "text.wav"], 1, "'text.wav': cannot read audio"),
        ([], 2, "give exactly one of --ratio, --to-duration, --to-frames, --match"),
        (["--ratio", "1.1", "--to-frames", "100"], 2, "give exactly one of"),
        (["--ratio", "1.1", "--algorithm", "psola"], 2, "--algorithm: 'psola' is not one of"),
        (["--ratio", "1.1", "--threads", "0"], 2, "--threads 0: must be 1 or more"),
    ] as [([String], Int32, String)])
    func badStretchInputFailsCleanly(args: [String], code: Int32, message: String) throws {
        let ws = try Workspace()
        FileManager.default.createFile(atPath: ws.file("text.wav"), contents: Data("not audio".utf8))
        let before = ws.contents
        let r = try CLI.run(["stretch", "in.wav", "out.wav"] + args, in: ws.path)
        #expect(r.code == code, "\(args): \(r.stderr)")
        #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
        #expect(ws.contents == before)
    }
}

@Suite struct BenchCLITests {
    @Test func benchReportsEveryStage() throws {
        let dir = NSTemporaryDirectory()
        let r = try CLI.run(["bench", "--seconds", "0.02", "--json"], in: dir)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let stages = obj["stages"] as! [[String: Any]]
        #expect(stages.count >= 12)
        #expect(stages.allSatisfy { ($0["frames_per_second"] as? Double ?? 0) > 0 && ($0["frames"] as? Int ?? 0) > 0 })
        #expect(stages.contains { ($0["name"] as? String ?? "").hasPrefix("drift job") })
        #expect(["avx512", "avx2", "sse2", "neon", "scalar"].contains(obj["kernel_path"] as? String ?? ""))
        let bad = try CLI.run(["bench", "--seconds", "0"], in: dir)
        #expect(bad.code == 2 && bad.stderr.contains("--seconds 0.0: must be above 0"))
    }

    /// A misspelt command gets the nearest commands, as git and cargo do; a word near none
    /// gets the list; bare `mixdown` is a usage error with the usage on standard error.
    @Test func aWordThatIsNoCommandGetsTheNearestOne() throws {
        let dir = NSTemporaryDirectory()
        for (args, message) in [
            (["strech", "a.wav", "b.wav"], "mixdown: error: 'strech' is not a mixdown command; did you mean 'stretch'?"),
            (["sinc", "a.wav"], "mixdown: error: 'sinc' is not a mixdown command; did you mean 'sync'?"),
            (["loudnes", "a.wav"], "mixdown: error: 'loudnes' is not a mixdown command; did you mean 'loudness'?"),
            (["gen", "a.wav"], "did you mean 'generate' or 'generate-pair'?"),
            (["xyzzy"], "'xyzzy' is not a mixdown command; the commands are info, export, stretch, render, sync, loudness, batch,"),
        ] {
            let r = try CLI.run(args, in: dir)
            #expect(r.code == 2 && r.stdout.isEmpty && r.stderr.contains(message), "\(args): \(r.code) \(r.stderr)")
        }
        let bare = try CLI.run([], in: dir)
        #expect(bare.code == 2 && bare.stdout.isEmpty)
        #expect(bare.stderr.contains("USAGE: mixdown <subcommand>") && bare.stderr.hasSuffix("mixdown: error: give a command (mixdown --help lists them)\n"))
        // Commands, help and options still parse.
        let help = try CLI.run(["help", "stretch"], in: dir)
        #expect(help.code == 0 && help.stdout.contains("--algorithm"))
        #expect(try CLI.run(["--version"], in: dir).code == 0)
    }

    /// Completion scripts offer the values an option takes and files where a file goes.
    @Test func completionsOfferOptionValuesAndFiles() throws {
        let bash = try CLI.run(["--generate-completion-script", "bash"], in: NSTemporaryDirectory())
        #expect(bash.code == 0)
        for values in ["auto varispeed wsola rubberband spectral splice timeDomain", "best medium fastest", "auto polyphase libsamplerate",
                       "wav aiff flac caf ogg opus mp3 w64 rf64 m4a mp4 mov mkv webm", "s16 s24 f32"] {
            // bash's script lists them one per line: 'auto'$'\n''varispeed'...
            let listed = "'" + values.split(separator: " ").joined(separator: "'$'\\n''") + "'"
            #expect(bash.stdout.contains(listed), "bash completion lacks \(listed)")
        }
        #expect(bash.stdout.contains("complete -o filenames -F _mixdown mixdown"))
        let fish = try CLI.run(["--generate-completion-script", "fish"], in: NSTemporaryDirectory())
        #expect(fish.code == 0 && fish.stdout.contains("-l 'algorithm'") && fish.stdout.contains("-rfka 'auto varispeed wsola rubberband spectral splice timeDomain'"))
    }
}
