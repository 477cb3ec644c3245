import Mixdown
import Foundation
import MixdownKernels

/// A quick throughput report that needs no file: each stage renders synthesised 48 kHz
/// stereo audio held in memory, in 4096-frame blocks, for about `seconds` of wall time.
/// It is the "how fast is this machine" entry point for people who installed only the
/// command; the Benchmarks package measures the same stages with statistics.
public struct ThroughputBench: Sendable {
    public struct Stage: Sendable, Codable, Equatable {
        public let name: String
        /// Output frames rendered, and the wall time they took.
        public let frames: Int64
        public let seconds: Double
        public let framesPerSecond: Double
        /// Seconds of 48 kHz audio rendered per second of wall time.
        public let realtimeFactor: Double
    }

    /// Wall time to spend on each stage.
    public var secondsPerStage: Double = 1
    public static let format = AudioFormat(sampleRate: 48_000, channelCount: 2)
    static let blockFrames = 4096

    public init(secondsPerStage: Double = 1) { self.secondsPerStage = secondsPerStage }

    /// Runs every stage; `progress` hears each stage's name as it starts.
    public func run(progress: ((String) -> Void)? = nil) throws(MixdownError) -> [Stage] {
        guard secondsPerStage.isFinite, secondsPerStage > 0, secondsPerStage <= 600 else {
            throw .invalidParameter(name: "--seconds", value: "\(secondsPerStage)", reason: "must be above 0 and at most 600")
        }
        // Ten seconds of the test recording, rendered once and then played in a loop.
        let loop = try LoopSource(seconds: 10, format: Self.format)
        let drift = StretchRatio(10_001_309, 10_000_000)
        let threads = min(2, ProcessInfo.processInfo.activeProcessorCount)
        var stages: [(String, () throws(MixdownError) -> AudioNode)] = [
            ("source (memory)", { () throws(MixdownError) -> AudioNode in loop.fresh() }),
            ("gain automation (ramp)", { () throws(MixdownError) -> AudioNode in
                var a = VolumeAutomation()
                try a.setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(start: .zero, duration: MediaTime(seconds: 100_000)))
                return GainAutomation(input: loop.fresh(), envelope: try a.envelope(sampleRate: 48_000))
            }),
            ("channel map (stereo to mono)", { () throws(MixdownError) -> AudioNode in try ChannelMapper(input: loop.fresh(), channelCount: 1) }),
        ]
        for quality in ResamplerQuality.allCases {
            stages.append(("varispeed \(quality.rawValue), 1 thread", { () throws(MixdownError) -> AudioNode in try Resampler(input: loop.fresh(), ratio: drift, quality: quality) }))
        }
        stages.append(("varispeed best, \(threads) threads", { () throws(MixdownError) -> AudioNode in try Resampler(input: loop.fresh(), ratio: drift, threads: threads) }))
        // Rate conversions, one thread, frames counted at the output. The kernel's cost does
        // not depend on the samples: silence will do.
        for c in Self.rateConversions {
            stages.append(("rate conversion \(c.name), 1 thread", { () throws(MixdownError) -> AudioNode in
                try Resampler(input: Silence(format: AudioFormat(sampleRate: c.from, channelCount: 2), length: Int64(1) << 40),
                              ratio: c.ratio, outputRate: c.to)
            }))
        }
        stages.append(("varispeed libsamplerate best", { () throws(MixdownError) -> AudioNode in try LibsamplerateResampler(input: loop.fresh(), ratio: drift) }))
        stages.append(("rate conversion 44.1 -> 48 kHz (libsamplerate best)", { () throws(MixdownError) -> AudioNode in
            let at44k = Silence(format: AudioFormat(sampleRate: 44_100, channelCount: 2), length: Int64(1) << 40)
            return try LibsamplerateResampler(input: at44k, ratio: StretchRatio(48_000, 44_100), outputRate: 48_000)
        }))
        stages.append(("mixer, 8 tracks with ramps, \(threads) threads", { () throws(MixdownError) -> AudioNode in
            var inputs: [Mixer.Input] = []
            for i in 0..<8 {
                var a = VolumeAutomation()
                try a.setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(start: MediaTime(seconds: Int64(i)), duration: MediaTime(seconds: 100_000)))
                inputs.append(Mixer.Input(node: loop.fresh(), envelope: try a.envelope(sampleRate: 48_000)))
            }
            return Mixer(format: Self.format, inputs: inputs, length: Int64(1) << 40, threads: threads)
        }))
        stages.append(("WSOLA", { () throws(MixdownError) -> AudioNode in try WSOLAStretch(input: loop.fresh(), ratio: drift) }))
        #if RubberBand
        stages.append(("Rubber Band R2 (incl. study pass)", { () throws(MixdownError) -> AudioNode in try RubberBandStretch(makeInput: { () throws(MixdownError) in loop.fresh(length: 48_000 * 30) }, ratio: drift, engine: .faster) }))
        #endif

        var results: [Stage] = []
        for (name, make) in stages {
            progress?(name)
            results.append(try measure(name, try make()))
        }
        progress?("drift job (memory)")
        results.append(try measureDriftJob(loop: loop, ratio: drift, threads: threads))
        return results
    }

    /// The rate conversions the issue names: exact rows (160/147, 147/160, 147/320, 1/3) and
    /// a rate change times a drift (a dense table).
    /// The rate conversions the bench and the benchmark suite measure.
    public static let rateConversions: [(name: String, from: Int, to: Int, ratio: StretchRatio)] = [
        ("44.1 -> 48 kHz", 44_100, 48_000, StretchRatio(48_000, 44_100)),
        ("48 -> 44.1 kHz", 48_000, 44_100, StretchRatio(44_100, 48_000)),
        ("96 -> 44.1 kHz", 96_000, 44_100, StretchRatio(44_100, 96_000)),
        ("48 -> 16 kHz", 48_000, 16_000, StretchRatio(16_000, 48_000)),
        ("44.1 -> 48 kHz x 1.0001309", 44_100, 48_000, StretchRatio(48_000 * 10_001_309, 44_100 * 10_000_000)),
    ]

    /// Renders `node` for about `secondsPerStage` (or to its end).
    func measure(_ name: String, _ node: AudioNode) throws(MixdownError) -> Stage {
        let whole = Stopwatch()
        try node.prepare(maximumFrames: Self.blockFrames)
        let buffer = AudioBuffer(format: node.format, capacity: Self.blockFrames)
        var frames: Int64 = 0
        let stage = Stopwatch()
        while true {
            let status = try node.render(into: buffer, frames: Self.blockFrames)
            frames += Int64(status.frames)
            if status.ended || stage.seconds >= secondsPerStage { break }
        }
        // Stages with a study pass count it: it is part of their cost.
        return Self.stage(name, frames, whole.seconds)
    }

    /// The headline job without the disk: stretch by 131 ppm on both cores, then interleave
    /// and convert to 16-bit as the file writer does.
    func measureDriftJob(loop: LoopSource, ratio: StretchRatio, threads: Int) throws(MixdownError) -> Stage {
        let node = try Resampler(input: loop.fresh(), ratio: ratio, threads: threads)
        try node.prepare(maximumFrames: 16_384)
        let buffer = AudioBuffer(format: node.format, capacity: 16_384)
        let interleaved = UnsafeMutablePointer<Float>.allocate(capacity: 2 * 16_384)
        let pcm = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * 16_384)
        defer { interleaved.deallocate(); pcm.deallocate() }
        let k = mx_kernels_active().pointee
        var frames: Int64 = 0
        let stage = Stopwatch()
        while stage.seconds < secondsPerStage {
            let status = try node.render(into: buffer, frames: 16_384)
            k.interleave(interleaved, UnsafePointer(OpaquePointer(buffer.channelPointers)), 2, status.frames)
            k.f32_to_s16(pcm, interleaved, 2 * status.frames)
            frames += Int64(status.frames)
            if status.ended { break }
        }
        return Self.stage("drift job: varispeed + 16-bit encode, \(threads) threads (no disk)", frames, stage.seconds)
    }

    static func stage(_ name: String, _ frames: Int64, _ seconds: Double) -> Stage {
        let fps = seconds > 0 ? Double(frames) / seconds : 0
        return Stage(name: name, frames: frames, seconds: seconds, framesPerSecond: fps, realtimeFactor: fps / Double(format.sampleRate))
    }
}

