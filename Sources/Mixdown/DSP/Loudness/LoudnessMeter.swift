import Foundation
import MixdownKernels

/// Measures a stream's loudness (EBU R128) and peaks as it is fed, block after block: a
/// sink any render can feed (`add`), and whose `measurement` is ready at the end.
///
/// The hot loops are C kernels: K-weighting in double precision and the true-peak
/// oversampling, both SIMD. With `threads` 2 the peaks are measured on a helper thread
/// while the calling thread K-weights the same block. Memory: one double per 100 ms of
/// stream (the segments' energies, so the gating is exact, not a histogram), 3000 doubles
/// of 1 ms energies (the sliding windows of the maxima), and buffers of `maximumFrames`
/// per channel.
///
/// The maximum momentary and short-term loudness are read at 1 ms steps (EBU Tech 3341
/// asks for at least 10 per second, and its case 13 needs finer: a 400 ms burst read every
/// 100 ms can be 0.6 dB low). A window of 400 (3000) steps covers exactly 4 (30) segments'
/// frames at any rate, and its energy is recomputed from the segments at each segment's
/// end, so the running sums do not drift.
///
/// Not thread-safe: feed it from one thread. The caller owns the buffers it passes; the
/// meter keeps no pointer to them after `add` returns.
public final class LoudnessMeter {
    public let sampleRate: Int
    public let channelCount: Int
    /// Frames of a 100 ms segment: sampleRate / 10, rounded half up (4800 at 48 kHz, 4410
    /// at 44.1 kHz). Blocks of 400 ms and 3 s are 4 and 30 segments.
    public let segmentFrames: Int
    /// Frames per 100 ms segment at `sampleRate` (rounded half up): the meter's unit of
    /// time, and a report's.
    static func segmentFrames(sampleRate: Int) -> Int { (sampleRate + 5) / 10 }
    /// The largest block `add` measures at once; longer ones are measured in pieces.
    public let maximumFrames: Int

    private let kernels = mx_kernels_active().pointee
    private let coefficients: [Double]
    private let weights: [Double]
    private let interpolator: TruePeakInterpolator
    /// The finer reading (`TruePeakInterpolator.fine`), when asked for.
    private let fine: TruePeakInterpolator?
    /// Per channel: the shelf's and the high pass's two states.
    private let state: UnsafeMutablePointer<Double>
    /// Per channel: squared K-weighted samples of the current segment.
    private let energy: UnsafeMutablePointer<Double>
    private var framesInSegment = 0
    private var segmentSum = 0.0
    private var segments: [Double] = []
    /// 1 ms steps: `ticks` of a segment, the energies of the last 3000 in a ring, the
    /// running sums of the last 400 and 3000, and their largest values so far.
    private static let ticksPerSegment = 100
    private var ticksInSegment = 0
    private var ring = [Double](repeating: 0, count: 3000)
    private var tickCount = 0
    private var momentarySum = 0.0, shortTermSum = 0.0
    private var momentaryPeakSum = 0.0, shortTermPeakSum = 0.0
    private var frames: Int64 = 0

    /// Per channel: the last `history` samples, then the block (the interpolators' window:
    /// taps - 1 of the longer one).
    private let window: [UnsafeMutablePointer<Float>]
    private let history: Int
    private var samplePeaks: [Float]
    private var interpolatedPeaks: [Float]
    private var finePeaks: [Float]
    /// With a timeline: the highest point (`fine`'s reading when measured, else the 4x one,
    /// or a sample when higher) of each 100 ms segment the peaks have reached, and the
    /// frames they have measured.
    private var segmentPeaks: [Float]?
    private var peakFrames: Int64 = 0
    private var helper: HelperThread?
    /// The block the helper measures the peaks of (set before each start).
    private var pending: (channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int)?
    private var finished: LoudnessMeasurement?

    /// The rates the meter measures, in Hz (its filters are designed for each rate).
    public static let measurableRates = 8000...768_000

