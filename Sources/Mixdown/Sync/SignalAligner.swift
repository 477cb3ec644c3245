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

    /// Places each excerpt in REF. The stretches of REF to search (each excerpt's ±span)
    /// are merged where they overlap and streamed once each, in blocks of up to 2^18
    /// samples (about 2 minutes) that every excerpt searching there shares: memory stays
    /// the same whether the search spans a minute or the whole of a long REF.
    func measure(cancellation: CancellationToken?) throws(MixdownError) -> [Excerpt] {
        let decimation = AnalysisStream.factor(grid.sampleRate, decimation: grid.decimation * Self.factor)
        let step = Int64(decimation)
        let coarseRate = Double(grid.sampleRate) / Double(decimation)
        let recRate = Double(recording.info.sampleRate), refRate = Double(reference.info.sampleRate)
        struct Pending { let t0: Double; let t1: Double; let lo: Int64; let hi: Int64; let search: PhaseTransform.BlockSearch
            var best: [(value: Double, lag: Double, index: Int64)] = [] }
        var pending: [Pending] = []
        for start in excerptStarts() {
            if cancellation?.isCancelled == true { throw .cancelled }
            let f0 = Int64((start * recRate).rounded(.down))
            let f1 = min(recording.info.frames, f0 + Int64(Self.excerptSeconds * recRate))
            guard f1 - f0 > Int64(recRate) else { continue }
            let excerpt = try Self.read(AnalysisStream(path: recording.path, rate: grid.sampleRate, decimation: decimation, range: f0..<f1))
            let t0 = Double(f0) / recRate, t1 = Double(f1) / recRate
            let span = maxOffset + maxDrift * t1 + 0.5
            // Where the excerpt's first sample may land, in REF frames on a grid of `step`.
            let lo = max(Int64(((t0 - span) * refRate).rounded(.down)), -Int64(excerpt.count) * step / 2).floorMultiple(of: step)
            let hi = min(Int64(((t0 + span) * refRate).rounded(.up)), reference.info.frames)
            guard hi > lo else { continue }
            // Blocks of 2^18, or less where the whole stretch fits in a smaller one.
            let stretch = Int((hi - lo) / step) + excerpt.count
            let size = max((2 * excerpt.count).nextPowerOfTwo, min(1 << 18, stretch.nextPowerOfTwo))
            pending.append(Pending(t0: t0, t1: t1, lo: lo, hi: hi,
                                   search: PhaseTransform.BlockSearch(excerpt: excerpt, size: size, lowestFrequency: 20 / coarseRate)))
        }
        // Merged stretches of REF: [from, to) in REF frames, and the excerpts searching them.
        var stretches: [(from: Int64, to: Int64, members: [Int])] = []
        for k in pending.indices.sorted(by: { pending[$0].lo < pending[$1].lo }) {
            let to = pending[k].hi + Int64(pending[k].search.excerptLength) * step
            if let last = stretches.last, pending[k].lo <= last.to, pending[k].search.size == pending[last.members[0]].search.size {
                stretches[stretches.count - 1].to = max(last.to, to)
                stretches[stretches.count - 1].members.append(k)
            } else {
                stretches.append((pending[k].lo, to, [k]))
            }
        }
        let exclusion = Int64(Self.rivalExclusion * refRate)
        for stretch in stretches {
            let size = pending[stretch.members[0]].search.size
            let table = pending[stretch.members[0]].search.twiddles
            let maxLength = stretch.members.map { pending[$0].search.excerptLength }.max()!
            let hop = size - maxLength + 1
            // REF at the coarse rate over the stretch, zeros before its start and after its end.
            let a = max(0, stretch.from), b = min(reference.info.frames, stretch.to)
            guard b - a > step else { continue }
            let stream = try AnalysisStream(path: reference.path, rate: grid.sampleRate, decimation: decimation, range: a..<b)
            var buffer = [Float](repeating: 0, count: Int((a - stretch.from) / step))
            var bufferStart: Int64 = 0          // coarse sample index of buffer[0] from stretch.from
            var ended = false
            var blockStart: Int64 = 0
            let lastLag = stretch.members.map { pending[$0].hi }.max()!
            while stretch.from + blockStart * step <= lastLag {
                if cancellation?.isCancelled == true { throw .cancelled }
                while !ended && Int64(buffer.count) + bufferStart < blockStart + Int64(size) {
                    if let chunk = try stream.next() { buffer.append(contentsOf: chunk) } else { ended = true }
                }
                let offset = Int(blockStart - bufferStart)
                let block = buffer[min(buffer.count, offset)...]
                let x = PhaseTransform.BlockSearch.spectrum(of: block, size: size, table: table)
                for k in stretch.members {
                    let c = pending[k].search.correlate(x)
                    // Lag l of this block: the excerpt's first sample at REF frame stretch.from + (blockStart + l) · step.
                    var candidates: [(value: Double, lag: Double, index: Int64)] = []
                    let usable = min(hop, c.count)
                    guard let m = (0..<usable).max(by: { c[$0] < c[$1] }) else { continue }
                    for peak in [m, Self.runnerUp(c, count: usable, excluding: m, within: Int(exclusion / step))].compactMap({ $0 }) {
                        let frame = stretch.from + (blockStart + Int64(peak)) * step
                        guard frame >= pending[k].lo && frame <= pending[k].hi else { continue }
                        var fraction = 0.0
                        if peak > 0 && peak < c.count - 1 {
                            let d = c[peak - 1] - 2 * c[peak] + c[peak + 1]
                            if d < 0 { fraction = 0.5 * (c[peak - 1] - c[peak + 1]) / d }
                        }
                        candidates.append((c[peak], (Double(frame) + fraction * Double(step)) / refRate - pending[k].t0, frame))
                    }
                    pending[k].best = Self.topTwo(pending[k].best + candidates, exclusion: exclusion)
                }
                blockStart += Int64(hop)
                // Drop what no later block reads.
                let drop = min(buffer.count, Int(blockStart - bufferStart))
                if drop > 1 << 16 { buffer.removeFirst(drop); bufferStart += Int64(drop) }
            }
        }
        return pending.compactMap { p in
            guard let best = p.best.first else { return nil }
            let rival = p.best.count > 1 ? p.best[1] : (value: 0.0, lag: best.lag, index: best.index)
            // The peak is the excerpt's mean lag: its lag at its centre.
            return Excerpt(time: (p.t0 + p.t1) / 2, lag: best.lag,
                           peak: PhaseTransform.Peak(lag: best.lag, value: best.value, runnerUp: rival.value, runnerUpLag: Int(rival.index)),
                           rivalLag: rival.lag)
        }
    }

    /// The best of `c[0..<count]` farther than `within` from `m`.
    static func runnerUp(_ c: [Double], count: Int, excluding m: Int, within: Int) -> Int? {
        var best: Int?
        for i in 0..<count where abs(i - m) > within && (best == nil || c[i] > c[best!]) { best = i }
        return best
    }

    /// The best candidate and the best one farther than `exclusion` frames from it.
    static func topTwo(_ c: [(value: Double, lag: Double, index: Int64)], exclusion: Int64) -> [(value: Double, lag: Double, index: Int64)] {
        guard let first = c.max(by: { $0.value < $1.value }) else { return [] }
        let second = c.filter { abs($0.index - first.index) > exclusion }.max(by: { $0.value < $1.value })
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

extension Int64 {
    func floorMultiple(of m: Int64) -> Int64 {
        let r = self % m
        return r < 0 ? self - r - m : self - r
    }
}
