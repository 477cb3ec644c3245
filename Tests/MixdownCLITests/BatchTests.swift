import Foundation
import Testing

/// `mixdown batch` run as a user runs it: shards, kills, reruns, failures, bad lines, and
/// the scheduler examples of docs/batch.md.
@Suite(.serialized) struct BatchCLITests {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `count` short inputs `in0.wav`... (distinct tones) made by the CLI in `dir`.
    static func inputs(_ count: Int, seconds: String = "0.5", in dir: String) throws {
        for i in 0..<count {
            let r = try CLI.run(["generate", "in\(i).wav", "--duration", seconds, "--tone", "\(200 + 50 * i)", "-q"], in: dir)
            #expect(r.code == 0, "\(r.stderr)")
        }
    }

    static func write(_ lines: [[String]], to path: String, ids: Bool = false) throws {
        let text = try lines.enumerated().map { i, args in
            var object: [String: Any] = ["args": args]
            if ids { object["id"] = "job-\(i)" }
            return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
        }.joined(separator: "\n") + "\n"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    /// Every record of a results file, in order.
    static func records(_ path: String) throws -> [[String: Any]] {
        try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
    }

    static func summary(_ r: CLI.Result) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
    }

    static func files(_ dir: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: dir)) ?? []).sorted()
    }

    /// Half stretches (each its own ratio), half exports (each its own range), over four inputs.
    static func mixedJobs(_ count: Int) -> [[String]] {
        (0..<count).map { i in
            i % 2 == 0
                ? ["stretch", "in\(i % 4).wav", "out/s\(i).wav", "--ratio", "\(100_000 + i + 1)/100000"]
                : ["export", "in\(i % 4).wav", "out/e\(i).wav", "--start", "\(i)/1000", "--duration", "0.2", "--fade-in", "0.01"]
        }
    }

    @Test func twoHundredJobsInFourShardsGiveTheOutputsOfOneRunEachJobOnce() throws {
        let one = ScratchDir(), sharded = ScratchDir()
        for dir in [one, sharded] {
            try Self.inputs(4, in: dir.path)
            try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
            try Self.write(Self.mixedJobs(200), to: dir.file("m.jsonl"), ids: true)
        }
        let whole = try CLI.run(["batch", "m.jsonl", "--jobs", "2", "--json"], in: one.path)
        #expect(whole.code == 0, "\(whole.stderr)")
        #expect(try Self.summary(whole)["done"] as? Int == 200)
        // Four shards at once, as a scheduler would start them.
        let processes = try (0..<4).map { k -> (Process, Pipe) in
            let p = Process(), out = Pipe()
            p.executableURL = CLI.executable
            p.arguments = ["batch", sharded.file("m.jsonl"), "--shard", "\(k)/4", "--jobs", "1", "--json"]
            p.standardOutput = out
            try p.run()
            return (p, out)
        }
        var done = 0
        for (p, out) in processes {
            let data = out.fileHandleForReading.readDataToEndOfFile()
            p.waitUntilExit()
            #expect(p.terminationStatus == 0)
            done += (try JSONSerialization.jsonObject(with: data) as! [String: Any])["done"] as! Int
        }
        #expect(done == 200)
        // Every job exactly once, in the shard of its index.
        var seen: [String: Int] = [:]
        for k in 0..<4 {
            for r in try Self.records(sharded.file("m.shard-\(k)-of-4.results.jsonl")) {
                let id = r["id"] as! String
                seen[id, default: 0] += 1
                #expect(r["status"] as? String == "completed")
                #expect(Int(id.dropFirst(4))! % 4 == k, "\(id) in shard \(k)")
            }
        }
        #expect(seen.count == 200 && seen.values.allSatisfy { $0 == 1 })
        let names = Self.files(one.file("out"))
        #expect(names.count == 200 && names == Self.files(sharded.file("out")))
        for name in names {
            #expect(FileManager.default.contentsEqual(atPath: one.file("out/" + name), andPath: sharded.file("out/" + name)), "\(name)")
        }
    }

    /// SIGKILL at random moments, then the same command: every output complete (the clean
    /// run's bytes), no job lost, no job redone whose record the killed run wrote, and no
    /// temporary file left.
    @Test func sigkillAtRandomMomentsThenARerunFinishesTheRest() throws {
        let clean = ScratchDir(), dir = ScratchDir()
        let jobs = (0..<12).map { i in ["stretch", "in\(i % 3).wav", "out/o\(i).wav", "--ratio", "\(1000 + i)/1000", "--algorithm", "wsola"] }
        for d in [clean, dir] {
            try Self.inputs(3, seconds: "20", in: d.path)
            try FileManager.default.createDirectory(atPath: d.file("out"), withIntermediateDirectories: true)
            try Self.write(jobs, to: d.file("m.jsonl"))
        }
        let reference = try CLI.run(["batch", "m.jsonl", "--jobs", "2", "-q"], in: clean.path)
        #expect(reference.code == 0, "\(reference.stderr)")
        let started = Date()
        _ = try CLI.run(["batch", "m.jsonl", "--jobs", "2", "-q"], in: dir.path)
        let full = Date().timeIntervalSince(started)
        var g = ReliabilityTests.SeededGenerator(seed: 2026)
        var killedWithTemporaryFiles = 0
        for trial in 0..<4 {
            try? FileManager.default.removeItem(atPath: dir.file("m.results.jsonl"))
            for name in Self.files(dir.file("out")) { try FileManager.default.removeItem(atPath: dir.file("out/" + name)) }
            let p = Process()
            p.executableURL = CLI.executable
            p.arguments = ["batch", "m.jsonl", "--jobs", "2", "-q"]
            p.currentDirectoryURL = URL(fileURLWithPath: dir.path)
            try p.run()
            usleep(UInt32(Double.random(in: 0.05...0.9, using: &g) * full * 1e6))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            if Self.files(dir.file("out")).contains(where: { $0.hasSuffix(".tmp") }) { killedWithTemporaryFiles += 1 }
            let before = (try? Self.records(dir.file("m.results.jsonl"))) ?? []
            let completedBefore = Set(before.filter { $0["status"] as? String == "completed" }.map { $0["id"] as! String })
            let rerun = try CLI.run(["batch", "m.jsonl", "--jobs", "2", "--json"], in: dir.path)
            #expect(rerun.code == 0, "trial \(trial): \(rerun.stderr)")
            let s = try Self.summary(rerun)
            #expect(s["skipped"] as? Int == completedBefore.count, "trial \(trial)")
            #expect((s["done"] as? Int ?? 0) + completedBefore.count == 12, "trial \(trial)")
            let after = try Self.records(dir.file("m.results.jsonl"))
            for id in completedBefore {
                #expect(after.filter { $0["id"] as? String == id }.count == 1, "trial \(trial): \(id) was redone")
            }
            #expect(Set(after.map { $0["id"] as! String }).count == 12, "trial \(trial): a job was lost")
            #expect(Self.files(dir.file("out")) == (0..<12).map { "o\($0).wav" }.sorted(), "trial \(trial): \(Self.files(dir.file("out")))")
            for i in 0..<12 {
                #expect(FileManager.default.contentsEqual(atPath: dir.file("out/o\(i).wav"), andPath: clean.file("out/o\(i).wav")),
                        "trial \(trial): o\(i).wav is not complete")
            }
        }
        print("SIGKILL trials that left a temporary file for the rerun to remove: \(killedWithTemporaryFiles) of 4")
    }

    @Test func aJobWhoseInputChangedAfterItsRecordIsRedone() throws {
        let dir = ScratchDir()
        try Self.inputs(3, in: dir.path)
        try Self.write((0..<3).map { ["stretch", "in\($0).wav", "o\($0).wav", "--ratio", "1.0001309"] }, to: dir.file("m.jsonl"))
        #expect(try CLI.run(["batch", "m.jsonl", "-q"], in: dir.path).code == 0)
        let before = try Data(contentsOf: URL(fileURLWithPath: dir.file("o1.wav")))
        let regenerated = try CLI.run(["generate", "in1.wav", "--duration", "0.5", "--tone", "900", "--overwrite", "-q"], in: dir.path)
        #expect(regenerated.code == 0)
        let r = try CLI.run(["batch", "m.jsonl", "--json"], in: dir.path)
        let s = try Self.summary(r)
        #expect(r.code == 0 && s["done"] as? Int == 1 && s["skipped"] as? Int == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: dir.file("o1.wav"))) != before)
        let last = try Self.records(dir.file("m.results.jsonl")).last!
        #expect(last["id"] as? String == "line 2")
    }

    @Test func aFailingJobStopsTheBatchOrWithKeepGoingIsRecordedWhileTheRestRun() throws {
        let dir = ScratchDir()
        try Self.inputs(2, in: dir.path)
        let lines = (0..<6).map { i in ["export", i == 2 ? "missing.wav" : "in\(i % 2).wav", "o\(i).wav", "--duration", "0.25"] }
        try Self.write(lines, to: dir.file("m.jsonl"))
        let stopped = try CLI.run(["batch", "m.jsonl", "--jobs", "1"], in: dir.path)
        #expect(stopped.code == 1)
        #expect(stopped.stdout.contains("done 2, skipped 0, failed 1, not run 3 of 6 jobs"), "\(stopped.stdout)")
        #expect(stopped.stderr.contains("'line 3' (line 3) failed: '\(dir.path)/missing.wav': no such file"), "\(stopped.stderr)")
        #expect(Self.files(dir.path).filter { $0.hasPrefix("o") } == ["o0.wav", "o1.wav"])
        let going = try CLI.run(["batch", "m.jsonl", "--jobs", "2", "--keep-going", "--json"], in: dir.path)
        let s = try Self.summary(going)
        #expect(going.code == 1)
        #expect((s["done"] as? Int, s["skipped"] as? Int, s["failed"] as? Int, s["not_run"] as? Int) == (3, 2, 1, 0))
        #expect(Self.files(dir.path).filter { $0.hasPrefix("o") } == ["o0.wav", "o1.wav", "o3.wav", "o4.wav", "o5.wav"])
        let failed = try Self.records(dir.file("m.results.jsonl")).filter { $0["status"] as? String == "failed" }
        #expect(failed.count == 2 && failed.allSatisfy { ($0["error"] as? String)?.contains("missing.wav") == true })
    }

    /// A sync job: its outputs (document, plot) are recorded, and a rerun skips it.
    @Test func aSyncJobIsRecordedWithItsOutputsAndSkippedOnARerun() throws {
        let dir = ScratchDir()
        let pair = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "60", "--offset", "1.5", "--ppm", "120"], in: dir.path)
        #expect(pair.code == 0, "\(pair.stderr)")
        try FileManager.default.createDirectory(atPath: dir.file("event"), withIntermediateDirectories: true)
        try Self.write([["sync", "../ref.wav", "../rec.wav", "--doc", "synced.json", "--plot", "lags.svg"]], to: dir.file("event/m.jsonl"))
        let first = try CLI.run(["batch", "event/m.jsonl", "--json"], in: dir.path)
        #expect(first.code == 0, "\(first.stderr)")
        #expect(try Self.summary(first)["done"] as? Int == 1)
        let record = try Self.records(dir.file("event/m.results.jsonl"))[0]
        #expect((record["inputs"] as? [[String: Any]])?.compactMap { $0["path"] as? String } == [dir.path + "/ref.wav", dir.path + "/rec.wav"])
        #expect((record["outputs"] as? [[String: Any]])?.count == 2)
        #expect(FileManager.default.fileExists(atPath: dir.file("event/synced.json")) && FileManager.default.fileExists(atPath: dir.file("event/lags.svg")))
        let again = try CLI.run(["batch", "event/m.jsonl", "--json"], in: dir.path)
        #expect(again.code == 0)
        #expect(try Self.summary(again)["skipped"] as? Int == 1)
    }

    @Test func aBadLineIsReportedByNumberBeforeAnythingRuns() throws {
        let dir = ScratchDir()
        try Self.inputs(1, in: dir.path)
        try Self.write([["stretch", "in0.wav", "a.wav", "--ratio", "1.0001"], ["stretch", "in0.wav", "b.wav", "--ratio", "fast"],
                        ["export", "in0.wav", "c.wav"]], to: dir.file("m.jsonl"))
        let r = try CLI.run(["batch", "m.jsonl"], in: dir.path)
        #expect(r.code == 1)
        #expect(r.stderr.contains("'m.jsonl': line 2: --ratio"), "\(r.stderr)")
        #expect(Self.files(dir.path) == ["in0.wav", "m.jsonl"])
        try "{\"args\": [\"stretch\", \"in0.wav\", \"a.wav\", \"--ratoi\", \"1.0001\"]}\n".write(toFile: dir.file("m.jsonl"), atomically: true, encoding: .utf8)
        let unknown = try CLI.run(["batch", "m.jsonl"], in: dir.path)
        #expect(unknown.code == 1 && unknown.stderr.contains("line 1: ") && unknown.stderr.contains("--ratoi"), "\(unknown.stderr)")
    }

    /// docs/batch/run-parallel.sh, as the docs give it: GNU parallel runs four shards.
    @Test func theGNUParallelExampleRunsEveryJobOnce() throws {
        let dir = ScratchDir()
        try Self.inputs(4, in: dir.path)
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
        try Self.write(Self.mixedJobs(24), to: dir.file("m.jsonl"))
        let p = Process()
        p.executableURL = Self.repository.appendingPathComponent("docs/batch/run-parallel.sh")
        p.arguments = [dir.file("m.jsonl"), "4"]
        p.environment = ProcessInfo.processInfo.environment.merging(["MIXDOWN": CLI.executable.path]) { $1 }
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        #expect(Self.files(dir.file("out")).count == 24)
        for k in 0..<4 {
            let records = try Self.records(dir.file("m.shard-\(k)-of-4.results.jsonl"))
            #expect(records.count == 6 && records.allSatisfy { $0["status"] as? String == "completed" })
        }
    }

    /// The Kubernetes and Slurm files: each passes its scheduler's index as I and its task
    /// count as N to `mixdown batch --shard`.
    @Test func theKubernetesAndSlurmFilesPassTheirIndexToShard() throws {
        let k8s = try String(contentsOf: Self.repository.appendingPathComponent("docs/batch/k8s-indexed-job.yaml"), encoding: .utf8)
        #expect(k8s.contains("completionMode: Indexed"))
        let completions = try #require(k8s.firstMatch(of: /completions: (\d+)/)).1
        #expect(k8s.contains("command: [\"mixdown\", \"batch\", \"/data/manifest.jsonl\", \"--shard\", \"$(JOB_COMPLETION_INDEX)/\(completions)\""))
        #expect(k8s.contains("batch.kubernetes.io/job-completion-index"))
        let slurm = try String(contentsOf: Self.repository.appendingPathComponent("docs/batch/slurm-array.sbatch"), encoding: .utf8)
        let array = try #require(slurm.firstMatch(of: /#SBATCH --array=0-(\d+)/)).1
        #expect(slurm.contains("mixdown batch /shared/manifest.jsonl --shard \"${SLURM_ARRAY_TASK_ID}/\(Int(array)! + 1)\""))
    }
}
