import Foundation
import Synchronization

/// One finished job, as one line of a batch's results file (JSON Lines).
public struct BatchRecord: Sendable, Codable, Equatable {
    public enum Status: String, Sendable, Codable { case completed, failed }
    public struct Output: Sendable, Codable, Equatable {
        public let path: String
        public let size: Int64
    }

    public let id: String
    public let line: Int
    public let status: Status
    /// The job's arguments, as the manifest gave them: its options.
    public let args: [String]
    public let inputs: [InputFingerprint]
    public let outputs: [Output]
    /// Frames written (the sum over the job's audio outputs); nil when it wrote none.
    public let frames: Int64?
    public let seconds: Double
    public let error: String?
    /// When the job finished: seconds since 1970 (UTC).
    public let finished: Double
}

/// A batch's results file: read once at the start, appended to as jobs finish.
///
/// Appends are whole lines: each record is one `write(2)` of the line and its newline on a
/// file opened with `O_APPEND`, under a lock shared by this process's workers. A record cut
/// short (a machine that lost power mid-write; a process killed with SIGKILL cannot cut a
/// write to a regular file) is removed when the file is next opened: everything after its
/// last newline is truncated. Lines that are not records are reported and skipped.
public final class BatchResults: @unchecked Sendable {
    public let path: String
    /// The last record of each job id, as the file held them when opened.
    public let records: [String: BatchRecord]
    /// Bytes of a torn last line that opening removed (0 when the file was whole).
    public let repairedBytes: Int
    private let fd: Int32
    private let lock = Mutex(())

    public init(path: String) throws(MixdownError) {
        self.path = path
        let fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .outputNotWritable(path: path, reason: String(cString: strerror(errno))) }
        self.fd = fd
        // Read everything, cut a torn tail.
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        var offset: off_t = 0
        while true {
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, offset) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 { close(fd); throw .readFailed(path: path, reason: String(cString: strerror(errno))) }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[..<n])
            offset += off_t(n)
        }
        // Only a results file Mixdown wrote is appended to (and its torn tail cut): empty, or
        // a first line that is one of its records (a torn first record: the start of one).
        if !bytes.isEmpty && !Self.isResults(bytes) {
            close(fd)
            throw .invalidParameter(name: "--results", value: path, reason: "is a file Mixdown did not write as a batch's results (its first line is not a record): it is left as it is; name a new file")
        }
        let whole = (bytes.lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 }) ?? 0
        repairedBytes = bytes.count - whole
        if repairedBytes > 0 { _ = ftruncate(fd, off_t(whole)) }
        var records: [String: BatchRecord] = [:]
        let decoder = JSONDecoder()
        for row in bytes[..<whole].split(separator: UInt8(ascii: "\n")) {
            guard let r = try? decoder.decode(BatchRecord.self, from: Data(row)) else { continue }
            records[r.id] = r
        }
        self.records = records
    }

    deinit { close(fd) }

    /// Whether `bytes` start as a results file: a first line that decodes as a record, or,
    /// with no whole line yet, the start of one (`{"args":`, the first key the encoder writes).
    static func isResults(_ bytes: [UInt8]) -> Bool {
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")) else {
            let start = Array("{\"args\":".utf8)
            return bytes.starts(with: start.prefix(bytes.count)) || bytes.starts(with: start)
        }
        return (try? JSONDecoder().decode(BatchRecord.self, from: Data(bytes[..<newline]))) != nil
    }

    /// Appends `record` as one line, in one write.
    public func append(_ record: BatchRecord) throws(MixdownError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard var line = try? encoder.encode(record) else {
            throw .writeFailed(path: path, reason: "the record of '\(record.id)' cannot be encoded")
        }
        line.append(UInt8(ascii: "\n"))
        try lock.withLock { _ throws(MixdownError) in
            let n = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n == line.count else {
                let reason = n < 0 ? String(cString: strerror(errno)) : "wrote \(n) of \(line.count) bytes"
                // A short write leaves a torn line; cut it now so the next record starts whole.
                if n > 0, let end = Optional(lseek(fd, 0, SEEK_END)), end >= n { _ = ftruncate(fd, end - off_t(n)) }
                throw .writeFailed(path: path, reason: reason)
            }
        }
    }
}
