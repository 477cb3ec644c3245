import Foundation

/// `mixdown sync ... --report PAGE`: one self-contained HTML page of an event (or a pair):
///
/// - the event on REF's clock: REF and each recording as a bar where it lies (a bar per
///   stretch between jumps), with its offset, drift, line or map, jumps and polarity; a
///   recording that could not be placed is listed with the reason, in the CLI's words;
/// - per recording placed: its figures (the confidence and what makes it: the windows by
///   status, the residuals, the band disagreement), the lag along the file (every window
///   marked by its status, the fitted line or map, the jumps) and the residuals;
/// - links to the stems, document, timeline and plot written beside it, by relative path.
///
/// The page embeds its data (`Data`): the recordings as `mixdown sync --json` prints them,
/// with each file's duration and the outputs.
public struct SyncReportPage: Sendable {
    public struct Data: Sendable, Encodable {
        public let reference: String
        /// Seconds of each file, REF first (read from their headers).
        public let durations: [String: Double]
        /// As `sync --json` prints them: one object per recording.
        public let recordings: [Placement]
        /// The files this run wrote beside the page, by kind.
        public let outputs: [String: [String]]
    }

    public let data: Data

    /// Why each recording was not placed, or a pair's refusal: the CLI's words.
    let refusals: [String: String]

    public init(reference: String, placements: [Placement], refusal: MixdownError?, outputs: [String: [String]]) throws(MixdownError) {
        var durations: [String: Double] = [:]
        for path in [reference] + placements.map(\.recording) {
            let info = try AudioFileInfo.read(path: path)
            durations[path] = Double(info.frames) / Double(info.sampleRate)
        }
        var refusals: [String: String] = [:]
        for p in placements { if let e = p.error { refusals[p.recording] = e } }
        // A pair's estimate refused: the estimate is drawn, the refusal said beside it.
        if let refusal, placements.count == 1, placements[0].error == nil { refusals[placements[0].recording] = refusal.description }
        self.refusals = refusals
        data = Data(reference: reference, durations: durations, recordings: placements,
                    outputs: outputs.filter { !$0.value.isEmpty })
    }

    /// Writes the page to `path` (complete or absent).
    public func write(to path: String, overwrite: Bool) throws(MixdownError) {
        try ReportPage.write(data, to: path, overwrite: overwrite) { html(json: $0, page: path) }
    }

    static let colours = ["#1f5fa8", "#b3261e", "#1b7a3a", "#6b3fa0", "#9a5b00", "#00707a", "#7a4b3a", "#a3246b"]
    static let statusColours = ["used": "#1b7a3a", "outlier": "#b3261e", "weak": "#9a5b00", "ambiguous": "#6b3fa0",
                                "silent": "#6e6e6e", "outside": "#00707a"]

    /// The stretches of REC on REF's clock: (REC start, REC end, REF start, REF end), s.
    static func spans(_ e: DriftEstimate, duration: Double) -> [(Double, Double, Double, Double)] {
        if let segments = e.segments, e.jumps != nil, !segments.isEmpty {
            return segments.map { s in
                (s.start, s.end, s.referenceSeconds(atRecordingSeconds: s.start), s.referenceSeconds(atRecordingSeconds: s.end))
            }
        }
        return [(0, duration, e.referenceSeconds(atRecordingSeconds: 0), e.referenceSeconds(atRecordingSeconds: duration))]
    }

    /// The model's lag (REF − REC, s) at REC's time t: the stretch's map or line around t.
    static func modelLag(_ e: DriftEstimate, at t: Double) -> Double {
        if let segments = e.segments, e.jumps != nil, let s = segments.first(where: { t <= $0.end }) ?? segments.last {
            return s.referenceSeconds(atRecordingSeconds: t) - t
        }
        return e.modelLag(atRecordingSeconds: t)
    }

