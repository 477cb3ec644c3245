import Foundation

/// The evidence behind drift estimates, drawn as an SVG (text: no dependency): for each
/// recording, every window's measured lag against its time on the recording's clock, the
/// fitted line, and the windows the fit rejected marked apart. One colour per recording,
/// a legend with its offset and drift.
///
/// Axes: x in minutes of the recording's clock; above, milliseconds of lag relative to the
/// recording's offset (lag − offset, the drift accumulated since its time 0), so recordings
/// with different offsets share one scale; below, each window's distance from the fit.
public struct LagPlot: Sendable {
    public var estimates: [DriftEstimate]
    /// Size of the drawing, in pixels.
    public var width = 960
    public var height = 540

    public init(estimates: [DriftEstimate]) {
        self.estimates = estimates
    }

    static let colours = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2"]

    /// One window as drawn: minutes on the recording's clock, lag − offset and lag − fit
    /// in milliseconds, and whether the fit used it.
    struct Point { let minutes: Double, drift: Double, residual: Double, used: Bool }

    static func points(_ e: DriftEstimate) -> [Point] {
        e.windows.compactMap { w in
            w.lag.map { lag in
                // With a clock map, the fit is the map (the window's residual is against it).
                let fit = e.modelLag(atRecordingSeconds: w.recordingTime)
                return Point(minutes: w.recordingTime / 60, drift: (lag - e.offsetSeconds) * 1000,
                             residual: (lag - fit) * 1000, used: w.status == "used")
            }
        }
    }

    /// The SVG document: the lags with their fitted lines above, the residuals (lag − fit)
    /// below, where an outlier of a millisecond stands out.
    public var svg: String {
        let left = 80.0, right = 24.0, top = 24.0, gap = 44.0, bottom = 48.0
        let legendHeight = 20.0 * Double(estimates.count) + 8
        let plotW = Double(width) - left - right
        let total = Double(height) - top - gap - bottom - legendHeight
        let upperH = total * 0.62, lowerH = total - upperH
        let series = estimates.map(Self.points)
        let ends = estimates.map { e in (e.windows.map(\.recordingTime).max() ?? 0) / 60 }
        let x1 = max(ends.max() ?? 1, 1e-9)
        let drifts = series.flatMap { $0.map(\.drift) } + zip(estimates, ends).map { e, end in (e.ratio - 1) * end * 60_000 } + [0]
        // The residual panel shows the used windows' spread, and the rejected ones up to
        // ten times it (beyond that they sit on the edge, still marked).
        let usedSpread = series.flatMap { $0.filter(\.used).map { abs($0.residual) } }.max() ?? 0
        let allSpread = series.flatMap { $0.map { abs($0.residual) } }.max() ?? 0
        let rLimit = max(min(allSpread, max(10 * usedSpread, 0.01)), 0.01) * 1.1
        var s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" font-family=\"sans-serif\" font-size=\"12\">\n"
        s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
        let upper = Panel(left: left, top: top, width: plotW, height: upperH, x1: x1, y: Self.padded(drifts))
        let lower = Panel(left: left, top: top + upperH + gap, width: plotW, height: lowerH, x1: x1, y: (-rLimit, rLimit))
        s += upper.frame(yTitle: "lag − offset (ms)", xTitle: nil)
        s += lower.frame(yTitle: "lag − fit (ms)", xTitle: "recording time (minutes)")
        for (i, e) in estimates.enumerated() {
            let c = Self.colours[i % Self.colours.count]
            let slope = (e.ratio - 1) * 60_000   // ms per minute
            if let map = e.map {
                // The map, knot to knot: the drift it follows.
                let drawn = map.knots.map { k -> (Double, Double) in
                    let t = Double(k.recordingFrame) / Double(map.recordingRate)
                    return (t / 60, (k.referenceTime.approximateSeconds - t - e.offsetSeconds) * 1000)
                }
                for (a, b) in zip(drawn, drawn.dropFirst()) { s += upper.line(from: a, to: b, colour: c, cls: "fit") }
            } else {
                s += upper.line(from: (0, 0), to: (ends[i], slope * ends[i]), colour: c, cls: "fit")
            }
            s += lower.line(from: (0, 0), to: (ends[i], 0), colour: c, cls: "fit")
            for p in series[i] {
                s += upper.mark(p.minutes, p.drift, used: p.used, colour: c)
                s += lower.mark(p.minutes, max(-rLimit, min(rLimit, p.residual)), used: p.used, colour: c)
            }
            // The crosses: windows with a lag the fit rejected. Silent windows and windows
            // outside REF had nothing to match; ambiguous and weak ones have no lag to draw.
            let rejected = e.windows.filter { $0.lag != nil && !["used", "silent", "outside"].contains($0.status) }.count
            let ambiguous = e.windows.filter { $0.lag == nil && $0.status == "ambiguous" }.count
            let ly = Double(height) - legendHeight + 20.0 * Double(i) + 8
            s += "<circle cx=\"\(Panel.f(left + 6))\" cy=\"\(Panel.f(ly - 4))\" r=\"4\" fill=\"\(c)\"/>\n"
            var text = String(format: "%@: offset %+.6f s, %+.3f ppm, %d windows used, %d rejected (×)",
                              (e.recording as NSString).lastPathComponent, e.offsetSeconds, e.ppm, e.windowsUsed, rejected)
            if ambiguous > 0 { text += ", \(ambiguous) ambiguous" }
            text += String(format: ", residual %.3f ms rms", e.residualRMSMilliseconds)
            if e.polarity < 0 { text += ", polarity inverted" }
            if let map = e.map { text += ", the clock wanders: a map of \(map.knots.count) knots" }
            s += "<text x=\"\(Panel.f(left + 16))\" y=\"\(Panel.f(ly))\">\(Self.escape(text))</text>\n"
        }
        s += "</svg>\n"
        return s
    }

