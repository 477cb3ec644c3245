/// An exact rational number (of seconds, or a ratio) for arithmetic whose values need
/// more than a timescale's 32 bits: the sums of a timeline's items written at several
/// rates (a Mixdown-written OTIO track can run at 52,920,000,000 units a second, where
/// every place it holds is a `MediaTime` but a length between two places is not).
///
/// Always reduced, its denominator positive. Every operation is exact or throws (never
/// rounds, never traps); intermediate products use 128-bit integers. `MediaTime` converts
/// to it exactly, and back exactly or not at all (`MediaTime(exactly:)`).
public struct Rational: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let numerator: Int64
    /// Always above 0.
    public let denominator: Int64

    public static let zero = Rational(reduced: 0, 1)

    private init(reduced n: Int64, _ d: Int64) { numerator = n; denominator = d }

    /// `numerator / denominator`, reduced; refused when the denominator is 0 or the
    /// reduced value does not fit 64 bits.
    public init(_ numerator: Int128, over denominator: Int128) throws(MixdownError) {
        guard denominator != 0 else { throw .invalidParameter(name: "time", value: "\(numerator)/0", reason: "divides by zero") }
        var a = numerator.magnitude, b = denominator.magnitude
        while b != 0 { (a, b) = (b, a % b) }
        let g = Int128(max(a, 1))
        let sign: Int128 = denominator < 0 ? -1 : 1
        guard let n = Int64(exactly: numerator / g * sign), let d = Int64(exactly: (denominator / g).magnitude) else {
            throw Self.inexact("\(numerator)/\(denominator)")
        }
        self.init(reduced: n, d)
    }

    /// A numeric time, exactly.
    public init(_ t: MediaTime) {
        precondition(t.isNumeric, "Rational of a non-numeric time \(t)")
        let r = t.reduced
        self.init(reduced: r.value, Int64(r.timescale))
    }

    /// The error a result that does not fit throws: a `time` parameter, which a reader
    /// rethrows at the place whose times it was adding.
    public static func inexact(_ operation: String) -> MixdownError {
        .invalidParameter(name: "time", value: operation, reason: inexactReason)
    }

    /// The reason `inexact` gives (a reader matches it to tell an overflow from a division by zero).
    public static let inexactReason = "has no exact result within 64 bits (rates too fine, or too many unrelated ones)"

    public func adding(_ b: Rational) throws(MixdownError) -> Rational {
        let g = Int128(gcd(denominator, b.denominator))
        return try Rational(Int128(numerator) * (Int128(b.denominator) / g) + Int128(b.numerator) * (Int128(denominator) / g),
                            over: Int128(denominator) / g * Int128(b.denominator))
    }

    public func subtracting(_ b: Rational) throws(MixdownError) -> Rational {
        let g = Int128(gcd(denominator, b.denominator))
        return try Rational(Int128(numerator) * (Int128(b.denominator) / g) - Int128(b.numerator) * (Int128(denominator) / g),
                            over: Int128(denominator) / g * Int128(b.denominator))
    }

    public func multiplied(by b: Rational) throws(MixdownError) -> Rational {
        try Rational(Int128(numerator) * Int128(b.numerator), over: Int128(denominator) * Int128(b.denominator))
    }

    /// Refused when `b` is 0.
    public func divided(by b: Rational) throws(MixdownError) -> Rational {
        try Rational(Int128(numerator) * Int128(b.denominator), over: Int128(denominator) * Int128(b.numerator))
    }

    public func multiplied(by k: Int64) throws(MixdownError) -> Rational {
        try Rational(Int128(numerator) * Int128(k), over: Int128(denominator))
    }

    /// Refused when `k` is 0.
    public func divided(by k: Int64) throws(MixdownError) -> Rational {
        try Rational(Int128(numerator), over: Int128(denominator) * Int128(k))
    }

    public static func < (a: Rational, b: Rational) -> Bool {
        Int128(a.numerator) * Int128(b.denominator) < Int128(b.numerator) * Int128(a.denominator)
    }

    /// The nearest Double, for messages and tolerances only.
    public var approximateSeconds: Double { Double(numerator) / Double(denominator) }

    /// "3" for a whole number, else "1001/30000" (what a document's exact time strings take).
    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }
}

extension MediaTime {
    /// `numerator / denominator` seconds, reduced; nil when the denominator is 0 or the
    /// reduced value does not fit a numeric time (a timescale of at most `Int32.max`).
    public init?(exactly numerator: Int128, over denominator: Int128) {
        guard let r = try? Rational(numerator, over: denominator), let d = Int32(exactly: r.denominator) else { return nil }
        self.init(value: r.numerator, timescale: d)
    }

    /// `r` seconds exactly, or nil when its denominator does not fit a timescale.
    public init?(exactly r: Rational) {
        guard let d = Int32(exactly: r.denominator) else { return nil }
        self.init(value: r.numerator, timescale: d)
    }

    /// The reduced rational as text: "3" for a whole number of seconds, else "1001/30000".
    public var rationalText: String {
        guard isNumeric else { return description }
        return Rational(self).description
    }
}
