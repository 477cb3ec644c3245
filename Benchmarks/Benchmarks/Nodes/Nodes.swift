// Nodes in memory (no disk): frames per second of each stage, and zero allocations in
// the steady-state render loop (asserted by the mallocCountTotal threshold).
// Throughput is in 4096-frame blocks per second.
import Benchmark
import Mixdown

let blockFrames = 4096
let stereo = AudioFormat(sampleRate: 48_000, channelCount: 2)

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000,
        thresholds: [.mallocCountTotal: .init(absolute: [.p100: 0])]
    )

    Benchmark("GainAutomation ramp stereo") { b in
        var automation = VolumeAutomation()
        try automation.setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(start: .zero, duration: MediaTime(seconds: 1_000_000)))
        let node = GainAutomation(input: Silence(format: stereo, length: nil), envelope: try automation.envelope(sampleRate: 48_000))
        try node.prepare(maximumFrames: blockFrames)
        let buffer = AudioBuffer(format: stereo, capacity: blockFrames)
        b.startMeasurement()
        for _ in b.scaledIterations { blackHole(try node.render(into: buffer, frames: blockFrames)) }
    }

    Benchmark("ChannelMapper stereo to mono") { b in
        let node = try ChannelMapper(input: Silence(format: stereo, length: nil), channelCount: 1)
        try node.prepare(maximumFrames: blockFrames)
        let buffer = AudioBuffer(channelCount: 1, capacity: blockFrames)
        b.startMeasurement()
        for _ in b.scaledIterations { blackHole(try node.render(into: buffer, frames: blockFrames)) }
    }

    Benchmark("TestSignal stereo (3 tones)") { b in
        let node = TestSignal(format: stereo, length: Int64.max / 2)
        try node.prepare(maximumFrames: blockFrames)
        let buffer = AudioBuffer(format: stereo, capacity: blockFrames)
        b.startMeasurement()
        for _ in b.scaledIterations { blackHole(try node.render(into: buffer, frames: blockFrames)) }
    }
}
