import Foundation

/// Mixdown's JSON: sorted snake_case keys, and a value that is not a finite number (a
/// measure that could not be taken) written as null, never NaN or Infinity (which JSON has
/// not). What `--json` prints and what a report page embeds.
public enum MixdownJSON {
    /// `value` as Mixdown's JSON; `warn` hears which keys were null for that reason.
    public static func text<T: Encodable>(_ value: T, warn: (String) -> Void) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let mark = "\u{1}mixdown-not-finite\u{1}"
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: mark, negativeInfinity: mark, nan: mark)
        var text = String(decoding: try encoder.encode(value), as: UTF8.self)
        let quoted = String(decoding: try JSONEncoder().encode(mark), as: UTF8.self)
        guard text.contains(quoted) else { return text }
        // Which keys: each marked value's key, for the warning.
        var keys: [String] = []
        var rest = Substring(text)
        while let r = rest.range(of: ":" + quoted) {
            let before = rest[..<r.lowerBound]
            if let close = before.lastIndex(of: "\""), let open = before[..<close].lastIndex(of: "\"") {
                keys.append(String(before[before.index(after: open)..<close]))
            }
            rest = rest[r.upperBound...]
        }
        text = text.replacingOccurrences(of: quoted, with: "null")
        warn("\(keys.isEmpty ? "some values" : keys.joined(separator: ", ")) could not be measured (not a finite number): null in the JSON")
        return text
    }
}
