import ArgumentParser
import Foundation
import Mixdown

struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Place recordings of one event on a reference's clock: offset and drift of each.",
        discussion: """
        REC's time t lands on REF's time offset + ratio x t. Windows of REC every --spacing
        seconds are matched against REF (energy envelopes, and GCC-PHAT of the signal for
        material whose envelope is flat; then cross-correlation at ~8 kHz) and a robust line
        is fitted through their lags; silent windows, windows with no clear match and
        windows off the line are rejected and reported. With several RECs, each is placed
        against REF, or through another REC that REF placed; --device groups the clips of
        one device, which then share one drift. Exits 1 when a recording cannot be placed
        (confidence below --min-confidence, periodic material, no overlap); with
        --keep-going the others are still written.
        """)

    @Argument(help: "The reference recording.")
    var reference: String
    @Argument(help: "The recordings to place on the reference's clock.")
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
    @Option(parsing: .unconditional, help: "Draw every window's lag, the fitted lines and the rejected windows to this SVG file.")
    var plot: String?
    @Option(parsing: .unconditional, help: "Write a composition document of the aligned event (render it with mixdown render).")
    var doc: String?
    @Option(parsing: .unconditional, help: "Write every recording aligned and drift-corrected, REF's length at REF's rate, into this directory.")
    var stems: String?
    @Option(parsing: .unconditional, help: "The stems' file type (default wav).")
    var type = "wav"
    @Flag(name: .customLong("keep-going"), help: "Write the outputs of the recordings that were placed even if one was not (exit status still 1).")
    var keepGoing = false
    @Flag(help: "Replace the --plot, --doc and --stems files if they exist.")
    var overwrite = false
    @Flag(help: "Print the estimate as JSON (with every window's lag and residual); one object per recording with several.")
    var json = false
    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: reference).sampleRate }
        let offset = try times.parse(maxOffset, option: "--max-offset")
        guard maxDrift.isFinite, maxDrift > 0, maxDrift <= 10_000 else {
            throw MixdownError.invalidParameter(name: "--max-drift", value: "\(maxDrift)", reason: "must lie above 0 and at most 10000 ppm")
        }
        if recordings.count == 1 && device.isEmpty && doc == nil && stems == nil { return try runPair(offset) }
        try runEvent(offset)
    }

    /// The two-file form: today's output, exactly.
    func runPair(_ offset: MediaTime?) throws {
        var job = DriftEstimator(reference: reference, recording: recordings[0])
        job.maxOffset = offset ?? MediaTime(seconds: 60)
        job.maxDriftPPM = maxDrift
        job.windowSpacing = spacing
        job.piecewise = piecewise
        let estimate = try runWithProgress("sync", quiet: quiet || json) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if json { try printJSON(estimate) } else if !quiet { print(estimate.summary) }
        // The plot shows the evidence, a refused estimate's too.
        if let plot { try LagPlot(estimates: [estimate]).write(to: plot, overwrite: overwrite) }
        try estimate.requireConfidence(minConfidence)
    }

    func runEvent(_ offset: MediaTime?) throws {
        if piecewise { throw UsageError(message: "--piecewise takes two files (REF REC)") }
        let devices = try device.map(Self.parseDevice)
        var all = recordings
        for d in devices { for c in d.clips where c != reference && !all.contains(c) { all.append(c) } }
        var job = EventSync(reference: reference, recordings: all)
        job.devices = devices
        job.maxOffset = offset
        job.maxDriftPPM = maxDrift
        job.windowSpacing = spacing
        job.minimumConfidence = minConfidence
        try job.validate()
        var outputs = SyncStems(directory: stems ?? "")
        outputs.settings.type = try parseType(type)
        outputs.settings.overwrite = overwrite
        // Refuse unusable outputs before the analysis.
        if stems != nil { try outputs.checkDirectory() }
        for path in [plot, doc].compactMap({ $0 }) where !overwrite && FileManager.default.fileExists(atPath: path) {
            throw MixdownError.outputExists(path: path)
        }

        let result = try runWithProgress("sync", quiet: quiet || json) { progress, token in
            try job.run(progress: progress, cancellation: token)
        }
        if json { try printJSON(result.placements) } else if !quiet {
            for p in result.placements {
                let via = p.placedVia.isEmpty ? "" : " (through \(p.placedVia.joined(separator: " > ")))"
                let dev = p.device.map { " [\($0)]" } ?? ""
                print("\(p.recording)\(dev)\(via): " + (p.estimate?.summary ?? "not placed: \(p.error ?? "")"))
            }
        }
        if let plot { try LagPlot(estimates: result.placements.compactMap(\.estimate)).write(to: plot, overwrite: overwrite) }
        // Without --keep-going, one recording that cannot be placed stops every output.
        if !keepGoing { try result.requireAllPlaced() }
        if let doc { try SyncDocument(result: result, devices: devices, documentPath: doc).write(to: doc, overwrite: overwrite) }
        if stems != nil {
            let reports = try runWithProgress("stems", quiet: quiet || json) { progress, token in
                try outputs.run(result, progress: progress, cancellation: token)
            }
            if !quiet && !json { for r in reports { print("wrote \(r.output): \(r.outputFrames) frames at \(r.sampleRate) Hz") } }
        }
        try result.requireAllPlaced()
    }

    /// "NAME=CLIP,CLIP".
    static func parseDevice(_ text: String) throws -> SyncDevice {
        guard let eq = text.firstIndex(of: "=") else {
            throw MixdownError.invalidEvent(parameter: "--device \(text)", reason: "must be NAME=CLIP,CLIP,...")
        }
        let clips = text[text.index(after: eq)...].split(separator: ",").map(String.init)
        return SyncDevice(name: String(text[..<eq]), clips: clips)
    }
}
