import Foundation
import MixdownKernels

/// A file as mono analysis samples at `rate / decimation` per second: mixed to mono and
/// averaged over groups of samples (`BoxcarDecimator`); a file at another rate is averaged
/// at its own rate to about 8 kHz first and then resampled (`Resampler`, fastest) to the
/// analysis rate, so the resampler sees a sixth of the samples. Sample j stands for the
/// file's time j · decimation / rate (each average delays its file by half a group:
/// under 0.01 ms between 44.1 and 48 kHz files).
final class AnalysisStream {
    let expectedSamples: Int64
    private let node: AudioNode
    private let block = 4096
    private let buffer: AudioBuffer

    /// A 4th-order Butterworth high-pass on the analysis samples (two biquads), nil for
    /// none. Both files of a match pass through the same filter at the same analysis rate,
    /// so its delay cancels in every lag.
    private var highPass: [Biquad]

    /// `range`: the file's frames to read (its own rate), all of them when nil. `highPass`:
    /// the corner of a high-pass on the analysis samples, Hz (`AnalysisGrid.highPassHz`).
    init(path: String, rate: Int, decimation: Int, range: Range<Int64>? = nil, highPass corner: Double? = nil) throws(MixdownError) {
        highPass = corner.map { hz in
            // Butterworth's two sections: Q = 1 / (2 cos(π/8)) and 1 / (2 cos(3π/8)).
            [0.541_196_1, 1.306_563].map { Biquad.highPass(corner: hz, rate: Double(rate / decimation), q: $0) }
        } ?? []
        let source = try FileSource(path: path, range: range)
        let mono: AudioNode = source.format.channelCount == 1 ? source : try ChannelMapper(input: source, channelCount: 1)
        let own = source.format.sampleRate
        var node: AudioNode
        if own == rate {
            node = BoxcarDecimator(input: mono, factor: decimation)
        } else {
            let factor = Self.factor(own, decimation: max(1, own / (rate / decimation)))
            node = BoxcarDecimator(input: mono, factor: factor)
            let ratio = StretchRatio(Int64(rate / decimation) * Int64(factor), Int64(own))
            node = try Resampler(input: node, ratio: ratio, outputRate: rate / decimation, quality: .fastest)
        }
        self.node = node
        try node.prepare(maximumFrames: block)
        buffer = AudioBuffer(channelCount: 1, capacity: block)
        expectedSamples = node.length ?? 0
    }

    /// The largest factor up to `decimation` that divides `rate` (the decimator needs one).
    static func factor(_ rate: Int, decimation: Int) -> Int {
        var f = max(1, decimation)
        while rate % f != 0 { f -= 1 }
        return f
    }

    /// The next analysis samples (valid until the next call), or nil at the end.
    func next() throws(MixdownError) -> UnsafeBufferPointer<Float>? {
        let status = try node.render(into: buffer, frames: block)
        if status.frames == 0 { return nil }
        for k in highPass.indices { highPass[k].run(buffer[channel: 0], count: status.frames) }
        return UnsafeBufferPointer(start: buffer[channel: 0], count: status.frames)
    }

    /// One second-order section (RBJ's cookbook), run in place in doubles.
    struct Biquad {
        var b0, b1, b2, a1, a2: Double
        var z1 = 0.0, z2 = 0.0

        static func highPass(corner: Double, rate: Double, q: Double) -> Biquad {
            let w = 2 * Double.pi * corner / rate, alpha = sin(w) / (2 * q), c = cos(w)
            let a0 = 1 + alpha
            return Biquad(b0: (1 + c) / 2 / a0, b1: -(1 + c) / a0, b2: (1 + c) / 2 / a0, a1: -2 * c / a0, a2: (1 - alpha) / a0)
        }

        /// Transposed direct form II.
        mutating func run(_ x: UnsafeMutablePointer<Float>, count: Int) {
            for i in 0..<count {
                let v = Double(x[i])
                let y = b0 * v + z1
                z1 = b1 * v - a1 * y + z2
                z2 = b2 * v - a2 * y
                x[i] = Float(y)
            }
        }
    }

