/// A point in time as a rational number of seconds: `value / timescale`, like CMTime.
///
/// Mixdown never stores time as Double seconds. Arithmetic and comparison are exact
/// across timescales (intermediate products use 128-bit integers), so a 24-hour
/// position at 192 kHz, or at a timescale of 2^31 - 1, neither overflows nor rounds.
/// Equality is numeric: 1/2 == 2/4.
///
/// Like CMTime it has non-numeric states: invalid, +infinity, -infinity and indefinite.
/// Ordering: -infinity < every numeric time < +infinity < indefinite < invalid.
public struct MediaTime: Sendable, CustomStringConvertible {
    /// The numerator, in units of 1/timescale seconds.
    public let value: Int64
    /// Units per second; always positive for a numeric time.
    public let timescale: Int32
    public let flags: Flags

    public struct Flags: OptionSet, Sendable, Hashable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        public static let valid = Flags(rawValue: 1 << 0)
        /// Set when an operation could not be represented exactly and was rounded.
        public static let hasBeenRounded = Flags(rawValue: 1 << 1)
        public static let positiveInfinity = Flags(rawValue: 1 << 2)
        public static let negativeInfinity = Flags(rawValue: 1 << 3)
        public static let indefinite = Flags(rawValue: 1 << 4)
    }

    /// `value / timescale` seconds. `timescale` must be positive.
    public init(value: Int64, timescale: Int32) {
        precondition(timescale > 0, "MediaTime needs a positive timescale, got \(timescale)")
        self.value = value
        self.timescale = timescale
        self.flags = .valid
    }

    init(value: Int64, timescale: Int32, flags: Flags) {
        self.value = value
        self.timescale = timescale
        self.flags = flags
    }

    /// `numerator / denominator` seconds, exactly: reduced, and refused (naming
    /// `parameter`) when the denominator is not positive or the reduced one does not fit
    /// a timescale (32 bits). For callers that hold a time as two integers (the C API).
    public init(numerator: Int64, denominator: Int64, parameter: String) throws(MixdownError) {
        guard denominator > 0 else {
            throw .invalidParameter(name: parameter, value: "\(numerator)/\(denominator)", reason: "needs a denominator above 0")
        }
        var g = numerator.magnitude, b = denominator.magnitude
        while b != 0 { (g, b) = (b, g % b) }
        let d = denominator / Int64(g)
        guard d <= Int64(Int32.max) else {
            throw .invalidParameter(name: parameter, value: "\(numerator)/\(denominator)", reason: "needs a reduced denominator of at most \(Int32.max)")
        }
        self.init(value: numerator / Int64(g), timescale: Int32(d))
    }

    /// `seconds` to the nearest microsecond (half away from zero), for a time that arrives
    /// as a Double (an option, an estimate); refused, naming `parameter`, unless finite and
    /// within `largestAccepted` either side of 0.
    public init(microsecondsOf seconds: Double, parameter: String) throws(MixdownError) {
        guard seconds.isFinite, abs(seconds) <= Double(Self.largestAccepted.value) else {
            throw .invalidParameter(name: parameter, value: "\(seconds)", reason: "must be a finite number of seconds within \(Self.largestAccepted.value)")
        }
        self.init(value: Int64((seconds * 1e6).rounded(.toNearestOrAwayFromZero)), timescale: 1_000_000)
    }

    /// A whole number of seconds.
    public init(seconds: Int64) { self.init(value: seconds, timescale: 1) }

    /// A frame position at `sampleRate` frames per second (exact).
    public init(frames: Int64, sampleRate: Int) {
        precondition(sampleRate > 0 && sampleRate <= Int(Int32.max), "sample rate out of range: \(sampleRate)")
        self.init(value: frames, timescale: Int32(sampleRate))
    }

    public static let zero = MediaTime(value: 0, timescale: 1)
    public static let invalid = MediaTime(value: 0, timescale: 0, flags: [])
    public static let positiveInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .positiveInfinity])
    public static let negativeInfinity = MediaTime(value: 0, timescale: 0, flags: [.valid, .negativeInfinity])
    public static let indefinite = MediaTime(value: 0, timescale: 0, flags: [.valid, .indefinite])

    public var isValid: Bool { flags.contains(.valid) }
    /// Valid and finite: a number of seconds.
    public var isNumeric: Bool {
        flags.contains(.valid) && flags.isDisjoint(with: [.positiveInfinity, .negativeInfinity, .indefinite])
    }
    public var isPositiveInfinity: Bool { isValid && flags.contains(.positiveInfinity) }
    public var isNegativeInfinity: Bool { isValid && flags.contains(.negativeInfinity) }
    public var isIndefinite: Bool { isValid && flags.contains(.indefinite) }
    public var hasBeenRounded: Bool { flags.contains(.hasBeenRounded) }

    /// The nearest Double, for display and reports only; never stored as time.
    public var approximateSeconds: Double {
        if isPositiveInfinity { return .infinity }
        if isNegativeInfinity { return -.infinity }
        guard isNumeric else { return .nan }
        return Double(value) / Double(timescale)
    }

    /// The frame index of this time at `sampleRate` frames per second, rounded by `rounding`.
    /// Exact (128-bit intermediate); traps if the result does not fit in Int64 or the time
    /// is not numeric. Callers at the API boundary check `isNumeric` first.
    public func frames(atRate sampleRate: Int, rounding: FrameRounding = .standard) -> Int64 {
        precondition(isNumeric, "frames(atRate:) of a non-numeric time \(self)")
        precondition(sampleRate > 0, "sample rate must be positive")
        let q = rounding.divide(Int128(value) * Int128(sampleRate), by: Int128(timescale))
        return Int64(q)
    }

    /// This time at another timescale, rounded by `rounding` when it is not exact there.
    public func converted(toTimescale newScale: Int32, rounding: FrameRounding = .standard) -> MediaTime {
        precondition(newScale > 0, "timescale must be positive")
        guard isNumeric else { return self }
        if newScale == timescale { return self }
        let n = Int128(value) * Int128(newScale)
        let q = rounding.divide(n, by: Int128(timescale))
        guard let v = Int64(exactly: q) else { return q > 0 ? .positiveInfinity : .negativeInfinity }
        let exact = q * Int128(timescale) == n
        return MediaTime(value: v, timescale: newScale, flags: exact ? flags : flags.union(.hasBeenRounded))
    }

    /// The same number with the smallest timescale (value and timescale divided by their gcd).
    public var reduced: MediaTime {
        guard isNumeric else { return self }
        let g = gcd(Int64(timescale), value == Int64.min ? Int64(timescale) : abs(value))
        guard g > 1 else { return self }
        return MediaTime(value: value / g, timescale: Int32(Int64(timescale) / g), flags: flags)
    }

    public var description: String {
        if !isValid { return "invalid" }
        if isPositiveInfinity { return "+infinity" }
        if isNegativeInfinity { return "-infinity" }
        if isIndefinite { return "indefinite" }
        return "\(value)/\(timescale)"
    }
}

