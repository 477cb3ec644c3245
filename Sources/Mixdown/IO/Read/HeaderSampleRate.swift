import CSndFile
import Foundation

/// The sample rate as an AIFF or CAF header stores it (a float: 80-bit extended in AIFF's
/// COMM chunk, Float64 in CAF's desc chunk), before libsndfile rounds it to an integer.
enum HeaderSampleRate {
    /// Refuses a file whose header rate is 0, negative, NaN or infinite (`unreadableFile`).
    static func check(path: String, major: Int32?) throws(MixdownError) {
        if let raw = read(path: path, major: major), !(raw.isFinite && raw >= 1) {
            throw .unreadableFile(path: path, reason: "the header's sample rate is \(raw) Hz, which is not a sample rate")
        }
    }

    /// The raw rate, or nil when the file is neither type or the chunk is not found in its
    /// first 64 KiB (then libsndfile's value stands). `major` is libsndfile's type, or nil
    /// to go by the file's first bytes.
    static func read(path: String, major: Int32?) -> Double? {
        if let major, major != Int32(SF_FORMAT_AIFF) && major != Int32(SF_FORMAT_CAF) { return nil }
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 65_536)
        let n = head.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 12 else { return nil }
        let bytes = Array(head.prefix(n))
        return aiffRate(bytes) ?? cafRate(bytes)
    }

    static func bigEndian(_ b: [UInt8], _ at: Int, _ count: Int) -> UInt64 {
        b[at..<(at + count)].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// FORM....AIFF|AIFC, then chunks (id, 32-bit size, data padded to even); COMM holds
    /// channels (2), frames (4), bits (2), rate (10: sign+15-bit exponent, 64-bit mantissa).
    static func aiffRate(_ b: [UInt8]) -> Double? {
        guard b.starts(with: Array("FORM".utf8)) else { return nil }
        var i = 12
        while i + 8 <= b.count {
            let id = String(decoding: b[i..<(i + 4)], as: UTF8.self)
            let size = Int(bigEndian(b, i + 4, 4))
            if id == "COMM" {
                guard i + 8 + 18 <= b.count else { return nil }
                return extended80(Array(b[(i + 16)..<(i + 26)]))
            }
            i += 8 + size + (size & 1)
        }
        return nil
    }

    /// caff, version, flags, then chunks (id, 64-bit size); desc starts with a Float64 rate.
    static func cafRate(_ b: [UInt8]) -> Double? {
        guard b.starts(with: Array("caff".utf8)) else { return nil }
        var i = 8
        while i + 12 <= b.count {
            let id = String(decoding: b[i..<(i + 4)], as: UTF8.self)
            let size = bigEndian(b, i + 4, 8)
            if id == "desc" {
                guard i + 20 <= b.count else { return nil }
                return Double(bitPattern: bigEndian(b, i + 12, 8))
            }
            guard size < UInt64(b.count) else { return nil }
            i += 12 + Int(size)
        }
        return nil
    }

    /// An IEEE 754 80-bit extended number (explicit integer bit) as a Double.
    static func extended80(_ b: [UInt8]) -> Double {
        let sign: Double = b[0] & 0x80 != 0 ? -1 : 1
        let exponent = Int(bigEndian(b, 0, 2) & 0x7FFF)
        let mantissa = bigEndian(b, 2, 8)
        if exponent == 0x7FFF { return mantissa << 1 == 0 ? sign * .infinity : .nan }
        if mantissa == 0 { return sign * 0 }
        return sign * Double(sign: .plus, exponent: exponent - 16_383 - 63, significand: Double(mantissa))
    }
}
