import Foundation
import Testing
@testable import Mixdown

/// `LoudnessTimeline`: the meter's readings over time, as a report draws them. The
/// measurement does not change when the timeline is kept; each segment holds its own peak;
/// the curves follow the tones; a long stream's points keep its loudest readings.
@Suite struct LoudnessTimelineTests {
    typealias Tone = LoudnessMeterTests.Tone

    /// The meter (with a timeline or not) fed `planes` in blocks cycling through `blocks`.
    static func meter(_ planes: [[Float]], blocks: [Int], threads: Int = 1, finePeak: Bool = true, timeline: Bool) throws -> LoudnessMeter {
        let meter = try LoudnessMeter(sampleRate: 48_000, channelCount: planes.count, maximumFrames: 4096, threads: threads,
                                      finePeak: finePeak, timeline: timeline)
        LoudnessMeterTests.feed(meter, planes, blocks: blocks)
        return meter
    }

    /// A quiet tone, a 12 kHz tone whose true peak lies between its samples, a middling one.
    static let steps = LoudnessMeterTests.signal([Tone(dbfs: -30, seconds: 1), Tone(dbfs: -6, seconds: 1, frequency: 12_000, phaseDegrees: 45),
                                                  Tone(dbfs: -20, seconds: 1.23)])

    @Test(arguments: [[1], [64], [4096], [4801, 37, 1, 4096, 512]])
    func theMeasurementIsTheSameWithATimeline(blocks: [Int]) throws {
        for (finePeak, threads) in [(true, 1), (false, 1), (true, 2)] {
            let plain = try Self.meter(Self.steps, blocks: blocks, threads: threads, finePeak: finePeak, timeline: false).measurement
            let kept = try Self.meter(Self.steps, blocks: blocks, threads: threads, finePeak: finePeak, timeline: true)
            #expect(kept.measurement == plain, "blocks \(blocks), fine \(finePeak), threads \(threads)")
            let t = try #require(kept.timeline())
            // The highest point drawn is the measurement's peak, to the bit.
            #expect(t.truePeak.max() == (finePeak ? plain.truePeakFine! : plain.truePeak), "blocks \(blocks), fine \(finePeak)")
        }
    }

