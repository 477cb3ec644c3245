import Foundation
import Synchronization

/// One manifest line made runnable (by the CLI, which parses the line's arguments into a
/// job of this library): what it reads, what it writes, and the job itself.
public struct BatchTask: Sendable {
    /// Files the job reads: their fingerprints decide whether a rerun may skip it.
    public var inputs: [String]
    /// Files (or directories) the job writes.
    public var outputs: [String]
    /// Runs the job on the calling thread (it must use one thread: `--jobs` shares the
    /// cores), reporting its fraction done; returns the frames it wrote (nil: none).
    public var run: @Sendable (_ progress: @escaping @Sendable (Double) -> Void, _ cancellation: CancellationToken) throws(MixdownError) -> Int64?

    public init(inputs: [String], outputs: [String],
                run: @escaping @Sendable (_ progress: @escaping @Sendable (Double) -> Void, _ cancellation: CancellationToken) throws(MixdownError) -> Int64?) {
        self.inputs = inputs
        self.outputs = outputs
        self.run = run
    }
}

/// `mixdown batch`: runs a manifest's jobs (or one shard of them), several at once,
/// recording each finished job in the results file, and skipping on a rerun every job
/// whose record says it completed with the same arguments and inputs and whose outputs
/// are still there with the sizes recorded.
///
/// - Every line is made into a task first: a bad line fails the batch before anything runs.
/// - Stale temporary files of the shard's outputs (left by a killed run: their process is
///   gone) are removed before any job starts.
/// - A job's inputs are fingerprinted just before it runs; its record is appended when it
///   ends, completed or failed. Outputs are atomic (complete, or absent), so a batch killed
///   at any moment leaves whole outputs and whole records, and a rerun finishes the rest.
/// - Without `keepGoing`, the first failure stops the batch from starting more jobs (the
///   ones running finish); with it, every job runs.
public struct BatchRun: Sendable {
    public var manifest: BatchManifest
    public var shard = BatchShard.whole
    /// Jobs at once (each on one thread).
    public var jobs = ProcessInfo.processInfo.activeProcessorCount
    /// Nil: `defaultResultsPath`.
    public var resultsPath: String?
    public var keepGoing = false

    public init(manifest: BatchManifest) { self.manifest = manifest }

    /// Beside the manifest: `NAME.results.jsonl`, or `NAME.shard-I-of-N.results.jsonl` for a shard.
    public static func defaultResultsPath(manifest: String, shard: BatchShard) -> String {
        let base = (manifest as NSString).deletingPathExtension
        return shard.count == 1 ? base + ".results.jsonl" : base + ".shard-\(shard.index)-of-\(shard.count).results.jsonl"
    }

    public struct Failure: Sendable, Codable, Equatable {
        public let id: String
        public let line: Int
        public let error: String
    }

    public struct Summary: Sendable, Codable, Equatable {
        public let manifest: String
        public let shard: String
        public let results: String
        /// Jobs in this shard.
        public let total: Int
        /// Run and completed now; skipped (completed before, unchanged); failed now; not run
        /// (the batch stopped at a failure or was cancelled).
        public let done: Int
        public let skipped: Int
        public let failed: Int
        public let notRun: Int
        public let frames: Int64
        public let seconds: Double
        public let failures: [Failure]
        public let removedTemporaryFiles: [String]
        /// True when every job of the shard has completed (now or before).
        public var succeeded: Bool { failed == 0 && notRun == 0 }
    }

    /// Where a running batch is.
    public struct Progress: Sendable {
        /// Jobs to run in this invocation (the shard's, less those skipped).
        public let total: Int
        public let finished: Int
        /// The mean fraction done of the jobs running now.
        public let running: Double
        public let seconds: Double
        /// Jobs finished per second so far.
        public var rate: Double { seconds > 0 ? Double(finished) / seconds : 0 }
        /// Seconds left at that rate (nil before the first job finishes).
        public var eta: Double? { finished > 0 ? Double(total - finished) / rate : nil }
    }

