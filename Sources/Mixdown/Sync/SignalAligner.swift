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
        /// The GCC-PHAT value at the lag (compared between excerpts of one search).
        let value: Double
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

    /// Places each excerpt in REF. The stretches of REF to search (each excerpt's ±span)
    /// are merged where they overlap and streamed once each, in blocks of up to 2^18
    /// samples (about 2 minutes) that every excerpt searching there shares: memory stays
    /// the same whether the search spans a minute or the whole of a long REF.
    func measure(cancellation: CancellationToken?) throws(MixdownError) -> [Excerpt] {
        let decimation = AnalysisStream.factor(grid.sampleRate, decimation: grid.decimation * Self.factor)
        let coarseRate = Double(grid.sampleRate) / Double(decimation)
        let recRate = Double(recording.info.sampleRate), refRate = Double(reference.info.sampleRate)
        // Times in REF seconds; every stream is read at `coarseRate` whatever its own rate.
        struct Pending { let t0: Double; let t1: Double; let lo: Double; let hi: Double; let search: PhaseTransform.BlockSearch
            var best: [(value: Double, lag: Double, time: Double)] = [] }
        var pending: [Pending] = []
        for start in excerptStarts() {
            if cancellation?.isCancelled == true { throw .cancelled }
            let f0 = Int64((start * recRate).rounded(.down))
            let f1 = min(recording.info.frames, f0 + Int64(Self.excerptSeconds * recRate))
            guard f1 - f0 > Int64(recRate) else { continue }
            let excerpt = try Self.read(AnalysisStream(path: recording.path, rate: grid.sampleRate, decimation: decimation, range: f0..<f1, highPass: grid.highPassHz))
            let t0 = Double(f0) / recRate, t1 = Double(f1) / recRate
            let span = maxOffset + maxDrift * t1 + 0.5
            // Where the excerpt's first sample may land (half of it may hang before REF).
            let lo = max(t0 - span, -(t1 - t0) / 2), hi = min(t0 + span, reference.duration)
            guard hi > lo else { continue }
            // Blocks of 2^18, or less where the whole stretch fits in a smaller one.
            let stretch = Int((hi - lo) * coarseRate) + excerpt.count
            let size = max((2 * excerpt.count).nextPowerOfTwo, min(1 << 18, stretch.nextPowerOfTwo))
            pending.append(Pending(t0: t0, t1: t1, lo: lo, hi: hi,
                                   search: PhaseTransform.BlockSearch(excerpt: excerpt, size: size, lowestFrequency: 20 / coarseRate,
                                                                      twiddles: pending.first { $0.search.size == size }?.search.twiddles)))
        }
        // Merged stretches of REF, in seconds, and the excerpts searching them.
        var stretches: [(from: Double, to: Double, members: [Int])] = []
        for k in pending.indices.sorted(by: { pending[$0].lo < pending[$1].lo }) {
            let to = pending[k].hi + (pending[k].t1 - pending[k].t0)
            if let last = stretches.last, pending[k].lo <= last.to, pending[k].search.size == pending[last.members[0]].search.size {
                stretches[stretches.count - 1].to = max(last.to, to)
                stretches[stretches.count - 1].members.append(k)
            } else {
                stretches.append((pending[k].lo, to, [k]))
            }
        }
        let exclusion = Int(Self.rivalExclusion * coarseRate)
        for stretch in stretches {
            let size = pending[stretch.members[0]].search.size
            let table = pending[stretch.members[0]].search.twiddles
            let maxLength = stretch.members.map { pending[$0].search.excerptLength }.max()!
            let hop = size - maxLength + 1
            // REF over the stretch; zeros before REF's start.
            let a = max(0, Int64((stretch.from * refRate).rounded(.down)))
            let b = min(reference.info.frames, Int64((stretch.to * refRate).rounded(.up)))
            guard b - a > Int64(refRate) / 10 else { continue }
            let stream = try AnalysisStream(path: reference.path, rate: grid.sampleRate, decimation: decimation, range: a..<b, highPass: grid.highPassHz)
            let pad = a == 0 && stretch.from < 0 ? Int((-stretch.from * coarseRate).rounded(.up)) : 0
            // REF time of buffer sample 0.
            let origin = Double(a) / refRate - Double(pad) / coarseRate
            var buffer = [Float](repeating: 0, count: pad)
            var bufferStart = 0                 // sample index (from origin) of buffer[0]
            var ended = false
            var blockStart = 0
            let lastLag = stretch.members.map { pending[$0].hi }.max()!
            while origin + Double(blockStart) / coarseRate <= lastLag {
                if cancellation?.isCancelled == true { throw .cancelled }
                while !ended && buffer.count + bufferStart < blockStart + size {
                    if let chunk = try stream.next() { buffer.append(contentsOf: chunk) } else { ended = true }
                }
                let block = buffer[min(buffer.count, blockStart - bufferStart)...]
                let x = PhaseTransform.BlockSearch.spectrum(of: block, size: size, table: table)
                for k in stretch.members {
                    // |correlation|: a recording of inverted polarity peaks as clearly, negative.
                    var c = pending[k].search.correlate(x)
                    for l in c.indices { c[l] = abs(c[l]) }
                    let usable = min(hop, c.count)
                    guard let m = (0..<usable).max(by: { c[$0] < c[$1] }) else { continue }
                    var candidates: [(value: Double, lag: Double, time: Double)] = []
                    for peak in [m, Self.runnerUp(c, count: usable, excluding: m, within: exclusion)].compactMap({ $0 }) {
                        var fraction = 0.0
                        if peak > 0 && peak < c.count - 1 {
                            let d = c[peak - 1] - 2 * c[peak] + c[peak + 1]
                            if d < 0 { fraction = 0.5 * (c[peak - 1] - c[peak + 1]) / d }
                        }
                        // The REF time where the excerpt's first sample lands.
                        let time = origin + (Double(blockStart + peak) + fraction) / coarseRate
                        guard time >= pending[k].lo && time <= pending[k].hi else { continue }
                        candidates.append((c[peak], time - pending[k].t0, time))
                    }
                    pending[k].best = Self.topTwo(pending[k].best + candidates, exclusion: Self.rivalExclusion)
                }
                blockStart += hop
                // Drop what no later block reads.
                let drop = min(buffer.count, blockStart - bufferStart)
                if drop > 1 << 16 { buffer.removeFirst(drop); bufferStart += drop }
            }
        }
        return pending.compactMap { p in
            guard let best = p.best.first else { return nil }
            let rival = p.best.count > 1 ? p.best[1] : best
            // The peak is the excerpt's mean lag: its lag at its centre.
            return Excerpt(time: (p.t0 + p.t1) / 2, lag: best.lag, value: best.value, rivalLag: rival.lag)
        }
    }

    /// The best of `c[0..<count]` farther than `within` from `m`.
    static func runnerUp(_ c: [Double], count: Int, excluding m: Int, within: Int) -> Int? {
        var best: Int?
        for i in 0..<count where abs(i - m) > within && (best == nil || c[i] > c[best!]) { best = i }
        return best
    }

    /// The best candidate and the best one farther than `exclusion` seconds from it.
    static func topTwo(_ c: [(value: Double, lag: Double, time: Double)], exclusion: Double) -> [(value: Double, lag: Double, time: Double)] {
        guard let first = c.max(by: { $0.value < $1.value }) else { return [] }
        let second = c.filter { abs($0.time - first.time) > exclusion }.max(by: { $0.value < $1.value })
        return [first] + (second.map { [$0] } ?? [])
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
            let score = Double(members.count) * 1000 + members.reduce(0) { $0 + excerpts[$1].value }
            if score > best.score { best = (members, score) }
        }
        let points = best.members.map { (excerpts[$0].time, excerpts[$0].lag) }
        let first = points.map(\.0).min()!, last = points.map(\.0).max()!
        let line = Fit.leastSquares(points) ?? (slope: 0, intercept: points[0].1)
        // The slope is known to about 2 ms over the excerpts' span; outside it the
        // prediction can be off by that slope error times the distance.
        let slopeError = last > first ? min(maxDrift, 0.002 / (last - first)) : maxDrift
        let clearest = best.members.max { excerpts[$0].value < excerpts[$1].value }!
        let shift = excerpts[clearest].rivalLag - excerpts[clearest].lag
        let predicted = times.map { t -> (lag: Double, search: Double) in
            let distance = t < first ? first - t : (t > last ? t - last : 0)
            // At most ±0.25 s (the envelope strategy's span once it tracks a line): a wider
            // fine search costs more than it finds.
            return (line.intercept + line.slope * t, min(0.25, FineAligner.defaultSearch + slopeError * distance))
        }
        return (predicted, predicted.map { ($0.lag + shift, $0.search) })
    }

    static func read(_ stream: AnalysisStream) throws(MixdownError) -> [Float] {
        var out: [Float] = []
        out.reserveCapacity(Int(stream.expectedSamples))
        while let chunk = try stream.next() { out.append(contentsOf: chunk) }
        return out
    }
}

extension Int64 {
    func floorMultiple(of m: Int64) -> Int64 {
        let r = self % m
        return r < 0 ? self - r - m : self - r
    }
}
