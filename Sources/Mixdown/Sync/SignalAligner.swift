import Foundation

/// Coarse lags from the signal itself, for material whose energy envelope carries too little
/// structure (wind, rain, a drone, a crowd): a few excerpts of REC are read again at about
/// 2 kHz and placed in the stretch of REF where each can land (±`maxOffset`, widened by
/// the drift) by GCC-PHAT. The excerpts that agree on one line give every window's
/// predicted lag and how far the fine search must look around it.
struct SignalAligner {
    let reference: RecordingAnalysis
    let recording: RecordingAnalysis
    let grid: AnalysisGrid
    /// Seconds.
    let maxOffset: Double
    /// Seconds per second (ppm × 1e-6).
    let maxDrift: Double

    /// Short enough that a 1000 ppm drift smears the peak by 10 ms at most.
    static let excerptSeconds = 10.0
    static let excerptCount = 3
    /// Analysis samples averaged again: about 8 kHz becomes about 2 kHz.
    static let factor = 4

    /// Where one excerpt landed.
    struct Excerpt {
        /// Centre of the excerpt on REC's clock, seconds.
        let time: Double
        /// REF time minus REC time there, seconds.
        let lag: Double
        let peak: PhaseTransform.Peak
        /// The lag of the best match farther than `rivalExclusion` from it, seconds.
        let rivalLag: Double
    }

    /// A rival match nearer than this would fall inside the fine search of the best one.
    static let rivalExclusion = 2 * FineAligner.defaultSearch

    /// Start times (REC seconds) of the excerpts: in each of `excerptCount` equal parts
    /// of REC, the loudest `excerptSeconds`, by the envelope; silent parts give none.
    func excerptStarts() -> [Double] {
        let env = recording.envelope
        let rate = grid.envelopeRate
        let length = min(env.count, Int(Self.excerptSeconds * rate))
        guard length > 0 else { return [] }
        var prefix = [Double](repeating: 0, count: env.count + 1)
        for i in env.indices { prefix[i + 1] = prefix[i] + Double(env[i]) * Double(env[i]) }
        let parts = max(1, min(Self.excerptCount, env.count / length))
        var starts: [Double] = []
        for p in 0..<parts {
            let lo = p * env.count / parts, hi = (p + 1) * env.count / parts
            var best = (start: lo, energy: -1.0)
            var s = lo
            while s + length <= max(hi, lo + length) && s + length <= env.count {
                let e = prefix[s + length] - prefix[s]
                if e > best.energy { best = (s, e) }
                s += max(1, Int(rate))
            }
            // Silence (below about -90 dBFS rms) places nothing.
            if best.energy > 1e-9 * Double(length) { starts.append(Double(best.start) / rate) }
        }
        return starts
    }

