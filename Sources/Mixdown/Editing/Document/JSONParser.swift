/// A strict JSON reader (RFC 8259) for composition documents, stricter than Foundation's
/// where a document reader must be: a key given twice in one object, a number beyond
/// Double's range, nesting deeper than ``maximumDepth``, invalid UTF-8 and a lone
/// surrogate escape are errors, each naming the JSON path where it sits and the line and
/// column. Linear in the document's size; recursion is bounded by the depth limit.
struct JSONParser {
    /// Why a document is not JSON Mixdown accepts.
    struct Failure: Error, Equatable {
        /// The JSON path of the value being read ("tracks[2].segments[0]"), or "(document)".
        let location: String
        let line: Int
        let column: Int
        let reason: String
    }

    /// Arrays and objects nested deeper than this are refused (a composition document
    /// needs 6; the limit keeps the recursion far from the stack's end).
    static let maximumDepth = 64

    private enum Step { case key(String), index(Int) }

    private let bytes: [UInt8]
    /// Read `Infinity`, `-Infinity`, `Inf`, `-Inf` and `NaN` as numbers (the dialect opentimelineio writes).
    private let nonFinite: Bool
    private var i = 0
    private var path: [Step] = []

    private init(_ bytes: [UInt8], nonFinite: Bool) {
        self.bytes = bytes
        self.nonFinite = nonFinite
    }

    /// Parses one JSON value filling all of `bytes` (whitespace around it allowed). With
    /// `nonFinite`, the bare words `Infinity`, `-Infinity`, `Inf`, `-Inf` and `NaN` are numbers, as
    /// opentimelineio writes them for non-finite floats (Python's json dialect); without
    /// it (Mixdown's own documents), they are errors like any other word.
    static func parse(_ bytes: [UInt8], nonFinite: Bool = false) throws(Failure) -> JSONValue {
        var p = JSONParser(bytes, nonFinite: nonFinite)
        // A UTF-8 byte order mark is tolerated, as most readers do.
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { p.i = 3 }
        p.skipSpace()
        let v = try p.value(depth: 0)
        p.skipSpace()
        guard p.i == bytes.count else { throw p.fail("unexpected \(p.describeByte()) after the document's value") }
        return v
    }

    // MARK: Errors

