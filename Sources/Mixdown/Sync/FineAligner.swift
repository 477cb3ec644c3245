import Foundation

/// Matches REC windows against REF at the analysis rate, reading REF forwards once: the
/// calls come in order of where their search starts.
///
/// Two measures (`Measure`): the plain normalised correlation, which weighs each frequency
/// by its power and is the most precise on speech, music and noise; and
/// `LineClippedCorrelation`, in which a steady tone (hum, an engine, a drone) counts no
/// more than the broadband content under it, so that the noise that never repeats decides
/// where a window lies, not the tone that repeats every period. Each call keeps the
/// window's best few places (`candidateCount`), each with its correlation.
final class FineAligner {
    /// The usual search either side of a coarse estimate, seconds: wide enough to see the
    /// neighbouring periods of a hum or drone (down to 20 Hz), so that a match on one of
    /// them is seen beside the true one.
    static let defaultSearch = 0.05
    /// Places kept per window.
    static let candidateCount = 4
    /// Candidates closer than this (seconds) are one peak.
    static let peakWidth = 0.002
    /// Below this (cycles per second) nothing counts in the match: rumble, DC.
    static let lowestFrequency = 30.0

    enum Measure {
        /// Normalised cross-correlation; places are its peaks of the sign of the largest |c|
        /// (negative: the window's polarity is inverted).
        case plain
        /// `LineClippedCorrelation`; places are peaks of |c|, signed (negative: REC's
        /// polarity is inverted).
        case lineClipped
    }

    /// One place a window matches: the fractional REF sample where its first sample lands,
    /// and the correlation there (negative: the recording's polarity is inverted).
    struct Candidate: Equatable {
        let position: Double
        let correlation: Double
    }

    private let stream: AnalysisStream
    private let length: Int
    private let rate: Double
    private var buffer: [Float] = []
    /// REF sample index of buffer[0].
    private var bufferStart = 0
    private var finished = false
    /// One correlator per number of lags searched (the searches come in a few widths).
    private var correlators: [Int: LineClippedCorrelation] = [:]

    let measure: Measure

    /// After a plain `match`: where the window's first difference (its spectrum tilted up
    /// by 6 dB an octave, so that the low drones and hums that rule the plain measure
    /// count no more than the rest) matches best, within ±`emphasisSearch` of the best
    /// candidate, as a fractional REF sample like `Candidate.position`; nil when there is
    /// no best candidate. A material whose timing differs between its bands (a drone
    /// through a minimum-phase filter) shows here.
    private(set) var emphasisPosition: Double?
    /// ±2 ms, seconds.
    static let emphasisSearch = 0.002

    init(stream: AnalysisStream, windowLength: Int, rate: Double, measure: Measure) {
        self.stream = stream
        length = windowLength
        self.rate = rate
        self.measure = measure
    }

    /// The first REF sample a match at `refStart` ± `search` reads: the order of calls.
    static func searchStart(_ refStart: Double, search: Int) -> Int { Int(refStart.rounded(.down)) - search }

    /// The places (fractional REF samples) where `rec`'s window start matches best within
    /// ±`search` samples of `refStart` by `measure`: local peaks at least `peakWidth` apart,
    /// the clearest first, at most `candidateCount`. A best peak on the edge of the search
    /// may lie beyond it: then none.
    func match(_ rec: UnsafePointer<Float>, at refStart: Double, search: Int) throws(MixdownError) -> [Candidate] {
        let lo = Self.searchStart(refStart, search: search)
        let lags = 2 * search + 1
        let hi = lo + lags - 1 + length
        precondition(bufferStart == 0 || lo >= bufferStart, "fine matches come in order of where their search starts")
        guard hi > 0 else { return [] }
        // Read up to the search's end, keeping a window's length of history before its
        // start: a jump over a long stretch (silent windows) holds no more than 2^18 extra.
        repeat {
            let drop = min(lo - length - bufferStart, buffer.count)
            if drop > 1 << 18 {
                buffer.removeFirst(drop)
                bufferStart += drop
            }
            guard bufferStart + buffer.count < hi && !finished else { break }
            if let chunk = try stream.next() { buffer.append(contentsOf: chunk) } else { finished = true }
        } while true
        var x = [Float](repeating: 0, count: length + lags - 1)
        for i in 0..<x.count {
            let j = lo + i - bufferStart
            if j >= 0 && j < buffer.count { x[i] = buffer[j] }
        }
        let width = Int(Self.peakWidth * rate)
        if measure == .plain {
            let a = Array(UnsafeBufferPointer(start: rec, count: length))
            let c = CrossCorrelation.normalised(a, x, lags: lags, centred: false)
            // The peaks of the sign of the largest |c|: an inverted recording (or a window whose
            // filters turn it over) is placed on its negative peak, not on a side lobe beside it.
            let sign: Double = (c.max() ?? 0) >= -(c.min() ?? 0) ? 1 : -1
            let found = Self.peaks(c.map { max(0, sign * $0) }, width: width).map {
                Candidate(position: Double(lo) + $0.index, correlation: sign * $0.value)
            }
            emphasisPosition = found.first.flatMap { best in
                Self.emphasised(a, x, around: Int((best.position - Double(lo)).rounded()), span: Int(Self.emphasisSearch * rate), sign: sign)
                    .map { Double(lo) + $0 }
            }
            return found
        }
        let used = Self.excerptLength(window: length, lags: lags)
        let correlator = correlators[lags] ?? LineClippedCorrelation(excerptLength: used, lags: lags, lowestFrequency: Self.lowestFrequency / rate)
        correlators[lags] = correlator
        // The window's middle `used` samples against the same stretch of REF.
        let trim = (length - used) / 2
        let c = x.withUnsafeBufferPointer { correlator.correlate(rec + trim, $0.baseAddress! + trim) }
        let found = Self.peaks(c, width: width).map { Candidate(position: Double(lo) + $0.index, correlation: $0.value) }
        let a = Array(UnsafeBufferPointer(start: rec, count: length))
        emphasisPosition = found.first.flatMap { best in
            Self.emphasised(a, x, around: Int((best.position - Double(lo)).rounded()), span: Int(Self.emphasisSearch * rate),
                            sign: best.correlation < 0 ? -1 : 1).map { Double(lo) + $0 }
        }
        return found
    }

