import Foundation
import Testing
@testable import Mixdown

/// The limiter's gain reduction over time: what it records is the gain it applied, read
/// back from the audio itself (output over input, sample by sample), at every block size.
@Suite struct LimiterTimelineTests {
    /// The lowest output / input ratio of each 100 ms segment (4800 frames at 48 kHz), over
    /// the samples loud enough for the ratio to be exact to float rounding; nil for a segment
    /// with none.
    static func appliedGains(input: [[Float]], output: [[Float]], segmentFrames: Int) -> [Float?] {
        let frames = input[0].count
        return stride(from: 0, to: frames, by: segmentFrames).map { start in
            var lowest: Float? = nil
            for ch in input.indices {
                for i in start..<min(start + segmentFrames, frames) where abs(input[ch][i]) > 0.01 {
                    lowest = min(lowest ?? .infinity, output[ch][i] / input[ch][i])
                }
            }
            return lowest
        }
    }

    @Test func theTraceIsTheGainTheAudioShows() throws {
        let planes = TruePeakLimiterTests.signal()
        var reference: LimiterTimeline? = nil
        for blocks in BlockSizes.all {
            let trace = LimiterGainTrace(sampleRate: 48_000)
            let node = try TruePeakLimiter(input: ArraySource(sampleRate: 48_000, planes: planes), ceiling: -1, trace: trace)
            let out = try renderAll(node, blockSizes: blocks)
            #expect(trace.frames == Int64(planes[0].count), "every frame handed out is recorded (\(blocks))")
            #expect(trace.segmentGains.count == 30)
            let applied = Self.appliedGains(input: planes, output: out, segmentFrames: 4800)
            for (s, gain) in applied.enumerated() {
                guard let gain else { continue }
                // The ramp's lowest gain lands on a frame the segment holds; a quiet frame may
                // carry it, so the audio's lowest can only be at or above the trace's.
                #expect(gain >= trace.segmentGains[s] * (1 - 1e-5), "segment \(s): audio \(gain), trace \(trace.segmentGains[s]) (\(blocks))")
                #expect(abs(gain - trace.segmentGains[s]) <= 0.002, "segment \(s): audio \(gain), trace \(trace.segmentGains[s]) (\(blocks))")
            }
            let timeline = trace.timeline()
            if let reference { #expect(timeline == reference, "\(blocks)") } else { reference = timeline }
        }
        // Bursts of 9 kHz at +3 dBFS fill 0.25-0.5 s, 1-1.25 s...: the quiet tone between them is
        // left alone once the 100 ms release has passed, and every burst is cut by at least
        // the 4 dB its peaks stand over the ceiling.
        let t = try #require(reference)
        #expect(t.framesPerPoint == 4800 && t.gainReduction.count == 30)
        let held = -1 - TruePeakInterpolator.fineAllowance
        let burstPeak = 20 * log10(1.4 + 0.1)
        for (s, reduction) in t.gainReduction.enumerated() {
            let inBurst = (s * 4800 / 12_000) % 3 == 1 || ((s * 4800 + 4799) / 12_000) % 3 == 1
            if inBurst { #expect(reduction <= held - burstPeak + 0.5, "segment \(s): \(reduction)") }
        }
        #expect(t.gainReduction[1] == 0 && t.gainReduction[0] == 0, "before the first burst's look-ahead")
        #expect(abs(t.maximumGainReduction - t.gainReduction.min()!) < 1e-12)
        #expect(t.limitedFrames % 4800 == 0 && t.limitedFrames > 0)
    }

    /// A long stream is drawn from at most `points` points, each the deepest of its span.
    @Test func pointsKeepTheDeepestReductionOfTheirSpan() throws {
        let gains: [Float] = [1, 1, 0.5, 1, 1, 1, 0.9, 1, 1, 0.25]
        let t = LimiterTimeline(segmentGains: gains, segmentFrames: 4800, frames: 4800 * 9 + 100, sampleRate: 48_000, points: 4)
        #expect(t.framesPerPoint == 3 * 4800)
        #expect(t.gainReduction.count == 4)
        let expected = [0.5, 1, 0.9, 0.25].map { 20 * log10(Double(Float($0))) }
        for (a, b) in zip(t.gainReduction, expected) { #expect(abs(a - b) < 1e-9, "\(t.gainReduction)") }
        #expect(abs(t.maximumGainReduction - 20 * log10(0.25)) < 1e-9)
        // Three segments under -0.1 dB; the last one holds 100 frames.
        #expect(t.limitedFrames == 4800 * 2 + 100)
        // The JSON reads back, to its 0.01 dB.
        let back = try JSONDecoder().decode(LimiterTimeline.self, from: try JSONEncoder().encode(t))
        #expect(back.framesPerPoint == t.framesPerPoint && back.limitedFrames == t.limitedFrames)
        for (a, b) in zip(back.gainReduction, t.gainReduction) { #expect(abs(a - b) <= 0.005) }
    }
}