    func html(json: String, page: String) -> String {
        let d = data
        let ref = (d.reference as NSString).lastPathComponent
        let count = d.recordings.count
        let title = count == 1 ? "Sync of \((d.recordings[0].recording as NSString).lastPathComponent) on \(ref)" : "Sync of \(count) recordings on \(ref)"
        var body = "<h1>\(ReportPage.escaped(title))</h1>\n"
        let placed = d.recordings.filter { $0.isPlaced && refusals[$0.recording] == nil }.count
        body += "<p>\(placed) of \(count) recording\(count == 1 ? "" : "s") placed on the clock of <code>\(ReportPage.escaped(d.reference))</code> (REF).</p>\n"
        body += eventChart()
        let refused = d.recordings.filter { refusals[$0.recording] != nil }
        if !refused.isEmpty {
            body += "<h2>Not placed</h2>\n<ul class=\"refusals\">\n"
            for p in refused {
                body += "<li data-recording=\"\(ReportPage.escaped(p.recording))\"><code>\(ReportPage.escaped(p.recording))</code>: \(ReportPage.escaped(refusals[p.recording]!))</li>\n"
            }
            body += "</ul>\n"
        }
        if !d.outputs.isEmpty {
            body += "<h2>Written beside it</h2>\n<ul>\n"
            for kind in d.outputs.keys.sorted() {
                for path in d.outputs[kind]! {
                    body += "<li>\(ReportPage.escaped(kind)): <a href=\"\(ReportPage.escaped(ReportPage.link(path, from: page)))\">\(ReportPage.escaped((path as NSString).lastPathComponent))</a></li>\n"
                }
            }
            body += "</ul>\n"
        }
        for (i, p) in d.recordings.enumerated() {
            guard let e = p.estimate else { continue }
            body += recordingSection(p, e, index: i)
        }
        let marks = Self.statusColours.sorted { $0.key < $1.key }.map { status, colour in
            "path[data-status=\"\(status)\"], path[data-residual=\"\(status)\"] { stroke: \(colour); }"
        }.joined(separator: "\n")
        return ReportPage.page(title: title + " — Mixdown", body: body, json: json, style: """
            .bar-label { font: 12px system-ui, sans-serif; fill: #1a1a1a; }
            ul.refusals li { margin-bottom: 0.4em; }
            \(marks)
            """)
    }