    /// The fractional lag (into `x`) where the first differences of `a` and `x` correlate
    /// best, with `sign`, within `around` ± `span`; nil when the peak lies on the edge.
    static func emphasised(_ a: [Float], _ x: [Float], around: Int, span: Int, sign: Double) -> Double? {
        let n = a.count - 1
        guard n > 1 else { return nil }
        let da = (0..<n).map { Double(a[$0 + 1]) - Double(a[$0]) }
        let energyA = da.reduce(0) { $0 + $1 * $1 }
        let first = max(0, around - span), last = min(x.count - a.count, around + span)
        guard last - first >= 2, energyA > 0 else { return nil }
        var c: [Double] = []
        for l in first...last {
            var dot = 0.0, energy = 0.0
            for i in 0..<n {
                let d = Double(x[l + i + 1]) - Double(x[l + i])
                dot += da[i] * d
                energy += d * d
            }
            c.append(energy > 0 ? sign * dot / (energyA * energy).squareRoot() : 0)
        }
        guard let top = c.indices.max(by: { c[$0] < c[$1] }), top > 0, top < c.count - 1 else { return nil }
        let y0 = c[top - 1], y1 = c[top], y2 = c[top + 1]
        let d = y0 - 2 * y1 + y2
        return Double(first + top) + (d < 0 ? 0.5 * (y0 - y2) / d : 0)
    }

    /// How much of a window of `window` samples is matched over `lags` lags: all of it, or
    /// its middle, shortened by up to 10 % when that halves the transform (the usual
    /// ±50 ms search at 8 kHz: 7392 of 8000 samples in 8192-point transforms, not 16384).
    static func excerptLength(window: Int, lags: Int) -> Int {
        let full = window + lags - 1
        let smaller = full.nextPowerOfTwo / 2
        return smaller - lags + 1 >= window * 9 / 10 ? smaller - lags + 1 : window
    }

    /// The clearest local peaks of |c| (interior, interpolated by a parabola through
    /// |c|), each farther than `width` samples from every clearer one, at most
    /// `candidateCount`; none when the largest |c| lies on an edge.
    static func peaks(_ c: [Double], width: Int) -> [(index: Double, value: Double)] {
        guard c.count >= 3, let top = c.indices.max(by: { abs(c[$0]) < abs(c[$1]) }), top > 0, top < c.count - 1 else { return [] }
        var maxima: [Int] = []
        for i in 1..<(c.count - 1) where abs(c[i]) >= abs(c[i - 1]) && abs(c[i]) >= abs(c[i + 1]) && abs(c[i]) > 0 { maxima.append(i) }
        maxima.sort { abs(c[$0]) > abs(c[$1]) }
        var kept: [Int] = []
        for i in maxima where kept.count < candidateCount && kept.allSatisfy({ abs($0 - i) > width }) { kept.append(i) }
        return kept.map { i in
            let y0 = abs(c[i - 1]), y1 = abs(c[i]), y2 = abs(c[i + 1])
            let d = y0 - 2 * y1 + y2
            let delta = d < 0 ? 0.5 * (y0 - y2) / d : 0
            let value = y1 - 0.25 * (y0 - y2) * delta
            return (Double(i) + delta, c[i] < 0 ? -value : value)
        }
    }
}
