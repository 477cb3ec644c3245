import Foundation

/// A parsed JSON value, for readers that report errors by JSON path.
/// Parsed by `JSONParser`, which refuses duplicate keys and numbers beyond Double.
enum JSONValue: Equatable {
    case null, bool(Bool), number(Double), string(String), array([JSONValue]), object(JSONObject)

    var kind: String {
        switch self {
        case .null: "null"; case .bool: "a boolean"; case .number: "a number"
        case .string: "a string"; case .array: "an array"; case .object: "an object"
        }
    }
}

/// An object's members in document order: a small array, not a hash table (documents
/// hold 100,000s of three-key objects; the parser has refused duplicate keys).
struct JSONObject: Equatable {
    var members: [(key: String, value: JSONValue)] = []

    subscript(key: String) -> JSONValue? {
        get { members.first { $0.key == key }?.value }
        set {
            members.removeAll { $0.key == key }
            if let newValue { members.append((key, newValue)) }
        }
    }
    var keys: [String] { members.map(\.key) }

    static func == (a: JSONObject, b: JSONObject) -> Bool {
        a.members.count == b.members.count && zip(a.members, b.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}

/// A value and where it sits in its document ("tracks[1].segments[3].source"); every
/// accessor throws `invalidDocument` naming that path.
struct JSONCursor {
    let value: JSONValue
    let file: String
    /// The parent's path, shared by its children; the last step is kept apart, so that a
    /// cursor costs no string of its own until a message asks for its path.
    private let base: String
    private let last: Last
    private enum Last { case none, key(String), index(Int) }

    init(value: JSONValue, path: String, file: String) {
        self.init(value: value, base: path, last: .none, file: file)
    }

    private init(value: JSONValue, base: String, last: Last, file: String) {
        self.value = value; self.base = base; self.last = last; self.file = file
    }

    /// Where the value sits: "tracks[1].segments[3].source", or "" for the document.
    var path: String {
        switch last {
        case .none: return base
        case .key(let k): return base.isEmpty ? k : "\(base).\(k)"
        case .index(let i): return "\(base)[\(i)]"
        }
    }

    func fail(_ reason: String, at sub: String? = nil) -> MixdownError {
        .invalidDocument(file: file, location: sub.map { path.isEmpty ? $0 : "\(path).\($0)" } ?? (path.isEmpty ? "(top level)" : path), reason: reason)
    }

    /// The object's members, refusing keys outside `allowed` (a typo is an error, not ignored).
    func object(allowed: [String]) throws(MixdownError) -> JSONObject {
        guard case .object(let members) = value else { throw fail("must be an object, not \(value.kind)") }
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw fail("unknown key '\(key)' (expected \(allowed.map { "'\($0)'" }.joined(separator: ", ")))", at: key)
        }
        return members
    }

    func member(_ key: String, in members: JSONObject) -> JSONCursor? {
        members[key].map { JSONCursor(value: $0, base: path, last: .key(key), file: file) }
    }

    func required(_ key: String, in members: JSONObject) throws(MixdownError) -> JSONCursor {
        guard let c = member(key, in: members) else { throw fail("missing '\(key)'") }
        return c
    }

    func array() throws(MixdownError) -> [JSONCursor] {
        guard case .array(let items) = value else { throw fail("must be an array, not \(value.kind)") }
        let p = path
        return items.enumerated().map { JSONCursor(value: $1, base: p, last: .index($0), file: file) }
    }

    func string() throws(MixdownError) -> String {
        guard case .string(let s) = value else { throw fail("must be a string, not \(value.kind)") }
        return s
    }

    /// A string that must name one of `T`'s cases; an error names them all ("unknown `what` ...").
    func choice<T: RawRepresentable & CaseIterable>(of _: T.Type, _ what: String) throws(MixdownError) -> T where T.RawValue == String {
        let s = try string()
        guard let v = T(rawValue: s) else {
            throw fail("unknown \(what) '\(s)' (\(T.allCases.map(\.rawValue).joined(separator: ", ")))")
        }
        return v
    }

    func number() throws(MixdownError) -> Double {
        guard case .number(let n) = value else { throw fail("must be a number, not \(value.kind)") }
        // Only an OTIO file can hold one (its reader accepts Infinity and NaN for metadata).
        guard n.isFinite else { throw fail("must be a finite number, not \(n)") }
        return n
    }

    func bool() throws(MixdownError) -> Bool {
        guard case .bool(let b) = value else { throw fail("must be true or false, not \(value.kind)") }
        return b
    }

    func integer() throws(MixdownError) -> Int64 {
        let n = try number()
        guard n == n.rounded(), abs(n) < 9e15 else { throw fail("must be a whole number, not \(n)") }
        return Int64(n)
    }

    /// An exact time string ("30", "1:02:03.5", "1440000f", "1001/30000"); frames count at `frameRate`.
    func time(frameRate: Int?) throws(MixdownError) -> MediaTime {
        guard case .string(let s) = value else {
            throw fail("must be a time string such as \"30\", \"1:02:03.5\", \"1440000f\" or \"1001/30000\", not \(value.kind)")
        }
        do { return try MediaTime(parsing: s, frameRate: frameRate) } catch { throw fail("\(error)") }
    }

    /// {"start": T, "duration": T} or {"start": T, "end": T}.
    func timeRange(frameRate: Int?) throws(MixdownError) -> MediaTimeRange {
        let m = try object(allowed: ["start", "duration", "end"])
        let start = try required("start", in: m).time(frameRate: frameRate)
        switch (member("duration", in: m), member("end", in: m)) {
        case (let d?, nil): return MediaTimeRange(start: start, duration: try d.time(frameRate: frameRate))
        case (nil, let e?):
            let end = try e.time(frameRate: frameRate)
            guard end > start else { throw fail("its end \(end.clockDescription) is not after its start \(start.clockDescription)", at: "end") }
            return MediaTimeRange(start: start, end: end)
        case (nil, nil): throw fail("needs 'duration' or 'end'")
        case (_?, _?): throw fail("has both 'duration' and 'end'; give one")
        }
    }
}