    /// `threads` 1 or 2 (the peaks on a second core); `maximumFrames` > 0; `finePeak` adds
    /// the 8x reading (`LoudnessMeasurement.truePeakFine`), at about ten times the peak
    /// cost where the signal comes near its peak. `timeline` keeps each 100 ms segment's
    /// peak for `timeline` (4 bytes a segment; the peaks of every segment are then read,
    /// not only those that could beat the loudest so far).
    public init(sampleRate: Int, channelCount: Int, maximumFrames: Int = 16_384, threads: Int = 1,
                finePeak: Bool = false, timeline: Bool = false) throws(MixdownError) {
        guard Self.measurableRates.contains(sampleRate) else {
            throw .invalidParameter(name: "sample rate", value: "\(sampleRate)", reason: "a loudness meter needs 8000 to 768000 Hz")
        }
        guard channelCount > 0 else { throw .invalidParameter(name: "channels", value: "\(channelCount)", reason: "must be at least 1") }
        precondition(maximumFrames > 0)
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.maximumFrames = maximumFrames
        segmentFrames = Self.segmentFrames(sampleRate: sampleRate)
        coefficients = KWeighting.coefficients(sampleRate: sampleRate)
        weights = KWeighting.channelWeights(channelCount: channelCount)
        interpolator = TruePeakInterpolator(sampleRate: sampleRate)
        fine = finePeak ? TruePeakInterpolator.fine : nil
        state = .allocate(capacity: 4 * channelCount)
        state.initialize(repeating: 0, count: 4 * channelCount)
        energy = .allocate(capacity: channelCount)
        energy.initialize(repeating: 0, count: channelCount)
        let history = max(interpolator.taps, fine?.taps ?? 0) - 1
        self.history = history
        window = (0..<channelCount).map { _ in
            // Room for a block, or the half window of silence that ends the stream.
            let capacity = history + max(maximumFrames, (history + 1) / 2)
            let w = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
            w.initialize(repeating: 0, count: capacity)
            return w
        }
        samplePeaks = Array(repeating: 0, count: channelCount)
        interpolatedPeaks = Array(repeating: 0, count: channelCount)
        finePeaks = Array(repeating: 0, count: channelCount)
        if timeline { segmentPeaks = [] }
        if threads > 1 {
            helper = HelperThread(name: "mixdown.loudness") { [unowned self] in
                if let p = self.pending { self.measurePeaks(p.channels, frames: p.frames) }
            }
        }
    }

    deinit {
        helper?.stop()
        state.deallocate()
        energy.deallocate()
        for w in window { w.deallocate() }
    }

    /// The channel-weighted energies of the complete 100 ms segments so far (for tests:
    /// block-for-block comparisons).
    var segmentEnergies: [Double] { segments }

    /// Measures `frames` frames at the start of each of `channels` (`channelCount`
    /// pointers).
    public func add(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames count: Int) {
        precondition(finished == nil, "add after measurement")
        var done = 0
        while done < count {
            let n = min(count - done, maximumFrames)
            withUnsafeTemporaryAllocation(of: UnsafeMutablePointer<Float>.self, capacity: channelCount) { piece in
                for c in 0..<channelCount { piece[c] = channels[c] + done }
                let p = UnsafePointer(piece.baseAddress!)
                if let helper {
                    pending = (p, n)
                    helper.start()
                    filter(p, frames: n)
                    helper.wait()
                    pending = nil
                } else {
                    measurePeaks(p, frames: n)
                    filter(p, frames: n)
                }
            }
            done += n
        }
        frames += Int64(count)
    }

    /// Measures the first `frames` frames of `buffer`.
    public func add(_ buffer: AudioBuffer, frames count: Int) {
        add(UnsafePointer(buffer.channelPointers), frames: count)
    }

    /// K-weights a block 1 ms step by step, closing each 100 ms segment it completes.
    private func filter(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames count: Int) {
        var done = 0
        withUnsafeTemporaryAllocation(of: UnsafePointer<Float>?.self, capacity: channelCount) { from in
            coefficients.withUnsafeBufferPointer { coef in
                while done < count {
                    // Step k of a segment ends at frame (k + 1) * segmentFrames / 100 of it.
                    let tickEnd = (ticksInSegment + 1) * segmentFrames / Self.ticksPerSegment
                    let n = min(count - done, tickEnd - framesInSegment)
                    for c in 0..<channelCount { from[c] = UnsafePointer(channels[c] + done) }
                    kernels.kweight(energy, state, from.baseAddress, channelCount, n, coef.baseAddress)
                    done += n
                    framesInSegment += n
                    if framesInSegment == tickEnd { closeTick() }
                }
            }
        }
    }

    /// Ends a 1 ms step: its weighted energy enters the sliding windows (and the segment).
    private func closeTick() {
        var tick = 0.0
        for c in 0..<channelCount {
            tick += weights[c] * energy[c]
            energy[c] = 0
        }
        let slot = tickCount % ring.count
        momentarySum += tick - (tickCount >= 400 ? ring[(tickCount - 400) % ring.count] : 0)
        shortTermSum += tick - (tickCount >= 3000 ? ring[slot] : 0)
        ring[slot] = tick
        tickCount += 1
        segmentSum += tick
        ticksInSegment += 1
        if ticksInSegment == Self.ticksPerSegment {
            segments.append(segmentSum)
            segmentSum = 0
            ticksInSegment = 0
            framesInSegment = 0
            // The windows' sums again from the segments, exactly.
            if segments.count >= 4 { momentarySum = segments[(segments.count - 4)...].reduce(0, +) }
            if segments.count >= 30 { shortTermSum = segments[(segments.count - 30)...].reduce(0, +) }
        }
        if tickCount >= 400 { momentaryPeakSum = max(momentaryPeakSum, momentarySum) }
        if tickCount >= 3000 { shortTermPeakSum = max(shortTermPeakSum, shortTermSum) }
    }