    /// REF and every recording placed, as bars on REF's clock.
    func eventChart() -> String {
        let d = data
        let refSeconds = d.durations[d.reference] ?? 0
        var low = 0.0, high = refSeconds
        for p in d.recordings { if let e = p.estimate { for s in Self.spans(e, duration: d.durations[p.recording] ?? 0) { low = min(low, s.2); high = max(high, s.3) } } }
        let rows = 1 + d.recordings.count
        let left = 200.0, right = 940.0, top = 10.0, rowHeight = 34.0
        let height = top + Double(rows) * rowHeight + 30
        let span = max(high - low, 1e-9)
        func x(_ s: Double) -> Double { left + (right - left) * (s - low) / span }
        func n(_ v: Double) -> String { String(format: "%.2f", v) }
        var s = "<h2>The event on REF's clock</h2>\n<figure>\n"
        s += "<svg id=\"event\" viewBox=\"0 0 960 \(Int(height))\" role=\"img\" aria-labelledby=\"event-title event-desc\" data-left=\"\(left)\" data-right=\"\(right)\" data-x0=\"\(low)\" data-x1=\"\(high)\">\n"
        let words = d.recordings.map { p -> String in
            guard let e = p.estimate, refusals[p.recording] == nil else { return "\(p.recording): not placed" }
            return "\(p.recording): at \(String(format: "%+.3f", e.offsetSeconds)) s, \(String(format: "%+.1f", e.ppm)) ppm"
        }
        s += "<title id=\"event-title\">The event on REF's clock</title>\n<desc id=\"event-desc\">\(ReportPage.escaped("REF (\(d.reference)) from 0 to \(ReportPage.clock(refSeconds)); " + words.joined(separator: "; ")))</desc>\n"
        let step = ReportChart.tickStep(span: span, count: 10, steps: [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200])
        var t = (low / step).rounded(.up) * step
        let axis = top + Double(rows) * rowHeight
        while t <= high + 1e-9 {
            s += "<line x1=\"\(n(x(t)))\" y1=\"\(top)\" x2=\"\(n(x(t)))\" y2=\"\(n(axis))\" stroke=\"#e4e4e4\"/><text x=\"\(n(x(t)))\" y=\"\(n(axis + 16))\" text-anchor=\"middle\">\(t < 0 ? "−" : "")\(ReportPage.clock(abs(t)))</text>\n"
            t += step
        }
        func bar(_ row: Int, _ name: String, _ label: String, _ pieces: [(Double, Double)], colour: String, recording: String) {
            let y = top + Double(row) * rowHeight
            s += "<text class=\"bar-label\" x=\"\(left - 8)\" y=\"\(n(y + 15))\" text-anchor=\"end\">\(ReportPage.escaped(name))</text>\n"
            s += "<text class=\"bar-label\" x=\"\(left - 8)\" y=\"\(n(y + 28))\" text-anchor=\"end\" fill=\"#444\">\(ReportPage.escaped(label))</text>\n"
            for (i, piece) in pieces.enumerated() {
                s += "<rect data-recording=\"\(ReportPage.escaped(recording))\" data-piece=\"\(i)\" data-start=\"\(piece.0)\" data-end=\"\(piece.1)\" x=\"\(n(x(piece.0)))\" y=\"\(n(y + 6))\" width=\"\(n(max(x(piece.1) - x(piece.0), 1)))\" height=\"18\" fill=\"\(colour)\" fill-opacity=\"0.85\"/>\n"
            }
        }
        bar(0, (d.reference as NSString).lastPathComponent, "REF", [(0, refSeconds)], colour: "#555555", recording: d.reference)
        for (i, p) in d.recordings.enumerated() {
            let name = (p.recording as NSString).lastPathComponent
            guard let e = p.estimate, refusals[p.recording] == nil else {
                let y = top + Double(i + 1) * rowHeight
                s += "<text class=\"bar-label\" x=\"\(left - 8)\" y=\"\(n(y + 15))\" text-anchor=\"end\">\(ReportPage.escaped(name))</text>\n"
                s += "<text class=\"bar-label\" x=\"\(left + 4)\" y=\"\(n(y + 20))\" fill=\"#b3261e\">not placed (below)</text>\n"
                continue
            }
            var label = String(format: "%+.3f s, %+.1f ppm", e.offsetSeconds, e.ppm)
            if e.polarity < 0 { label += ", inverted" }
            if let jumps = e.jumps { label += ", \(jumps.count) jump\(jumps.count == 1 ? "" : "s")" } else if e.map != nil { label += ", map" }
            bar(i + 1, name, label, Self.spans(e, duration: d.durations[p.recording] ?? 0).map { ($0.2, $0.3) },
                colour: Self.colours[i % Self.colours.count], recording: p.recording)
        }
        s += "</svg>\n<figcaption class=\"note\">Each bar is where a recording lies on REF's clock (a bar per stretch between its jumps); beside it, its offset and drift.</figcaption>\n</figure>\n"
        return s
    }

