import Foundation

/// Where to find media that an editor's timeline names on another machine: its paths point
/// at the editor's disks (`file:///Macintosh HD/...`, an Avid MXF folder), or it holds no
/// path at all (a MissingReference: an EDL's `FROM CLIP NAME`, Resolve's offline clips).
///
/// A reference whose file exists is used as it is. Otherwise, in order: the first prefix
/// rule whose `old` begins the path, with `new` in its place; the file's name in each of
/// `directories`; the clip's name, as it is or with an audio or video extension, in each
/// of `directories`. The first file that exists is taken, and the reader notes how
/// (`--explain`); none is an error that names the clip and every place looked at.
public struct MediaRelinking: Sendable, Equatable {
    /// `old` prefix of a path, replaced by `new` (`--relink OLD=NEW`).
    public struct PrefixRule: Sendable, Equatable {
        public var old: String
        public var new: String
        public init(old: String, new: String) {
            self.old = old
            self.new = new
        }
    }

    /// Directories to look in by name (`--media DIR`), in order.
    public var directories: [String] = []
    public var prefixes: [PrefixRule] = []

    public init(directories: [String] = [], prefixes: [PrefixRule] = []) {
        self.directories = directories
        self.prefixes = prefixes
    }

    /// The relinking of `--media DIR` (each must be a directory) and `--relink OLD=NEW`
    /// rules, checked; errors name the option and the value.
    public init(directories: [String], rules: [String]) throws(MixdownError) {
        self.init()
        for d in directories {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: d, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw .invalidParameter(name: "--media", value: "'\(d)'", reason: "not a directory")
            }
            self.directories.append(d)
        }
        for rule in rules {
            guard let eq = rule.firstIndex(of: "="), eq != rule.startIndex else {
                throw .invalidParameter(name: "--relink", value: "'\(rule)'", reason: "must be OLD_PREFIX=NEW_PREFIX")
            }
            prefixes.append(.init(old: String(rule[..<eq]), new: String(rule[rule.index(after: eq)...])))
        }
    }

    /// Nothing to relink with: references are taken as they are.
    public var isEmpty: Bool { directories.isEmpty && prefixes.isEmpty }

    /// Extensions tried after a clip's name, in this order.
    static let extensions = ["wav", "aif", "aiff", "bwf", "flac", "caf", "w64", "rf64", "mp3", "m4a", "aac", "ogg", "opus", "mxf", "mov", "mp4", "mkv", "webm"]

    /// The file for a reference: `path` (nil for a MissingReference) of the clip `clip`.
    /// Returns the path found and how, or every place looked at.
    enum Resolution {
        /// The file, and how it was found (nil: where the timeline said).
        case found(path: String, how: String?)
        /// Every place looked at.
        case notFound(tried: [String])
    }

    func resolve(path: String?, clip: String) -> Resolution {
        let exists = { (p: String) -> Bool in
            var isDirectory: ObjCBool = false
            return FileManager.default.fileExists(atPath: p, isDirectory: &isDirectory) && !isDirectory.boolValue
        }
        var tried: [String] = []
        if let path {
            if exists(path) { return .found(path: path, how: nil) }
            tried.append(path)
            for rule in prefixes where !rule.old.isEmpty && path.hasPrefix(rule.old) {
                let p = rule.new + path.dropFirst(rule.old.count)
                if exists(p) { return .found(path: p, how: "relinked by prefix '\(rule.old)' to '\(p)'") }
                tried.append(p)
            }
            let name = (path as NSString).lastPathComponent
            for d in directories {
                let p = (d as NSString).appendingPathComponent(name)
                if exists(p) { return .found(path: p, how: "found by its file name in '\(d)': '\(p)'") }
                tried.append(p)
            }
        }
        // The clip's name, as it is (it may carry an extension) and with each extension.
        let names = clip.isEmpty ? [] : [clip] + Self.extensions.map { clip + "." + $0 }
        for d in directories {
            for n in names where !n.contains("/") {
                let p = (d as NSString).appendingPathComponent(n)
                if exists(p) { return .found(path: p, how: "found by its clip name in '\(d)': '\(p)'") }
            }
            if !names.isEmpty { tried.append((d as NSString).appendingPathComponent(clip) + "[.wav, .aif, ...]") }
        }
        return .notFound(tried: tried)
    }
}
