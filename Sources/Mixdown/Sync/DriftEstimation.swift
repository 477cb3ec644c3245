import Foundation
import MixdownKernels
import Synchronization

/// How a recording maps onto a reference recording of the same event: REC's time t (its
/// own clock, seconds) is REF's time `offsetSeconds + ratio · t`. Measured, with the
/// evidence: the lag found in each analysis window and how far it lies from the fit.
public struct DriftEstimate: Sendable, Codable, Equatable {
    public struct Window: Sendable, Codable, Equatable {
        /// Centre of the window on REC's clock, seconds.
        public let recordingTime: Double
        /// REF time minus REC time at the centre, seconds (nil when nothing was found).
        public let lag: Double?
        /// Peak normalised cross-correlation, 0 to 1.
        public let correlation: Double
        /// Lag minus the fit, seconds (nil for windows not used).
        public let residual: Double?
        /// used, silent (no signal in REC), weak (no clear match in REF), outlier (off the line).
        public let status: String
    }

    /// A stretch of REC with one offset and ratio (`--piecewise`).
    public struct Segment: Sendable, Codable, Equatable {
        /// Where it starts and ends on REC's clock, seconds.
        public let start: Double
        public let end: Double
        public let offsetSeconds: Double
        public let ratio: Double
        public let ppm: Double
    }

    public let reference: String
    public let recording: String
    /// REF time at which REC's time 0 lands, seconds.
    public let offsetSeconds: Double
    /// REC's duration × ratio = its duration on REF's clock.
    public let ratio: Double
    /// (ratio − 1) × 1e6.
    public let ppm: Double
    /// 0 to 1: the share of windows with signal that agree with the fit, weighted by how
    /// clearly they matched.
    public let confidence: Double
    public let windowsUsed: Int
    public let windowsRejected: Int
    public let residualRMSMilliseconds: Double
    public let residualMaxMilliseconds: Double
    /// Present with `piecewise`: one entry per stretch of constant drift.
    public let segments: [Segment]?
    public let windows: [Window]
    public let seconds: Double

    /// Throws `lowConfidence` when the estimate cannot be trusted.
    public func requireConfidence(_ minimum: Double) throws(MixdownError) {
        guard confidence >= minimum else {
            throw .lowConfidence(reference: reference, recording: recording, confidence: confidence, minimum: minimum,
                                 reason: windowsUsed < 3 ? "no stretch of '\(recording)' was found in '\(reference)'; are they recordings of the same event?"
                                     : "only \(windowsUsed) of \(windowsUsed + windowsRejected) windows agree on one offset and drift")
        }
    }

    /// One line a person reads.
    public var summary: String {
        let sign = offsetSeconds >= 0 ? "+" : "-"
        let at = MediaTime(value: Int64((abs(offsetSeconds) * 1e6).rounded()), timescale: 1_000_000).clockDescription
        // ratio > 1: a second of REC lasts longer than a second of REF, so REC's clock is slow.
        let speed = ppm >= 0 ? "slow" : "fast"
        var s = String(format: "REC's time 0 is REF's %@%@; REC's clock runs %.3f ppm %@ (stretch it by %.9f); %d of %d windows agree (confidence %.2f), residual %.3f ms rms, %.3f ms max",
                       sign, at, abs(ppm), speed, ratio, windowsUsed, windowsUsed + windowsRejected, confidence,
                       residualRMSMilliseconds, residualMaxMilliseconds)
        if let segments, segments.count > 1 {
            s += "; the drift changes: " + segments.map { String(format: "%.1f-%.1f s: %+.3f ppm", $0.start, $0.end, $0.ppm) }.joined(separator: ", ")
        }
        return s
    }
}

/// Estimates the offset and drift of a recording against a reference (`mixdown sync`).
///
/// Both files are mixed to mono, brought to the reference's rate (the recording through
/// the resampler if its rate differs) and averaged down to about 8 kHz. A first
/// pass (both files at once, one per core) keeps a 100 Hz energy envelope of each and the
/// recording's one-second analysis windows, every `windowSpacing` seconds. The envelopes
/// give each window's lag to within a few milliseconds (the search widening with
/// `maxDriftPPM` until enough windows agree); a second pass over the reference refines it
/// by normalised cross-correlation at the analysis rate, with parabolic interpolation
/// of the peak. A robust line (Theil–Sen, then least squares on the windows within
/// 4 median deviations) through the lags gives the offset and the ratio. Silent windows
/// and windows without a clear match are rejected and reported. Memory: the envelopes
/// and the windows (about 32 KB per window), never the files.
public struct DriftEstimator: Sendable {
    public var reference: String
    public var recording: String
    /// The largest |offset| searched.
    public var maxOffset = MediaTime(seconds: 60)
    /// The largest |drift| searched, parts per million.
    public var maxDriftPPM = 1000.0
    /// Seconds of REC between analysis windows.
    public var windowSpacing = 10.0
    /// Find where the drift changes (a device that re-synced its clock).
    public var piecewise = false

    public init(reference: String, recording: String) {
        self.reference = reference
        self.recording = recording
    }

