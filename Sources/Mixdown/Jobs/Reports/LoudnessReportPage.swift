import Foundation

/// `mixdown loudness --report PAGE`: one self-contained HTML page of every file measured,
/// drawn from `FileLoudness` reports made with `overTime`. For each file: the figures, the
/// momentary and short-term loudness over time against the integrated loudness, its
/// relative gate and the loudness range, and the true peak over time against EBU R128's
/// ceiling of -1 dBTP. The page embeds the reports as the JSON `mixdown loudness --json
/// --report` prints (one object per file, in an array).
public struct LoudnessReportPage: Sendable {
    public let reports: [FileLoudness.Report]

    /// EBU R128's largest permitted true peak, dBTP, drawn on the peak chart.
    public static let ceiling = -1.0

    public init(reports: [FileLoudness.Report]) {
        self.reports = reports
    }

    /// Refuses a page that would replace a file without `overwrite`, that names a directory
    /// that does not exist, or that is one of `inputs`: before anything is measured.
    public static func checkDestination(_ path: String, overwrite: Bool, inputs: [String]) throws(MixdownError) {
        if let input = inputs.first(where: { FileIdentity($0) == FileIdentity(path) }) {
            throw .invalidParameter(name: "--report", value: path, reason: "would write over '\(input)', which this job reads: write the page elsewhere")
        }
        _ = try AudioFileWriter.checkDestination(path, overwrite: overwrite)
    }

    /// Writes the page to `path` (complete or absent).
    public func write(to path: String, overwrite: Bool) throws(MixdownError) {
        try ReportPage.write(reports, to: path, overwrite: overwrite) { html(json: $0) }
    }

    /// The page, with `json` (the reports in Mixdown's JSON) embedded.
    func html(json: String) -> String {
        let names = reports.map { ($0.input as NSString).lastPathComponent }
        let title = "Loudness of " + (names.count == 1 ? names[0] : "\(names.count) files")
        var body = "<h1>\(ReportPage.escaped(title))</h1>\n"
        body += "<p class=\"note\">EBU R128 (ITU-R BS.1770-4, EBU Tech 3341 and 3342), measured by Mixdown \(MixdownVersion.string).</p>\n"
        for (index, report) in reports.enumerated() {
            body += section(report, index: index, heading: reports.count > 1)
        }
        return ReportPage.page(title: title + " — Mixdown", body: body, json: json)
    }

    private func section(_ report: FileLoudness.Report, index: Int, heading: Bool) -> String {
        let m = report.loudness
        var s = "<section id=\"file-\(index)\">\n"
        if heading { s += "<h2>\(ReportPage.escaped(report.input))</h2>\n" } else { s += "<p>File: <code>\(ReportPage.escaped(report.input))</code></p>\n" }
        s += Self.table(caption: "The measurement", m) + "\n"
        guard let t = report.timeline else { return s + "</section>\n" }
        s += Self.charts(of: report.input, measurement: m, timeline: t, id: "\(index)", heading: heading ? "h3" : "h2",
                         ceilings: [.init(label: "Ceiling (EBU R128)", value: Self.ceiling, colour: "#b00020", dashed: true)])
        return s + "</section>\n"
    }

    /// The figures of `m`, as a table.
    static func table(caption: String, _ m: LoudnessMeasurement) -> String {
        let seconds = Double(m.frames) / Double(m.sampleRate)
        return ReportPage.table(caption: caption, rows: [
            ("Integrated loudness", ReportPage.decibels(m.integrated, "LUFS", silent: "silent:")),
            ("Loudness range", String(format: "%.1f LU", m.range)),
            ("True peak (8x)", ReportPage.decibels(m.truePeakFine ?? m.truePeak, "dBTP")),
            ("True peak (BS.1770, 4x)", ReportPage.decibels(m.truePeak, "dBTP")),
            ("Sample peak", ReportPage.decibels(m.samplePeak, "dBFS")),
            ("Maximum momentary", ReportPage.decibels(m.momentaryMaximum, "LUFS")),
            ("Maximum short-term", ReportPage.decibels(m.shortTermMaximum, "LUFS")),
            ("Duration", ReportPage.clock(seconds) + " (\(m.frames) frames at \(m.sampleRate) Hz, \(m.channelCount) channel\(m.channelCount == 1 ? "" : "s"))"),
        ])
    }

