import Testing
@testable import Mixdown

@Suite struct FrameRoundingTests {
    /// Every rule on small quotients, against the rounding written out by hand.
    @Test func eachRuleRoundsAsItsNameSays() {
        let cases: [(Int128, Int128, down: Int128, up: Int128, zero: Int128, away: Int128, even: Int128)] = [
            (7, 2, 3, 4, 3, 4, 4),       // 3.5
            (5, 2, 2, 3, 2, 3, 2),       // 2.5
            (-5, 2, -3, -2, -2, -3, -2), // -2.5
            (-7, 3, -3, -2, -2, -2, -2), // -2.33
            (8, 3, 2, 3, 2, 3, 3),       // 2.67
            (6, 3, 2, 2, 2, 2, 2),
        ]
        for c in cases {
            #expect(FrameRounding.down.divide(c.0, by: c.1) == c.down)
            #expect(FrameRounding.up.divide(c.0, by: c.1) == c.up)
            #expect(FrameRounding.towardZero.divide(c.0, by: c.1) == c.zero)
            #expect(FrameRounding.toNearestOrAwayFromZero.divide(c.0, by: c.1) == c.away)
            #expect(FrameRounding.toNearestOrEven.divide(c.0, by: c.1) == c.even)
        }
    }

    /// Operands that fit 64 bits take a 64-bit path: it must give the 128-bit result at the
    /// edges, where the remainder's double (2 r) would overflow 64 bits.
    @Test func theSixtyFourBitPathMatchesTheFullWidthOne() {
        let big = Int64.max
        let denominators: [Int64] = [1, 2, 3, 48_000, big / 2, big - 1, big]
        let numerators: [Int64] = [0, 1, -1, big, -big, .min, big - 1, .min + 1, big / 2, -(big / 2), big / 2 + 1, 123_456_789_012]
        for rule in FrameRounding.allCases {
            for d in denominators {
                for n in numerators + [d / 2, -(d / 2), d / 2 + 1, d - 1, -(d - 1)] {
                    let fast = rule.divide(Int128(n), by: Int128(d))
                    let wide = rule.rounded(Int128(n), Int128(d))
                    #expect(fast == wide, "\(rule) \(n) / \(d)")
                }
            }
        }
        // Past 64 bits, the full width.
        let n = Int128(Int64.max) * 3 + 1
        #expect(FrameRounding.toNearestOrAwayFromZero.divide(n, by: 2) == (n + 1) / 2)
        #expect(FrameRounding.down.divide(-n, by: 2) == (-n - 1) / 2)
    }
}
