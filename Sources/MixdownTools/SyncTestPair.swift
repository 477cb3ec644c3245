import Mixdown
import Foundation

/// Writes a synthetic pair of recordings of one event, for testing and measuring
/// `DriftEstimator`: a speech-like reference, and a second recording whose clock is
/// offset and drifts against it, through another "microphone" (gain, EQ, noise), at its
/// own rate and channel count. The truth is returned exactly as rendered.
public struct SyncTestPair: Sendable {
    public var reference: String
    public var recording: String
    /// Seconds of reference.
    public var duration: Int64 = 600
    /// REF time at which REC's time 0 lands (seconds; negative: REC starts first).
    public var offsetSeconds = 0.0
    /// REC's clock error: REC's duration × (1 + ppm/1e6) is its duration on REF's clock.
    public var ppm = 0.0
    /// From half-way through REC, this drift instead (a clock that re-synced).
    public var ppmAfterHalf: Double?
    /// REC's gain against REF, dB.
    public var gainDecibels = -6.0
    /// A different microphone: high-pass at 150 Hz and low-pass at 2.5 kHz (one pole each).
    public var equalise = false
    /// White noise added to REC at this signal-to-noise ratio (dB), or none.
    public var snrDecibels: Double?
    public var recordingRate = 48_000
    public var recordingChannels = 1
    public var referenceChannels = 2
    public var seed: UInt64 = 7
    /// Another event altogether for REC (an unrelated recording).
    public var unrelated = false
    /// REC's clock wanders around `ppm` (temperature): rendered in 2-second pieces of
    /// constant ratio whose positions follow the exact integral of the rate.
    public var wander: Wander?
    /// REC paused, once or more: from each pause's REC time `at` (seconds) on, REC lands a
    /// further `gap` seconds later on REF's clock (the gap was not recorded).
    public var pauses: [Pause] = []
    /// The one pause of a recorder that paused once (`pauses`' first).
    public var pause: Pause? {
        get { pauses.first }
        set { pauses = newValue.map { [$0] } ?? [] }
    }

    /// How REC's rate departs from `ppm` over its time τ (seconds).
    public enum Wander: Sendable, Codable, Equatable {
        /// ppm + amplitude · sin(2π τ / period).
        case sinusoid(amplitudePPM: Double, periodSeconds: Double)
        /// ppm + slope · τ / 3600.
        case ramp(ppmPerHour: Double)

        /// ∫₀^τ of the departure, seconds of REF per the rate's ppm: REF time gained by τ.
        func integral(_ tau: Double) -> Double {
            switch self {
            case .sinusoid(let a, let p): a * 1e-6 * p / (2 * .pi) * (1 - cos(2 * .pi * tau / p))
            case .ramp(let k): k * 1e-6 * tau * tau / (2 * 3600)
            }
        }
    }

    public struct Pause: Sendable, Codable, Equatable {
        public var at: Double
        public var gap: Double
        public init(at: Double, gap: Double) { self.at = at; self.gap = gap }
    }

    public init(reference: String, recording: String) {
        self.reference = reference
        self.recording = recording
    }

    /// What was rendered: REC time t (seconds) lands on REF time offset + ratio · t, and
    /// after `change` (REC seconds, when the drift changes) on offset2 + ratio2 · t.
    public struct Truth: Sendable, Codable, Equatable {
        public let offsetSeconds: Double
        public let ratio: Double
        public let change: Double?
        public let offsetAfterChange: Double?
        public let ratioAfterChange: Double?
        public var wander: Wander? = nil
        public var pauses: [Pause] = []

        /// REF's time (seconds) of REC's time `t` (seconds, its own clock), exactly as rendered
        /// (within half a world frame).
        public func referenceSeconds(atRecordingSeconds t: Double) -> Double {
            if let change, t >= change, let o = offsetAfterChange, let r = ratioAfterChange { return o + r * t }
            var ref = offsetSeconds + ratio * t + (wander?.integral(t) ?? 0)
            for p in pauses where t >= p.at { ref += p.gap }
            return ref
        }
    }

