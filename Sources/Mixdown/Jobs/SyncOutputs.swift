import Foundation

/// The composition document of a synced event (`mixdown sync --doc`): REF on the first
/// track from 0, then one track per device (a recording outside any device is its own),
/// every clip at its place on REF's timeline and scaled by its drift, the whole covering
/// exactly REF's length at REF's rate, so that `mixdown render` gives the aligned mix.
///
/// Times are exact rationals. A clip's start and scaled duration are the estimate rounded
/// to the nearest microsecond (half away from zero), given as "n/1000000"; its source is
/// in its own frames. A clip that starts before REF is trimmed to the first of its frames
/// that lands at or after 0. A track's scale entries ripple the clips after them
/// (AVFoundation's rule), so each clip is placed earlier by what the earlier clips of its
/// track will gain, and the entries run from the last clip to the first: every clip ends
/// up exactly where its estimate puts it.
public struct SyncDocument: Sendable {
    public let json: String

    public init(result: EventSync.Result, devices: [SyncDevice], documentPath: String) throws(MixdownError) {
        let ref = try AudioFileInfo.read(path: result.reference)
        let base = (documentPath as NSString).deletingLastPathComponent
        func relative(_ path: String) -> String {
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            let dir = base.isEmpty ? FileManager.default.currentDirectoryPath : (base.hasPrefix("/") ? base : FileManager.default.currentDirectoryPath + "/" + base)
            let a = URL(fileURLWithPath: absolute).standardizedFileURL.pathComponents
            let d = URL(fileURLWithPath: dir).standardizedFileURL.pathComponents
            var common = 0
            while common < min(a.count, d.count) && a[common] == d[common] { common += 1 }
            return (Array(repeating: "..", count: d.count - common) + a[common...]).joined(separator: "/")
        }
        // Tracks: REF, then each device in order, then each lone recording.
        var groups: [(name: String, clips: [Placement])] = []
        var used = Set<String>()
        for d in devices {
            let clips = result.placements.filter { $0.device == d.name && $0.isPlaced }
            if !clips.isEmpty { groups.append((d.name, clips)) }
        }
        for p in result.placements where p.device == nil && p.isPlaced {
            groups.append((URL(fileURLWithPath: p.recording).deletingPathExtension().lastPathComponent, [p]))
        }
        var channels = [ref.channelCount]
        var tracks: [String] = []
        let refName = URL(fileURLWithPath: result.reference).deletingPathExtension().lastPathComponent
        used.insert(refName)
        tracks.append(Self.track(name: refName, segments: ["{ \"file\": \(Self.quote(relative(result.reference))), \"at\": \"0\" }"], scales: []))
        for g in groups {
            var name = g.name, n = 2
            while !used.insert(name).inserted { name = "\(g.name) \(n)"; n += 1 }
            var clips: [(at: Fraction, start: Int64, frames: Int64, rate: Int64, to: Fraction, path: String)] = []
            for p in g.clips {
                guard let e = p.estimate else { continue }
                let info = try AudioFileInfo.read(path: p.recording)
                channels.append(info.channelCount)
                let rate = Int64(info.sampleRate)
                // A clock that wanders, or a recording that paused: a clip per piece of its
                // maps, each at its exact place (REF frames over REF's rate) and scaled exactly.
                let maps = e.jumps != nil ? (e.segments ?? []).compactMap(\.map) : e.map.map { [$0] } ?? []
                if !maps.isEmpty {
                    for map in maps {
                        for (a, b) in zip(map.knots, map.knots.dropFirst()) {
                            let j0 = a.referenceTime.value, j1 = b.referenceTime.value, refRate = Int64(map.referenceRate)
                            let n0 = a.recordingFrame, n1 = min(b.recordingFrame, info.frames)
                            guard j1 > 0, n1 > n0 else { continue }
                            if j0 >= 0 {
                                clips.append((Fraction(j0, refRate), n0, n1 - n0, rate, Fraction(j1 - j0, refRate), p.recording))
                            } else {
                                // The piece's first frame that lands at or after REF's 0.
                                let skip = (-j0 * (b.recordingFrame - n0) + (j1 - j0) - 1) / (j1 - j0)
                                let start = n0 + skip
                                guard start < n1 else { continue }
                                let landed = Double(j0) + Double(skip) * Double(j1 - j0) / Double(b.recordingFrame - n0)
                                clips.append((max(Fraction(microseconds: landed / Double(refRate)), Fraction(0, 1)), start, n1 - start, rate,
                                              Fraction(microseconds: Double(n1 - start) * Double(j1 - j0) / Double(b.recordingFrame - n0) / Double(refRate)),
                                              p.recording))
                            }
                        }
                    }
                    continue
                }
                // The first frame that lands at or after REF's 0.
                let start = e.offsetSeconds >= 0 ? 0 : Int64((-e.offsetSeconds * Double(rate) / e.ratio).rounded(.up))
                guard start < info.frames else { continue }
                let at = Fraction(microseconds: e.offsetSeconds + e.ratio * Double(start) / Double(rate))
                let frames = info.frames - start
                let to = Fraction(microseconds: e.ratio * Double(frames) / Double(rate))
                clips.append((max(at, Fraction(0, 1)), start, frames, rate, to, p.recording))
            }
            clips.sort { $0.at < $1.at }
            var segments: [String] = [], scales: [String] = []
            var gained = Fraction(0, 1)
            for c in clips {
                let duration = Fraction(c.frames, c.rate)
                let placedAt = c.at - gained
                segments.append("{ \"file\": \(Self.quote(relative(c.path))), \"source\": { \"start\": \"\(c.start)f\", \"duration\": \"\(c.frames)f\" }, \"at\": \"\(placedAt)\" }")
                scales.insert("{ \"time_range\": { \"start\": \"\(placedAt)\", \"duration\": \"\(duration)\" }, \"to_duration\": \"\(c.to)\" }", at: 0)
                gained = gained + (c.to - duration)
            }
            tracks.append(Self.track(name: name, segments: segments, scales: scales))
        }
        let maxChannels = channels.max() ?? 1
        let outChannels = channels.allSatisfy { $0 == 1 || $0 == maxChannels } ? maxChannels : 1
        json = """
        {
          "version": 1,
          "comment": "Written by mixdown sync: every recording on the clock of \(relative(result.reference).replacingOccurrences(of: "\"", with: "'")).",
          "output": { "sample_rate": \(ref.sampleRate), "channels": \(outChannels) },
          "time_range": { "start": "0", "duration": "\(ref.frames)f" },
          "time_pitch_algorithm": "varispeed",
          "tracks": [
            \(tracks.joined(separator: ",\n    "))
          ]
        }

        """
    }