@inlinable func gcd(_ a: Int64, _ b: Int64) -> Int64 {
    var (x, y) = (a, b)
    while y != 0 { (x, y) = (y, x % y) }
    return x
}

extension MediaTime: Comparable, Hashable {
    /// Rank of the non-numeric kinds in the total order.
    private var kindRank: Int {
        if !isValid { return 4 }
        if isIndefinite { return 3 }
        if isPositiveInfinity { return 2 }
        if isNegativeInfinity { return 0 }
        return 1
    }

    public static func < (a: MediaTime, b: MediaTime) -> Bool {
        let (ra, rb) = (a.kindRank, b.kindRank)
        if ra != rb || ra != 1 { return ra < rb }
        return Int128(a.value) * Int128(b.timescale) < Int128(b.value) * Int128(a.timescale)
    }

    public static func == (a: MediaTime, b: MediaTime) -> Bool {
        let (ra, rb) = (a.kindRank, b.kindRank)
        if ra != rb || ra != 1 { return ra == rb }
        return Int128(a.value) * Int128(b.timescale) == Int128(b.value) * Int128(a.timescale)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(kindRank)
        if kindRank == 1 {
            let r = reduced
            hasher.combine(r.value)
            hasher.combine(r.timescale)
        }
    }
}

extension MediaTime {
    /// Exact when the least common multiple of the timescales fits in Int32 and the value
    /// in Int64; otherwise the result is at the larger timescale, rounded to nearest (ties
    /// to even), with `hasBeenRounded` set. Infinities follow CMTime: +inf + -inf is invalid.
    public static func + (a: MediaTime, b: MediaTime) -> MediaTime { combine(a, b, negateB: false) }
    public static func - (a: MediaTime, b: MediaTime) -> MediaTime { combine(a, b, negateB: true) }
    public static prefix func - (a: MediaTime) -> MediaTime { .zero - a }

