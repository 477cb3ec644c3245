import Mixdown
import Foundation

/// A speech-like test recording: syllables of filtered noise (80–300 ms, raised-cosine
/// envelopes, a resonance between 300 Hz and 3 kHz that moves from syllable to syllable,
/// some unfiltered "fricative" noise), in phrases of 3–12 syllables separated by pauses of
/// 0.3–1.5 s. It has what cross-correlation needs to lock on (broadband, never periodic)
/// and what real speech has that defeats it (silences). Deterministic from `seed`: the
/// same parameters give the same samples at any block size. Every channel carries the
/// same signal.
public final class SpeechLikeSignal: AudioNode {
    public let format: AudioFormat
    public let length: Int64?
    public let amplitude: Float
    private var rng: UInt64
    private var position: Int64 = 0
    // The current syllable: frames [start, start + duration), then silence until `next`.
    private var start: Int64 = 0
    private var duration: Int64 = 1
    private var next: Int64 = 0
    private var syllablesLeft = 0
    // Band-pass biquad (RBJ, constant 0 dB peak gain) and its state.
    private var b0 = 0.0, a1 = 0.0, a2 = 0.0
    private var x1 = 0.0, x2 = 0.0, y1 = 0.0, y2 = 0.0

    public init(format: AudioFormat, length: Int64?, seed: UInt64 = 1, amplitude: Float = 0.3) {
        self.format = format
        self.length = length
        self.amplitude = amplitude
        rng = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        // The first syllable starts after a short pause, like a recording does.
        next = Int64(Double(format.sampleRate) * (0.2 + 0.3 * uniform()))
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {}

    /// Uniform in [0, 1), xorshift64*.
    @inline(__always) private func uniform() -> Double {
        rng ^= rng >> 12
        rng ^= rng << 25
        rng ^= rng >> 27
        return Double((rng &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
    }

    private func startSyllable(at frame: Int64) {
        let rate = Double(format.sampleRate)
        if syllablesLeft == 0 { syllablesLeft = 3 + Int(uniform() * 10) }
        syllablesLeft -= 1
        start = frame
        duration = Int64(rate * (0.08 + 0.22 * uniform()))
        let gap = syllablesLeft == 0 ? 0.3 + 1.2 * uniform() : 0.02 + 0.08 * uniform()
        next = start + duration + Int64(rate * gap)
        let f = 300 * pow(10, uniform())           // 300 Hz to 3 kHz, log-uniform
        let w = 2 * Double.pi * min(f, 0.45 * rate) / rate
        let alpha = sin(w) / (2 * 3)               // Q = 3
        b0 = alpha / (1 + alpha)
        a1 = -2 * cos(w) / (1 + alpha)
        a2 = (1 - alpha) / (1 + alpha)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let n = Int(min(Int64(frames), (length ?? .max) - position))
        let out = buffer[channel: 0]
        let amp = Double(amplitude)
        for i in 0..<n {
            let p = position + Int64(i)
            if p >= next { startSyllable(at: p) }
            let x = 2 * uniform() - 1
            let y = b0 * x - b0 * x2 - a1 * y1 - a2 * y2
            x2 = x1; x1 = x; y2 = y1; y1 = y
            var v = 0.0
            if p < start + duration {
                let phase = Double(p - start) / Double(duration)
                v = amp * (0.5 - 0.5 * cos(2 * Double.pi * phase)) * (2.5 * y + 0.15 * x)
            }
            out[i] = Float(v)
        }
        for c in 1..<max(1, format.channelCount) { buffer[channel: c].update(from: out, count: n) }
        position += Int64(n)
        return RenderStatus(frames: n, ended: length.map { position >= $0 } ?? false)
    }
}
