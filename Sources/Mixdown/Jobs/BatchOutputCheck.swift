import Foundation

/// Which file a path names, to tell when two paths of a manifest are one file: its device
/// and inode when it exists; else its absolute path with the parent directory's links
/// resolved (a file that does not exist yet has no inode, and no other name either).
enum FileIdentity: Hashable, Sendable {
    case inode(device: UInt64, inode: UInt64)
    case path(String)

    init(_ path: String) {
        var st = stat()
        if stat(path, &st) == 0 {
            self = .inode(device: UInt64(st.st_dev), inode: UInt64(st.st_ino))
            return
        }
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        let standard = (absolute as NSString).standardizingPath
        let parent = (standard as NSString).deletingLastPathComponent
        if let real = realpath(parent, nil) {
            defer { free(real) }
            self = .path(String(cString: real) + "/" + (standard as NSString).lastPathComponent)
        } else {
            self = .path(standard)
        }
    }
}

extension BatchRun {
    /// Refuses a manifest whose jobs would destroy what the batch needs, before any job
    /// runs: a line that writes the manifest, the results file or its own input; two lines
    /// that write one file; a line that reads what another writes (jobs run in any order,
    /// several at once). Every line counts, not only this shard's: shards run at once too.
    static func checkOutputs(_ tasks: [(line: BatchManifest.Line, task: BatchTask)], manifest: String,
                             results: String) throws(MixdownError) {
        let manifestFile = FileIdentity(manifest), resultsFile = FileIdentity(results)
        if resultsFile == manifestFile {
            throw .invalidParameter(name: "--results", value: results, reason: "is the manifest itself: the results file is Mixdown's own, beside it")
        }
        // Each line's inputs, identified once (a stat each) for both passes.
        let inputs = tasks.map { $0.task.inputs.map { ($0, FileIdentity($0)) } }
        for (k, (line, _)) in tasks.enumerated() {
            if let (input, _) = inputs[k].first(where: { $0.1 == resultsFile }) {
                throw .invalidParameter(name: "--results", value: results, reason: "is '\(input)', which line \(line.number) reads: the results file is Mixdown's own")
            }
        }
        var writers: [FileIdentity: (line: Int, path: String)] = [:]
        for (k, (line, task)) in tasks.enumerated() {
            func fail(_ reason: String) -> MixdownError { .invalidManifest(file: manifest, line: line.number, reason: reason) }
            let reads = Set(inputs[k].map(\.1))
            for output in task.outputs {
                let file = FileIdentity(output)
                if file == manifestFile { throw fail("writes '\(output)', which is the manifest itself") }
                if file == resultsFile { throw fail("writes '\(output)', which is the batch's results file") }
                if reads.contains(file) {
                    throw fail("writes '\(output)', which it also reads: each rerun would read its own output")
                }
                if let first = writers[file] {
                    throw fail("writes '\(output)', which line \(first.line) writes too ('\(first.path)'): give each job its own output")
                }
                writers[file] = (line.number, output)
            }
        }
        for (k, (line, _)) in tasks.enumerated() {
            for (input, file) in inputs[k] {
                if let writer = writers[file], writer.line != line.number {
                    throw .invalidManifest(file: manifest, line: line.number,
                                           reason: "reads '\(input)', which line \(writer.line) writes: a batch runs its jobs in any order, several at once")
                }
            }
        }
    }
}