    func measure(cancellation: CancellationToken?) throws(MixdownError) -> [Excerpt] {
        let decimation = AnalysisStream.factor(grid.sampleRate, decimation: grid.decimation * Self.factor)
        let coarseRate = Double(grid.sampleRate) / Double(decimation)
        let recRate = Double(recording.info.sampleRate), refRate = Double(reference.info.sampleRate)
        var found: [Excerpt] = []
        for start in excerptStarts() {
            if cancellation?.isCancelled == true { throw .cancelled }
            let f0 = Int64((start * recRate).rounded(.down))
            let f1 = min(recording.info.frames, f0 + Int64(Self.excerptSeconds * recRate))
            guard f1 - f0 > Int64(recRate) else { continue }
            let excerpt = try Self.read(AnalysisStream(path: recording.path, rate: grid.sampleRate, decimation: decimation, range: f0..<f1))
            let t0 = Double(f0) / recRate, t1 = Double(f1) / recRate
            let span = maxOffset + maxDrift * t1 + 0.5
            // REF's region on a grid of `decimation` frames at REF's rate (REF is at
            // grid.sampleRate): region sample i is REF frame g0 + i · decimation.
            let step = Int64(decimation)
            let g0 = Int64(((t0 - span) * refRate).rounded(.down)).floorMultiple(of: step)
            let g1 = Int64(((t1 + span) * refRate).rounded(.up))
            let a = max(0, g0), b = min(reference.info.frames, g1)
            var region = [Float](repeating: 0, count: Int((g1 - g0) / step) + 1)
            if b - a > step {
                let samples = try Self.read(AnalysisStream(path: reference.path, rate: grid.sampleRate, decimation: decimation, range: a..<b))
                let front = Int((a - g0) / step)
                for i in 0..<min(samples.count, region.count - front) { region[front + i] = samples[i] }
            }
            guard region.count >= excerpt.count + 2 else { continue }
            let lags = region.count - excerpt.count + 1
            // Below 20 Hz there is rumble and handling noise, not timing.
            let c = PhaseTransform.correlate(excerpt, in: region, lags: lags, lowestFrequency: 20 / coarseRate)
            guard let peak = PhaseTransform.peak(c, exclusion: Int(Self.rivalExclusion * coarseRate)) else { continue }
            let lag = { (index: Double) in (Double(g0) + index * Double(decimation)) / refRate - t0 }
            // The peak is the excerpt's mean lag: its lag at its centre.
            found.append(Excerpt(time: (t0 + t1) / 2, lag: lag(peak.lag), peak: peak, rivalLag: lag(Double(peak.runnerUpLag))))
        }
        return found
    }

    /// Every window's predicted lag and search half-width (seconds) from the largest set of
    /// excerpts that agree (lags within the drift range of each other, plus 5 ms); the
    /// clearer set when two are as large. Also the same line moved to the clearest
    /// excerpt's runner-up: the rival a fit must beat (`DriftEstimator`'s ambiguity check).
    /// nil predictions when no excerpt was placed.
    func predictions(_ excerpts: [Excerpt], times: [Double]) -> (best: [(lag: Double, search: Double)?], rival: [(lag: Double, search: Double)?]) {
        guard !excerpts.isEmpty else { return (times.map { _ in nil }, times.map { _ in nil }) }
        let n = excerpts.count
        var best: (members: [Int], score: Double) = ([], -1)
        for mask in 1..<(1 << n) {
            let members = (0..<n).filter { mask & (1 << $0) != 0 }
            let agree = members.allSatisfy { i in members.allSatisfy { j in
                abs(excerpts[i].lag - excerpts[j].lag) <= maxDrift * abs(excerpts[i].time - excerpts[j].time) + 0.005
            } }
            guard agree else { continue }
            let score = Double(members.count) * 1000 + members.reduce(0) { $0 + excerpts[$1].peak.value }
            if score > best.score { best = (members, score) }
        }
        let points = best.members.map { (excerpts[$0].time, excerpts[$0].lag) }
        let first = points.map(\.0).min()!, last = points.map(\.0).max()!
        let line = Fit.leastSquares(points) ?? (slope: 0, intercept: points[0].1)
        // The slope is known to about 2 ms over the excerpts' span; outside it the
        // prediction can be off by that slope error times the distance.
        let slopeError = last > first ? min(maxDrift, 0.002 / (last - first)) : maxDrift
        let clearest = best.members.max { excerpts[$0].peak.value < excerpts[$1].peak.value }!
        let shift = excerpts[clearest].rivalLag - excerpts[clearest].lag
        let predicted = times.map { t -> (lag: Double, search: Double) in
            let distance = t < first ? first - t : (t > last ? t - last : 0)
            return (line.intercept + line.slope * t, min(1.0, FineAligner.defaultSearch + slopeError * distance))
        }
        return (predicted, predicted.map { ($0.lag + shift, $0.search) })
    }

    private static func read(_ stream: AnalysisStream) throws(MixdownError) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(Int(stream.expectedSamples))
        while let chunk = try stream.next() { out.append(contentsOf: chunk) }
        return out
    }
}

private extension Int64 {
    func floorMultiple(of m: Int64) -> Int64 {
        let r = self % m
        return r < 0 ? self - r - m : self - r
    }
}
