// Whole renders, file to file, from the page cache: the drift-correction job on 1 hour of
// 48 kHz stereo and an 8-track composition with automation on every track. Reported: wall
// time, x real time (a custom metric) and peak resident memory. A last benchmark pulls a
// prepared 8-track render graph into an open file writer and asserts that the steady-state
// loop of a whole render allocates nothing. Cut lists: loading and rendering 10,000 and
// 100,000 segments of one file (segments per second, peak memory).
import Benchmark
import Foundation
import Mixdown
import MixdownTools

let directory = FileManager.default.temporaryDirectory.appendingPathComponent("mixdown-bench-renders").path
let xRealTime = BenchmarkMetric.custom("x real time", polarity: .prefersLarger, useScalingFactor: false)
let drift = StretchRatio(10_001_309, 10_000_000)

/// A synthesised 16-bit stereo file, written once and reused by later runs.
func input(_ name: String, seconds: Int64, hz: Int) throws -> String {
    let path = directory + "/" + name
    if let info = try? AudioFileInfo.read(path: path), info.frames == seconds * 48_000 { return path }
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    var file = SignalFile(output: path, duration: MediaTime(seconds: seconds))
    file.tones = [TestSignal.Tone(hz: hz, amplitude: 0.3)]
    file.overwrite = true
    _ = try file.run()
    return path
}

/// Eight tracks of `seconds`, each with a fade in and out and a pair of ramps every 30 s;
/// the first ducked under the second, which plays in 280 s pieces.
func composition(seconds: Int64) throws -> (Composition, AudioMix) {
    func t(_ s: Int64) -> MediaTime { MediaTime(seconds: s) }
    var c = Composition()
    var mix = AudioMix()
    for i in 1...8 {
        let asset = try AudioAsset(path: input("track\(i)-\(seconds).wav", seconds: seconds, hz: 100 * i + 40))
        let id = c.addTrack(name: "t\(i)")
        if i == 2 {
            var s: Int64 = 20
            while s + 300 < seconds {
                try c[trackID: id].addSegment(MediaTimeRange(start: t(s), duration: t(280)), of: asset, at: t(s))
                s += 300
            }
        } else {
            try c[trackID: id].addSegment(MediaTimeRange(start: .zero, duration: asset.duration), of: asset, at: .zero)
        }
        try mix[trackID: id].setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(start: .zero, duration: t(10)))
        guard i != 1 else { continue }
        var s: Int64 = 30
        while s + 40 < seconds {
            try mix[trackID: id].setVolumeRamp(from: 1, to: 0.7, timeRange: MediaTimeRange(start: t(s), duration: t(2)))
            try mix[trackID: id].setVolumeRamp(from: 0.7, to: 1, timeRange: MediaTimeRange(start: t(s + 15), duration: t(2)))
            s += 30
        }
        try mix[trackID: id].setVolumeRamp(from: 1, to: 0, timeRange: MediaTimeRange(start: t(seconds - 10), duration: t(10)))
    }
    try mix.duck(1, to: .decibels(-12), whileAudioOn: 2, in: c, rampDown: MediaTime(value: 1, timescale: 2), rampUp: t(1))
    return (c, mix)
}

/// A document that plays `count` pieces of `source` (`frames` long) back to back, each
/// dropping the first tenth of its stretch: what tools/bench/make-cuts writes.
func cutDocument(count: Int, source: String, frames: Int64) throws -> String {
    let path = directory + "/cuts-\(count).json"
    if FileManager.default.fileExists(atPath: path) { return path }
    let span = frames / Int64(count), drop = span / 10
    var at: Int64 = 0
    var segments: [String] = []
    segments.reserveCapacity(count)
    for i in 0..<Int64(count) {
        segments.append("{\"file\": \"\(source)\", \"source\": {\"start\": \"\(i * span + drop)f\", \"duration\": \"\(span - drop)f\"}, \"at\": \"\(at)f\"}")
        at += span - drop
    }
    try "{\"version\": 1, \"output\": {\"sample_rate\": 48000}, \"tracks\": [{\"name\": \"cuts\", \"segments\": [\(segments.joined(separator: ",\n"))]}]}"
        .write(toFile: path, atomically: true, encoding: .utf8)
    return path
}

let segmentsPerSecond = BenchmarkMetric.custom("segments per second", polarity: .prefersLarger, useScalingFactor: false)

