import Foundation
import Testing
@testable import Mixdown

/// The limiter's gain search on loudness curves whose answers are known: it lands within
/// its tolerance in few passes, never leaves its bounds, and calls a target no gain reaches
/// unreachable instead of returning a wild gain.
@Suite struct LimiterGainSearchTests {
    /// Runs the search on `curve`, recording every gain it asked for.
    static func search(_ curve: @escaping (Double) -> Double, target: Double, start: Double,
                       deepest: Double? = nil) throws -> (LimiterGainSearch.Outcome, [Double]) {
        var asked: [Double] = []
        let outcome = try LimiterGainSearch(target: target, start: start, deepest: deepest ?? start + 24).run { (g: Double) throws(MixdownError) -> Double in
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

    /// The deepest drive is a gain, not a distance from the start: a refused target's
    /// suggestion (its deepest pass, rounded down to 0.1 LU) is reached when asked for,
    /// from its own lower start. Before, the bound moved down with the target, and each
    /// suggestion was refused again about 4.5 LU lower.
    @Test(arguments: [-9.0, -9.8, -10.2, -10.32])
    func aRefusalsSuggestionIsReachedWhenAskedFor(target: Double) throws {
        // The knee at +4 dB: the gain that brings the peaks to the ceiling.
        let curve = Self.limiterCurve(knee: 4, limit: -10.3, base: -20)
        let deepest = 4 + LimiterGainSearch.maximumLimiting
        let (o, asked) = try Self.search(curve, target: target, start: target + 20, deepest: deepest)
        #expect(!o.reachable, "\(o)")
        #expect(o.gain == deepest && asked.contains(deepest), "\(asked)")
        #expect(asked.count <= 5, "the deepest drive is tried by the fourth pass: \(asked)")
        let suggestion = (o.reached * 10).rounded(.down) / 10
        let (again, _) = try Self.search(curve, target: suggestion, start: suggestion + 20, deepest: deepest)
        #expect(again.reachable && abs(again.reached - suggestion) <= 0.05, "asked for \(suggestion): \(again)")
    }

    /// A target a little past the loudest the limiter reaches (0.23 LU) is called
    /// unreachable, not returned as the closest pass 0.23 LU short (which the write's check
    /// then refused with no suggestion).
    @Test func aTargetJustPastTheLoudestIsUnreachable() throws {
        let curve = Self.limiterCurve(knee: 4, limit: -10, base: -20)
        let loudest = curve(28)
        let (o, asked) = try Self.search(curve, target: loudest + 0.23, start: loudest + 0.23 + 20, deepest: 28)
        #expect(!o.reachable && o.gain == 28 && abs(o.reached - loudest) < 1e-12, "\(o) \(asked)")
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