    @Test func eachSegmentHoldsItsOwnPeak() throws {
        let meter = try Self.meter(Self.steps, blocks: [4096], timeline: true)
        let m = meter.measurement
        let t = try #require(meter.timeline())
        #expect(t.framesPerPoint == 4800 && t.sampleRate == 48_000)
        // 3.23 s: 32 whole segments and a part, which holds the end.
        #expect(t.truePeak.count == 33 && t.momentary.count == 33)
        // Away from the changes (the reconstruction reaches 32 frames either side).
        for i in 1...8 { #expect(abs(t.truePeak[i] - -30) < 0.05, "segment \(i): \(t.truePeak[i])") }
        // A steady sine's reconstruction peaks at its amplitude; the tone's abrupt start and
        // end overshoot (the stream's true peak lies there, in a segment of a change).
        for i in 11...18 { #expect(abs(t.truePeak[i] - -6) < 0.01, "segment \(i): \(t.truePeak[i])") }
        let highest = try #require(t.truePeak.indices.max { t.truePeak[$0] < t.truePeak[$1] })
        #expect(t.truePeak[highest] == m.truePeakFine! && [10, 19, 20].contains(highest), "segment \(highest)")
        for i in 21...31 { #expect(abs(t.truePeak[i] - -20) < 0.05, "segment \(i): \(t.truePeak[i])") }
        // The 12 kHz tone's samples lie under its reconstruction: a sample peak would read lower.
        #expect(m.samplePeak < m.truePeakFine! - 0.5)
    }

    /// EBU Tech 3342 case 1: 20 s of 1 kHz at -20 dBFS, then at -30 (a stereo 1 kHz tone reads
    /// its level in dBFS as LUFS); loudness range 10 LU.
    @Test func theCurvesFollowTheTones() throws {
        let meter = try Self.meter(LoudnessMeterTests.signal([Tone(dbfs: -20, seconds: 20), Tone(dbfs: -30, seconds: 20)]),
                                   blocks: [4096], timeline: true)
        let m = meter.measurement
        let t = try #require(meter.timeline())
        #expect(t.momentary.count == 400 && t.momentary[0] == nil && t.momentary[2] == nil && t.momentary[3] != nil)
        #expect(t.shortTerm[28] == nil && t.shortTerm[29] != nil)
        for i in 29..<200 { #expect(abs(t.shortTerm[i]! - -20) < 0.05, "point \(i)") }
        for i in 229..<400 { #expect(abs(t.shortTerm[i]! - -30) < 0.05, "point \(i)") }
        for i in 3..<200 { #expect(abs(t.momentary[i]! - -20) < 0.05, "point \(i)") }
        #expect(abs(t.shortTerm.compactMap { $0 }.max()! - m.shortTermMaximum) < 0.01)
        #expect(abs(t.relativeGate! - (m.integrated - 10)) < 1e-9 || t.relativeGate! < m.integrated - 10)
        let high = try #require(t.rangeHigh), low = try #require(t.rangeLow)
        #expect(abs(high - -20) < 0.1 && abs(low - -30) < 0.1)
        #expect(abs(t.rangeHigh! - t.rangeLow! - m.range) < 1e-9)
        #expect(t.absoluteGate == -70)
    }

    /// The JSON a report page embeds reads back as the timeline, to its 0.01 dB (a job's
    /// report stays Codable with its timeline in it).
    @Test func theEncodedTimelineDecodesToItsValues() throws {
        let meter = try Self.meter(LoudnessMeterTests.signal([Tone(dbfs: -20, seconds: 5), Tone(dbfs: -30, seconds: 5)]),
                                   blocks: [4096], timeline: true)
        let t = try #require(meter.timeline())
        let back = try JSONDecoder().decode(LoudnessTimeline.self, from: try JSONEncoder().encode(t))
        #expect(back.framesPerPoint == t.framesPerPoint && back.sampleRate == t.sampleRate && back.absoluteGate == -70)
        #expect(back.momentary.count == t.momentary.count && back.truePeak.count == t.truePeak.count)
        for (a, b) in zip(back.momentary + back.shortTerm, t.momentary + t.shortTerm) {
            #expect((a == nil) == (b == nil) && abs((a ?? 0) - (b ?? 0)) <= 0.005)
        }
        for (a, b) in zip(back.truePeak, t.truePeak) { #expect(abs(a - b) <= 0.005) }
        #expect(abs(back.relativeGate! - t.relativeGate!) <= 0.005 && abs(back.rangeHigh! - t.rangeHigh!) <= 0.005)
    }

    /// 20 s drawn from 10 points: each the loudest reading of its 2 s, so a 0.5 s burst
    /// keeps its level in the curve.
    @Test func aLongStreamIsDrawnFromItsLoudestReadings() throws {
        let meter = try Self.meter(LoudnessMeterTests.signal([Tone(dbfs: -40, seconds: 9), Tone(dbfs: -10, seconds: 0.5), Tone(dbfs: -40, seconds: 10.5)]),
                                   blocks: [4096], timeline: true)
        let every = try #require(meter.timeline())
        let ten = try #require(meter.timeline(points: 10))
        #expect(ten.framesPerPoint == 20 * 4800 && ten.truePeak.count == 10)
        #expect(ten.momentary.compactMap { $0 }.max() == every.momentary.compactMap { $0 }.max())
        #expect(ten.shortTerm.compactMap { $0 }.max() == every.shortTerm.compactMap { $0 }.max())
        #expect(ten.truePeak.max() == every.truePeak.max())
        // The burst's point, and only it, reads it.
        #expect(abs(ten.truePeak[4] - -10) < 0.05 && ten.truePeak.enumerated().allSatisfy { $0.offset == 4 || $0.element < -39 })
        // Fewer points than segments asked for, never more.
        let thousand = try #require(meter.timeline(points: 1000))
        #expect(thousand.truePeak.count == 200)
    }

    @Test func silenceHasNoGateAndNoRange() throws {
        let meter = try Self.meter([[Float](repeating: 0, count: 5 * 48_000)], blocks: [4096], timeline: true)
        let t = try #require(meter.timeline())
        #expect(t.truePeak.allSatisfy { $0 == -.infinity } && t.truePeak.count == 50)
        #expect(t.momentary[3] == -.infinity && t.relativeGate == nil && t.rangeLow == nil && t.rangeHigh == nil)
        let empty = try Self.meter([[]], blocks: [4096], timeline: true)
        let nothing = try #require(empty.timeline())
        #expect(nothing.truePeak.isEmpty)
        let without = try Self.meter([[0.5]], blocks: [1], timeline: false)
        #expect(without.timeline() == nil)
    }
}