    /// Runs the batch. `makeTask` turns a line into a task (a thrown error is that line's:
    /// the batch fails before running anything). `progress` is called from the workers,
    /// one call at a time.
    public func run(makeTask: (BatchManifest.Line) throws -> BatchTask,
                    progress: (@Sendable (Progress) -> Void)? = nil,
                    cancellation: CancellationToken? = nil) throws(MixdownError) -> Summary {
        let clock = Stopwatch()
        guard jobs >= 1 && jobs <= 1024 else {
            throw .invalidParameter(name: "--jobs", value: "\(jobs)", reason: "must lie in 1...1024")
        }
        var every: [(line: BatchManifest.Line, task: BatchTask)] = []
        for line in manifest.lines {
            do {
                every.append((line, try makeTask(line)))
            } catch {
                throw .invalidManifest(file: manifest.path, line: line.number, reason: "\(error)")
            }
        }
        let resultsPath = self.resultsPath ?? Self.defaultResultsPath(manifest: manifest.path, shard: shard)
        try Self.checkOutputs(every, manifest: manifest.path, results: resultsPath)
        let tasks = every.filter { shard.contains($0.line) }
        let results = try BatchResults(path: resultsPath)
        var removed: [String] = []
        for (_, task) in tasks { for output in task.outputs { removed += AudioFileWriter.removeStaleTemporaryFiles(of: output) } }
        let pending = tasks.filter { !Self.isDone($0.line, $0.task, record: results.records[$0.line.id]) }
        let skipped = tasks.count - pending.count

        let state = State(total: pending.count, report: progress, clock: clock)
        let stop = Atomic<Bool>(false)
        let keepGoing = self.keepGoing
        let token = cancellation ?? CancellationToken()
        let outcomes = ParallelMap.run(count: pending.count, parallel: jobs) { i throws(MixdownError) -> Outcome in
            if stop.load(ordering: .relaxed) || token.isCancelled { return .notRun }
            let (line, task) = pending[i]
            let jobClock = Stopwatch()
            let slot = state.begin()
            var inputs: [InputFingerprint] = []
            let result: Result<Int64?, MixdownError>
            do throws(MixdownError) {
                for path in task.inputs { inputs.append(try InputFingerprint(path: path)) }
                result = .success(try task.run({ state.set(slot, $0) }, token))
            } catch {
                result = .failure(error)
            }
            state.end(slot)
            let seconds = jobClock.seconds
            switch result {
            case .success(let frames):
                let outputs = task.outputs.map { BatchRecord.Output(path: $0, size: Self.size(of: $0) ?? -1) }
                try results.append(BatchRecord(id: line.id, line: line.number, status: .completed, args: line.args, inputs: inputs,
                                               outputs: outputs, frames: frames, seconds: seconds, error: nil,
                                               finished: Date().timeIntervalSince1970))
                return .done(frames ?? 0)
            case .failure(let error):
                if error == .cancelled { return .notRun }
                if !keepGoing { stop.store(true, ordering: .relaxed) }
                try results.append(BatchRecord(id: line.id, line: line.number, status: .failed, args: line.args, inputs: inputs,
                                               outputs: [], frames: nil, seconds: seconds, error: error.description,
                                               finished: Date().timeIntervalSince1970))
                return .failed(error.description)
            }
        }
        var done = 0, failed = 0, notRun = 0, frames: Int64 = 0
        var failures: [Failure] = []
        for (i, outcome) in outcomes.enumerated() {
            switch outcome {
            case .success(.done(let f)): done += 1; frames += f
            case .success(.notRun): notRun += 1
            case .success(.failed(let message)):
                failed += 1
                failures.append(Failure(id: pending[i].line.id, line: pending[i].line.number, error: message))
            case .failure(let error):   // the record could not be appended
                failed += 1
                failures.append(Failure(id: pending[i].line.id, line: pending[i].line.number, error: error.description))
            }
        }
        return Summary(manifest: manifest.path, shard: shard.description, results: resultsPath, total: tasks.count, done: done,
                       skipped: skipped, failed: failed, notRun: notRun, frames: frames, seconds: clock.seconds,
                       failures: failures, removedTemporaryFiles: removed)
    }

    private enum Outcome: Sendable { case done(Int64), failed(String), notRun }

    /// Whether `record` says this job completed with these arguments, on inputs that have
    /// not changed, into outputs that are still there with the sizes recorded.
    static func isDone(_ line: BatchManifest.Line, _ task: BatchTask, record: BatchRecord?) -> Bool {
        guard let r = record, r.status == .completed, r.args == line.args,
              r.inputs.map(\.path) == task.inputs, r.outputs.map(\.path) == task.outputs else { return false }
        guard r.outputs.allSatisfy({ size(of: $0.path) == $0.size }) else { return false }
        return r.inputs.allSatisfy { $0.matches(path: $0.path) }
    }

    /// A file's size; a directory's, the sum of its regular files' (one level).
    static func size(of path: String) -> Int64? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { return Int64(st.st_size) }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { !AudioFileWriter.isTemporaryName($0) }
        return names.reduce(0) { sum, name in
            var s = stat()
            return stat(path + "/" + name, &s) == 0 && (s.st_mode & S_IFMT) == S_IFREG ? sum + Int64(s.st_size) : sum
        }
    }

    /// The jobs running now and how far each is, for `Progress`.
    /// Guarded by an NSLock (a pthread mutex), not `Mutex`: ThreadSanitizer sees a pthread
    /// mutex's ordering, and reported `Mutex`'s futex handoff here as a race.
    private final class State: @unchecked Sendable {
        private struct Counts { var finished = 0; var running: [Int: Double] = [:]; var nextSlot = 0 }
        private var counts = Counts()
        private let lock = NSLock()
        private let total: Int
        private let report: (@Sendable (Progress) -> Void)?
        private let clock: Stopwatch

        init(total: Int, report: (@Sendable (Progress) -> Void)?, clock: Stopwatch) {
            self.total = total
            self.report = report
            self.clock = clock
        }

        func begin() -> Int {
            lock.lock()
            defer { lock.unlock() }
            counts.nextSlot += 1
            counts.running[counts.nextSlot] = 0
            return counts.nextSlot
        }

        func set(_ slot: Int, _ fraction: Double) {
            update { $0.running[slot] = fraction }
        }

        func end(_ slot: Int) {
            update { c in
                c.running[slot] = nil
                c.finished += 1
            }
        }

        private func update(_ change: (inout Counts) -> Void) {
            // Reported under the lock: the callback never runs on two threads at once.
            lock.lock()
            defer { lock.unlock() }
            change(&counts)
            guard let report else { return }
            let running = counts.running.isEmpty ? 0 : counts.running.values.reduce(0, +) / Double(counts.running.count)
            report(Progress(total: total, finished: counts.finished, running: running, seconds: clock.seconds))
        }
    }
}