    public func run() throws(MixdownError) -> Truth {
        let fs = 48_000
        let margin: Int64 = 20 + Int64(abs(offsetSeconds).rounded(.up))
        let worldPath = recording + ".world.tmp.wav"
        defer { unlink(worldPath) }
        let worldFrames = (duration + 2 * margin) * Int64(fs) * 11 / 10
        let mono = AudioFormat(sampleRate: fs, channelCount: 1)
        try Self.write(SpeechLikeSignal(format: mono, length: worldFrames, seed: seed), to: worldPath, frames: worldFrames)

        // REF: the world from `margin` on.
        let refFrames = duration * Int64(fs)
        let refStart = margin * Int64(fs)
        let ref = try ChannelMapper(input: FileSource(path: worldPath, range: refStart..<(refStart + refFrames)), channelCount: referenceChannels)
        try Self.write(ref, to: reference, frames: refFrames)

        // REC: REC frame j (at 48 kHz) plays world frame s + r·j, in one or two pieces.
        let r1 = 1 + ppm / 1e6
        let recSeconds = (Double(duration) - max(0, offsetSeconds)) / r1
        let recFrames48 = Int64((recSeconds * Double(fs)).rounded(.down))
        let s1 = refStart + Int64((offsetSeconds * Double(fs)).rounded())
        let t0 = Double(s1 - refStart) / Double(fs)
        let rateRatio = Double(recordingRate) / Double(fs)
        var items: [TrackPlayer.Item] = []
        var truth = Truth(offsetSeconds: t0, ratio: r1, change: nil, offsetAfterChange: nil, ratioAfterChange: nil)
        let outFrames = Int64((Double(recFrames48) * rateRatio).rounded(.down))
        let recFormat = AudioFormat(sampleRate: recordingRate, channelCount: 1)
        // An unrelated recording plays another world.
        let recWorld = unrelated ? recording + ".other.tmp.wav" : worldPath
        defer { if unrelated { unlink(recWorld) } }
        if unrelated { try Self.write(SpeechLikeSignal(format: mono, length: worldFrames, seed: seed &+ 1000), to: recWorld, frames: worldFrames) }
        func piece(from s: Int64, inputFrames: Int64, ratio r: Double, frames: Range<Int64>) -> TrackPlayer.Item {
            TrackPlayer.Item(frames: frames) { () throws(MixdownError) -> AudioNode in
                let src = try FileSource(path: recWorld, range: s..<min(worldFrames, s + inputFrames))
                let n = Int64(frames.count)
                return try Resampler(input: src, ratio: StretchRatio(exactly: rateRatio / r), outputRate: recordingRate, outputFrames: n)
            }
        }
        if wander != nil || !pauses.isEmpty {
            truth.wander = wander
            truth.pauses = pauses
            // Pieces of 2 s of REC, each at the mean rate of its stretch; each chain starts
            // `lead` outputs early (dropped) so that no piece begins on the resampler's
            // zero padding, its first input frame rounded to the world's frames.
            let piece = Int64(2 * recordingRate), lead: Int64 = 4096
            var j0: Int64 = 0
            while j0 < outFrames {
                var j1 = min(outFrames, j0 + piece)
                // A piece ends where REC paused.
                for pause in pauses { let p = Int64((pause.at * Double(recordingRate)).rounded()); if j0 < p && p < j1 { j1 = p } }
                let t0 = Double(j0) / Double(recordingRate), t1 = Double(j1) / Double(recordingRate)
                let w0 = truth.referenceSeconds(atRecordingSeconds: t0) * Double(fs) + Double(refStart)
                let w1 = w0 + (truth.referenceSeconds(atRecordingSeconds: t1 - 1e-9) - truth.referenceSeconds(atRecordingSeconds: t0)) * Double(fs)
                let perOutput = (w1 - w0) / Double(j1 - j0)   // world frames per REC frame
                let first = Int64((w0 - Double(lead) * perOutput).rounded())
                let ratio = StretchRatio(exactly: 1 / perOutput)
                let frames = j0..<j1
                let path = recWorld, needed = Int64(Double(j1 - j0 + lead) * perOutput) + 256
                items.append(TrackPlayer.Item(frames: frames, skip: lead) { () throws(MixdownError) -> AudioNode in
                    let src = try FileSource(path: path, range: first..<min(worldFrames, first + needed))
                    return try Resampler(input: src, ratio: ratio, outputRate: recordingRate, outputFrames: Int64(frames.count) + lead)
                })
                j0 = j1
            }
        } else if let ppm2 = ppmAfterHalf {
            let half = outFrames / 2
            let r2 = 1 + ppm2 / 1e6
            // The second piece starts where the first one's world position got to.
            let firstInput = Double(half) / rateRatio * r1
            let s2 = s1 + Int64(firstInput.rounded())
            let changeAt = Double(half) / Double(recordingRate)
            items.append(piece(from: s1, inputFrames: Int64(firstInput) + 64, ratio: r1, frames: 0..<half))
            items.append(piece(from: s2, inputFrames: Int64(Double(outFrames - half) / rateRatio * r2) + 64, ratio: r2, frames: half..<outFrames))
            let t2 = Double(s2 - refStart) / Double(fs)   // REF time at the change
            truth = Truth(offsetSeconds: t0, ratio: r1, change: changeAt, offsetAfterChange: t2 - r2 * changeAt, ratioAfterChange: r2)
        } else {
            items.append(piece(from: s1, inputFrames: Int64(Double(outFrames) / rateRatio * r1) + 64, ratio: r1, frames: 0..<outFrames))
        }
        let player = TrackPlayer(format: recFormat, length: outFrames, items: items, label: "recording")
        var noise: Double?
        if let snr = snrDecibels { noise = try Self.speechRMS(seed: seed, rate: fs) * pow(10, -snr / 20) }
        let coloured = Microphone(input: player, gain: pow(10, gainDecibels / 20), equalise: equalise, noise: noise, seed: seed &+ 99)
        try Self.write(ChannelMapper(input: coloured, channelCount: recordingChannels), to: recording, frames: outFrames)
        return truth
    }