    public func write(to path: String, overwrite: Bool) throws(MixdownError) {
        try TextFile.write(json, to: path, overwrite: overwrite)
    }

    static func track(name: String, segments: [String], scales: [String]) -> String {
        var s = "{ \"name\": \(quote(name)),\n      \"segments\": [\n        " + segments.joined(separator: ",\n        ") + "\n      ]"
        if !scales.isEmpty { s += ",\n      \"scale\": [\n        " + scales.joined(separator: ",\n        ") + "\n      ]" }
        return s + " }"
    }

    static func quote(_ s: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [s], options: [.withoutEscapingSlashes])
        let array = data.flatMap { String(data: $0, encoding: .utf8) } ?? "[\"\"]"
        return String(array.dropFirst().dropLast())
    }
}

/// An exact fraction for the document's times (reduced; the denominators stay below 2^31
/// for the rates Mixdown reads: lcm(10^6, rate)).
struct Fraction: Comparable, CustomStringConvertible {
    let n: Int64, d: Int64

    init(_ n: Int64, _ d: Int64) {
        precondition(d > 0)
        var a = abs(n), b = d
        while b != 0 { (a, b) = (b, a % b) }
        let g = max(1, a)
        self.n = n / g
        self.d = d / g
    }

    /// `seconds` rounded to the nearest microsecond, half away from zero.
    init(microseconds seconds: Double) { self.init(Int64((seconds * 1e6).rounded()), 1_000_000) }

