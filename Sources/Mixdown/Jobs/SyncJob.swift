import Foundation

/// What `mixdown sync` does, as one library job: two files (REF REC, with no outputs but a
/// plot) are estimated by `DriftEstimator`; anything more (several recordings, devices, a
/// document or stems) by `EventSync`, whose result is then written as a composition
/// document and aligned stems. A plot shows the evidence, a refused estimate's too.
///
/// `run` returns what was found even when a recording could not be placed: the outcome's
/// `failure` then says why (the caller prints the estimates first, then fails). Without
/// `keepGoing` such a failure stops the document and the stems; with it they are written
/// for the recordings that were placed.
public struct SyncJob: Sendable {
    public var reference: String
    public var recordings: [String]
    public var devices: [SyncDevice] = []
    /// The search, drift range, spacing and minimum confidence (`maxOffset` nil: 60 s for
    /// two files, any overlap for more).
    public var tuning = SyncTuning()
    /// Two files only: find where the drift changes.
    public var piecewise = false
    public var plot: String?
    /// An HTML page of the event (`SyncReportPage`), written last, a refused estimate's too.
    public var report: String?
    public var document: String?
    /// Aligned stems into this directory, with `stemSettings` (type, overwrite).
    public var stems: String?
    /// The aligned event as an OpenTimelineIO timeline too (with or without `document`), at
    /// `otioEditRate` when given (an editor's rate, for the FCP 7 XML adapter).
    public var otio: String?
    public var otioEditRate: MediaTime?
    public var stemSettings = OutputSettings()
    /// Write the stems with their polarity as recorded (`SyncStems.keepPolarity`).
    public var keepPolarity = false
    public var keepGoing = false
    /// Replace the plot, document and stems if they exist.
    public var overwrite = false

    public init(reference: String, recordings: [String]) {
        self.reference = reference
        self.recordings = recordings
    }

    /// Two files and no outputs but a plot: `DriftEstimator`'s estimate of the pair.
    public var isPair: Bool { recordings.count == 1 && devices.isEmpty && document == nil && stems == nil && otio == nil }

    /// Every recording: those given, then the devices' clips not among them.
    public var allRecordings: [String] {
        var all = recordings
        for d in devices { for c in d.clips where c != reference && !all.contains(c) { all.append(c) } }
        return all
    }

    /// The files the job reads.
    public var inputs: [String] { [reference] + allRecordings }
    /// Every file it may write: the plot, document and timeline, and each recording's stem
    /// (`SyncStems.path(for:)`). The batch's check and the job's own read this one list, so
    /// an option that writes a file cannot be left out of either.
    public var outputs: [String] {
        var files = [plot, report, document, otio].compactMap { $0 }
        if stems != nil { files += allRecordings.map { stemWriter.path(for: $0) } }
        return files
    }

    /// How the stems are written.
    var stemWriter: SyncStems {
        var s = SyncStems(directory: stems ?? "")
        s.settings = stemSettings
        s.settings.overwrite = overwrite
        s.keepPolarity = keepPolarity
        return s
    }

    /// Refuses an output that is one of the job's inputs (a stem over its own recording when
    /// the stems' directory holds the recordings), with or without overwrite: nothing is
    /// written over what the job reads.
    public func checkOutputsSpareInputs() throws(MixdownError) {
        let inputs = Dictionary(self.inputs.map { (FileIdentity($0), $0) }, uniquingKeysWith: { a, _ in a })
        for output in outputs {
            if let input = inputs[FileIdentity(output)] {
                let option = output == plot ? "--plot" : output == report ? "--report" : output == document ? "--doc" : output == otio ? "--otio" : "--stems '\(stems ?? "")'"
                throw .invalidParameter(name: option, value: output, reason: "would write over '\(input)', which this sync reads: write outputs elsewhere")
            }
        }
    }

