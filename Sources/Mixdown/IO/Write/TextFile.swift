import Foundation

/// A small text output (a composition document, an OTIO timeline, an SVG plot).
enum TextFile {
    /// Writes `text` as UTF-8 to `path` atomically (complete or absent); an existing file is
    /// replaced only with `overwrite`.
    static func write(_ text: String, to path: String, overwrite: Bool) throws(MixdownError) {
        if !overwrite && FileManager.default.fileExists(atPath: path) { throw .outputExists(path: path) }
        do { try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic) } catch {
            throw .outputNotWritable(path: path, reason: (error as NSError).localizedDescription)
        }
    }
}