    func recordingSection(_ p: Placement, _ e: DriftEstimate, index: Int) -> String {
        let name = (p.recording as NSString).lastPathComponent
        var s = "<section id=\"recording-\(index)\">\n<h2>\(ReportPage.escaped(name))</h2>\n"
        if let refusal = refusals[p.recording] { s += "<p class=\"refusal\"><strong>Refused:</strong> \(ReportPage.escaped(refusal))</p>\n" }
        var counts: [String: Int] = [:]
        for w in e.windows { counts[w.status, default: 0] += 1 }
        let statuses = ["used", "outlier", "weak", "ambiguous", "silent", "outside"].filter { counts[$0] != nil }
            .map { "\(counts[$0]!) \($0)" }.joined(separator: ", ")
        var rows: [(String, String)] = [
            ("Offset", String(format: "%+.6f s (REC's start on REF's clock)", e.offsetSeconds)),
            ("Drift", String(format: "%+.3f ppm (ratio %.9f)", e.ppm, e.ratio)),
            ("Model", e.jumps != nil ? "\(e.jumps!.count) jump\(e.jumps!.count == 1 ? "" : "s"), a line or map per stretch" : e.map != nil ? "a clock map of \(e.map!.knots.count) knots" + (e.lineDepartureMilliseconds.map { String(format: " (the best line departs %.3f ms from it)", $0) } ?? "") : "one line"),
            ("Polarity", e.polarity < 0 ? "inverted against REF's" : "as REF's"),
            ("Confidence", String(format: "%.2f: the share of windows with signal that agree with the fit, weighted by how clearly they matched", e.confidence)),
            ("Windows", "\(e.windows.count): \(statuses)"),
            ("Residuals of the windows used", String(format: "RMS %.3f ms, largest %.3f ms", e.residualRMSMilliseconds, e.residualMaxMilliseconds)),
        ]
        if let b = e.bandDisagreementMilliseconds { rows.append(("Band disagreement", String(format: "%.3f ms (how far the matches move when the spectra are tilted)", b))) }
        if let via = p.estimate.map({ _ in p.placedVia }), !via.isEmpty { rows.append(("Placed through", via.joined(separator: " > "))) }
        if let device = p.device { rows.append(("Device", device)) }
        if let hz = e.highPassHz { rows.append(("Matched above", String(format: "%.0f Hz", hz))) }
        for (k, j) in (e.jumps ?? []).enumerated() {
            rows.append(("Jump \(k + 1)", String(format: "at %.3f s of REC, REF's time jumps %+.6f s (±%.4f s)", j.recordingTime, j.seconds, j.uncertaintySeconds / 2)))
        }
        s += ReportPage.table(caption: "How \(name) was placed", rows: rows) + "\n"
        s += lagChart(e, index: index, name: name)
        return s + "</section>\n"
    }