    public struct Outcome: Sendable {
        /// Two files: the estimate (also when refused).
        public let estimate: DriftEstimate?
        /// Several: every recording's placement.
        public let placements: [Placement]
        public let stems: [FileAlign.Report]
        /// Why not every recording was placed (nil: all were).
        public let failure: MixdownError?
        /// Frames written into the stems.
        public var stemFrames: Int64 { stems.reduce(0) { $0 + $1.outputFrames } }
    }

    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Outcome {
        try tuning.validate()
        try checkOutputsSpareInputs()
        if isPair { return try runPair(progress: progress, cancellation: cancellation) }
        if piecewise { throw .invalidParameter(name: "--piecewise", value: "with \(recordings.count) recordings", reason: "takes two files (REF REC)") }
        var job = EventSync(reference: reference, recordings: allRecordings)
        job.devices = devices
        job.tuning = tuning
        try job.validate()
        let outputs = stemWriter
        // Refuse unusable outputs before the analysis.
        if stems != nil { try outputs.checkDirectory() }
        try checkTextOutputs()
        let share = stems == nil ? 1.0 : 0.5
        let result = try job.run(progress: progress.map { p in { p(share * $0) } }, cancellation: cancellation)
        if let plot { try LagPlot(estimates: result.placements.compactMap(\.estimate)).write(to: plot, overwrite: overwrite) }
        var failure: MixdownError?
        do { try result.requireAllPlaced() } catch { failure = error }
        if failure != nil && !keepGoing {
            try writeReport(result.placements, refusal: failure, written: [:])
            return Outcome(estimate: nil, placements: result.placements, stems: [], failure: failure)
        }
        if let document { try SyncDocument(result: result, devices: devices, documentPath: document).write(to: document, overwrite: overwrite) }
        if let otio {
            // The document as it would be written beside the timeline (its paths relative to it).
            let beside = ((otio as NSString).deletingLastPathComponent as NSString).appendingPathComponent("event.json")
            let doc = try CompositionDocument(data: Data(SyncDocument(result: result, devices: devices, documentPath: beside).json.utf8), path: beside)
            try doc.writeOTIO(to: otio, overwrite: overwrite, editRate: otioEditRate)
        }
        var reports: [FileAlign.Report] = []
        if stems != nil {
            reports = try outputs.run(result, progress: progress.map { p in { p(share + (1 - share) * $0) } }, cancellation: cancellation)
        }
        try writeReport(result.placements, refusal: failure,
                        written: ["document": [document].compactMap { $0 }, "timeline": [otio].compactMap { $0 }, "stems": reports.map(\.output)])
        return Outcome(estimate: nil, placements: result.placements, stems: reports, failure: failure)
    }

    /// Refuses a plot, page, document or timeline that cannot be written (one that exists,
    /// without `overwrite`; a directory; a folder that does not exist): before the analysis,
    /// by the rule every output is checked by.
    private func checkTextOutputs() throws(MixdownError) {
        for path in [plot, report, document, otio].compactMap({ $0 }) {
            _ = try AudioFileWriter.checkDestination(path, overwrite: overwrite)
        }
    }

    /// The page, when asked for, with links to what this run wrote beside it (`written`, by
    /// kind, and the plot): never to a file an earlier run left there.
    private func writeReport(_ placements: [Placement], refusal: MixdownError?, written: [String: [String]]) throws(MixdownError) {
        guard let report else { return }
        var outputs = written
        outputs["plot"] = [plot].compactMap { $0 }
        try SyncReportPage(reference: reference, placements: placements, refusal: refusal, outputs: outputs).write(to: report, overwrite: overwrite)
    }

    private func runPair(progress: ((Double) -> Void)?, cancellation: CancellationToken?) throws(MixdownError) -> Outcome {
        var job = DriftEstimator(reference: reference, recording: recordings[0])
        job.tuning = tuning
        job.piecewise = piecewise
        try checkTextOutputs()
        let estimate = try job.run(progress: progress, cancellation: cancellation)
        if let plot { try LagPlot(estimates: [estimate]).write(to: plot, overwrite: overwrite) }
        var failure: MixdownError?
        do { try estimate.requireConfidence(tuning.minimumConfidence) } catch { failure = error }
        try writeReport([Placement(recording: recordings[0], estimate: estimate, device: nil, placedVia: [], error: nil)], refusal: failure, written: [:])
        return Outcome(estimate: estimate, placements: [], stems: [], failure: failure)
    }
}
