import Foundation

/// A batch manifest: JSON Lines, one job per line, written as the arguments a person would
/// type after `mixdown` (schema: `docs/batch.schema.json`):
///
///     {"args": ["stretch", "in.wav", "out.wav", "--ratio", "1.0001309"], "id": "ep-1"}
///
/// Blank lines are allowed and skipped; every other line must be such an object. A job's
/// index (for `--shard I/N`) counts job lines from 0, in file order. `id` (a non-empty
/// string, unique in the manifest) names the job in the results; without it the job is
/// "line N". Relative paths in `args` are relative to the manifest's directory.
public struct BatchManifest: Sendable {
    public struct Line: Sendable, Equatable {
        /// 1-based line number in the file.
        public let number: Int
        /// 0-based index among the job lines.
        public let index: Int
        public let id: String
        public let args: [String]
    }

    /// The commands a manifest may run.
    public static let commands = ["stretch", "export", "render", "sync"]

    public let path: String
    /// The manifest's directory, absolute: relative paths in `args` start here.
    public let directory: String
    public let lines: [Line]

    /// Reads and checks the whole manifest: a line that is not a job is an error naming
    /// its line number, before anything runs.
    public init(contentsOf path: String) throws(MixdownError) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw errno == ENOENT || errno == ENOTDIR ? .fileNotFound(path: path) : .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        // A pipe would block the read (or never end): a manifest is a file.
        guard st.st_mode & S_IFMT == S_IFREG else { throw .notAFile(path: path) }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .unreadableFile(path: path, reason: "cannot read the manifest")
        }
        try self.init(data: data, path: path)
    }

    /// A manifest from `data`; `path` names it in messages and anchors relative paths.
    public init(data: Data, path: String) throws(MixdownError) {
        self.path = path
        let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
        directory = ((absolute as NSString).standardizingPath as NSString).deletingLastPathComponent
        var lines: [Line] = []
        var ids: [String: Int] = [:]
        let rows = data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        for (i, row) in rows.enumerated() {
            let number = i + 1
            let bytes = [UInt8](row.last == UInt8(ascii: "\r") ? row.dropLast() : row[...])
            if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            func fail(_ reason: String) -> MixdownError { .invalidManifest(file: path, line: number, reason: reason) }
            let value: JSONValue
            do { value = try JSONParser.parse(bytes) } catch {
                throw fail("is not valid JSON (column \(error.column)): \(error.reason)")
            }
            guard case .object(let object) = value else { throw fail("must be an object with \"args\", not \(value.kind)") }
            for key in object.keys where key != "args" && key != "id" {
                throw fail("unknown key \"\(key)\" (a job has \"args\" and an optional \"id\")")
            }
            guard case .array(let items)? = object["args"] else {
                throw fail(object["args"] == nil ? "has no \"args\"" : "\"args\" must be an array of strings")
            }
            var args: [String] = []
            for (k, item) in items.enumerated() {
                guard case .string(let s) = item else { throw fail("args[\(k)] must be a string, not \(item.kind)") }
                // A C string (a path, an argument) ends at its first NUL: it would name another file.
                if s.utf8.contains(0) { throw fail("args[\(k)] holds a NUL character (\\u0000), which no path or option can") }
                args.append(s)
            }
            guard let command = args.first else { throw fail("\"args\" is empty: it starts with the command (\(Self.commands.joined(separator: ", ")))") }
            guard Self.commands.contains(command) else {
                throw fail("unknown command '\(command)': a batch runs \(Self.commands.joined(separator: ", "))")
            }
            var id = "line \(number)"
            if let given = object["id"] {
                guard case .string(let s) = given, !s.isEmpty, !s.contains("\n") else { throw fail("\"id\" must be a non-empty string on one line") }
                id = s
            }
            if let first = ids[id] { throw fail("id '\(id)' is used by line \(first) already") }
            ids[id] = number
            lines.append(Line(number: number, index: lines.count, id: id, args: args))
        }
        guard !lines.isEmpty else { throw .invalidManifest(file: path, line: 0, reason: "holds no job") }
        self.lines = lines
    }

    /// `path` as a job sees it: absolute paths stay, relative ones start at the manifest's directory.
    public func resolve(_ path: String) -> String {
        path.hasPrefix("/") ? path : ((directory + "/" + path) as NSString).standardizingPath
    }
}

/// `--shard I/N`: the jobs whose index is I mod N (0 ≤ I < N). A scheduler's array index
/// maps onto I with no coordinator.
public struct BatchShard: Sendable, Equatable, CustomStringConvertible {
    public let index: Int
    public let count: Int

    public static let whole = BatchShard(uncheckedIndex: 0, count: 1)

    private init(uncheckedIndex index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses "I/N".
    public init(parsing text: String) throws(MixdownError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let i = Int(parts[0]), let n = Int(parts[1]) else {
            throw .invalidParameter(name: "--shard", value: text, reason: "must be I/N, for example 0/4")
        }
        guard n >= 1, i >= 0, i < n else {
            throw .invalidParameter(name: "--shard", value: text, reason: "needs N of at least 1 and I from 0 to N - 1")
        }
        self.init(uncheckedIndex: i, count: n)
    }

    public func contains(_ line: BatchManifest.Line) -> Bool { line.index % count == index }

    public var description: String { "\(index)/\(count)" }
}