    /// Every window's lag against REC's time (ms, less the offset), the model through them,
    /// the jumps; below, the residuals of the windows with a lag.
    func lagChart(_ e: DriftEstimate, index: Int, name: String) -> String {
        let duration = data.durations[e.recording] ?? e.windows.last?.recordingTime ?? 1
        let drift = { (lag: Double) in (lag - e.offsetSeconds) * 1000 }
        let model = stride(from: 0.0, through: duration, by: max(duration / 400, 0.001)).map { ($0, drift(Self.modelLag(e, at: $0))) }
        var values = model.map(\.1) + e.windows.compactMap { $0.lag.map(drift) }
        if values.isEmpty { values = [0] }
        var low = values.min()!, high = values.max()!
        let pad = max((high - low) * 0.08, 0.05)
        low -= pad; high += pad
        let left = 70.0, right = 944.0, top = 12.0, bottom = 250.0, residualTop = 290.0, residualBottom = 400.0
        func x(_ t: Double) -> Double { left + (right - left) * min(max(t / max(duration, 1e-9), 0), 1) }
        func y(_ v: Double) -> Double { bottom - (bottom - top) * (v - low) / (high - low) }
        let residuals = e.windows.compactMap { w in w.lag.map { ($0 - Self.modelLag(e, at: w.recordingTime)) * 1000 } }
        let rmax = max(residuals.map(abs).max() ?? 0.1, 0.05) * 1.15
        func ry(_ v: Double) -> Double { (residualTop + residualBottom) / 2 - (residualBottom - residualTop) / 2 * v / rmax }
        func n(_ v: Double) -> String { String(format: "%.2f", v) }
        let id = "lag-\(index)"
        var s = "<h3>The lag along \(ReportPage.escaped(name))</h3>\n<figure>\n"
        s += "<svg id=\"\(id)\" viewBox=\"0 0 960 430\" role=\"img\" aria-labelledby=\"\(id)-title \(id)-desc\" data-left=\"\(left)\" data-right=\"\(right)\" data-top=\"\(top)\" data-bottom=\"\(bottom)\" data-x0=\"0\" data-x1=\"\(duration)\" data-y0=\"\(low)\" data-y1=\"\(high)\">\n"
        s += "<title id=\"\(id)-title\">The lag along \(ReportPage.escaped(name))</title>\n"
        let counts = Dictionary(grouping: e.windows, by: \.status).map { "\($0.value.count) \($0.key)" }.sorted().joined(separator: ", ")
        s += "<desc id=\"\(id)-desc\">\(ReportPage.escaped("Above: REF minus REC time, in ms less the offset, at each of the \(e.windows.count) analysis windows (\(counts)), with the fitted \(e.jumps != nil ? "stretches" : e.map != nil ? "clock map" : "line"); below: each window's distance from it, in ms (largest \(String(format: "%.3f", residuals.map(abs).max() ?? 0)) ms)."))</desc>\n"
        // Axes.
        let yStep = ReportChart.tickStep(span: high - low, count: 6, steps: [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000])
        var v = (low / yStep).rounded(.up) * yStep
        while v <= high {
            s += "<line x1=\"\(left)\" y1=\"\(n(y(v)))\" x2=\"\(right)\" y2=\"\(n(y(v)))\" stroke=\"#e4e4e4\"/><text x=\"\(left - 6)\" y=\"\(n(y(v) + 4))\" text-anchor=\"end\">\(String(format: "%g", (v * 1000).rounded() / 1000 + 0))</text>\n"
            v += yStep
        }
        let xStep = ReportChart.tickStep(span: max(duration, 1e-9), count: 10, steps: [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200])
        var t = 0.0
        while t <= duration + 1e-9 {
            s += "<line x1=\"\(n(x(t)))\" y1=\"\(top)\" x2=\"\(n(x(t)))\" y2=\"\(residualBottom)\" stroke=\"#eeeeee\"/><text x=\"\(n(x(t)))\" y=\"\(n(residualBottom + 16))\" text-anchor=\"middle\">\(ReportPage.clock(t))</text>\n"
            t += xStep
        }
        s += "<text x=\"14\" y=\"\(n((top + bottom) / 2))\" transform=\"rotate(-90 14 \(n((top + bottom) / 2)))\" text-anchor=\"middle\">lag − offset, ms</text>\n"
        s += "<text x=\"14\" y=\"\(n((residualTop + residualBottom) / 2))\" transform=\"rotate(-90 14 \(n((residualTop + residualBottom) / 2)))\" text-anchor=\"middle\">residual, ms</text>\n"
        s += "<rect x=\"\(left)\" y=\"\(top)\" width=\"\(right - left)\" height=\"\(bottom - top)\" fill=\"none\" stroke=\"#888\"/>\n"
        s += "<rect x=\"\(left)\" y=\"\(residualTop)\" width=\"\(right - left)\" height=\"\(residualBottom - residualTop)\" fill=\"none\" stroke=\"#888\"/>\n"
        s += "<line x1=\"\(left)\" y1=\"\(n(ry(0)))\" x2=\"\(right)\" y2=\"\(n(ry(0)))\" stroke=\"#888\"/>\n"
        s += "<text x=\"\(left - 6)\" y=\"\(n(ry(rmax / 1.15) + 4))\" text-anchor=\"end\">\(String(format: "%.3g", rmax / 1.15))</text><text x=\"\(left - 6)\" y=\"\(n(ry(-rmax / 1.15) + 4))\" text-anchor=\"end\">\(String(format: "%.3g", -rmax / 1.15))</text>\n"
        // The model, broken at the jumps.
        let cuts = (e.jumps ?? []).map(\.recordingTime)
        // The model and the marks are paths in whole tenths of a unit, in a group scaled to
        // the chart (a long event has thousands of windows: a few bytes each).
        s += "<g transform=\"scale(.1)\" fill=\"none\" stroke-linecap=\"round\">\n"
        var run: [(Double, Double)] = []
        var segment = 0
        func flush() { if run.count > 1 { s += "<path data-series=\"model\" stroke=\"#1f5fa8\" stroke-width=\"15\" d=\"\(ReportPage.line(run))\"/>\n" }; run = [] }
        for (t, value) in model {
            while segment < cuts.count && t > cuts[segment] { flush(); segment += 1 }
            run.append((x(t), y(value)))
        }
        flush()
        s += "</g>\n"
        for (k, cut) in cuts.enumerated() {
            s += "<line data-jump=\"\(k)\" data-time=\"\(cut)\" x1=\"\(n(x(cut)))\" y1=\"\(top)\" x2=\"\(n(x(cut)))\" y2=\"\(residualBottom)\" stroke=\"#b3261e\" stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>\n"
        }
        // One mark per window: its lag where it has one (a dot of a path per status, coloured by
        // the page's style), else a hollow dot on the chart's floor.
        var lags: [String: [(Double, Double)]] = [:], offs: [String: [(Double, Double)]] = [:], floor: [String: [(Double, Double)]] = [:]
        for w in e.windows {
            if let lag = w.lag {
                let r = (lag - Self.modelLag(e, at: w.recordingTime)) * 1000
                lags[w.status, default: []].append((x(w.recordingTime), y(drift(lag))))
                offs[w.status, default: []].append((x(w.recordingTime), ry(max(min(r, rmax), -rmax))))
            } else {
                floor[w.status, default: []].append((x(w.recordingTime), bottom - 4))
            }
        }
        s += "<g transform=\"scale(.1)\" fill=\"none\" stroke-linecap=\"round\">\n"
        // The windows used first: the rest (the few outliers) are drawn over them.
        for status in lags.keys.sorted(by: { ($0 == "used" ? 0 : 1, $0) < ($1 == "used" ? 0 : 1, $1) }) {
            s += "<path data-status=\"\(status)\" stroke-width=\"60\" d=\"\(ReportPage.dots(lags[status]!))\"/>\n"
            s += "<path data-residual=\"\(status)\" stroke-width=\"50\" d=\"\(ReportPage.dots(offs[status]!))\"/>\n"
        }
        // Hollow: a dot of the status's colour with a white one inside it.
        for status in floor.keys.sorted() {
            let dots = ReportPage.dots(floor[status]!)
            s += "<path data-status=\"\(status)\" data-no-lag=\"\" stroke-width=\"50\" d=\"\(dots)\"/><path stroke=\"#fff\" stroke-width=\"25\" d=\"\(dots)\"/>\n"
        }
        s += "</g>\n"
        s += "</svg>\n"
        let legend = ["used", "outlier", "weak", "ambiguous", "silent", "outside"].filter { st in e.windows.contains { $0.status == st } }
            .map { "<span><span class=\"swatch\" style=\"background:\(Self.statusColours[$0]!)\"></span>\($0)</span>" }
        s += "<figcaption class=\"legend\">" + (legend + ["<span><span class=\"swatch\" style=\"background:#1f5fa8\"></span>\(e.jumps != nil ? "stretches" : e.map != nil ? "clock map" : "line")</span>"]
            + (cuts.isEmpty ? [] : ["<span><span class=\"swatch\" style=\"background:#b3261e\"></span>jump</span>"])).joined(separator: " ")
            + " <span class=\"note\">Windows without a lag (silent, or nothing found) sit on the floor, hollow.</span></figcaption>\n</figure>\n"
        return s
    }
}
