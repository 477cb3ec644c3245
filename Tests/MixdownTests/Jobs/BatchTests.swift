import Foundation
import Synchronization
import Testing
@testable import Mixdown

private func manifest(_ text: String, in dir: TempDir) throws(MixdownError) -> BatchManifest {
    try BatchManifest(data: Data(text.utf8), path: dir.file("m.jsonl"))
}

@Suite struct BatchManifestTests {
    @Test func linesBecomeJobsWithIndexesIdsAndTheManifestsDirectory() throws {
        let dir = TempDir()
        let m = try manifest("""
            {"args": ["stretch", "a.wav", "b.wav", "--ratio", "1.0001"]}

            {"id": "x", "args": ["export", "/abs/in.wav", "o.wav"]}\r
            {"args": ["render", "d.json", "o2.wav"]}
            """, in: dir)
        #expect(m.lines.map(\.number) == [1, 3, 4])
        #expect(m.lines.map(\.index) == [0, 1, 2])
        #expect(m.lines.map(\.id) == ["line 1", "x", "line 4"])
        #expect(m.lines[1].args == ["export", "/abs/in.wav", "o.wav"])
        #expect(m.resolve("a.wav") == dir.path + "/a.wav")
        #expect(m.resolve("/abs/in.wav") == "/abs/in.wav")
        let shard = try BatchShard(parsing: "1/2")
        #expect(m.lines.filter(shard.contains).map(\.number) == [3])
    }

    /// (manifest text, line at fault, words of the reason)
    static let bad: [(String, Int, String)] = [
        ("{\"args\": [\"stretch\"]}\n{\"args\": [\"stretch\", \"a\"", 2, "is not valid JSON"),
        ("[\"stretch\", \"a.wav\"]", 1, "must be an object"),
        ("{\"args\": [\"stretch\"], \"name\": \"x\"}", 1, "unknown key \"name\""),
        ("{\"id\": \"a\"}", 1, "has no \"args\""),
        ("{\"args\": \"stretch a b\"}", 1, "\"args\" must be an array of strings"),
        ("{\"args\": [\"stretch\", 1.5]}", 1, "args[1] must be a string, not a number"),
        ("{\"args\": []}", 1, "\"args\" is empty"),
        ("\n\n{\"args\": [\"strech\", \"a\", \"b\"]}", 3, "unknown command 'strech': a batch runs stretch, export, render, sync"),
        ("{\"args\": [\"stretch\"], \"id\": \"a\"}\n{\"args\": [\"export\"], \"id\": \"a\"}", 2, "id 'a' is used by line 1 already"),
        ("{\"args\": [\"stretch\"], \"id\": \"\"}", 1, "\"id\" must be a non-empty string"),
        ("\n  \n", 0, "holds no job"),
    ]

    @Test(arguments: 0..<bad.count)
    func aBadLineIsAnErrorNamingItsNumber(case i: Int) throws {
        let dir = TempDir()
        let (text, line, words) = Self.bad[i]
        do {
            _ = try manifest(text, in: dir)
            Issue.record("accepted: \(text)")
        } catch {
            guard case .invalidManifest(let file, let l, let reason) = error else { Issue.record("\(error)"); return }
            #expect(file == dir.file("m.jsonl") && l == line && reason.contains(words), "\(error)")
        }
    }

    @Test func aShardIsIOverN() throws {
        #expect(try BatchShard(parsing: "3/4") == BatchShard(parsing: "3/4"))
        for bad in ["4/4", "-1/4", "0/0", "1", "a/b", "1/2/3"] {
            #expect(throws: MixdownError.self) { _ = try BatchShard(parsing: bad) }
        }
    }
}

@Suite struct BatchResultsTests {
    private func record(_ id: String, _ status: BatchRecord.Status = .completed) -> BatchRecord {
        BatchRecord(id: id, line: 1, status: status, args: ["stretch", "a b"], inputs: [], outputs: [], frames: 5, seconds: 0.5,
                    error: status == .failed ? "boom" : nil, finished: 1)
    }

