import Foundation
import MixdownKernels

/// A look-ahead true-peak limiter: holds the signal's true peak at or under a ceiling, read
/// finer than BS.1770's meter does (`TruePeakInterpolator.fine`, 8x with 64 taps, so that
/// ffmpeg's ebur128, libebur128 and a 16x reference read the output at or under the
/// ceiling too), and leaves everything else alone.
///
/// The gain is decided per chunk of 32 frames (0.67 ms at 48 kHz). A chunk needs
/// r = min(1, ceiling / its peak), its peak taken over its samples and the oversampled
/// points from the one before it to its last (a chunk whose samples are too low for any
/// point to reach the ceiling is not oversampled). The gain curve is the minimum of r over the
/// next `lookahead` (5 ms), released towards 1 with a time constant of `release` (100 ms)
/// and never faster, then averaged over the look-ahead: so it starts to fall 5 ms before a
/// peak, reaches the peak's r in time, and glides; between chunk boundaries it is a linear
/// ramp. Every value the average takes in a chunk's neighbourhood is at most the chunk's r,
/// so every sample and oversampled point ends at or under the ceiling. The points are held
/// `TruePeakInterpolator.fineAllowance` under it, for meters whose reconstruction reads
/// higher (the gain curve's own modulation adds a few thousandths of a dB).
///
/// The output has exactly the input's frames, in time: the look-ahead is the node's
/// own business, not a delay (it reads ahead of what it hands out).
public final class TruePeakLimiter: AudioNode {
    public var format: AudioFormat { input.format }
    public var length: Int64? { input.length }

    /// Frames per gain decision.
    static let chunk = 32
    private let input: AudioNode
    private let ceiling: Float
    /// Chunks of look-ahead (K): the minimum runs over K + 2 chunks, the average over K + 1.
    private let lookahead: Int
    /// Per-chunk release coefficient: s += alpha (target - s) when the gain rises.
    private let alpha: Double
    private let interpolator = TruePeakInterpolator.fine
    /// Frames the oversampling window reaches either side of a point.
    private var reach: Int { interpolator.taps / 2 }
    private let kernels = mx_kernels_active().pointee

    /// The padded stream: K + 1 chunks of silence, the input, then silence. Frame
    /// `workStart` of it is at index 0 of each channel's `work`; `reach` frames before the
    /// first chunk not yet handed out are kept (the oversampling window reaches back that far).
    private var work: [UnsafeMutablePointer<Float>] = []
    private var workStart = -TruePeakInterpolator.fine.taps / 2
    private var workEnd = 0
    /// r of chunks `requiredBase...`, and the released gain of chunks `smoothedBase...`
    /// (chunk indices of the padded stream; older ones are dropped as the render moves on).
    private var required: [Double] = []
    private var requiredBase = 0
    private var smoothed: [Double] = []
    private var smoothedBase = 0
    private var released = 1.0
    /// Chunks whose gains have been applied.
    private var chunksOut = 0
    private var inputFrames = 0
    private var inputEnded = false
    private var previousGain = 1.0
    private var out: PlanarFIFO!
    private var block: AudioBuffer!
    private var maximumFrames = 0
    /// Where the gain applied is recorded, when a report asks for it.
    private let trace: LimiterGainTrace?

    /// `ceiling` in dBTP (at most 0); `lookahead` and `release` in seconds. `trace`, when
    /// given, records the gain applied to the frames handed out (its rate must be the input's).
    public init(input: AudioNode, ceiling: Double, lookahead: Double = 0.005, release: Double = 0.1,
                trace: LimiterGainTrace? = nil) throws(MixdownError) {
        precondition(trace == nil || trace!.sampleRate == input.format.sampleRate, "a trace at the limiter's rate")
        self.trace = trace
        guard ceiling.isFinite, ceiling <= 0 else {
            throw .invalidParameter(name: "--true-peak", value: "\(ceiling)", reason: "must be a ceiling at or below 0 dBTP")
        }
        self.input = ContractCheck.wrap(input)
        self.ceiling = Float(pow(10, (ceiling - TruePeakInterpolator.fineAllowance) / 20))
        let rate = Double(input.format.sampleRate)
        self.lookahead = max(1, Int((lookahead * rate / Double(Self.chunk)).rounded(.up)))
        alpha = 1 - exp(-Double(Self.chunk) / (release * rate))
    }

    deinit { work.forEach { $0.deallocate() } }

