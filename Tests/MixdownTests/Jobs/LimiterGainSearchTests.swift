import Foundation
import Testing
@testable import Mixdown

/// The limiter's gain search on loudness curves whose answers are known: it lands within
/// its tolerance in few passes, never leaves its bounds, and calls a target no gain reaches
/// unreachable instead of returning a wild gain.
@Suite struct LimiterGainSearchTests {
    /// Runs the search on `curve`, recording every gain it asked for.
    static func search(_ curve: @escaping (Double) -> Double, target: Double, start: Double) throws -> (LimiterGainSearch.Outcome, [Double]) {
        var asked: [Double] = []
        let outcome = try LimiterGainSearch(target: target, start: start).run { (g: Double) throws(MixdownError) -> Double in
            asked.append(g)
            return curve(g)
        }
        return (outcome, asked)
    }

    /// A limiter's curve: loudness rises one for one until the peaks meet the ceiling at
    /// `knee`, then ever more slowly towards `limit` LUFS.
    static func limiterCurve(knee: Double, limit: Double, base: Double = -20) -> (Double) -> Double {
        { g in
            let unlimited = base + g
            let atKnee = base + knee
            guard g > knee else { return unlimited }
            let room = limit - atKnee
            return atKnee + room * (1 - exp(-(g - knee) / room))
        }
    }

    @Test(arguments: [-20.0, -16, -13, -11.5])
    func aLimitersCurveIsSolvedWithinTolerance(target: Double) throws {
        let curve = Self.limiterCurve(knee: 4, limit: -10)
        let (o, asked) = try Self.search(curve, target: target, start: target + 20)
        #expect(o.reachable)
        #expect(abs(o.reached - target) <= 0.05, "\(o)")
        #expect(abs(curve(o.gain) - o.reached) < 1e-12)
        #expect(asked.count == o.passes && o.passes <= 8, "\(asked)")
        #expect(asked.allSatisfy { $0 >= target + 20 - 1e-9 && $0 <= target + 20 + 24 }, "\(asked)")
    }

    @Test func aTargetPastWhatTheLimiterReachesIsUnreachable() throws {
        let curve = Self.limiterCurve(knee: 4, limit: -10)
        let (o, asked) = try Self.search(curve, target: -9, start: 11)
        #expect(!o.reachable)
        #expect(o.reached < -10 && o.reached > -10.5, "\(o)")
        #expect(asked.max()! <= 11 + 24 + 1e-9, "\(asked)")
        #expect(o.gain == asked.max()!)
    }

    /// Loudness that dips as the gain rises (blocks flipping across the relative gate): the
    /// bracket holds the search, and it ends on the closest pass.
    @Test func aCurveThatIsNotMonotoneStaysInItsBracket() throws {
        let curve: (Double) -> Double = { g in -20 + 0.8 * g + 0.4 * sin(3 * g) }
        let (o, asked) = try Self.search(curve, target: -15, start: 5)
        #expect(abs(o.reached - -15) <= 0.05 || o.passes == 8, "\(o)")
        #expect(asked.allSatisfy { $0 >= 5 - 24 && $0 <= 5 + 24 })
        #expect(o.reachable)
    }

    /// When the limiter's gating makes the first pass louder than the target, the search
    /// steps down by the miss and does not run away.
    @Test func aFirstPassOverTheTargetStepsDown() throws {
        let (o, asked) = try Self.search({ g in -14 + 0.9 * (g - 6) }, target: -15, start: 6)
        #expect(abs(o.reached - -15) <= 0.05)
        #expect(asked.allSatisfy { $0 <= 6 && $0 >= 6 - 24 }, "\(asked)")
    }

    @Test func aSilentPassEndsTheSearch() throws {
        let (o, asked) = try Self.search({ _ in -.infinity }, target: -15, start: 5)
        #expect(asked == [5])
        #expect(!o.reachable && o.reached == -.infinity)
    }
}
