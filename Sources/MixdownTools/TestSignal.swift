import Mixdown
import Foundation

/// A synthesised recording for demos, tests and benchmarks: a sum of quiet sines plus,
/// optionally, a 20 ms burst of white noise every `markerInterval` frames as a sync
/// marker (the first at `markerInterval`). Deterministic: the same parameters always give
/// the same samples, whatever the block size.
///
/// Phase is exact over any length: with whole-hertz tones, frame n's phase is
/// 2π · ((f · n) mod R) / R, computed in integers, so hour 3 is as clean as second 1.
public final class TestSignal: AudioNode {
    public struct Tone: Sendable, Equatable {
        /// Whole hertz, 0 < hz < rate / 2.
        public var hz: Int
        /// Linear peak amplitude.
        public var amplitude: Float
        public init(hz: Int, amplitude: Float) { self.hz = hz; self.amplitude = amplitude }
    }

    public let format: AudioFormat
    public let length: Int64?
    public let tones: [Tone]
    /// Frames between marker starts, or nil for no markers.
    public let markerInterval: Int64?
    /// Frames each marker lasts (20 ms).
    public let markerLength: Int64
    public let markerAmplitude: Float
    private var position: Int64 = 0

    public static let defaultTones = [Tone(hz: 440, amplitude: 0.1), Tone(hz: 1000, amplitude: 0.05), Tone(hz: 5000, amplitude: 0.02)]

    public init(format: AudioFormat, length: Int64, tones: [Tone] = TestSignal.defaultTones,
                markerInterval: Int64? = nil, markerAmplitude: Float = 0.5) {
        precondition(length >= 0)
        precondition(tones.allSatisfy { $0.hz > 0 && 2 * $0.hz < format.sampleRate }, "tones must lie between 0 Hz and Nyquist")
        precondition(markerInterval.map { $0 > 0 } ?? true)
        self.format = format
        self.length = length
        self.tones = tones
        self.markerInterval = markerInterval
        markerLength = Int64(format.sampleRate) / 50
        self.markerAmplitude = markerAmplitude
    }

    /// The frames at which markers start, within the signal's length.
    public var markerFrames: [Int64] {
        guard let step = markerInterval, let total = length else { return [] }
        return Array(stride(from: step, to: total - markerLength, by: Int(step)))
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {}

    /// The value of channel 0 at frame n (the other channels carry the same tones at 3/4
    /// amplitude, and the same markers).
    @inline(__always) func sample(frame n: Int64, channel: Int) -> Float {
        let rate = Int64(format.sampleRate)
        var x = 0.0
        for t in tones {
            let phase = Double((Int64(t.hz) * n) % rate) / Double(rate)
            x += Double(t.amplitude) * sin(2 * Double.pi * phase)
        }
        if channel > 0 { x *= 0.75 }
        if let step = markerInterval, n >= step, n % step < markerLength {
            x += Double(markerAmplitude) * TestSignal.noise(n)
        }
        return Float(x)
    }

    /// Uniform noise in [-1, 1) from the frame index alone (a 64-bit hash).
    @inline(__always) static func noise(_ n: Int64) -> Double {
        var z = UInt64(bitPattern: n) &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        return Double(z >> 11) / Double(1 << 52) - 1
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let n = Int(min(Int64(frames), (length ?? .max) - position))
        for c in 0..<format.channelCount {
            let out = buffer[channel: c]
            for i in 0..<n { out[i] = sample(frame: position + Int64(i), channel: c) }
        }
        position += Int64(n)
        return RenderStatus(frames: n, ended: length.map { position >= $0 } ?? false)
    }
}
