/// Every error the library throws at its boundary. Each names what was wrong and where:
/// the file, the parameter or the time at fault.
public enum MixdownError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No file at the path.
    case fileNotFound(path: String)
    /// The path is a directory or another non-regular file.
    case notAFile(path: String)
    /// The file has zero bytes, or an audio stream with zero frames.
    case emptyFile(path: String)
    /// libsndfile could not read it: corrupt, truncated header, not audio, unsupported.
    case unreadableFile(path: String, reason: String)
    /// The file ended before the frames its header promised.
    case truncatedAudio(path: String, expectedFrames: Int64, readFrames: Int64)
    /// A read error in the middle of a file.
    case readFailed(path: String, reason: String)
    /// Data that cannot be decoded, at a time of the stream (never replaced by silence).
    case corruptAudio(path: String, time: String, reason: String)
    /// The container holds no audio stream, or not at the index asked for.
    case noAudioStream(path: String, reason: String)
    /// A parameter with a value that cannot be used (the name is the option or argument).
    case invalidParameter(name: String, value: String, reason: String)
    /// A time string that did not parse, for the named parameter.
    case invalidTime(name: String, error: TimeParseError)
    /// A requested range does not lie inside the source.
    case rangeOutsideSource(path: String, requested: String, available: String)
    /// Two volume events that overlap or share a time.
    case overlappingAutomation(first: String, second: String)
    /// No rule maps these channel counts.
    case unsupportedChannelMapping(from: Int, to: Int)
    /// The output type cannot be used as asked.
    case unsupportedOutput(path: String, reason: String)
    /// A readable file that this job cannot take (a rate a loudness meter does not measure).
    case unsupportedInput(path: String, reason: String)
    /// The destination exists and overwriting was not asked for.
    case outputExists(path: String)
    /// The destination (or its directory) cannot be written.
    case outputNotWritable(path: String, reason: String)
    /// A write, flush or rename failed.
    case writeFailed(path: String, reason: String)
    /// The output would be larger than its container holds.
    case outputTooLarge(path: String, bytes: Int64, reason: String)
    /// The destination's filesystem has less free space than the output needs (checked
    /// before a byte is written, for outputs whose size is known in advance).
    case notEnoughSpace(path: String, neededBytes: Int64, availableBytes: Int64)
    /// A composition edit that cannot be made: bad times, a range outside its file.
    case invalidEdit(track: String, reason: String)
    /// Two segments of one track that would cover the same time.
    case overlappingSegments(track: String, segment: String, other: String)
    /// A composition document that cannot be used; `location` is the JSON path at fault.
    case invalidDocument(file: String, location: String, reason: String)
    /// A drift estimate too uncertain to act on.
    case lowConfidence(reference: String, recording: String, confidence: Double, minimum: Double, reason: String)
    /// An event that cannot be synced as given (`mixdown sync`): a device list that names a
    /// missing file, two devices with one name, stems into a file; `parameter` names the option.
    case invalidEvent(parameter: String, reason: String)
    /// Recordings of an event that could not be placed on the reference's clock, each with why.
    case unplaced(recordings: [String], reasons: [String])
    /// Two different alignments fit about as well (periodic material): no estimate is given.
    case ambiguousAlignment(reference: String, recording: String, offsets: [Double], reason: String)
    /// The caller asked for one offset and one ratio, and the recording's clock is not one
    /// line (it wanders, or the recorder paused): a single line would be off by more than
    /// the estimate's own precision.
    case notOneLine(reference: String, recording: String, reason: String)
    /// An aligned output measured against its reference lies off it by more than the check
    /// allows (a clock the estimate did not model): it was removed.
    case misaligned(output: String, reference: String, worstMilliseconds: Double, atSeconds: Double, limitMilliseconds: Double)
    /// A batch manifest line that is not a job (`line` 1-based; 0: the manifest as a whole).
    case invalidManifest(file: String, line: Int, reason: String)
    /// A node broke the render contract (more frames than asked, a short block before its
    /// end, frames after its end): a bug in Mixdown or in an embedder's node, found by
    /// `ContractCheck`.
    case nodeContractViolated(node: String, reason: String)
    /// A job asked to bring audio to a loudness found it silent: its integrated loudness is
    /// -infinity (no 400 ms block above -70 LUFS), and no gain reaches a target.
    case silentAudio(what: String, target: String)
    /// A normalised output that does not meet its loudness target or its true-peak ceiling
    /// as measured after writing, or a target the limiter cannot reach: it was removed (or
    /// never written). `reason` says what was reached and why.
    case loudnessMissed(output: String, reason: String)
    /// The render was cancelled (by the caller, or by Ctrl-C in the CLI).
    case cancelled

    public var description: String {
        switch self {
        case .fileNotFound(let p): return "'\(p)': no such file"
        case .notAFile(let p): return "'\(p)': is a directory or not a regular file (a pipe, device or socket has no length to read first)"
        case .emptyFile(let p): return "'\(p)': the file is empty (no audio frames)"
        case .unreadableFile(let p, let r): return "'\(p)': cannot read audio: \(r)"
        case .truncatedAudio(let p, let e, let r):
            return "'\(p)': the file is truncated: its header promises \(e) frames but only \(r) could be read"
        case .readFailed(let p, let r): return "'\(p)': read failed: \(r)"
        case .corruptAudio(let p, let t, let r): return "'\(p)': cannot decode the audio at \(t): \(r)"
        case .noAudioStream(let p, let r): return "'\(p)': \(r)"
        case .invalidParameter(let n, let v, let r): return "\(n) \(v): \(r)"
        case .invalidTime(let n, let e): return "\(n): \(e)"
        case .rangeOutsideSource(let p, let req, let avail):
            return "'\(p)': the requested range \(req) lies outside the source, which is \(avail)"
        case .overlappingAutomation(let a, let b): return "volume automation: \(a) overlaps \(b)"
        case .unsupportedChannelMapping(let f, let t):
            return "no channel mapping from \(f) to \(t) channels (supported: mono to any, any to mono, equal counts)"
        case .unsupportedOutput(let p, let r): return "'\(p)': \(r)"
        case .unsupportedInput(let p, let r): return "'\(p)': \(r)"
        case .outputExists(let p): return "'\(p)': already exists (pass --overwrite to replace it)"
        case .outputNotWritable(let p, let r): return "'\(p)': cannot write: \(r)"
        case .writeFailed(let p, let r): return "'\(p)': write failed: \(r)"
        case .outputTooLarge(let p, let b, let r): return "'\(p)': output of \(b) bytes is too large: \(r)"
        case .notEnoughSpace(let p, let n, let a):
            return "'\(p)': the output needs \(Self.bytes(n)) and its filesystem has \(Self.bytes(a)) free; nothing was written"
        case .invalidEdit(let t, let r): return "\(t): \(r)"
        case .overlappingSegments(let t, let a, let b): return "\(t): \(a) overlaps \(b)"
        case .invalidDocument(let f, let l, let r): return "'\(f)': \(l): \(r)"
        case .lowConfidence(let ref, let rec, let c, let m, let r):
            return "'\(rec)' against '\(ref)': confidence \(String(format: "%.2f", c)) is below \(String(format: "%.2f", m)): \(r)"
        case .invalidEvent(let p, let r): return "\(p): \(r)"
        case .unplaced(let recs, let reasons):
            return "could not place " + zip(recs, reasons).map { "'\($0)' (\($1))" }.joined(separator: "; ")
        case .ambiguousAlignment(let ref, let rec, let o, let r):
            return "'\(rec)' against '\(ref)': offsets \(o.map { String(format: "%+.3f s", $0) }.joined(separator: " and ")) fit about as well: \(r)"
        case .notOneLine(let ref, let rec, let r): return "'\(rec)' against '\(ref)': \(r)"
        case .misaligned(let o, let r, let w, let t, let l):
            return "'\(o)': measured against '\(r)', the aligned output is \(String(format: "%.3f", w)) ms off at \(String(format: "%.1f", t)) s of it (at most \(String(format: "%.3f", l)) ms is accepted): the recording's clock does not follow the estimate; nothing was written"
        case .invalidManifest(let f, let l, let r): return l > 0 ? "'\(f)': line \(l): \(r)" : "'\(f)': \(r)"
        case .nodeContractViolated(let n, let r): return "node \(n) broke the render contract: \(r)"
        case .silentAudio(let w, let t):
            return "\(w) is silent (integrated loudness -inf LUFS: no 400 ms block above the -70 LUFS gate): no gain brings it to \(t); nothing was written"
        case .loudnessMissed(let o, let r): return "'\(o)': \(r); nothing was written"
        case .cancelled: return "cancelled"
        }
    }

    /// `text` with its control characters escaped (a NUL as `\0`), to quote in a message.
    public static func printable(_ text: String) -> String {
        var out = ""
        for u in text.unicodeScalars {
            switch u {
            case "\0": out += "\\0"
            case _ where u.value < 0x20 || u.value == 0x7f: out += String(format: "\\x%02x", u.value)
            default: out.unicodeScalars.append(u)
            }
        }
        return out
    }

    /// A NaN or infinite sample read from `path`: the file is damaged. Mixdown's one policy
    /// for them, in every command and API: refuse, naming the first one (docs/errors.md).
    public static func nonFiniteSample(path: String, frame: Int64, channel: Int, value: Float, sampleRate: Int) -> MixdownError {
        .corruptAudio(path: path, time: MediaTime(frames: frame, sampleRate: sampleRate).clockDescription,
                      reason: "frame \(frame), channel \(channel + 1) holds \(NonFinite.name(value)) (a damaged file: Mixdown reads only finite samples)")
    }

    /// "1234567890 bytes (1.23 GB)".
    static func bytes(_ n: Int64) -> String {
        let units = ["kB", "MB", "GB", "TB", "PB", "EB"]
        var v = Double(n), u = -1
        while v >= 1000 && u < units.count - 1 { v /= 1000; u += 1 }
        return u < 0 ? "\(n) bytes" : "\(n) bytes (\(String(format: "%.2f", v)) \(units[u]))"
    }
}