/// Plays a buffer of the test recording in a loop, for `length` frames (endless by
/// default): a source that costs almost nothing, so a stage's own cost is what is timed.
final class LoopSource: AudioNode {
    let format: AudioFormat
    let length: Int64?
    private let storage: AudioBuffer
    private let loopFrames: Int
    private var position: Int64 = 0

    init(seconds: Int, format: AudioFormat) throws(MixdownError) {
        self.format = format
        loopFrames = seconds * format.sampleRate
        storage = AudioBuffer(format: format, capacity: loopFrames)
        length = 1 << 40
        let signal = TestSignal(format: format, length: Int64(loopFrames), markerInterval: Int64(format.sampleRate))
        try signal.prepare(maximumFrames: loopFrames)
        _ = try signal.render(into: storage, frames: loopFrames)
    }

    private init(sharing other: LoopSource, length: Int64?) {
        format = other.format
        storage = other.storage
        loopFrames = other.loopFrames
        self.length = length
    }

    /// A new source from frame 0 over the same samples.
    func fresh(length: Int64 = 1 << 40) -> LoopSource { LoopSource(sharing: self, length: length) }

    func prepare(maximumFrames: Int) throws(MixdownError) {}

    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let n = Int(min(Int64(frames), (length ?? .max) - position))
        var done = 0
        while done < n {
            let at = Int(position % Int64(loopFrames))
            let chunk = min(n - done, loopFrames - at)
            for c in 0..<format.channelCount { (buffer[channel: c] + done).update(from: storage[channel: c] + at, count: chunk) }
            done += chunk
            position += Int64(chunk)
        }
        return RenderStatus(frames: n, ended: length.map { position >= $0 } ?? false)
    }
}

extension ThroughputBench {
    /// The SIMD path the kernels run on this machine ("avx512", "avx2", "sse2", "neon", "scalar").
    public static var kernelPath: String { String(cString: mx_isa_name(mx_kernels_active_isa())) }
}
