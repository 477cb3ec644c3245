import Foundation

/// The parts of Mixdown's report pages: one self-contained HTML file (no network, no
/// script, no font to load), charts as inline SVG drawn here, and the data they are drawn
/// from embedded as the same JSON `--json` prints (`<script type="application/json"
/// id="mixdown-data">`, which a browser does not run), for a reader or a test to take.
enum ReportPage {
    /// Text for HTML content and attribute values.
    static func escaped(_ s: String) -> String {
        s.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// A whole page: `title`, the body's HTML, and `json` embedded (a "<" in it, only ever
    /// inside a string, written as \u003c so no "</script>" can end the element early).
    static func page(title: String, body: String, json: String, style: String = "") -> String {
        """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="generator" content="Mixdown \(MixdownVersion.string)">
        <title>\(escaped(title))</title>
        <style>
        body { font: 15px/1.45 system-ui, sans-serif; color: #1a1a1a; background: #fff; margin: 1.5em auto; max-width: 1000px; padding: 0 1em; }
        h1 { font-size: 1.5em; margin-bottom: 0.2em; }
        h2 { font-size: 1.2em; margin-top: 1.6em; }
        h3 { font-size: 1.05em; margin-top: 1.2em; }
        table { border-collapse: collapse; }
        th, td { text-align: left; padding: 0.2em 1.2em 0.2em 0; }
        th { font-weight: 600; }
        td.number { font-variant-numeric: tabular-nums; }
        svg { width: 100%; height: auto; display: block; }
        svg text { font: 12px system-ui, sans-serif; fill: #1a1a1a; }
        .legend span { margin-right: 1.5em; white-space: nowrap; }
        .swatch { display: inline-block; width: 1.6em; height: 0.35em; vertical-align: middle; margin-right: 0.4em; }
        .note { color: #444; }
        \(style)
        </style>
        </head>
        <body>
        \(body)
        <script type="application/json" id="mixdown-data">\(json.replacingOccurrences(of: "<", with: "\\u003c"))</script>
        </body>
        </html>

        """
    }

    /// Writes a page to `path` (complete or absent): `data` encoded as Mixdown's JSON, and
    /// the page `html` makes with it embedded.
    static func write<T: Encodable>(_ data: T, to path: String, overwrite: Bool, html: (String) -> String) throws(MixdownError) {
        let json: String
        do { json = try MixdownJSON.text(data, warn: { _ in }) } catch {
            throw .writeFailed(path: path, reason: "cannot encode the page's data: \(error)")
        }
        try TextFile.write(html(json), to: path, overwrite: overwrite)
    }

    /// A path as a link from the page at `page`: relative to the page's directory when both
    /// are absolute or both relative to the same directory, else as it is.
    static func link(_ path: String, from page: String) -> String {
        let pageDir = URL(fileURLWithPath: (page as NSString).deletingLastPathComponent.isEmpty ? "." : (page as NSString).deletingLastPathComponent).standardizedFileURL.pathComponents
        let target = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        var common = 0
        while common < min(pageDir.count, target.count - 1) && pageDir[common] == target[common] { common += 1 }
        let up = Array(repeating: "..", count: pageDir.count - common)
        return (up + target[common...]).joined(separator: "/").addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path
    }

    /// The scale of the coordinates `dots` and `line` write: tenths of the chart's units,
    /// as whole numbers, inside a `<g transform="scale(.1)">`.
    static let pathScale = 10.0

    /// Points as the dots of one SVG path (a zero-length segment each, drawn as a dot by a
    /// round line cap), in whole tenths: the first absolute, each next one moved from the
    /// last ("M712 2333h0m24-1h0..."), so a dot costs a few bytes where a circle costs sixty.
    static func dots(_ points: [(Double, Double)]) -> String {
        var s = "", last: (Int, Int)? = nil
        for p in tenths(points) {
            if let l = last { s += "m" + pair(p.0 - l.0, p.1 - l.1) + "h0" } else { s += "M" + pair(p.0, p.1) + "h0" }
            last = p
        }
        return s
    }

    /// Points as one SVG path through them, in whole tenths ("M712 2333l87-1 87 2...").
    static func line(_ points: [(Double, Double)]) -> String {
        let t = tenths(points)
        guard let first = t.first else { return "" }
        var s = "M" + pair(first.0, first.1)
        for (i, p) in t.enumerated().dropFirst() { s += (i == 1 ? "l" : " ") + pair(p.0 - t[i - 1].0, p.1 - t[i - 1].1) }
        return s
    }

    private static func tenths(_ points: [(Double, Double)]) -> [(Int, Int)] {
        points.map { (Int(($0.0 * pathScale).rounded()), Int(($0.1 * pathScale).rounded())) }
    }

    /// Two numbers: a space between them unless the second's sign parts them.
    private static func pair(_ x: Int, _ y: Int) -> String { "\(x)" + (y < 0 ? "" : " ") + "\(y)" }

    /// Whether `path` is a page Mixdown wrote (its generator says so).
    static func isPage(_ path: String) -> Bool {
        guard let handle = FileHandle(forReadingAtPath: path) else { return false }
        defer { try? handle.close() }
        let head = String(decoding: (try? handle.read(upToCount: 512)) ?? Foundation.Data(), as: UTF8.self)
        return head.hasPrefix("<!DOCTYPE html>") && head.contains("<meta name=\"generator\" content=\"Mixdown ")
    }

    /// A table of label and value rows.
    static func table(caption: String, rows: [(String, String)]) -> String {
        "<table>\n<caption class=\"note\">\(escaped(caption))</caption>\n"
            + rows.map { "<tr><th scope=\"row\">\(escaped($0.0))</th><td class=\"number\">\(escaped($0.1))</td></tr>" }.joined(separator: "\n")
            + "\n</table>"
    }

    /// A value in dB with one decimal, or `silent` when not finite.
    static func decibels(_ v: Double?, _ unit: String, silent: String = "−∞") -> String {
        guard let v, v.isFinite else { return "\(silent) \(unit)" }
        return String(format: "%.1f", v).replacingOccurrences(of: "-", with: "−") + " " + unit
    }

    /// Seconds as h:mm:ss, m:ss or s.
    static func clock(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        if s >= 3600 { return String(format: "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60) }
        if s >= 60 { return String(format: "%d:%02d", s / 60, s % 60) }
        return seconds == seconds.rounded() ? "\(s) s" : String(format: "%.1f s", seconds)
    }
}

/// A chart of lines over time, drawn as SVG: the x axis in seconds from 0 to `duration`,
/// the y axis in `unit` from `low` to `high`. The plotting area and the axes' ends are
/// written on the `svg` element (data-left, data-right, data-top, data-bottom; data-x0,
/// data-x1, data-y0, data-y1), so a reader can map a drawn point back to its value.
struct ReportChart {
    struct Line {
        /// The series' name in the page's data (a key of its JSON), and in the legend.
        let key: String
        let label: String
        let colour: String
        /// One value per point, each at the end of its span: point i at (i + 1) * step s.
        let values: [Double?]
        var dashed = false
    }

    struct Level {
        let label: String
        let value: Double
        let colour: String
        var dashed = false
    }

    let id: String
    let title: String
    /// The chart in words: its text alternative.
    let description: String
    let duration: Double
    let step: Double
    let low: Double
    let high: Double
    let unit: String
    var lines: [Line] = []
    var levels: [Level] = []
    /// A band between two values (the loudness range), drawn under the lines.
    var band: (label: String, low: Double, high: Double, colour: String)?

    static let width = 960.0, height = 300.0
    static let left = 58.0, right = 944.0, top = 14.0, bottom = 262.0

    func x(_ seconds: Double) -> Double {
        Self.left + (Self.right - Self.left) * (duration > 0 ? min(max(seconds / duration, 0), 1) : 0)
    }

    func y(_ value: Double) -> Double {
        Self.bottom - (Self.bottom - Self.top) * (min(max(value, low), high) - low) / (high - low)
    }

    static func number(_ v: Double) -> String { String(format: "%.1f", v) }

    /// Tick spacing: the first of 1, 2 and 5 times a power of ten giving at most `count`.
    static func tickStep(span: Double, count: Int, steps: [Double]) -> Double {
        steps.first { span / $0 <= Double(count) } ?? steps.last!
    }

    var svg: String {
        var s = "<svg id=\"\(id)\" viewBox=\"0 0 \(Int(Self.width)) \(Int(Self.height))\" role=\"img\" aria-labelledby=\"\(id)-title \(id)-desc\""
        s += " data-left=\"\(Self.left)\" data-right=\"\(Self.right)\" data-top=\"\(Self.top)\" data-bottom=\"\(Self.bottom)\""
        s += " data-x0=\"0\" data-x1=\"\(duration)\" data-y0=\"\(low)\" data-y1=\"\(high)\">\n"
        s += "<title id=\"\(id)-title\">\(ReportPage.escaped(title))</title>\n<desc id=\"\(id)-desc\">\(ReportPage.escaped(description))</desc>\n"
        // Grid and axes.
        let yStep = Self.tickStep(span: high - low, count: 8, steps: [1, 2, 5, 10, 20, 50])
        var v = (low / yStep).rounded(.up) * yStep
        while v <= high + 1e-9 {
            let py = Self.number(y(v))
            s += "<line x1=\"\(Self.left)\" y1=\"\(py)\" x2=\"\(Self.right)\" y2=\"\(py)\" stroke=\"#ddd\"/>"
            s += "<text x=\"\(Self.left - 6)\" y=\"\(Self.number(y(v) + 4))\" text-anchor=\"end\">\(Int(v))</text>\n"
            v += yStep
        }
        let xStep = Self.tickStep(span: max(duration, 1e-9), count: 10,
                                  steps: [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800, 86400])
        var t = 0.0
        while t <= duration + 1e-9 {
            let px = Self.number(x(t))
            s += "<line x1=\"\(px)\" y1=\"\(Self.top)\" x2=\"\(px)\" y2=\"\(Self.bottom)\" stroke=\"#eee\"/>"
            s += "<text x=\"\(px)\" y=\"\(Self.bottom + 18)\" text-anchor=\"middle\">\(ReportPage.clock(t))</text>\n"
            t += xStep
        }
        s += "<text x=\"14\" y=\"\(Self.number((Self.top + Self.bottom) / 2))\" transform=\"rotate(-90 14 \(Self.number((Self.top + Self.bottom) / 2)))\" text-anchor=\"middle\">\(ReportPage.escaped(unit))</text>\n"
        s += "<rect x=\"\(Self.left)\" y=\"\(Self.top)\" width=\"\(Self.right - Self.left)\" height=\"\(Self.bottom - Self.top)\" fill=\"none\" stroke=\"#888\"/>\n"
        if let band, band.high >= low, band.low <= high {
            let y0 = y(band.high), y1 = y(band.low)
            s += "<rect data-band=\"\(ReportPage.escaped(band.label))\" x=\"\(Self.left)\" y=\"\(Self.number(y0))\" width=\"\(Self.right - Self.left)\" height=\"\(Self.number(max(y1 - y0, 1)))\" fill=\"\(band.colour)\" fill-opacity=\"0.18\"/>\n"
        }
        for level in levels where level.value >= low && level.value <= high {
            let py = Self.number(y(level.value))
            s += "<line data-level=\"\(ReportPage.escaped(level.label))\" data-value=\"\(level.value)\" x1=\"\(Self.left)\" y1=\"\(py)\" x2=\"\(Self.right)\" y2=\"\(py)\" stroke=\"\(level.colour)\" stroke-width=\"1.5\"\(level.dashed ? " stroke-dasharray=\"6 4\"" : "")/>\n"
        }
        for line in lines {
            // A run of values drawn as one polyline; a missing value, or one under the
            // chart's floor (silence), breaks the line.
            var runs: [[String]] = [[]]
            for (i, value) in line.values.enumerated() {
                guard let value, value.isFinite, value >= low else { if !runs.last!.isEmpty { runs.append([]) }; continue }
                runs[runs.count - 1].append("\(Self.number(x(Double(i + 1) * step))),\(Self.number(y(value)))")
            }
            for run in runs where !run.isEmpty {
                s += "<polyline data-series=\"\(line.key)\" fill=\"none\" stroke=\"\(line.colour)\" stroke-width=\"1.5\"\(line.dashed ? " stroke-dasharray=\"5 3\"" : "") points=\"\(run.joined(separator: " "))\"/>\n"
            }
        }
        s += "</svg>\n"
        // The legend, as text beside the drawing.
        var legend = lines.map { "<span><span class=\"swatch\" style=\"background:\($0.colour)\"></span>\(ReportPage.escaped($0.label))</span>" }
        legend += levels.filter { $0.value >= low && $0.value <= high }.map { "<span><span class=\"swatch\" style=\"background:\($0.colour)\"></span>\(ReportPage.escaped($0.label)): \(ReportPage.decibels($0.value, unit))</span>" }
        if let band { legend.append("<span><span class=\"swatch\" style=\"background:\(band.colour);opacity:0.4\"></span>\(ReportPage.escaped(band.label))</span>") }
        return "<figure>\n" + s + "<figcaption class=\"legend\">" + legend.joined(separator: " ") + "</figcaption>\n</figure>"
    }
}
