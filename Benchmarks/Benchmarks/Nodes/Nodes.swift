// Nodes in memory (no disk): frames per second of each stage, and zero allocations in
// the steady-state render loop (asserted by the mallocCountTotal threshold).
// Throughput is in 4096-frame blocks per second.
import Benchmark
import Foundation
import Mixdown
import MixdownTools

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

    let drift = StretchRatio(10_001_309, 10_000_000)
    let endless = Int64(1) << 40
    func tone() -> AudioNode {
        TestSignal(format: stereo, length: endless, tones: [.init(hz: 440, amplitude: 0.3)])
    }
    /// Renders `node` block by block; the source is a constant buffer so the stage itself is timed.
    func measure(_ b: Benchmark, _ node: AudioNode) throws {
        try node.prepare(maximumFrames: blockFrames)
        let buffer = AudioBuffer(format: node.format, capacity: blockFrames)
        b.startMeasurement()
        for _ in b.scaledIterations { blackHole(try node.render(into: buffer, frames: blockFrames)) }
    }
    for quality in ResamplerQuality.allCases {
        for threads in [1, 2] {
            Benchmark("Resampler varispeed \(quality) stereo, \(threads) thread(s)") { b in
                try measure(b, try Resampler(input: Silence(format: stereo, length: endless), ratio: drift,
                                             quality: quality, threads: threads))
            }
        }
        Benchmark("LibsamplerateResampler varispeed \(quality) stereo") { b in
            try measure(b, try LibsamplerateResampler(input: Silence(format: stereo, length: endless), ratio: drift, quality: quality))
        }
    }
    Benchmark("WSOLAStretch stereo") { b in
        try measure(b, try WSOLAStretch(input: Silence(format: stereo, length: endless), ratio: drift))
    }
    _ = tone
    for threads in [1, 2] {
        Benchmark("Mixer 8 stereo inputs, a ramp and a held gain each, \(threads) thread(s)") { b in
            var inputs: [Mixer.Input] = []
            for i in 0..<8 {
                var automation = VolumeAutomation()
                try automation.setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(start: MediaTime(seconds: Int64(i)), duration: MediaTime(seconds: 1_000_000)))
                inputs.append(Mixer.Input(node: Silence(format: stereo, length: nil), envelope: try automation.envelope(sampleRate: 48_000)))
            }
            try measure(b, Mixer(format: stereo, inputs: inputs, length: endless, threads: threads))
        }
    }
    // Every rate conversion the resampler issue names, one thread (frames counted at the output).
    for c in ThroughputBench.rateConversions {
        Benchmark("Resampler \(c.name) stereo, best, 1 thread") { b in
            try measure(b, try Resampler(input: Silence(format: AudioFormat(sampleRate: c.from, channelCount: 2), length: endless),
                                         ratio: c.ratio, outputRate: c.to))
        }
    }
    Benchmark("LibsamplerateResampler 44.1 -> 48 kHz stereo, best") { b in
        try measure(b, try LibsamplerateResampler(input: Silence(format: AudioFormat(sampleRate: 44_100, channelCount: 2), length: endless),
                                                  ratio: StretchRatio(48_000, 44_100), outputRate: 48_000))
    }
    // A finite input: one block per iteration, and fewer iterations than the input holds,
    // so that every measured block is real work.
    func finite(_ iterations: Int) -> Benchmark.Configuration {
        .init(metrics: [.throughput, .wallClock, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(3),
              maxIterations: iterations, thresholds: [.mallocCountTotal: .init(absolute: [.p100: 0])])
    }
    // Ten minutes of 16-bit stereo, written once, read from the page cache.
    let sourcePath = FileManager.default.temporaryDirectory.appendingPathComponent("mixdown-bench-source.wav").path
    var sourceFile = SignalFile(output: sourcePath, duration: MediaTime(seconds: 600))
    sourceFile.overwrite = true
    // Rubber Band needs a finite input (it studies it whole in prepare). The node is made
    // and prepared in the setup hook, outside the measurement, and each iteration renders
    // one block of it: the steady state, not the start-up.
    let minute = Int64(60 * 48_000)
    for engine in [RubberBandStretch.Engine.faster, .finer] {
        let held = Held()
        Benchmark("RubberBandStretch \(engine) stereo, steady state", configuration: finite(Int(minute) / blockFrames - 40),
                  closure: { b in
                      guard let node = held.node, let buffer = held.buffer else { return }
                      for _ in b.scaledIterations { blackHole(try node.render(into: buffer, frames: blockFrames)) }
                  },
                  setup: {
                      let node = try RubberBandStretch(makeInput: { TestSignal(format: stereo, length: minute) }, ratio: drift,
                                                       outputFrames: nil, engine: engine)
                      try node.prepare(maximumFrames: blockFrames)
                      let buffer = AudioBuffer(format: stereo, capacity: blockFrames)
                      // Past the first blocks, where the engine fills its pipeline.
                      for _ in 0..<20 { _ = try node.render(into: buffer, frames: blockFrames) }
                      held.node = node
                      held.buffer = buffer
                  })
    }
    if (try? sourceFile.run()) != nil {
        Benchmark("FileSource 16-bit stereo WAV (page cache)", configuration: finite(6000)) { b in
            try measure(b, try FileSource(path: sourcePath))
        }
    }

    Benchmark("TestSignal stereo (3 tones)") { b in
        let node = TestSignal(format: stereo, length: Int64.max / 2)
        try node.prepare(maximumFrames: blockFrames)
        let buffer = AudioBuffer(format: stereo, capacity: blockFrames)
        b.startMeasurement()
        for _ in b.scaledIterations { blackHole(try node.render(into: buffer, frames: blockFrames)) }
    }
}

/// A node made in a benchmark's setup hook and rendered by its closure.
final class Held: @unchecked Sendable {
    var node: AudioNode?
    var buffer: AudioBuffer?
}
