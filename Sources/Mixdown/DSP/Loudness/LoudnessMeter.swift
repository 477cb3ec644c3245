import Foundation
import MixdownKernels

/// Measures a stream's loudness (EBU R128) and peaks as it is fed, block after block: a
/// sink any render can feed (`add`), and whose `measurement` is ready at the end.
///
/// The hot loops are C kernels: K-weighting in double precision and the 4x true-peak
/// oversampling, both SIMD. With `threads` 2 the peaks are measured on a helper thread
/// while the calling thread K-weights the same block. Memory: one double per 100 ms of
/// stream (the segments' energies, so the gating is exact, not a histogram), and buffers
/// of `maximumFrames` per channel.
///
/// Not thread-safe: feed it from one thread. The caller owns the buffers it passes; the
/// meter keeps no pointer to them after `add` returns.
public final class LoudnessMeter {
    public let sampleRate: Int
    public let channelCount: Int
    /// Frames of a 100 ms segment: sampleRate / 10, rounded half up (4800 at 48 kHz, 4410
    /// at 44.1 kHz). Blocks of 400 ms and 3 s are 4 and 30 segments.
    public let segmentFrames: Int
    /// The largest block `add` measures at once; longer ones are measured in pieces.
    public let maximumFrames: Int

    private let kernels = mx_kernels_active().pointee
    private let coefficients: [Double]
    private let weights: [Double]
    private let interpolator: TruePeakInterpolator
    /// Per channel: the shelf's and the high pass's two states.
    private let state: UnsafeMutablePointer<Double>
    /// Per channel: squared K-weighted samples of the current segment.
    private let energy: UnsafeMutablePointer<Double>
    private var framesInSegment = 0
    private var segments: [Double] = []
    private var frames: Int64 = 0

    /// Per channel: the last taps - 1 samples, then the block (the interpolator's window).
    private let window: [UnsafeMutablePointer<Float>]
    private var samplePeaks: [Float]
    private var interpolatedPeaks: [Float]
    private var helper: HelperThread?
    /// The block the helper measures the peaks of (set before each start).
    private var pending: (channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames: Int)?
    private var finished: LoudnessMeasurement?

    /// `threads` 1 or 2 (the peaks on a second core); `maximumFrames` > 0.
    public init(sampleRate: Int, channelCount: Int, maximumFrames: Int = 16_384, threads: Int = 1) throws(MixdownError) {
        guard sampleRate >= 8000 && sampleRate <= 768_000 else {
            throw .invalidParameter(name: "sample rate", value: "\(sampleRate)", reason: "a loudness meter needs 8000 to 768000 Hz")
        }
        guard channelCount > 0 else { throw .invalidParameter(name: "channels", value: "\(channelCount)", reason: "must be at least 1") }
        precondition(maximumFrames > 0)
        self.sampleRate = sampleRate
        self.channelCount = channelCount
        self.maximumFrames = maximumFrames
        segmentFrames = (sampleRate + 5) / 10
        coefficients = KWeighting.coefficients(sampleRate: sampleRate)
        weights = KWeighting.channelWeights(channelCount: channelCount)
        interpolator = TruePeakInterpolator(sampleRate: sampleRate)
        state = .allocate(capacity: 4 * channelCount)
        state.initialize(repeating: 0, count: 4 * channelCount)
        energy = .allocate(capacity: channelCount)
        energy.initialize(repeating: 0, count: channelCount)
        let history = TruePeakInterpolator.taps - 1
        window = (0..<channelCount).map { _ in
            let w = UnsafeMutablePointer<Float>.allocate(capacity: history + maximumFrames)
            w.initialize(repeating: 0, count: history + maximumFrames)
            return w
        }
        samplePeaks = Array(repeating: 0, count: channelCount)
        interpolatedPeaks = Array(repeating: 0, count: channelCount)
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

    /// K-weights a block, closing each 100 ms segment it completes.
    private func filter(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames count: Int) {
        var done = 0
        withUnsafeTemporaryAllocation(of: UnsafePointer<Float>?.self, capacity: channelCount) { from in
            coefficients.withUnsafeBufferPointer { coef in
                while done < count {
                    let n = min(count - done, segmentFrames - framesInSegment)
                    for c in 0..<channelCount { from[c] = UnsafePointer(channels[c] + done) }
                    kernels.kweight(energy, state, from.baseAddress, channelCount, n, coef.baseAddress)
                    done += n
                    framesInSegment += n
                    if framesInSegment == segmentFrames {
                        var sum = 0.0
                        for c in 0..<channelCount {
                            sum += weights[c] * energy[c]
                            energy[c] = 0
                        }
                        segments.append(sum)
                        framesInSegment = 0
                    }
                }
            }
        }
    }

    /// The sample and oversampled peaks of a block: each channel's block is copied after
    /// the last taps - 1 samples of the one before, so the interpolation runs across blocks.
    private func measurePeaks(_ channels: UnsafePointer<UnsafeMutablePointer<Float>>, frames count: Int) {
        let history = TruePeakInterpolator.taps - 1
        for c in 0..<channelCount {
            samplePeaks[c] = max(samplePeaks[c], kernels.peak(channels[c], count))
            guard interpolator.phases > 0 else { continue }
            let w = window[c]
            (w + history).update(from: channels[c], count: count)
            interpolatedPeaks[c] = max(interpolatedPeaks[c], interpolator.peak(of: w, frames: count, kernels: kernels))
            w.update(from: w + count, count: history)
        }
    }

    /// The measurement of everything added. The first call ends the stream: the points
    /// between the last samples and the silence after them are measured too (a converter
    /// would reconstruct them), and the segment left incomplete is dropped (a block is
    /// whole or not counted). Later calls return the same value; `add` may not follow.
    public var measurement: LoudnessMeasurement {
        if let finished { return finished }
        if interpolator.phases > 0 {
            // Half a window of silence brings the last samples to the middle of the window.
            let tail = TruePeakInterpolator.taps / 2
            let history = TruePeakInterpolator.taps - 1
            for c in 0..<channelCount {
                let w = window[c]
                (w + history).update(repeating: 0, count: tail)
                interpolatedPeaks[c] = max(interpolatedPeaks[c], interpolator.peak(of: w, frames: tail, kernels: kernels))
            }
        }
        let sample = Double(samplePeaks.max() ?? 0)
        let truePeak = max(sample, Double(interpolatedPeaks.max() ?? 0))
        let m = LoudnessMeasurement(segments: segments, segmentFrames: segmentFrames, truePeak: truePeak,
                                    samplePeak: sample, frames: frames, sampleRate: sampleRate, channelCount: channelCount)
        finished = m
        return m
    }
}