let benchmarks: @Sendable () -> Void = {
    let whole = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, xRealTime], scalingFactor: .one,
        maxDuration: .seconds(60), maxIterations: 3, thresholds: [:])

    Benchmark("Drift correction, 1 h 48 kHz stereo 16-bit, R = 1.0001309, varispeed", configuration: whole) { b in
        let path = try input("drift-3600.wav", seconds: 3600, hz: 1000)
        b.startMeasurement()
        for _ in b.scaledIterations {
            var job = FileStretch(input: path, output: directory + "/drift-out.wav", target: .ratio(drift))
            job.algorithm = .varispeed
            job.overwrite = true
            let report = try job.run()
            b.measurement(xRealTime, Int(report.realtimeFactor.rounded()))
        }
    }

    Benchmark("Composition, 8 tracks x 10 min with automation, to 48 kHz stereo 16-bit", configuration: whole) { b in
        let (c, mix) = try composition(seconds: 600)
        b.startMeasurement()
        for _ in b.scaledIterations {
            var job = CompositionRender(composition: c, output: directory + "/mix-out.wav")
            job.audioMix = mix
            job.overwrite = true
            let report = try job.run()
            b.measurement(xRealTime, Int(report.realtimeFactor.rounded()))
        }
    }

    // Issue 18: a transcript editor's cut list. Loading and planning 100,000 segments
    // (what `render --explain` does) and rendering 10,000 and 100,000 of them.
    let cuts = Benchmark.Configuration(
        metrics: [.wallClock, .peakMemoryResident, segmentsPerSecond, xRealTime], scalingFactor: .one,
        maxDuration: .seconds(60), maxIterations: 3, thresholds: [:])
    for count in [10_000, 100_000] {
        Benchmark("Cut list, \(count) segments of a 1 h file - load and plan (--explain)", configuration: cuts) { b in
            let doc = try cutDocument(count: count, source: input("drift-3600.wav", seconds: 3600, hz: 1000), frames: 172_800_000)
            b.startMeasurement()
            for _ in b.scaledIterations {
                let start = ContinuousClock.now
                let plan = try CompositionDocument(contentsOf: doc).render(to: directory + "/cuts-out.wav").plan()
                blackHole(plan.explanation)
                let elapsed = ContinuousClock.now - start
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
                b.measurement(segmentsPerSecond, Int(Double(count) / seconds))
            }
        }
        Benchmark("Cut list, \(count) segments of a 1 h file - render to 16-bit WAV", configuration: cuts) { b in
            let doc = try cutDocument(count: count, source: input("drift-3600.wav", seconds: 3600, hz: 1000), frames: 172_800_000)
            b.startMeasurement()
            for _ in b.scaledIterations {
                var job = try CompositionDocument(contentsOf: doc).render(to: directory + "/cuts-out.wav")
                job.overwrite = true
                let report = try job.run()
                b.measurement(segmentsPerSecond, Int(Double(count) / report.seconds))
                b.measurement(xRealTime, Int(report.realtimeFactor.rounded()))
            }
        }
    }

    // Made and prepared in the setup hook, warmed up by a few blocks (libsndfile allocates
    // its read buffers on a file's first read); each iteration renders and writes one block.
    let blocks = 16_384
    let steady = Steady()
    Benchmark("Whole render steady state: 8-track graph into a file writer (allocations)",
              configuration: .init(metrics: [.throughput, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(10),
                                   maxIterations: 1_500, thresholds: [.mallocCountTotal: .init(absolute: [.p100: 0])]),
              closure: { b in
                  guard let graph = steady.graph, let writer = steady.writer, let buffer = steady.buffer else { return }
                  for _ in b.scaledIterations {
                      let status = try graph.render(into: buffer, frames: blocks)
                      try writer.write(buffer, frames: status.frames)
                  }
              },
              setup: {
                  let (c, mix) = try composition(seconds: 600)
                  var job = CompositionRender(composition: c, output: directory + "/steady.wav")
                  job.audioMix = mix
                  let plan = try job.plan()
                  let graph = try job.makeGraph(plan)
                  try graph.prepare(maximumFrames: blocks)
                  let buffer = AudioBuffer(format: graph.format, capacity: blocks)
                  let writer = try AudioFileWriter(destination: job.output, encoding: plan.encoding, format: plan.format,
                                                   maximumFrames: blocks, overwrite: true)
                  for _ in 0..<4 { try writer.write(buffer, frames: try graph.render(into: buffer, frames: blocks).frames) }
                  steady.graph = graph
                  steady.buffer = buffer
                  steady.writer = writer
              },
              teardown: {
                  steady.writer?.abort()
                  steady.graph = nil
                  steady.writer = nil
              })
}

/// The prepared graph and open writer of the steady-state benchmark.
final class Steady: @unchecked Sendable {
    var graph: AudioNode?
    var buffer: AudioBuffer?
    var writer: AudioFileWriter?
}