    static func + (a: Fraction, b: Fraction) -> Fraction { Fraction(a.n * b.d + b.n * a.d, a.d * b.d) }
    static func - (a: Fraction, b: Fraction) -> Fraction { Fraction(a.n * b.d - b.n * a.d, a.d * b.d) }
    static func < (a: Fraction, b: Fraction) -> Bool { a.n * b.d < b.n * a.d }
    var description: String { d == 1 ? "\(n)" : "\(n)/\(d)" }
}

/// Every placed recording aligned and drift-corrected (`mixdown sync --stems DIR`): at
/// REF's rate, exactly REF's length, silence where it did not record, through the same
/// path as `stretch --align` (`FileAlign` with the event's estimate, one pass each), as
/// DIR/<base name>.<type's extension>, each atomically.
public struct SyncStems: Sendable {
    public var directory: String
    /// How the stems are written; `settings.type` (default wav) also names their extension.
    public var settings = OutputSettings()
    /// Write each stem with its polarity as recorded; without it, a recording found
    /// inverted against REF is turned over (`FileAlign.keepPolarity`).
    public var keepPolarity = false

    public init(directory: String) { self.directory = directory }

    /// The stem `recording` is written to: DIR/<base name>.<type's extension>. The one rule
    /// for the stems' names, used by the job that writes them and by the checks that must
    /// know them before it runs (a batch's, and the job's own: never over an input).
    public func path(for recording: String) -> String {
        let name = URL(fileURLWithPath: recording).deletingPathExtension().lastPathComponent + "." + (settings.type ?? .wav).rawValue
        return (directory as NSString).appendingPathComponent(name)
    }

    /// The path of each placed recording's stem; refuses a directory that is a file, two
    /// recordings with one base name and (without overwrite) stems that exist, before any
    /// is written.
    public func paths(for result: EventSync.Result) throws(MixdownError) -> [(Placement, String)] {
        try checkDirectory()
        var seen: [String: String] = [:]
        var out: [(Placement, String)] = []
        for p in result.placements where p.isPlaced {
            let path = self.path(for: p.recording)
            let name = (path as NSString).lastPathComponent
            if let other = seen[name] {
                throw .invalidEvent(parameter: "--stems '\(directory)'", reason: "'\(p.recording)' and '\(other)' would both be written to \(name)")
            }
            seen[name] = p.recording
            if !settings.overwrite && FileManager.default.fileExists(atPath: path) { throw .outputExists(path: path) }
            out.append((p, path))
        }
        return out
    }

    /// Refuses a directory that is a file (before any analysis is run).
    public func checkDirectory() throws(MixdownError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), !isDirectory.boolValue {
            throw .invalidEvent(parameter: "--stems '\(directory)'", reason: "is a file, not a directory")
        }
    }

    public func run(_ result: EventSync.Result, progress: ((Double) -> Void)? = nil,
                    cancellation: CancellationToken? = nil) throws(MixdownError) -> [FileAlign.Report] {
        let stems = try paths(for: result)
        do { try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true) } catch {
            throw .outputNotWritable(path: directory, reason: (error as NSError).localizedDescription)
        }
        var reports: [FileAlign.Report] = []
        for (k, (placement, path)) in stems.enumerated() {
            var job = FileAlign(input: placement.recording, reference: result.reference, output: path)
            job.estimate = placement.estimate
            job.verify = false
            job.algorithm = .varispeed
            job.settings = settings
            job.keepPolarity = keepPolarity
            reports.append(try job.run(progress: { progress?((Double(k) + $0) / Double(stems.count)) }, cancellation: cancellation))
        }
        return reports
    }
}
