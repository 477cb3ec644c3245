import Foundation

/// `--report PAGE` of a job written with `--loudness` (`export`, `stretch`, `render`): one
/// self-contained HTML page of how the output reached its target. The figures (the
/// target, what the gain was computed from, the gain, the limiter, the passes and encodes,
/// and the output as written); the output's momentary and short-term loudness over time
/// against its integrated loudness, gates and range; its true peak over time against the
/// ceiling; and, when the limiter ran, its gain reduction over time. The page embeds
/// `{"output": ..., "loudness": ...}`: the output's path and the `loudness` object the job's
/// `--json` prints (with `timeline` and `limiter_timeline`).
public struct OutputLoudnessReportPage: Sendable {
    public let output: String
    public let loudness: OutputJob.LoudnessReport

    public init(output: String, loudness: OutputJob.LoudnessReport) {
        self.output = output
        self.loudness = loudness
    }

    /// The embedded data.
    struct Data: Encodable {
        let output: String
        let loudness: OutputJob.LoudnessReport
    }

    /// Writes the page to `path` (complete or absent).
    public func write(to path: String, overwrite: Bool) throws(MixdownError) {
        try ReportPage.write(Data(output: output, loudness: loudness), to: path, overwrite: overwrite) { html(json: $0) }
    }

    /// The page, with `json` (the data in Mixdown's JSON) embedded.
    func html(json: String) -> String {
        let r = loudness, m = r.output
        let name = (output as NSString).lastPathComponent
        let title = "Loudness of \(name)"
        var body = "<h1>\(ReportPage.escaped(title))</h1>\n"
        body += "<p>Output: <code>\(ReportPage.escaped(output))</code>, brought to \(ReportPage.decibels(r.target.integrated, "LUFS")) under a true-peak ceiling of \(ReportPage.decibels(r.target.truePeak, "dBTP")) by Mixdown \(MixdownVersion.string) (EBU R128: ITU-R BS.1770-4, EBU Tech 3341 and 3342).</p>\n"
        var rows: [(String, String)] = [
            ("Target", ReportPage.decibels(r.target.integrated, "LUFS") + ", true peak at most " + ReportPage.decibels(r.target.truePeak, "dBTP")
                + (r.target.limit ? ", limiter allowed (--limit)" : "")),
            ("Gain computed from", r.measuredOn == "input" ? "the input (a varispeed of at most 0.1 %)" : "a first pass over the render"),
            ("Measured there", ReportPage.decibels(r.input.integrated, "LUFS") + ", true peak " + ReportPage.decibels(r.input.truePeakFine ?? r.input.truePeak, "dBTP")),
            ("Gain applied", String(format: "%+.2f dB", r.gainDb).replacingOccurrences(of: "-", with: "−")),
        ]
        if r.limitedByTruePeak {
            rows.append(("Lowered for the ceiling", String(format: "yes: the gain that reaches the target would pass the ceiling; the output is %.1f LU short of it", r.target.integrated - m.integrated)))
        }
        if r.limiter {
            var held = "held the peaks under " + ReportPage.decibels(r.limiterCeiling ?? r.target.truePeak, "dBTP")
            if let t = r.limiterTimeline {
                held += "; deepest gain reduction " + ReportPage.decibels(t.maximumGainReduction, "dB")
                    + "; reduced by more than \(String(format: "%.1f", -LimiterTimeline.audibleReduction)) dB for " + ReportPage.clock(Double(t.limitedFrames) / Double(t.sampleRate))
            }
            rows.append(("True-peak limiter", held))
        } else {
            rows.append(("True-peak limiter", r.target.limit ? "not needed: the peaks stay under the ceiling at this gain" : "not asked for"))
        }
        rows.append(("Passes and encodes", "\(r.passes) measuring pass\(r.passes == 1 ? "" : "es") over the render, \(r.encodes) encode\(r.encodes == 1 ? "" : "s")"))
        body += ReportPage.table(caption: "How the output reached its target", rows: rows) + "\n"
        body += LoudnessReportPage.table(caption: "The output as written (measured on the \(r.outputMeasuredOn))", m) + "\n"
        if let t = r.timeline {
            var ceilings: [ReportChart.Level] = [.init(label: "Ceiling (--true-peak)", value: r.target.truePeak, colour: "#b00020", dashed: true)]
            if let held = r.limiterCeiling, held < r.target.truePeak - 0.05 {
                ceilings.append(.init(label: "Limiter's ceiling (lowered for the codec)", value: held, colour: "#6a1b9a", dashed: true))
            }
            body += LoudnessReportPage.charts(of: name, measurement: m, timeline: t, id: "0", heading: "h2", ceilings: ceilings)
        }
        if let t = r.limiterTimeline {
            body += "<h2>Limiter gain reduction over time</h2>\n" + gainReductionChart(t, duration: Double(m.frames) / Double(m.sampleRate)).svg + "\n"
        }
        return ReportPage.page(title: title + " — Mixdown", body: body, json: json)
    }

    /// The limiter's gain reduction, from 0 dB down past its deepest, in whole dB.
    func gainReductionChart(_ t: LimiterTimeline, duration: Double) -> ReportChart {
        let step = Double(t.framesPerPoint) / Double(t.sampleRate)
        let low = min(-1, (t.maximumGainReduction - 0.5).rounded(.down))
        var chart = ReportChart(id: "limiter-0", title: "Limiter gain reduction over time",
                                description: "The gain the true-peak limiter took off \(output) over time, in dB (0: untouched), each point the deepest reduction of its \(String(format: "%g", step)) s. Deepest: \(ReportPage.decibels(t.maximumGainReduction, "dB")); reduced by more than \(String(format: "%.1f", -LimiterTimeline.audibleReduction)) dB for \(ReportPage.clock(Double(t.limitedFrames) / Double(t.sampleRate))) of \(ReportPage.clock(duration)).",
                                duration: duration, step: step, low: low, high: 0, unit: "dB")
        chart.lines = [.init(key: "gain_reduction_db", label: "Gain reduction", colour: "#6a1b9a", values: t.gainReduction.map { $0 })]
        return chart
    }
}
