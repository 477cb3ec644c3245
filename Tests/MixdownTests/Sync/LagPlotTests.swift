import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import Testing
@testable import Mixdown

/// `LagPlot`: a well-formed SVG with every window drawn where its lag is, used windows as
/// dots and rejected ones as crosses in both panels, one fitted line per recording per
/// panel, a legend, and an atomic write that never replaces a file unasked.
@Suite struct LagPlotTests {
    static func estimate(_ name: String, offset: Double, ppm: Double, outliers: Set<Int>, silent: Set<Int>,
                         ambiguous: Set<Int> = [], polarity: Int = 1) -> DriftEstimate {
        let ratio = 1 + ppm / 1e6
        let windows = (0..<30).map { k -> DriftEstimate.Window in
            let t = 5 + 10 * Double(k)
            if silent.contains(k) { return .init(recordingTime: t, lag: nil, correlation: 0, residual: nil, status: "silent") }
            if ambiguous.contains(k) { return .init(recordingTime: t, lag: nil, correlation: 0.5, residual: nil, status: "ambiguous") }
            let lag = offset + (ratio - 1) * t + (outliers.contains(k) ? 0.02 : 0)
            return .init(recordingTime: t, lag: lag, correlation: 0.9, residual: outliers.contains(k) ? nil : 0,
                         status: outliers.contains(k) ? "outlier" : "used")
        }
        let used = 30 - outliers.count - silent.count - ambiguous.count
        return DriftEstimate(reference: "ref.wav", recording: "/x/\(name)", offsetSeconds: offset, ratio: ratio, ppm: ppm,
                             confidence: 0.9, windowsUsed: used, windowsRejected: 30 - used, residualRMSMilliseconds: 0.01,
                             residualMaxMilliseconds: 0.02, segments: nil, windows: windows, seconds: 1, coarse: "envelope", polarity: polarity, rivalOffsetSeconds: nil)
    }

    final class Counter: NSObject, XMLParserDelegate {
        var classes: [String: Int] = [:]
        var texts: [String] = []
        var current = ""
        func parser(_ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
                    attributes: [String: String] = [:]) {
            if let c = attributes["class"] { classes[c, default: 0] += 1 }
            current = ""
        }
        func parser(_ parser: XMLParser, foundCharacters string: String) { current += string }
        func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
            if name == "text" { texts.append(current) }
        }
    }

    @Test func everyWindowIsDrawnAndTheDocumentIsWellFormed() throws {
        let a = Self.estimate("lav.wav", offset: 12.5, ppm: 150, outliers: [3, 17], silent: [9])
        let b = Self.estimate("cam.wav", offset: -3.25, ppm: -80, outliers: [], silent: [], ambiguous: [4, 5, 6], polarity: -1)
        let svg = LagPlot(estimates: [a, b]).svg
        let counter = Counter()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = counter
        #expect(parser.parse(), "not well-formed: \(parser.parserError.map { "\($0)" } ?? "")")
        // Two panels: each window with a lag appears twice; a silent one has no lag.
        #expect(counter.classes["used"] == 2 * (27 + 27))
        #expect(counter.classes["rejected"] == 2 * 2)
        #expect(counter.classes["fit"] == 2 * 2)
        #expect(counter.texts.contains("lav.wav: offset +12.500000 s, +150.000 ppm, 27 windows used, 2 rejected (×), residual 0.010 ms rms"))  // the silent one is no rejection
        // Ambiguous windows have no lag and no cross: counted apart, not as rejections.
        #expect(counter.texts.contains("cam.wav: offset -3.250000 s, -80.000 ppm, 27 windows used, 0 rejected (×), 3 ambiguous, residual 0.010 ms rms, polarity inverted"))
        #expect(counter.texts.contains("recording time (minutes)") && counter.texts.contains("lag − fit (ms)"))
    }

    @Test func ticksAreRoundAndCoverTheRange() {
        #expect(LagPlot.ticks(0, 9.75) == [0, 2, 4, 6, 8])
        #expect(LagPlot.ticks(-8.8, 8.8) == [-5, 0, 5])
        let small = LagPlot.ticks(0, 0.03)
        #expect(small.count == 7 && small[0] == 0 && abs(small[6] - 0.03) < 1e-12 && abs(small[1] - 0.005) < 1e-12)
    }

    @Test func theWriteIsAtomicAndNeverReplacesUnasked() throws {
        let dir = TempDir()
        let path = dir.file("lag.svg")
        let plot = LagPlot(estimates: [Self.estimate("r.wav", offset: 1, ppm: 10, outliers: [], silent: [])])
        try plot.write(to: path, overwrite: false)
        #expect(try String(contentsOfFile: path, encoding: .utf8) == plot.svg)
        #expect(throws: MixdownError.outputExists(path: path)) { try plot.write(to: path, overwrite: false) }
        try plot.write(to: path, overwrite: true)
        #expect(dir.contents == ["lag.svg"])
    }
}
