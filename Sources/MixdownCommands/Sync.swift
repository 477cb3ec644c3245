import ArgumentParser
import Foundation
import Mixdown

struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Place recordings of one event on a reference's clock: offset and drift of each.",
        discussion: paragraphs("""
        REC's time t lands on REF's time offset + ratio x t. Windows of REC every --spacing
        seconds are matched against REF (energy envelopes, and GCC-PHAT of the signal for
        material whose envelope is flat; then cross-correlation at ~8 kHz) and a robust line
        is fitted through their lags; silent windows, windows with no clear match and
        windows off the line are rejected and reported. Where REC's clock wanders (a rate
        that follows the temperature), a smooth map through the windows replaces the line
        (its stiffness chosen by cross-validation; --json gives its knots), and --stems
        follows it. With several RECs, each is placed
        against REF, or through another REC that REF placed; --device groups the clips of
        one device, which then share one drift. Exits 1 when a recording cannot be placed
        (confidence below --min-confidence, periodic material, no overlap); with
        --keep-going the others are still written.
        """))

    @Argument(help: "The reference recording.", completion: .file())
    var reference: String
    @Argument(help: "The recordings to place on the reference's clock.", completion: .file())
    var recordings: [String] = []
    @Option(parsing: .singleValue, help: ArgumentHelp("Clips of one device, which share one clock: NAME=CLIP,CLIP,... (repeatable).", valueName: "NAME=CLIPS"))
    var device: [String] = []
    @Option(name: .customLong("max-offset"), parsing: .unconditional, help: "The largest offset searched (exact time; default 60 s for two files, any overlap for more).")
    var maxOffset: String?
    @Option(name: .customLong("max-drift"), parsing: .unconditional, help: "The largest drift searched, ppm.")
    var maxDrift = 1000.0
    @Option(parsing: .unconditional, help: "Seconds between analysis windows.")
    var spacing = 10.0
    @Flag(help: "Report where the drift changes (a device that re-synced its clock; two files only).")
    var piecewise = false
    @Option(name: .customLong("min-confidence"), parsing: .unconditional, help: "Below this confidence (0 to 1) an estimate is refused.")
    var minConfidence = 0.5
    @Option(parsing: .unconditional, help: "Draw every window's lag, the fitted lines and the rejected windows to this SVG file.", completion: .file(extensions: ["svg"]))
    var plot: String?
    @Option(parsing: .unconditional, help: "Write an HTML page of the event: each recording on REF's clock, every window's lag, the fit, the jumps, the confidence, and links to what was written.", completion: .file(extensions: ["html"]))
    var report: String?
    @Option(parsing: .unconditional, help: "Write a composition document of the aligned event (render it with mixdown render).", completion: .file(extensions: ["json"]))
    var doc: String?
    @Option(parsing: .unconditional, help: "Write every recording aligned and drift-corrected, REF's length at REF's rate, into this directory.", completion: .directory)
    var stems: String?
    @Option(parsing: .unconditional, help: "The stems' file type (default wav).", completion: .list(AudioFileType.allCases.map(\.rawValue)))
    var type = "wav"
    @Option(parsing: .unconditional, help: "Write the aligned event as an OpenTimelineIO timeline (the PluralEyes-style hand-off to an editor).", completion: .file(extensions: ["otio"]))
    var otio: String?
    @Option(name: .customLong("otio-rate"), parsing: .unconditional, help: "With --otio: write every time at this edit rate (24, 25, 30000/1001, 29.97), as the FCP 7 XML adapter needs.")
    var otioRate: String?
    @Flag(name: .customLong("keep-polarity"), help: "Write the --stems with their polarity as recorded (by default a recording found inverted against REF is turned over).")
    var keepPolarity = false
    @Flag(name: .customLong("keep-going"), help: "Write the outputs of the recordings that were placed even if one was not (exit status still 1).")
    var keepGoing = false
    @Flag(help: "Replace the --plot, --report, --doc and --stems files if they exist.")
    var overwrite = false
    @Flag(help: "Print the estimate as JSON (with every window's lag and residual); one object per recording with several.")
    var json = false
    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        let job = try job()
        let outcome = try runWithProgress("sync", quiet: quiet || json) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if let estimate = outcome.estimate {
            if json { try printJSON(estimate) } else if !quiet { print(estimate.summary) }
        } else {
            if json { try printJSON(outcome.placements) } else if !quiet {
                for p in outcome.placements {
                    let via = p.placedVia.isEmpty ? "" : " (through \(p.placedVia.joined(separator: " > ")))"
                    let dev = p.device.map { " [\($0)]" } ?? ""
                    print("\(p.recording)\(dev)\(via): " + (p.estimate?.summary ?? "not placed: \(p.error ?? "")"))
                }
                for r in outcome.stems {
                    print("wrote \(r.output): \(r.outputFrames) frames at \(r.sampleRate) Hz" + (r.polarityCorrected ? ", polarity turned over to match REF" : ""))
                }
            }
        }
        if let failure = outcome.failure { throw failure }
    }

    /// The library job the options describe.
    func job() throws -> SyncJob {
        var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: reference).sampleRate }
        var job = SyncJob(reference: reference, recordings: recordings)
        job.tuning.maxOffset = try times.parse(maxOffset, option: "--max-offset")
        job.devices = try device.map { text throws(MixdownError) in try SyncDevice(parsing: text) }
        job.tuning.maxDriftPPM = maxDrift
        job.tuning.windowSpacing = spacing
        job.piecewise = piecewise
        job.tuning.minimumConfidence = minConfidence
        job.plot = plot
        job.report = report
        job.document = doc
        job.stems = stems
        job.otio = otio
        if otioRate != nil && otio == nil { throw UsageError(message: "--otio-rate: only with --otio") }
        job.otioEditRate = try Render.editRate(otioRate)
        job.stemSettings.type = try parseType(type)
        if keepPolarity && stems == nil { throw UsageError(message: "--keep-polarity: only with --stems (the estimate itself reports the polarity either way)") }
        job.keepPolarity = keepPolarity
        job.keepGoing = keepGoing
        job.overwrite = overwrite
        return job
    }

}