    /// A torn last line (a power cut mid-append) is cut when the file is opened again, and
    /// the next record starts on its own line; the last record of an id is the one kept.
    @Test func aTornTailIsCutAndTheLastRecordOfAnIdWins() throws {
        let dir = TempDir()
        let path = dir.file("r.jsonl")
        do {
            let r = try BatchResults(path: path)
            #expect(r.records.isEmpty && r.repairedBytes == 0)
            try r.append(record("a", .failed))
            try r.append(record("b"))
            try r.append(record("a"))
        }
        let whole = try String(contentsOfFile: path, encoding: .utf8)
        #expect(whole.split(separator: "\n").count == 3)
        let torn = "{\"id\":\"c\",\"sta"
        try (whole + torn).write(toFile: path, atomically: false, encoding: .utf8)
        let r = try BatchResults(path: path)
        #expect(r.repairedBytes == torn.utf8.count)
        #expect(r.records["a"]?.status == .completed && r.records["b"] != nil && r.records["c"] == nil)
        try r.append(record("d"))
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == 5 && lines.last == "")
        #expect(try BatchResults(path: path).records.keys.sorted() == ["a", "b", "d"])
    }

    /// Appends from many threads at once: every record whole, on its own line.
    @Test func concurrentAppendsAreWholeLines() throws {
        let dir = TempDir()
        let r = try BatchResults(path: dir.file("r.jsonl"))
        DispatchQueue.concurrentPerform(iterations: 400) { i in try! r.append(record("job \(i)")) }
        #expect(try BatchResults(path: dir.file("r.jsonl")).records.count == 400)
    }
}

@Suite struct InputFingerprintTests {
    /// The same bytes with the same size and time match; one byte changed (size and time
    /// restored) does not, in the first or the last MiB.
    @Test(arguments: [1000, 3 << 20 - 7])
    func aChangedByteIsSeenEvenWithTheSameSizeAndTime(size: Int) throws {
        let dir = TempDir()
        let path = dir.file("a.bin")
        var bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let f = try InputFingerprint(path: path)
        #expect(f.size == Int64(size) && f.hash.count == 16 && f.matches(path: path))
        for at in [0, size - 1] {
            var times = [timespec(tv_sec: 1_000_000, tv_nsec: 5), timespec(tv_sec: 1_000_000, tv_nsec: 5)]
            bytes[at] ^= 1
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let changed = try InputFingerprint(path: path)
            bytes[at] ^= 1
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            #expect(utimensat(AT_FDCWD, path, &times, 0) == 0)
            let restored = try InputFingerprint(path: path)
            #expect(changed.size == restored.size && changed.mtimeNanoseconds == restored.mtimeNanoseconds)
            #expect(changed.hash != restored.hash && !changed.matches(path: path) && restored.matches(path: path), "byte \(at)")
        }
    }
}