    static let analysisTarget = 8000
    static let windowSeconds = 1.0
    /// The refinement searches this far either side of the envelope's estimate.
    static let fineSearchSeconds = 0.025
    /// A window whose best normalised correlation is below this is "weak".
    static let minimumCorrelation = 0.2

    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> DriftEstimate {
        let stopwatch = Stopwatch()
        let refInfo = try AudioFileInfo.read(path: reference)
        let recInfo = try AudioFileInfo.read(path: recording)
        guard maxOffset.isNumeric, maxOffset >= .zero else {
            throw .invalidParameter(name: "--max-offset", value: maxOffset.clockDescription, reason: "must be a time of 0 or more")
        }
        guard windowSpacing.isFinite, windowSpacing >= 1 else {
            throw .invalidParameter(name: "--spacing", value: "\(windowSpacing)", reason: "must be at least 1 second")
        }
        let decimation = AnalysisStream.factor(refInfo.sampleRate, decimation: refInfo.sampleRate / Self.analysisTarget)
        let rate = Double(refInfo.sampleRate) / Double(decimation)        // analysis samples per second
        let envelopeStep = max(1, Int((rate / 100).rounded()))            // analysis samples per envelope value
        let windowLength = Int(rate * Self.windowSeconds)
        let recSeconds = recInfo.duration.approximateSeconds
        let centres = stride(from: windowSpacing / 2, to: recSeconds - Self.windowSeconds / 2, by: windowSpacing).map { $0 }
        guard centres.count >= 3 else {
            throw .invalidParameter(name: "recording", value: "'\(recording)'", reason: "is too short to estimate a drift: at least \(Int(3 * windowSpacing)) s are needed")
        }

        // Pass 1: envelopes of both, and REC's windows; one file per core.
        let recWindows = UnsafeMutablePointer<Float>.allocate(capacity: centres.count * windowLength)
        recWindows.initialize(repeating: 0, count: centres.count * windowLength)
        defer { recWindows.deallocate() }
        let windowStarts = centres.map { Int64(($0 * rate).rounded()) - Int64(windowLength / 2) }
        let shared = ReferencePass()
        let refPath = reference
        let refRate = refInfo.sampleRate
        let refThread = Thread {
            let r = Result { () throws(MixdownError) -> [Float] in
                let s = try AnalysisStream(path: refPath, rate: refRate, decimation: decimation)
                return try s.envelope(step: envelopeStep, cancellation: cancellation) { p in shared.state.withLock { $0.progress = p } }
            }
            shared.state.withLock { $0.result = r }
            shared.done.signal()
        }
        refThread.name = "mixdown.sync.reference"
        refThread.start()
        let recResult = Result { () throws(MixdownError) -> [Float] in
            let s = try AnalysisStream(path: recording, rate: refRate, decimation: decimation)
            return try s.envelope(step: envelopeStep, cancellation: cancellation, windows: (windowStarts, windowLength, recWindows)) { p in
                progress?(0.35 * (p + shared.state.withLock { $0.progress }))
            }
        }
        shared.done.wait()
        let recEnvelope = try recResult.get()
        let refEnvelope = try shared.state.withLock { $0.result! }.get()
        let envelopeRate = rate / Double(envelopeStep)

        // Coarse lags from the envelopes.
        let coarse = CoarseAligner(ref: refEnvelope, rec: recEnvelope, rate: envelopeRate,
                                   maxOffset: maxOffset.approximateSeconds, maxDrift: maxDriftPPM * 1e-6)
        let start = coarse.globalOffset()
        var predictions: [(lag: Double, correlation: Double)?] = []
        var agreed: [(t: Double, lag: Double)] = []
        for c in centres {
            // Until enough windows agree, search the whole drift range; then around the line.
            var centre = start
            var span = maxDriftPPM * 1e-6 * recSeconds + 0.25
            if agreed.count >= 8, let line = Fit.theilSen(agreed.suffix(48).map { ($0.t, $0.lag) }) {
                centre = line.intercept + line.slope * c
                span = 0.25
            }
            let found = coarse.lag(at: c, around: centre, span: span)
            predictions.append(found)
            if let f = found, f.correlation >= 0.3, abs(f.lag - centre) < span { agreed.append((c, f.lag)) }
        }

        // Pass 2: refine at the analysis rate against REF, streamed once more.
        let stream = try AnalysisStream(path: reference, rate: refRate, decimation: decimation)
        let fine = FineAligner(stream: stream, windowLength: windowLength, search: Int((Self.fineSearchSeconds * rate).rounded()))
        // A window's REC time is its exact centre on the analysis grid.
        let times = windowStarts.map { (Double($0) + Double(windowLength) / 2) / rate }
        // REF is read forwards once: take the windows in the order of where they land in it.
        let order = centres.indices.sorted { (predictions[$0]?.lag ?? 0) + times[$0] < (predictions[$1]?.lag ?? 0) + times[$1] }
        var windows = times.map { (t: $0, lag: Double?.none, correlation: 0.0, silent: false) }
        for (done, k) in order.enumerated() {
            if cancellation?.isCancelled == true { throw .cancelled }
            let rec = recWindows + k * windowLength
            if Self.energy(rec, windowLength) < 1e-9 * Double(windowLength) {
                windows[k].silent = true
                continue
            }
            guard let p = predictions[k] else { continue }
            // The REF sample where REC's window start lands, by the envelope.
            let refStart = (times[k] + p.lag) * rate - Double(windowLength) / 2
            if let m = try fine.match(rec, at: refStart) {
                windows[k].lag = (m.position + Double(windowLength) / 2) / rate - times[k]
                windows[k].correlation = m.correlation
            }
            if done % 16 == 0 { progress?(0.7 + 0.3 * Double(done) / Double(order.count)) }
        }

        return Fit.estimate(reference: reference, recording: recording, windows: windows, piecewise: piecewise,
                            minimumCorrelation: Self.minimumCorrelation, duration: recSeconds, seconds: stopwatch.seconds)
    }

    static func energy(_ p: UnsafePointer<Float>, _ n: Int) -> Double {
        var e = 0.0
        for i in 0..<n { e += Double(p[i]) * Double(p[i]) }
        return e
    }
}

/// The reference's first pass, run on a thread of its own.
private final class ReferencePass: Sendable {
    struct State { var result: Result<[Float], MixdownError>?; var progress = 0.0 }
    let state = Mutex(State())
    let done = DispatchSemaphore(value: 0)
}
