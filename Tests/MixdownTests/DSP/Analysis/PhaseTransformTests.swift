import Foundation
import Testing
@testable import Mixdown

/// GCC-PHAT finds where an excerpt lies, on material a plain correlation struggles with.
@Suite struct PhaseTransformTests {
    static func noise(_ n: Int, seed: UInt64) -> [Float] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: s >> 11) % 2000) / 1000 - 1
        }
    }

    @Test(arguments: [0, 1, 777, 4000, 9999])
    func anExcerptOfNoiseUnderALoudDroneLandsOnItsSample(at: Int) throws {
        // A drone 30 dB above the noise: a plain correlation sees the drone's period everywhere.
        let n = 2000, lags = 10_000
        let quiet = Self.noise(n + lags - 1, seed: 9).map { $0 * 0.03 }
        let region = quiet.indices.map { quiet[$0] + sin(Float($0) * 0.05) }
        let excerpt = Array(region[at..<(at + n)])
        let c = PhaseTransform.correlate(excerpt, in: region, lags: lags)
        let p = try #require(PhaseTransform.peak(c, exclusion: 50))
        #expect(abs(p.lag - Double(at)) < 0.01)
        // The value scales with the excerpt's share of the transform, not a coefficient;
        // what counts is how far it stands above every other lag.
        #expect(p.value > 3 * p.runnerUp)
    }

    @Test func aRepeatedExcerptHasARunnerUpAsGoodAsThePeak() throws {
        // The region is one 1000-sample phrase played five times: every repeat fits.
        let phrase = Self.noise(1000, seed: 4)
        let region = Array((0..<5).map { _ in phrase }.joined())
        let excerpt = Array(region[1000..<1800])
        let c = PhaseTransform.correlate(excerpt, in: region, lags: region.count - excerpt.count + 1)
        let p = try #require(PhaseTransform.peak(c, exclusion: 100))
        #expect(Int(p.lag.rounded()) % 1000 == 0)
        #expect(p.runnerUpLag % 1000 == 0 && p.runnerUpLag != Int(p.lag.rounded()))
        #expect(p.runnerUp > 0.9 * p.value)
    }
}