@Suite struct BatchRunTests {
    /// Tasks that write their line number into their output: a rerun skips what is recorded,
    /// redoes a job whose option or input changed or whose output went; a failure without
    /// --keep-going stops new jobs; with it every job runs and the failure is recorded.
    @Test func rerunsSkipWhatIsDoneAndRedoTheRest() throws {
        let dir = TempDir()
        for i in 0..<6 { try "input \(i)".write(toFile: dir.file("in\(i).txt"), atomically: true, encoding: .utf8) }
        var text = (0..<6).map { "{\"args\": [\"export\", \"in\($0).txt\", \"out\($0).txt\"]}" }.joined(separator: "\n")
        let ran = Mutex<[Int]>([])
        let failing = Mutex<Set<Int>>([])
        func run(_ m: BatchManifest, jobs: Int = 2, keepGoing: Bool = false) throws -> BatchRun.Summary {
            ran.withLock { $0 = [] }
            var b = BatchRun(manifest: m)
            b.jobs = jobs
            b.keepGoing = keepGoing
            return try b.run(makeTask: { line in
                let input = m.resolve(line.args[1]), output = m.resolve(line.args[2]), n = line.number
                return BatchTask(inputs: [input], outputs: [output]) { _, _ throws(MixdownError) in
                    ran.withLock { $0.append(n) }
                    if failing.withLock({ $0.contains(n) }) { throw .readFailed(path: input, reason: "planted") }
                    try? "\(n)".write(toFile: output, atomically: true, encoding: .utf8)
                    return Int64(n)
                }
            })
        }
        var s = try run(manifest(text, in: dir))
        #expect((s.done, s.skipped, s.failed, s.notRun, s.frames) == (6, 0, 0, 0, 21))
        #expect(ran.withLock { $0.sorted() } == [1, 2, 3, 4, 5, 6])
        s = try run(manifest(text, in: dir))
        #expect((s.done, s.skipped) == (0, 6) && ran.withLock { $0 }.isEmpty)
        // A changed input, a deleted output, a changed option: those three are redone.
        try "input 1 changed".write(toFile: dir.file("in1.txt"), atomically: true, encoding: .utf8)
        try FileManager.default.removeItem(atPath: dir.file("out3.txt"))
        text = text.replacingOccurrences(of: "\"out5.txt\"]", with: "\"out5.txt\", \"--quiet\"]")
        s = try run(manifest(text, in: dir))
        #expect((s.done, s.skipped) == (3, 3))
        #expect(ran.withLock { $0.sorted() } == [2, 4, 6])
        // A failure without --keep-going: one job at a time, so exactly the jobs before it ran.
        try FileManager.default.removeItem(atPath: dir.file("m.results.jsonl"))
        failing.withLock { $0 = [3] }
        s = try run(manifest(text, in: dir), jobs: 1)
        #expect((s.done, s.failed, s.notRun) == (2, 1, 3) && !s.succeeded)
        #expect(s.failures == [BatchRun.Failure(id: "line 3", line: 3, error: "'\(dir.file("in2.txt"))': read failed: planted")])
        #expect(ran.withLock { $0 } == [1, 2, 3])
        s = try run(manifest(text, in: dir), jobs: 2, keepGoing: true)
        #expect((s.done, s.skipped, s.failed, s.notRun) == (3, 2, 1, 0))
        let records = try BatchResults(path: dir.file("m.results.jsonl")).records
        #expect(records["line 3"]?.status == .failed && records["line 3"]?.error?.contains("planted") == true)
        failing.withLock { $0 = [] }
        s = try run(manifest(text, in: dir))
        #expect((s.done, s.skipped, s.failed) == (1, 5, 0) && s.succeeded && ran.withLock { $0 } == [3])
    }

    /// A line that cannot be made into a task fails the batch before any job runs or any
    /// results file is written.
    @Test func aBadTaskStopsTheBatchBeforeAnythingRuns() throws {
        let dir = TempDir()
        let m = try manifest("{\"args\": [\"export\", \"a\", \"b\"]}\n{\"args\": [\"export\", \"bad\", \"c\"]}", in: dir)
        let ran = Atomic<Int>(0)
        struct Refused: Error, CustomStringConvertible { var description: String { "--ratio: refused" } }
        #expect(throws: MixdownError.invalidManifest(file: dir.file("m.jsonl"), line: 2, reason: "--ratio: refused")) {
            _ = try BatchRun(manifest: m).run(makeTask: { line in
                if line.args[1] == "bad" { throw Refused() }
                return BatchTask(inputs: [], outputs: []) { _, _ in ran.add(1, ordering: .relaxed); return nil }
            })
        }
        #expect(ran.load(ordering: .relaxed) == 0 && !FileManager.default.fileExists(atPath: dir.file("m.results.jsonl")))
    }
}