    /// The speech's RMS over a minute, pauses included: the level an SNR is measured from.
    static func speechRMS(seed: UInt64, rate: Int) throws(MixdownError) -> Double {
        let n = 60 * rate
        let probe = SpeechLikeSignal(format: AudioFormat(sampleRate: rate, channelCount: 1), length: Int64(n), seed: seed)
        let buffer = AudioBuffer(channelCount: 1, capacity: n)
        _ = try probe.render(into: buffer, frames: n)
        var power = 0.0
        for i in 0..<n { power += Double(buffer[channel: 0][i]) * Double(buffer[channel: 0][i]) }
        return (power / Double(n)).squareRoot()
    }

    static func write(_ node: AudioNode, to path: String, frames: Int64) throws(MixdownError) {
        var settings = OutputSettings(blockSizes: [16_384])
        settings.type = .wav
        settings.sampleFormat = .s16
        settings.overwrite = true
        let job = try OutputJob(path: path, settings: settings)
        _ = try job.write(node, frames: frames, encoding: job.encoding(frames: frames, channels: node.format.channelCount, natural: nil))
    }
}

/// Gain, a band-limiting EQ and white noise: another microphone.
private final class Microphone: AudioNode {
    let format: AudioFormat
    var length: Int64? { input.length }
    private let input: AudioNode
    private let gain: Float
    private let equalise: Bool
    private let noise: Double?
    private var rng: UInt64
    private var low = 0.0, highIn = 0.0, highOut = 0.0
    private let lowCoefficient: Double, highCoefficient: Double

    init(input: AudioNode, gain: Double, equalise: Bool, noise: Double?, seed: UInt64) {
        self.input = input
        format = input.format
        self.gain = Float(gain)
        self.equalise = equalise
        self.noise = noise
        rng = seed | 1
        let fs = Double(input.format.sampleRate)
        lowCoefficient = 1 - exp(-2 * Double.pi * 2500 / fs)
        highCoefficient = exp(-2 * Double.pi * 150 / fs)
    }

    func prepare(maximumFrames: Int) throws(MixdownError) { try input.prepare(maximumFrames: maximumFrames) }

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let status = try input.render(into: buffer, frames: frames)
        let x = buffer[channel: 0]
        for i in 0..<status.frames {
            var v = Double(x[i])
            if equalise {
                low += lowCoefficient * (v - low)
                let h = highCoefficient * (highOut + low - highIn)
                highIn = low
                highOut = h
                v = h * 1.6
            }
            if let noise {
                rng ^= rng >> 12; rng ^= rng << 25; rng ^= rng >> 27
                let u = Double((rng &* 0x2545_F491_4F6C_DD1D) >> 11) / Double(1 << 53)
                v += noise * 1.7320508 * (2 * u - 1)   // uniform noise of RMS `noise`
            }
            x[i] = Float(v) * gain
        }
        return status
    }
}