    private static func combine(_ a: MediaTime, _ b: MediaTime, negateB: Bool) -> MediaTime {
        guard a.isValid, b.isValid else { return .invalid }
        if a.isIndefinite || b.isIndefinite { return .indefinite }
        let bPos = negateB ? b.isNegativeInfinity : b.isPositiveInfinity
        let bNeg = negateB ? b.isPositiveInfinity : b.isNegativeInfinity
        if a.isPositiveInfinity || a.isNegativeInfinity || bPos || bNeg {
            let pos = a.isPositiveInfinity || bPos, neg = a.isNegativeInfinity || bNeg
            if pos && neg { return .invalid }
            return pos ? .positiveInfinity : .negativeInfinity
        }
        let sa = Int128(a.timescale), sb = Int128(b.timescale)
        let g = Int128(gcd(Int64(a.timescale), Int64(b.timescale)))
        let lcm = sa / g * sb
        let bv = negateB ? -Int128(b.value) : Int128(b.value)
        let rounded = a.flags.union(b.flags).intersection(.hasBeenRounded)
        if lcm <= Int128(Int32.max) {
            let sum = Int128(a.value) * (lcm / sa) + bv * (lcm / sb)
            if let v = Int64(exactly: sum) {
                return MediaTime(value: v, timescale: Int32(lcm), flags: Flags.valid.union(rounded))
            }
        }
        // Not representable exactly: use the larger timescale, rounded to nearest even.
        let scale = max(sa, sb)
        let num = Int128(a.value) * scale * sb + bv * scale * sa
        let q = FrameRounding.toNearestOrEven.divide(num, by: sa * sb)
        guard let v = Int64(exactly: q) else { return q > 0 ? .positiveInfinity : .negativeInfinity }
        return MediaTime(value: v, timescale: Int32(scale), flags: [.valid, .hasBeenRounded])
    }

    /// This time multiplied by the rational `numerator / denominator`, rounded by `rounding`
    /// at this time's timescale. `denominator` must be positive.
    public func multiplied(by numerator: Int64, over denominator: Int64, rounding: FrameRounding = .standard) -> MediaTime {
        precondition(denominator > 0)
        guard isNumeric else { return self }
        let n = Int128(value) * Int128(numerator)
        let q = rounding.divide(n, by: Int128(denominator))
        guard let v = Int64(exactly: q) else { return q > 0 ? .positiveInfinity : .negativeInfinity }
        let exact = q * Int128(denominator) == n
        return MediaTime(value: v, timescale: timescale, flags: exact ? flags : flags.union(.hasBeenRounded))
    }
}

extension MediaTime: Codable {
    /// Encoded as the exact string "value/timescale" (or "invalid", "+infinity", ...), and
    /// decoded from any text ``MediaTime/init(parsing:frameRate:)`` accepts.
    public init(from decoder: Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        do { self = try MediaTime(parsing: text) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(error)"))
        }
    }
    public func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}
