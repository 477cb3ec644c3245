import Foundation
import Testing
@testable import Mixdown

/// The AVAudioMix semantics, evaluated straight from the events in Double: an independent
/// reference for the engine's segment tables and C kernel.
struct ReferenceEnvelope {
    struct Placed { let a: Int64; let b: Int64; let v0: Double; let v1: Double }
    let placed: [Placed]

    init(_ automation: VolumeAutomation, rate: Int) {
        placed = automation.events.map { e in
            switch e {
            case .set(let v, let t):
                let a = t.frames(atRate: rate)
                return Placed(a: a, b: a, v0: Double(v), v1: Double(v))
            case .ramp(let v0, let v1, let r):
                return Placed(a: r.start.frames(atRate: rate), b: r.end.frames(atRate: rate), v0: Double(v0), v1: Double(v1))
            }
        }.sorted { $0.a < $1.a }
    }

    /// Gains for frames 0..<n, walking the events once.
    func gains(_ n: Int) -> [Double] {
        var out = [Double](repeating: 1, count: n)
        var k = -1
        for f in 0..<n {
            while k + 1 < placed.count && placed[k + 1].a <= Int64(f) { k += 1 }
            guard k >= 0 else { continue }
            let e = placed[k]
            if Int64(f) < e.b {
                out[f] = e.v0 + (e.v1 - e.v0) * Double(Int64(f) - e.a) / Double(e.b - e.a)
            } else {
                out[f] = e.v1
            }
        }
        return out
    }
}

@Suite struct VolumeAutomationTests {
    /// 10,000 events, alternating at random between held values and ramps, with times at
    /// several timescales (48 kHz, 96 kHz, 44.1 kHz, 30 kHz), on about a million frames.
    static func randomAutomation(events: Int, seed: UInt64) throws -> (VolumeAutomation, Int) {
        var rng = seed
        func next(_ range: ClosedRange<Int>) -> Int {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            return range.lowerBound + Int((rng >> 33) % UInt64(range.count))
        }
        let scales: [Int32] = [48_000, 96_000, 44_100, 30_000]
        func time(_ frame: Int) -> MediaTime {
            MediaTime(frames: Int64(frame), sampleRate: 48_000).converted(toTimescale: scales[next(0...3)])
        }
        var automation = VolumeAutomation()
        var frame = next(0...50)
        for _ in 0..<events {
            let volume = Float(next(0...2000)) / 1000
            if next(0...1) == 0 {
                try automation.setVolume(volume, at: time(frame))
                frame += next(3...120)
            } else {
                let end = frame + next(3...200)
                try automation.setVolumeRamp(from: volume, to: Float(next(0...2000)) / 1000,
                                             timeRange: MediaTimeRange(start: time(frame), end: time(end)))
                frame = end + next(3...60)
            }
        }
        return (automation, frame + 1000)
    }

    @Test func tenThousandEventsMatchTheDoubleReferenceAtEveryBlockSize() throws {
        let (automation, frames) = try Self.randomAutomation(events: 10_000, seed: 42)
        let reference = ReferenceEnvelope(automation, rate: 48_000).gains(frames)
        let envelope = try automation.envelope(sampleRate: 48_000)
        let tone = sine(997, frames: frames, amplitude: 0.8)
        var first: [[Float]]?
        for sizes in BlockSizes.all {
            let node = GainAutomation(input: ArraySource(planes: [[Float](repeating: 1, count: frames), tone]), envelope: envelope)
            let out = try renderAll(node, blockSizes: sizes)
            #expect(out[0].count == frames)
            var worst = 0.0
            for f in 0..<frames {
                worst = max(worst, abs(Double(out[0][f]) - reference[f]), abs(Double(out[1][f]) - Double(tone[f]) * reference[f]))
            }
            #expect(worst <= 1e-6, "block sizes \(sizes): worst error \(worst)")
            if let first { #expect(first == out, "block sizes \(sizes) changed the output") } else { first = out }
        }
    }

    @Test func volumeIsOneUntilAnEventAndHoldsAfter() throws {
        var a = VolumeAutomation()
        try a.setVolume(0.5, at: MediaTime(seconds: 1))
        let e = try a.envelope(sampleRate: 48_000)
        #expect(e.gain(atFrame: 0) == 1)
        #expect(e.gain(atFrame: 47_999) == 1)
        #expect(e.gain(atFrame: 48_000) == 0.5)
        #expect(e.gain(atFrame: 10_000_000) == 0.5)
        #expect(try VolumeAutomation().envelope(sampleRate: 48_000) == .unity)
    }

    @Test func rampHitsItsEndValuesOnTheExactFrames() throws {
        var a = VolumeAutomation()
        try a.setVolumeRamp(from: 0.2, to: 0.8, timeRange: MediaTimeRange(start: MediaTime(seconds: 2), duration: MediaTime(seconds: 10)))
        let e = try a.envelope(sampleRate: 48_000)
        #expect(e.gain(atFrame: 95_999) == 1)
        #expect(e.gain(atFrame: 96_000) == Double(Float(0.2)))
        #expect(abs(e.gain(atFrame: 96_000 + 240_000) - (Double(Float(0.2)) + Double(Float(0.8))) / 2) < 1e-12)
        #expect(e.gain(atFrame: 576_000) == Double(Float(0.8)))
        #expect(e.gain(atFrame: 576_001) == Double(Float(0.8)))
    }

    @Test func overlappingEventsAreRefusedWithBothNamed() throws {
        var a = VolumeAutomation()
        try a.setVolumeRamp(from: 1, to: 0, timeRange: MediaTimeRange(start: .zero, duration: MediaTime(seconds: 5)))
        try a.setVolume(0.3, at: MediaTime(seconds: 4))
        #expect {
            _ = try a.envelope(sampleRate: 48_000)
        } throws: { error in
            guard case MixdownError.overlappingAutomation(let x, let y) = error else { return false }
            return x.contains("ramp 1.0 -> 0.0") && y.contains("0:00:04.000000")
        }
        var b = VolumeAutomation()
        try b.setVolume(0.3, at: MediaTime(seconds: 4))
        try b.setVolume(0.6, at: MediaTime(value: 8, timescale: 2))
        #expect(throws: MixdownError.self) { try b.envelope(sampleRate: 48_000) }
    }

    @Test func badVolumesAndRangesAreRefused() {
        var a = VolumeAutomation()
        #expect(throws: MixdownError.self) { try a.setVolume(.nan, at: .zero) }
        #expect(throws: MixdownError.self) { try a.setVolume(-0.5, at: .zero) }
        #expect(throws: MixdownError.self) { try a.setVolume(1, at: MediaTime(seconds: -1)) }
        #expect(throws: MixdownError.self) { try a.setVolume(1, at: .invalid) }
        #expect {
            try a.setVolumeRamp(from: 0, to: 1, timeRange: MediaTimeRange(start: MediaTime(seconds: 5), end: MediaTime(seconds: 3)))
        } throws: { error in
            "\(error)".contains("its end 0:00:03.000000 is not after its start 0:00:05.000000")
        }
        #expect(a.events.isEmpty)
    }
}