    public func preroll(_ preroll: Preroll) throws(MixdownError) { try input.preroll(preroll) }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        try input.prepare(maximumFrames: maximumFrames)
        self.maximumFrames = maximumFrames
        let c = Self.chunk
        let capacity = reach + maximumFrames + (2 * lookahead + 8) * c + 2 * reach
        work = (0..<format.channelCount).map { _ in
            let w = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
            w.initialize(repeating: 0, count: capacity)
            return w
        }
        // `reach` frames of history and the K + 1 chunks of silence the stream begins with.
        workEnd = (lookahead + 1) * c
        out = PlanarFIFO(channelCount: format.channelCount, capacity: 2 * maximumFrames + (lookahead + 6) * c)
        block = AudioBuffer(format: format, capacity: maximumFrames)
    }

    /// Where the input's frames end in the padded stream.
    private var realEnd: Int { (lookahead + 1) * Self.chunk + inputFrames }
    private var finished: Bool { inputEnded && chunksOut * Self.chunk >= realEnd }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        while out.count < frames && !inputEnded { try pull() }
        assert(!inputEnded || finished, "every chunk is handed out once the input has ended")
        let n = min(frames, out.count)
        out.pop(into: buffer, frames: n)
        return RenderStatus(frames: n, ended: inputEnded && out.count == 0)
    }

    /// Pulls a block of input onto the end of the padded stream, then decides and hands out
    /// every chunk it can (all of them once the input has ended).
    private func pull() throws(MixdownError) {
        compact()
        let status = try input.render(into: block, frames: maximumFrames)
        for c in 0..<format.channelCount {
            (work[c] + (workEnd - workStart)).update(from: block[channel: c], count: status.frames)
        }
        workEnd += status.frames
        inputFrames += status.frames
        if status.ended || status.frames < maximumFrames {
            inputEnded = true
            decide()
            emit()
            compact()
            // Silence after the end: whole chunks, enough for the look-ahead of the last
            // real chunk and the oversampling window's reach.
            let c = Self.chunk
            let padded = ((realEnd + c - 1) / c + lookahead + 2) * c + reach
            for ch in 0..<format.channelCount {
                (work[ch] + (workEnd - workStart)).update(repeating: 0, count: padded - workEnd)
            }
            workEnd = padded
        }
        decide()
        emit()
    }

    /// Moves the kept frames to the start of the work buffers; drops decisions no longer needed.
    private func compact() {
        let keepFrom = chunksOut * Self.chunk - reach
        let shift = keepFrom - workStart
        if shift > 0 {
            for c in 0..<format.channelCount { work[c].update(from: work[c] + shift, count: workEnd - keepFrom) }
            workStart = keepFrom
        }
        let oldR = chunksOut - requiredBase
        if oldR > 4096 {
            required.removeFirst(oldR)
            requiredBase += oldR
        }
        let oldS = chunksOut - lookahead - 1 - smoothedBase
        if oldS > 4096 {
            smoothed.removeFirst(oldS)
            smoothedBase += oldS
        }
    }

    /// r for every chunk whose frames and the `reach` frames after them are in the work buffers.
    private func decide() {
        let c = Self.chunk, reach = reach
        while true {
            let chunkStart = (requiredBase + required.count) * c
            guard chunkStart + c + reach <= workEnd else { break }
            var peak: Float = 0
            for ch in 0..<format.channelCount {
                let w = work[ch] + (chunkStart - workStart)
                // The samples, and the points after frames chunkStart - 1 ... chunkStart + c - 2,
                // unless no point can pass the ceiling (then at most the ceiling: r is 1).
                peak = max(peak, kernels.peak(w, c), interpolator.peak(of: w - reach, frames: c, beating: ceiling, kernels: kernels))
            }
            required.append(peak > ceiling ? Double(ceiling) / Double(peak) : 1)
        }
    }

    /// Applies the gains of every chunk whose look-ahead is decided, into `out`.
    private func emit() {
        let c = Self.chunk, k = lookahead
        let lead = (k + 1) * c
        while chunksOut + k + 1 < requiredBase + required.count {
            let j = chunksOut
            // The smallest r over chunks j ... j + K + 1, approached at once from above and
            // released towards from below never faster than alpha.
            var target = 1.0
            for n in j...(j + k + 1) { target = min(target, required[n - requiredBase]) }
            released = target <= released ? target : released + alpha * (target - released)
            smoothed.append(released)
            // The average over chunks j - K ... j (before the stream: 1).
            var sum = 0.0
            for n in (j - k)...j { sum += n < 0 ? 1 : smoothed[n - smoothedBase] }
            let gain = sum / Double(k + 1)
            // The real input frames of chunk j, on a ramp from the last chunk's gain to this one's.
            let from = max(j * c, lead), to = min((j + 1) * c, realEnd)
            if from < to {
                let step = (gain - previousGain) / Double(c)
                let dst = out.prepareWrite()
                for ch in 0..<format.channelCount {
                    let d = dst[ch]!
                    d.update(from: work[ch] + (from - workStart), count: to - from)
                    kernels.apply_ramp(d, to - from, previousGain, step, Int64(from - j * c + 1))
                }
                out.didWrite(to - from)
                // On a ramp, the lowest gain is at one of its ends.
                let first = previousGain + step * Double(from - j * c + 1), last = previousGain + step * Double(to - j * c)
                trace?.record(Int64(from - lead)..<Int64(to - lead), lowest: min(first, last))
            }
            previousGain = gain
            chunksOut += 1
        }
    }
}