    /// The range of `values` with 5 % to spare (at least a millisecond).
    static func padded(_ values: [Double]) -> (Double, Double) {
        var lo = values.min() ?? 0, hi = values.max() ?? 0
        if hi - lo < 1 { lo -= 0.5; hi += 0.5 }
        let pad = (hi - lo) * 0.05
        return (lo - pad, hi + pad)
    }

    /// One pair of axes.
    struct Panel {
        let left: Double, top: Double, width: Double, height: Double, x1: Double, y: (Double, Double)

        static func f(_ v: Double) -> String { String(format: "%.2f", v) }
        func px(_ x: Double) -> Double { left + x / x1 * width }
        func py(_ v: Double) -> Double { top + (y.1 - v) / (y.1 - y.0) * height }

        func frame(yTitle: String, xTitle: String?) -> String {
            var s = ""
            for t in LagPlot.ticks(0, x1) {
                s += "<line x1=\"\(Self.f(px(t)))\" y1=\"\(Self.f(top))\" x2=\"\(Self.f(px(t)))\" y2=\"\(Self.f(top + height))\" stroke=\"#e5e5e5\"/>\n"
                s += "<text x=\"\(Self.f(px(t)))\" y=\"\(Self.f(top + height + 16))\" text-anchor=\"middle\">\(LagPlot.label(t))</text>\n"
            }
            for t in LagPlot.ticks(y.0, y.1) {
                s += "<line x1=\"\(Self.f(left))\" y1=\"\(Self.f(py(t)))\" x2=\"\(Self.f(left + width))\" y2=\"\(Self.f(py(t)))\" stroke=\"#e5e5e5\"/>\n"
                s += "<text x=\"\(Self.f(left - 6))\" y=\"\(Self.f(py(t) + 4))\" text-anchor=\"end\">\(LagPlot.label(t))</text>\n"
            }
            s += "<rect x=\"\(Self.f(left))\" y=\"\(Self.f(top))\" width=\"\(Self.f(width))\" height=\"\(Self.f(height))\" fill=\"none\" stroke=\"#333\"/>\n"
            s += "<text transform=\"translate(18 \(Self.f(top + height / 2))) rotate(-90)\" text-anchor=\"middle\">\(yTitle)</text>\n"
            if let xTitle {
                s += "<text x=\"\(Self.f(left + width / 2))\" y=\"\(Self.f(top + height + 34))\" text-anchor=\"middle\">\(xTitle)</text>\n"
            }
            return s
        }

        func line(from a: (Double, Double), to b: (Double, Double), colour: String, cls: String) -> String {
            "<line class=\"\(cls)\" x1=\"\(Self.f(px(a.0)))\" y1=\"\(Self.f(py(a.1)))\" x2=\"\(Self.f(px(b.0)))\" y2=\"\(Self.f(py(b.1)))\" stroke=\"\(colour)\" stroke-width=\"1.5\"/>\n"
        }

        /// A used window as a dot, a rejected one as a cross.
        func mark(_ x: Double, _ v: Double, used: Bool, colour: String) -> String {
            let (cx, cy) = (px(x), py(v))
            if used { return "<circle class=\"used\" cx=\"\(Self.f(cx))\" cy=\"\(Self.f(cy))\" r=\"2.5\" fill=\"\(colour)\"/>\n" }
            return "<path class=\"rejected\" d=\"M\(Self.f(cx - 4)) \(Self.f(cy - 4))L\(Self.f(cx + 4)) \(Self.f(cy + 4))M\(Self.f(cx - 4)) \(Self.f(cy + 4))L\(Self.f(cx + 4)) \(Self.f(cy - 4))\" stroke=\"\(colour)\" stroke-width=\"1.5\"/>\n"
        }
    }

    /// Writes the SVG to `path` atomically (complete or absent); an existing file is
    /// replaced only with `overwrite`.
    public func write(to path: String, overwrite: Bool) throws(MixdownError) {
        try TextFile.write(svg, to: path, overwrite: overwrite)
    }

    /// About six round ticks across [a, b].
    static func ticks(_ a: Double, _ b: Double) -> [Double] {
        let raw = (b - a) / 6
        guard raw > 0, raw.isFinite else { return [a] }
        let magnitude = pow(10, (log10(raw)).rounded(.down))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? 10 * magnitude
        var t = (a / step).rounded(.up) * step, out: [Double] = []
        while t <= b + step * 1e-9 { out.append(abs(t) < step * 1e-9 ? 0 : t); t += step }
        return out
    }

    static func label(_ v: Double) -> String {
        let s = String(format: "%.6g", v)
        return s == "-0" ? "0" : s
    }

    static func escape(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