    /// The RMS of every `step` samples, the whole file; also copies `windows` (sorted
    /// starts, each `length` samples, into consecutive slots of `into`) on the way.
    func envelope(step: Int, cancellation: CancellationToken?,
                  windows: (starts: [Int64], length: Int, into: UnsafeMutablePointer<Float>)? = nil,
                  progress: (Double) -> Void) throws(MixdownError) -> [Float] {
        var env: [Float] = []
        env.reserveCapacity(Int(expectedSamples) / step + 1)
        var acc = 0.0, inBin = 0
        var position: Int64 = 0
        var firstOpen = 0
        var blocks = 0
        while let chunk = try next() {
            if cancellation?.isCancelled == true { throw .cancelled }
            for x in chunk {
                acc += Double(x) * Double(x)
                inBin += 1
                if inBin == step {
                    env.append(Float((acc / Double(step)).squareRoot()))
                    acc = 0
                    inBin = 0
                }
            }
            if let w = windows {
                let end = position + Int64(chunk.count)
                var k = firstOpen
                while k < w.starts.count && w.starts[k] < end {
                    let a = max(w.starts[k], position), b = min(w.starts[k] + Int64(w.length), end)
                    if a < b {
                        (w.into + k * w.length + Int(a - w.starts[k])).update(from: chunk.baseAddress! + Int(a - position), count: Int(b - a))
                    }
                    if w.starts[k] + Int64(w.length) <= end && k == firstOpen { firstOpen += 1 }
                    k += 1
                }
            }
            position += Int64(chunk.count)
            blocks += 1
            if blocks % 64 == 0, expectedSamples > 0 { progress(min(1, Double(position) / Double(expectedSamples))) }
        }
        progress(1)
        return env
    }
}

/// Lags from the 100 Hz energy envelopes.
struct CoarseAligner {
    let ref: [Float]
    let rec: [Float]
    /// Envelope values per second.
    let rate: Double
    let maxOffset: Double
    let maxDrift: Double

    /// REF time minus REC time near REC's start: the best of three two-minute stretches
    /// of REC (start, a third, two thirds) searched over ±(maxOffset + drift); and a rival:
    /// another stretch's lag (or, for a REC shorter than four minutes, either half's) more
    /// than a second away that matched at least 90 % as well (REC holds the same sound
    /// twice, as a recording of REF looped would).
    func globalOffsets() -> (best: Double, rival: Double?) {
        let length = min(rec.count, Int(120 * rate))
        var found: [(lag: Double, value: Double)] = []
        for start in [0, rec.count / 3, 2 * rec.count / 3] where start + length <= rec.count {
            let t = Double(start) / rate
            let span = maxOffset + maxDrift * t + 1
            if let f = lag(from: start, count: length, around: 0, span: span) { found.append((f.lag, f.correlation)) }
        }
        guard let best = found.max(by: { $0.value < $1.value }) else { return (0, nil) }
        // Halves of a short REC too, so that a REC of two copies shows both.
        let half = min(length, rec.count / 2)
        if half < length && half >= Int(10 * rate) {
            for start in [0, rec.count - half] {
                if let f = lag(from: start, count: half, around: 0, span: maxOffset + maxDrift * Double(start) / rate + 1) { found.append((f.lag, f.correlation)) }
            }
        }
        let rival = found.filter { abs($0.lag - best.lag) > 1 && $0.value >= 0.9 * best.value }.max { $0.value < $1.value }
        return (best.lag, rival?.lag)
    }

    /// The lag of REC's envelope from `start` to `end` (seconds; at most its first two
    /// minutes), searched over centre ± span; the lag is at the stretch's start.
    func lag(from start: Double, to end: Double, around centre: Double, span: Double) -> (lag: Double, correlation: Double)? {
        let a = max(0, Int((start * rate).rounded())), b = min(rec.count, Int((end * rate).rounded()))
        let count = min(b - a, Int(120 * rate))
        guard count > Int(2 * rate) else { return nil }
        return lag(from: a, count: count, around: centre, span: span)
    }

    func lag(at t: Double, around centre: Double, span: Double) -> (lag: Double, correlation: Double)? {
        let half = Int(10 * rate)
        let mid = Int((t * rate).rounded())
        let start = max(0, mid - half), end = min(rec.count, mid + half)
        guard end - start > Int(2 * rate) else { return nil }
        return lag(from: start, count: end - start, around: centre, span: span)
    }

    private func lag(from start: Int, count: Int, around centre: Double, span: Double) -> (lag: Double, correlation: Double)? {
        let a = Array(rec[start..<(start + count)])
        // Lags at which the stretch would not touch REF at all are not searched.
        let lo = max(Int(((centre - span) * rate).rounded(.down)), -start - count + 1)
        let hi = min(Int(((centre + span) * rate).rounded(.up)), ref.count - start - 1)
        let lags = hi - lo + 1
        guard lags >= 3 else { return nil }
        // REF from start + lo, zero outside the file.
        var x = [Float](repeating: 0, count: count + lags - 1)
        let from = start + lo
        let first = max(0, -from), last = min(x.count, ref.count - from)
        if first < last { for i in first..<last { x[i] = ref[from + i] } }
        let c = CrossCorrelation.normalised(a, x, lags: lags, centred: true)
        guard let p = CrossCorrelation.parabolicPeak(c) else { return nil }
        return ((Double(lo) + p.index) / rate, p.value)
    }
}
