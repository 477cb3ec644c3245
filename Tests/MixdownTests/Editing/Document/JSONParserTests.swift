import Foundation
import Testing
@testable import Mixdown

@Suite struct JSONParserTests {
    func parse(_ text: String) throws(JSONParser.Failure) -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    func failure(_ bytes: [UInt8]) -> JSONParser.Failure? {
        do { _ = try JSONParser.parse(bytes); return nil } catch { return error }
    }

    @Test func readsEveryKindOfValue() throws {
        let v = try parse(#" {"a": [1, -2.5e3, 0.125, true, false, null], "s": "x\"\\\/\b\f\n\r\t\u00e9\ud83c\udfb5", "o": {}} "#)
        guard case .object(let o) = v else { Issue.record("not an object"); return }
        #expect(o.keys == ["a", "s", "o"])
        #expect(o["a"] == .array([.number(1), .number(-2500), .number(0.125), .bool(true), .bool(false), .null]))
        #expect(o["s"] == .string("x\"\\/\u{8}\u{c}\n\r\té🎵"))
        #expect(o["o"] == .object(JSONObject()))
    }

    /// Agrees with Foundation's reader on what both accept.
    @Test func agreesWithFoundation() throws {
        let text = #"{"version": 1, "tracks": [{"name": "ü", "segments": [{"file": "a.wav", "at": "1/3"}, {"empty": {"start": "0", "duration": "2"}}]}], "n": [1e-5, 123456789012, -0.0]}"#
        func convert(_ v: JSONValue) -> Any {
            switch v {
            case .null: return NSNull()
            case .bool(let b): return b
            case .number(let n): return n
            case .string(let s): return s
            case .array(let a): return a.map(convert)
            case .object(let o): return Dictionary(uniqueKeysWithValues: o.members.map { ($0.key, convert($0.value)) })
            }
        }
        let ours = try JSONSerialization.data(withJSONObject: convert(try parse(text)), options: .sortedKeys)
        let theirs = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: Data(text.utf8)), options: .sortedKeys)
        #expect(ours == theirs)
    }

    /// (document, location, line, column, words)
    static let bad: [(String, String, Int, Int, String)] = [
        (#"{"a": 1, "a": 2}"#, "a", 1, 10, "given twice"),
        ("{\"t\": [\n  {\"x\": 1e400}]}", "t[0].x", 2, 9, "beyond the range of a Double"),
        (#"[1, 2,]"#, "[2]", 1, 7, "unexpected ']'"),
        (#"{"a": 01}"#, "a", 1, 7, "must not start with 0"),
        (#"{"a": "\ud800x"}"#, "a", 1, 14, "low surrogate"),
        (#"{"a": "\udc00"}"#, "a", 1, 14, "lone low surrogate"),
        (#"{"a": "\q"}"#, "a", 1, 9, "unknown escape"),
        (#"{"a": tru}"#, "a", 1, 7, "unexpected 't'"),
        (#"{"a": 1} x"#, "(document)", 1, 10, "after the document's value"),
        (#"{"a" 1}"#, "(document)", 1, 6, "expected ':'"),
        ("", "(document)", 1, 1, "ends where a value should be"),
        (#"{"a": "abc"#, "a", 1, 7, "not closed"),
        (#"{"a": -}"#, "a", 1, 8, "needs digits"),
        (#"{"a": 1.}"#, "a", 1, 9, "after its decimal point"),
    ]

    @Test(arguments: 0..<bad.count)
    func aFaultNamesItsPathLineAndColumn(case i: Int) {
        let (text, location, line, column, words) = Self.bad[i]
        guard let f = failure(Array(text.utf8)) else { Issue.record("accepted: \(text)"); return }
        #expect(f.location == location, "\(f)")
        #expect((f.line, f.column) == (line, column), "\(f)")
        #expect(f.reason.contains(words), "\(f)")
    }

    @Test func invalidUTF8AndControlCharactersAreRefused() {
        #expect(failure([0x22, 0xFF, 0xFE, 0x22])?.reason == "a string is not valid UTF-8")
        #expect(failure(Array("\"a\nb\"".utf8))?.reason.contains("control character") == true)
    }

    @Test func nestingIsBoundedWithoutRecursingFurther() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(failure(Array(deep.utf8))?.reason == "nested deeper than \(JSONParser.maximumDepth) levels")
        let ok = String(repeating: "[", count: JSONParser.maximumDepth) + String(repeating: "]", count: JSONParser.maximumDepth)
        #expect(failure(Array(ok.utf8)) == nil)
    }

    /// A wide object uses a set for its duplicate check: linear, and still exact.
    @Test func wideObjectsFindTheirDuplicate() {
        var text = "{" + (0..<5_000).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        #expect(failure(Array((text + "}").utf8)) == nil)
        text += ", \"k4321\": 0}"
        #expect(failure(Array(text.utf8))?.location == "k4321")
    }

    /// opentimelineio's dialect: Infinity, -Infinity and NaN are numbers where asked for,
    /// and errors in Mixdown's own documents.
    @Test func nonFiniteWordsAreNumbersOnlyInTheOTIODialect() throws {
        let text = "{\"a\": Infinity, \"b\": [-Infinity, NaN], \"c\": -1.5}"
        let v = try JSONParser.parse(Array(text.utf8), nonFinite: true)
        guard case .object(let o) = v, case .number(let a)? = o["a"], case .array(let b)? = o["b"],
              case .number(let b0) = b[0], case .number(let b1) = b[1], case .number(let c)? = o["c"] else {
            Issue.record("not the expected shape: \(v)")
            return
        }
        #expect(a == .infinity && b0 == -.infinity && b1.isNaN && c == -1.5)
        let strict = failure(Array(text.utf8))
        #expect(strict?.location == "a" && strict?.reason == "unexpected 'I' where a value should be")
        #expect(failure(Array("[-Infinity]".utf8))?.reason == "a number needs digits after '-'")
        // The bare Inf of OTIO's own samples is infinity too; a word that only starts like
        // one is still an error.
        #expect(try JSONParser.parse(Array("[Inf, -Inf]".utf8), nonFinite: true) == .array([.number(.infinity), .number(-.infinity)]))
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("[Infin]".utf8), nonFinite: true) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("[In]".utf8), nonFinite: true) }
        #expect(throws: JSONParser.Failure.self) { try JSONParser.parse(Array("[Inf]".utf8)) }
    }
}