    private func fail(_ reason: String) -> Failure {
        var line = 1, column = 1
        for b in bytes[..<min(i, bytes.count)] {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        var text = ""
        for step in path {
            switch step {
            case .key(let k): text += text.isEmpty ? k : ".\(k)"
            case .index(let n): text += "[\(n)]"
            }
        }
        return Failure(location: text.isEmpty ? "(document)" : text, line: line, column: column, reason: reason)
    }

    private func describeByte() -> String {
        guard i < bytes.count else { return "end of the document" }
        let b = bytes[i]
        return b >= 0x20 && b < 0x7F ? "'\(Character(Unicode.Scalar(b)))'" : "byte 0x\(String(b, radix: 16))"
    }

    // MARK: Grammar

    private mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    private mutating func value(depth: Int) throws(Failure) -> JSONValue {
        guard i < bytes.count else { throw fail("the document ends where a value should be") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "I") where nonFinite: try infinity(); return .number(.infinity)
        case UInt8(ascii: "N") where nonFinite: try literal("NaN"); return .number(.nan)
        case UInt8(ascii: "-") where nonFinite && i + 1 < bytes.count && bytes[i + 1] == UInt8(ascii: "I"):
            i += 1
            try infinity()
            return .number(-.infinity)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try number())
        default: throw fail("unexpected \(describeByte()) where a value should be")
        }
    }

    /// `Infinity`, or the bare `Inf` that opentimelineio's own samples hold beside it.
    private mutating func infinity() throws(Failure) {
        let long = Array("Infinity".utf8)
        if i + long.count <= bytes.count, bytes[i..<(i + long.count)].elementsEqual(long) { i += long.count; return }
        try literal("Inf")
    }

    private mutating func literal(_ word: StaticString) throws(Failure) {
        let n = word.utf8CodeUnitCount
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: n)
        guard i + n <= bytes.count, bytes[i..<(i + n)].elementsEqual(expected) else {
            throw fail("unexpected \(describeByte()) where a value should be")
        }
        i += n
    }

    private mutating func object(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        i += 1
        var members = JSONObject()
        var seen = Set<String>()
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a key in quotes, found \(describeByte())") }
            let keyStart = i
            let key = try string()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':' after the key \"\(key)\", found \(describeByte())") }
            i += 1
            skipSpace()
            path.append(.key(key))
            // Linear for the small objects documents hold; a set past 16 keys.
            let duplicate: Bool
            if members.members.count < 16 { duplicate = members.members.contains { $0.key == key } } else {
                if seen.isEmpty { seen = Set(members.keys) }
                duplicate = !seen.insert(key).inserted
            }
            if duplicate {
                i = keyStart
                throw fail("the key \"\(key)\" is given twice in one object")
            }
            members.members.append((key, try value(depth: depth)))
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw fail("the document ends inside an object") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; return .object(members) }
            throw fail("expected ',' or '}' in an object, found \(describeByte())")
        }
    }

    private mutating func array(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
        i += 1
        var items: [JSONValue] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
        while true {
            skipSpace()
            path.append(.index(items.count))
            items.append(try value(depth: depth))
            path.removeLast()
            skipSpace()
            guard i < bytes.count else { throw fail("the document ends inside an array") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; return .array(items) }
            throw fail("expected ',' or ']' in an array, found \(describeByte())")
        }
    }

    private mutating func number() throws(Failure) -> Double {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.i
            while p.i < p.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(p.bytes[p.i]) { p.i += 1 }
            return p.i - s
        }
        let intStart = i
        let n = digits(&self)
        guard n > 0 else { throw fail("a number needs digits after '-'") }
        if n > 1, bytes[intStart] == UInt8(ascii: "0") { i = intStart; throw fail("a number must not start with 0") }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits(&self) > 0 else { throw fail("a number needs digits after its decimal point") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits(&self) > 0 else { throw fail("a number needs digits in its exponent") }
        }
        let text = String(decoding: bytes[start..<i], as: UTF8.self)
        guard let v = Double(text), v.isFinite else {
            i = start
            throw fail("the number \(text.count > 40 ? String(text.prefix(40)) + "..." : text) lies beyond the range of a Double (about 1.8e308)")
        }
        return v
    }

    private mutating func hex4() throws(Failure) -> UInt16 {
        guard i + 4 <= bytes.count else { throw fail("a \\u escape needs four hex digits") }
        var v: UInt16 = 0
        for _ in 0..<4 {
            let b = bytes[i]
            let d: UInt8
            switch b {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = b - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = b - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = b - UInt8(ascii: "A") + 10
            default: throw fail("a \\u escape needs four hex digits, found \(describeByte())")
            }
            v = v << 4 | UInt16(d)
            i += 1
        }
        return v
    }

    private mutating func string() throws(Failure) -> String {
        let open = i
        i += 1
        // Fast path: no escapes.
        var j = i
        while j < bytes.count, bytes[j] != UInt8(ascii: "\""), bytes[j] != UInt8(ascii: "\\"), bytes[j] >= 0x20 { j += 1 }
        var out: [UInt8] = []
        if j < bytes.count, bytes[j] == UInt8(ascii: "\"") {
            out = Array(bytes[i..<j])
            i = j + 1
        } else {
            out.reserveCapacity(j - i + 16)
            while true {
                guard i < bytes.count else { i = open; throw fail("a string is not closed") }
                let b = bytes[i]
                if b == UInt8(ascii: "\"") { i += 1; break }
                if b < 0x20 { throw fail("a control character (byte 0x\(String(b, radix: 16))) inside a string must be escaped") }
                if b != UInt8(ascii: "\\") { out.append(b); i += 1; continue }
                i += 1
                guard i < bytes.count else { throw fail("a string ends inside an escape") }
                let e = bytes[i]
                i += 1
                switch e {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(e)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = UInt32(try hex4())
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard i + 2 <= bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") else {
                            throw fail("a \\u escape of a high surrogate must be followed by its low surrogate")
                        }
                        i += 2
                        let low = UInt32(try hex4())
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("a high surrogate escape followed by \\u\(String(low, radix: 16))") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw fail("a lone low surrogate escape \\u\(String(scalar, radix: 16))")
                    }
                    out.append(contentsOf: Array(String(Character(Unicode.Scalar(scalar)!)).utf8))
                default:
                    i -= 1
                    throw fail("unknown escape \\\(describeByte())")
                }
            }
        }
        guard let s = String(validating: out, as: UTF8.self) else { i = open; throw fail("a string is not valid UTF-8") }
        return s
    }
}
