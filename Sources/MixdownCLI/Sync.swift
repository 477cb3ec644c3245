import ArgumentParser
import Foundation
import Mixdown

struct Sync: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Estimate how a recording maps onto a reference of the same event: offset and drift.",
        discussion: """
        REC's time t lands on REF's time offset + ratio x t. Windows of REC every --spacing
        seconds are matched against REF (energy envelopes, then cross-correlation at ~8 kHz)
        and a robust line is fitted through their lags; silent windows, windows with no
        clear match and windows off the line are rejected and reported. Exits 1 when the
        confidence is below --min-confidence (for example, unrelated recordings).
        """)

    @Argument(help: "The reference recording.")
    var reference: String
    @Argument(help: "The recording to place on the reference's clock.")
    var recording: String
    @Option(name: .customLong("max-offset"), parsing: .unconditional, help: "The largest offset searched (exact time).")
    var maxOffset = "60"
    @Option(name: .customLong("max-drift"), parsing: .unconditional, help: "The largest drift searched, ppm.")
    var maxDrift = 1000.0
    @Option(parsing: .unconditional, help: "Seconds between analysis windows.")
    var spacing = 10.0
    @Flag(help: "Report where the drift changes (a device that re-synced its clock).")
    var piecewise = false
    @Option(name: .customLong("min-confidence"), parsing: .unconditional, help: "Below this confidence (0 to 1) the estimate is refused.")
    var minConfidence = 0.5
    @Option(parsing: .unconditional, help: "Draw every window's lag, the fitted line and the rejected windows to this SVG file.")
    var plot: String?
    @Flag(help: "Replace the --plot file if it exists.")
    var overwrite = false
    @Flag(help: "Print the estimate as JSON (with every window's lag and residual).")
    var json = false
    @Flag(name: [.short, .long], help: "Print nothing but errors.")
    var quiet = false

    func run() throws {
        var job = DriftEstimator(reference: reference, recording: recording)
        var times = TimeParser { () throws(MixdownError) in try AudioFileInfo.read(path: reference).sampleRate }
        if let t = try times.parse(maxOffset, option: "--max-offset") { job.maxOffset = t }
        guard maxDrift.isFinite, maxDrift > 0, maxDrift <= 10_000 else {
            throw MixdownError.invalidParameter(name: "--max-drift", value: "\(maxDrift)", reason: "must lie above 0 and at most 10000 ppm")
        }
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
}