    /// The loudness and true-peak charts of `name`'s `measurement` over time, each under a
    /// heading of level `heading`, with the `ceilings` drawn on the peak chart; their ids
    /// end in `id`.
    static func charts(of name: String, measurement m: LoudnessMeasurement, timeline t: LoudnessTimeline, id: String, heading h: String,
                       ceilings: [ReportChart.Level]) -> String {
        let seconds = Double(m.frames) / Double(m.sampleRate)
        let step = Double(t.framesPerPoint) / Double(t.sampleRate)
        // Loudness: from 0 LUFS down past the quietest reading drawn, in tens, to -70 at most.
        let readings = (t.momentary + t.shortTerm).compactMap { $0 }.filter(\.isFinite)
        let quietest = min(readings.min() ?? -40, t.relativeGate ?? 0, -30)
        let low = max(-80, ((quietest - 1) / 10).rounded(.down) * 10)
        let high = max(0, ((readings.max() ?? 0) / 5).rounded(.up) * 5)
        var loudness = ReportChart(id: "loudness-\(id)", title: "Loudness over time",
                                   description: "Momentary (400 ms) and short-term (3 s) loudness of \(name) over \(ReportPage.clock(seconds)), in LUFS, each point the loudest reading of its \(String(format: "%g", step)) s; readings under \(Int(low)) LUFS are not drawn. Integrated \(ReportPage.decibels(m.integrated, "LUFS")); short-term maximum \(ReportPage.decibels(m.shortTermMaximum, "LUFS")); loudness range \(String(format: "%.1f", m.range)) LU.",
                                   duration: seconds, step: step, low: low, high: high, unit: "LUFS")
        loudness.lines = [.init(key: "momentary_lufs", label: "Momentary (400 ms)", colour: "#8fb3d9", values: t.momentary),
                          .init(key: "short_term_lufs", label: "Short-term (3 s)", colour: "#0b4f9c", values: t.shortTerm)]
        if m.integrated.isFinite { loudness.levels.append(.init(label: "Integrated", value: m.integrated, colour: "#b00020")) }
        if let gate = t.relativeGate { loudness.levels.append(.init(label: "Relative gate", value: gate, colour: "#6a6a6a", dashed: true)) }
        loudness.levels.append(.init(label: "Absolute gate", value: t.absoluteGate, colour: "#333333", dashed: true))
        if let lo = t.rangeLow, let hi = t.rangeHigh { loudness.band = ("Loudness range (10th to 95th percentile of short-term)", lo, hi, "#2e8b57") }
        var s = "<\(h)>Loudness over time</\(h)>\n" + loudness.svg + "\n"
        // True peak: from +3 dBTP down past the quietest peak drawn.
        let peaks = t.truePeak.filter(\.isFinite)
        let peakLow = max(-90, ((min(peaks.min() ?? -40, -20)) / 10).rounded(.down) * 10)
        let against = ceilings.map { "\($0.label.prefix(1).lowercased() + $0.label.dropFirst()) of \(ReportPage.decibels($0.value, "dBTP"))" }
        var peak = ReportChart(id: "peak-\(id)", title: "True peak over time",
                               description: "The true peak of \(name) over time in dBTP (\(m.truePeakFine != nil ? "read 8x" : "BS.1770's 4x reading")), each point the highest of its \(String(format: "%g", step)) s, against the \(against.joined(separator: " and the ")). Highest: \(ReportPage.decibels(m.truePeakFine ?? m.truePeak, "dBTP")).",
                               duration: seconds, step: step, low: peakLow, high: 3, unit: "dBTP")
        peak.lines = [.init(key: "true_peak_dbtp", label: "True peak", colour: "#7a3e00", values: t.truePeak.map { $0 })]
        peak.levels = ceilings
        s += "<\(h)>True peak over time</\(h)>\n" + peak.svg + "\n"
        return s
    }
}
