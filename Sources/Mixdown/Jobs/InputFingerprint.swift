import Foundation

/// What a batch remembers of an input, to tell whether it changed since a job ran: its
/// size, its modification time (nanoseconds) and a hash of its first and last MiB.
///
/// The hash is 64-bit FNV-1a over the bytes' little-endian 64-bit words (the tail that is
/// not a whole word byte by byte), of the first MiB and then the last MiB (the whole file
/// when it is smaller than 2 MiB), written as 16 hex digits. It tells a changed file from
/// an unchanged one; it is no defence against someone crafting a collision.
public struct InputFingerprint: Sendable, Codable, Equatable {
    public let path: String
    public let size: Int64
    public let mtimeNanoseconds: Int64
    public let hash: String

    private static let span = 1 << 20

    /// Size and modification time only (`hash` empty): what `matches` compares first.
    static func status(path: String) throws(MixdownError) -> (size: Int64, mtime: Int64) {
        var st = stat()
        guard stat(path, &st) == 0 else {
            throw errno == ENOENT || errno == ENOTDIR ? .fileNotFound(path: path) : .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        return (Int64(st.st_size), Int64(st.st_mtim.tv_sec) * 1_000_000_000 + Int64(st.st_mtim.tv_nsec))
    }

    /// Reads `path`'s fingerprint.
    public init(path: String) throws(MixdownError) {
        let (size, mtime) = try Self.status(path: path)
        self.path = path
        self.size = size
        mtimeNanoseconds = mtime
        hash = try Self.hash(path: path, size: size)
    }

    /// Whether `path` still has this fingerprint: size and time first (cheap), the hash only when they agree.
    public func matches(path: String) -> Bool {
        guard let (size, mtime) = try? Self.status(path: path), size == self.size, mtime == mtimeNanoseconds else { return false }
        return (try? Self.hash(path: path, size: size)) == hash
    }

    private static func hash(path: String, size: Int64) throws(MixdownError) -> String {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: span, alignment: 8)
        defer { buffer.deallocate() }
        // The first MiB, then the last MiB from where the first ended or 1 MiB before the end.
        let mib = Int64(span), length: Int64 = size
        var ranges: [(offset: Int64, count: Int64)] = [(0, min(length, mib))]
        if length > mib { ranges.append(length > 2 * mib ? (length - mib, mib) : (mib, length - mib)) }
        for (offset, count) in ranges {
            var done: Int64 = 0
            while done < count {
                let want = Int(min(Int64(span), count - done))
                let n = pread(fd, buffer.baseAddress, want, off_t(offset + done))
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw .readFailed(path: path, reason: n < 0 ? String(cString: strerror(errno)) : "the file shrank while it was read") }
                let words = n / 8
                for i in 0..<words {
                    h = (h ^ UInt64(littleEndian: buffer.load(fromByteOffset: i * 8, as: UInt64.self))) &* 0x0000_0100_0000_01b3
                }
                for i in (words * 8)..<n { h = (h ^ UInt64(buffer[i])) &* 0x0000_0100_0000_01b3 }
                done += Int64(n)
            }
        }
        let hex = String(h, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }

    enum CodingKeys: String, CodingKey {
        case path, size, hash
        case mtimeNanoseconds = "mtime_ns"
    }
}
