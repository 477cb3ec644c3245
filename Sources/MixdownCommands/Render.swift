import ArgumentParser
import Foundation
import Mixdown

struct Render: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "render",
        abstract: "Render a composition document (JSON) or an OpenTimelineIO timeline to a file, or explain it.",
        discussion: paragraphs("""
        The document format is described in docs/composition.md (schema:
        docs/composition.schema.json); OpenTimelineIO timelines (.otio) in docs/otio.md.
        Paths in them are relative to the file. With --explain, prints the segment table
        (exact source and target frames) and the gain spans of every track, and renders
        nothing (for a timeline, first what was rounded or ignored). --otio writes the
        document as a timeline. Errors name the JSON or OTIO path at fault.
        """))

    @Argument(help: "The composition document (JSON) or an editor's timeline (.otio, .edl, .xml, .aaf).", completion: .file())
    var document: String
    @Argument(help: "The output file (not with --explain); its extension gives the type unless the document or --type does.", completion: .file())
    var output: String?
    @Flag(help: "Print the segment table and gain events; render nothing.")
    var explain = false
    @Option(parsing: .unconditional, help: "Also write the document as an OpenTimelineIO timeline to this file (docs/otio.md); with no output file, render nothing.", completion: .file(extensions: ["otio"]))
    var otio: String?
    @Option(name: .customLong("otio-rate"), parsing: .unconditional, help: "With --otio: write every time at this edit rate (24, 25, 30000/1001, 29.97), as the FCP 7 XML adapter and editors need; times that were not whole frames are rounded and noted in metadata.")
    var otioRate: String?
    @Option(parsing: .unconditional, help: "The resampler for rate changes and varispeed segments: auto (Mixdown's), polyphase (the same), libsamplerate (the reference). Overrides the document.", completion: .list(ResamplerEngine.allCases.map(\.rawValue)))
    var resampler: String?
    @Option(parsing: .unconditional, help: "Resampler quality: best, medium, fastest. Overrides the document.", completion: .list(ResamplerQuality.allCases.map(\.rawValue)))
    var quality: String?
    @Option(name: .customLong("media"), parsing: .singleValue, help: "A timeline's media that is not where it says is looked up in this directory by its file name, then by its clip name (repeatable).", completion: .directory)
    var media: [String] = []
    @Option(name: .customLong("relink"), parsing: .singleValue, help: "OLD_PREFIX=NEW_PREFIX: a timeline's media path that starts with OLD_PREFIX is looked for under NEW_PREFIX (repeatable).")
    var relink: [String] = []
    @Option(name: .customLong("from"), parsing: .unconditional, help: "An editor's timeline starts its render at this timecode (HH:MM:SS:FF, HH:MM:SS;FF drop-frame) on the sequence's clock, instead of the sequence's own start (docs/otio.md).")
    var from: String?

    @OptionGroup var outputOptions: OutputOptions
    @OptionGroup var common: RenderOptions

    func run() throws {
        let doc = try CompositionDocument(contentsOf: document, relinking: relinking(), from: from)
        if otioRate != nil && otio == nil { throw UsageError(message: "--otio-rate: only with --otio") }
        if outputOptions.report != nil && output == nil { throw UsageError(message: "--report: the page is of the rendered output: give an output file") }
        if let otio {
            guard !explain else { throw UsageError(message: "--explain and --otio: give one") }
            // Checked before anything is written: an output the render could not make writes no timeline either.
            if output != nil { _ = try job(doc).plan() }
            try doc.writeOTIO(to: otio, overwrite: common.overwrite, editRate: try Self.editRate(otioRate))
            if !common.quiet && !common.json && output == nil { print("wrote \(otio)") }
            guard output != nil else { return }
        }
        if explain {
            guard output == nil else { throw UsageError(message: "--explain renders nothing: give no output file") }
            let render = doc.render(to: "explain.wav")
            // Tracks with their own loudness are measured: the gains shown are the ones applied.
            let plan = try render.levelled(try render.plan())
            if common.json { return try printJSON(plan.explanation) }
            // An OpenTimelineIO timeline: what was not exact and how it was rounded, what was left out.
            for note in doc.translationNotes { print("note: \(note)") }
            return print(Self.describe(plan.explanation), terminator: "")
        }
        let job = try job(doc)
        let report = try runWithProgress("render", quiet: common.quiet) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if common.json { return try printJSON(report) }
        if !common.quiet {
            print(String(format: "rendered %d tracks, %lld frames (%@) to %@ [%@%@, %d Hz, %d ch] in %.2f s (%.0fx real time)%@",
                         report.tracks, report.frames, report.duration.clockDescription, report.output, report.type.rawValue,
                         report.sampleFormat.map { " " + $0.rawValue } ?? "", report.sampleRate, report.channels,
                         report.seconds, report.realtimeFactor,
                         report.truncatedByFileLengthLimit ? "; stopped at the file length limit (\(report.fileBytes) bytes)" : ""))
            if let l = loudnessLine(report.loudness, page: outputOptions.report) { print(l) }
        }
    }

    /// --otio-rate as an exact rate; nil when not given.
    static func editRate(_ text: String?) throws -> MediaTime? {
        guard let text else { return nil }
        guard let r = OTIOTimeline.editRate(parsing: text) else {
            throw UsageError(message: "--otio-rate '\(text)': an edit rate is a whole number of frames per second (24, 25), n/d (30000/1001) or an NTSC rate (29.97)")
        }
        return r
    }

    /// --media and --relink as the library's relinking; a directory that is not one, or a
    /// rule without '=', is refused before anything is read.
    func relinking() throws -> MediaRelinking {
        try MediaRelinking(directories: media, rules: relink)
    }

    /// The library job the options describe, for the document `doc` (read from `document`).
    func job(_ doc: CompositionDocument) throws -> CompositionRender {
        guard let output else { throw UsageError(message: "missing the output file (or pass --explain)") }
        var job = doc.render(to: output)
        if let resampler {
            guard let e = ResamplerEngine(rawValue: resampler) else {
                throw UsageError(message: "--resampler: '\(resampler)' is not one of \(ResamplerEngine.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            job.resampler = e
        }
        if let quality {
            guard let q = ResamplerQuality(rawValue: quality) else {
                throw UsageError(message: "--quality: '\(quality)' is not one of \(ResamplerQuality.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            job.quality = q
        }
        try job.apply(outputOptions, common)
        return job
    }

    static func describe(_ e: CompositionRender.Explanation) -> String {
        var out = "output \(e.sampleRate) Hz, \(e.channels) ch; composition \(e.compositionFrames) frames; rendering frames \(e.startFrame)..<\(e.endFrame)"
        if e.truncatedByFileLengthLimit { out += " (cut by the file length limit)" }
        out += "\n"
        var track: Int32 = -1
        for s in e.segments {
            if s.trackID != track {
                track = s.trackID
                out += "track \(s.trackID) '\(s.trackName)'\n"
            }
            let target = "\(s.targetStart.clockDescription)-\(s.targetEnd.clockDescription) frames \(s.targetStartFrame)..<\(s.targetEndFrame)"
            if let file = s.file, let a = s.sourceStart, let b = s.sourceEnd, let fa = s.sourceStartFrame, let fb = s.sourceEndFrame {
                out += "  [\(s.index)] \(target)  <- '\(file)' \(a.clockDescription)-\(b.clockDescription) frames \(fa)..<\(fb) @ \(s.sourceSampleRate ?? 0) Hz\(s.route.map { ", \($0.description)" } ?? "")"
                if let scale = s.scale { out += String(format: "  scaled x%.9g", scale) }
                out += "\n"
            } else {
                out += "  [\(s.index)] \(target)  empty\n"
            }
        }
        for t in e.trackLoudness {
            out += String(format: "track %d '%@' levelled to %.1f LUFS: measured %.2f LUFS (true peak %.1f dBTP) alone, before its volume and ducking; gain %+.2f dB\n",
                          t.trackID, t.trackName, t.target, t.measured, t.truePeak, t.gainDb)
        }
        out += "gains (frames at \(e.sampleRate) Hz)\n"
        for t in e.gains {
            out += "track \(t.trackID) '\(t.trackName)'\n"
            func gain(_ g: Double) -> String { String(format: "%.7g", g) }
            for g in t.spans {
                let end = g.endFrame.map { "\($0)" } ?? "end"
                out += g.startGain == g.endGain
                    ? "  \(g.startFrame)..<\(end)  \(gain(g.startGain))\n"
                    : "  \(g.startFrame)..<\(end)  ramp \(gain(g.startGain)) -> \(gain(g.endGain))\n"
            }
        }
        return out
    }
}