    /// The sample and oversampled peaks of a block: each channel's block is copied after
    /// the last `history` samples of the one before, so the interpolation runs across blocks.
    private func measurePeaks(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames count: Int) {
        for c in 0..<channelCount {
            let w = window[c]
            (w + history).update(from: channels[c], count: count)
            if segmentPeaks == nil {
                samplePeaks[c] = max(samplePeaks[c], kernels.peak(channels[c], count))
                measureInterpolated(channel: c, from: 0, frames: count)
            } else {
                // Piece by piece within the segments: each segment's own highest point.
                var done = 0
                while done < count {
                    let position = peakFrames + Int64(done)
                    let segment = Int(position / Int64(segmentFrames))
                    let n = min(count - done, segmentFrames - Int(position % Int64(segmentFrames)))
                    let sample = kernels.peak(channels[c] + done, n)
                    samplePeaks[c] = max(samplePeaks[c], sample)
                    notePeak(measureInterpolated(channel: c, from: done, frames: n, beating: max(sample, segmentPeak(segment))),
                             segment: segment)
                    done += n
                }
            }
            w.update(from: w + count, count: history)
        }
        peakFrames += Int64(count)
    }

    /// Segment `segment`'s highest point so far (0 before any).
    private func segmentPeak(_ segment: Int) -> Float {
        segment < segmentPeaks!.count ? segmentPeaks![segment] : 0
    }

    private func notePeak(_ peak: Float, segment: Int) {
        while segmentPeaks!.count <= segment { segmentPeaks!.append(0) }
        segmentPeaks![segment] = max(segmentPeaks![segment], peak)
    }

    /// The in-between points of `frames` windows of channel `c`'s window buffer from window
    /// `offset` of the block, into the channel's peaks. Returns the highest point of the
    /// timeline's reading (`fine`'s when it is measured, else the 4x one) if it beats
    /// `floor`, else `floor`; without a timeline, each reading skips what cannot beat its
    /// own peak so far.
    @discardableResult
    private func measureInterpolated(channel c: Int, from offset: Int, frames count: Int, beating floor: Float = 0) -> Float {
        let w = window[c] + offset
        let timeline = segmentPeaks != nil
        var highest = floor
        if interpolator.pairs > 0 {
            let start = w + (history - (interpolator.taps - 1))
            if timeline && fine == nil {
                highest = interpolator.peak(of: start, frames: count, beating: floor, kernels: kernels)
                interpolatedPeaks[c] = max(interpolatedPeaks[c], highest)
            } else {
                interpolatedPeaks[c] = interpolator.peak(of: start, frames: count, beating: interpolatedPeaks[c], kernels: kernels)
            }
        }
        if let fine {
            let start = w + (history - (fine.taps - 1))
            if timeline {
                highest = fine.peak(of: start, frames: count, beating: floor, kernels: kernels)
                finePeaks[c] = max(finePeaks[c], highest)
            } else {
                finePeaks[c] = fine.peak(of: start, frames: count, beating: finePeaks[c], kernels: kernels)
            }
        }
        return highest
    }

    /// The measurement of everything added. The first call ends the stream: the points
    /// between the last samples and the silence after them are measured too (a converter
    /// would reconstruct them), and the segment left incomplete is dropped (a block is
    /// whole or not counted). Later calls return the same value; `add` may not follow.
    public var measurement: LoudnessMeasurement {
        if let finished { return finished }
        // Half a window of silence brings the last samples to the middle of the window.
        let tail = (history + 1) / 2
        for c in 0..<channelCount {
            (window[c] + history).update(repeating: 0, count: tail)
            if segmentPeaks == nil || peakFrames == 0 {
                measureInterpolated(channel: c, from: 0, frames: tail)
            } else {
                // The points after the last samples belong to the last segment measured.
                let last = max(0, Int((peakFrames - 1) / Int64(segmentFrames)))
                notePeak(measureInterpolated(channel: c, from: 0, frames: tail, beating: segmentPeak(last)), segment: last)
            }
        }
        let sample = Double(samplePeaks.max() ?? 0)
        let truePeak = max(sample, Double(interpolatedPeaks.max() ?? 0))
        let segment = Double(segmentFrames)
        let m = LoudnessMeasurement(segments: segments, segmentFrames: segmentFrames, truePeak: truePeak,
                                    truePeakFine: fine != nil ? max(sample, Double(finePeaks.max() ?? 0)) : nil,
                                    samplePeak: sample,
                                    momentaryMaximum: momentaryPeakSum / (4 * segment), shortTermMaximum: shortTermPeakSum / (30 * segment),
                                    frames: frames, sampleRate: sampleRate, channelCount: channelCount)
        finished = m
        return m
    }

    /// The measurement over time, at most `points` points (each the loudest reading of its
    /// span of segments), when the meter was made with `timeline`; ends the stream as
    /// `measurement` does.
    public func timeline(points: Int = LoudnessTimeline.defaultPoints) -> LoudnessTimeline? {
        let m = measurement
        guard let segmentPeaks else { return nil }
        return LoudnessTimeline(segments: segments, segmentPeaks: segmentPeaks, measurement: m, segmentFrames: segmentFrames,
                                points: points)
    }
}
