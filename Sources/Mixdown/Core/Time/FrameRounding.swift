/// How a rational time becomes a whole frame index. Every conversion in Mixdown names one.
///
/// The engine's default for positions and durations is ``toNearestOrAwayFromZero``
/// (ordinary rounding: 0.5 frame goes up for positive times). A range is converted by
/// rounding its start and its end with the same rule, so ranges that touch in rational
/// time touch in frames too, with no gap and no overlap.
public enum FrameRounding: Sendable, Hashable, CaseIterable {
    /// Toward negative infinity (floor).
    case down
    /// Toward positive infinity (ceiling).
    case up
    /// Toward zero (truncation).
    case towardZero
    /// To the nearest frame; a tie goes away from zero. The engine's default.
    case toNearestOrAwayFromZero
    /// To the nearest frame; a tie goes to the even frame (banker's rounding).
    case toNearestOrEven

    /// The rule used wherever the documentation says "the documented rule".
    public static let standard: FrameRounding = .toNearestOrAwayFromZero

    /// `numerator / denominator` rounded by this rule. `denominator` must be positive.
    /// Done in 64 bits when both fit (the same result: a 128-bit division was about 1 %
    /// of a stretch's time, from the positions it converts per frame).
    @inlinable
    public func divide(_ numerator: Int128, by denominator: Int128) -> Int128 {
        precondition(denominator > 0, "FrameRounding.divide needs a positive denominator")
        if let n = Int64(exactly: numerator), let d = Int64(exactly: denominator) { return Int128(rounded(n, d)) }
        return rounded(numerator, denominator)
    }

    /// `numerator / denominator` (`denominator` > 0) by this rule, in T without overflow.
    @inlinable
    func rounded<T: FixedWidthInteger & SignedInteger>(_ numerator: T, _ denominator: T) -> T {
        // Floor division first; everything else adjusts from it.
        var q = numerator / denominator
        var r = numerator % denominator
        if r < 0 { q -= 1; r += denominator }
        if r == 0 { return q }
        switch self {
        case .down: return q
        case .up: return q + 1
        case .towardZero: return numerator < 0 ? q + 1 : q
        case .toNearestOrAwayFromZero, .toNearestOrEven:
            // r against denominator − r: 2 r could overflow T.
            let rest = denominator - r
            if r < rest { return q }
            if r > rest { return q + 1 }
            // Exactly half way between q and q + 1.
            if self == .toNearestOrEven { return q % 2 == 0 ? q : q + 1 }
            return numerator < 0 ? q : q + 1
        }
    }
}
