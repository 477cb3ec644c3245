import Testing
@testable import Mixdown

/// Property tests: random times at random timescales, many near the limits of Int64 and
/// Int32, checked against exact integer references (a seeded generator: failures repeat).
@Suite struct MediaTimePropertyTests {
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    /// A value: small, near ±Int64.max, or anywhere, with either sign.
    static func value(_ g: inout SplitMix64) -> Int64 {
        switch Int.random(in: 0..<4, using: &g) {
        case 0: return Int64.random(in: -1000...1000, using: &g)
        case 1: return Int64.max - Int64.random(in: 0...1000, using: &g)
        case 2: return -(Int64.max - Int64.random(in: 0...1000, using: &g))
        default: return Int64.random(in: -(Int64.max)...Int64.max, using: &g)
        }
    }

    /// A timescale: common rates, near Int32.max, or anywhere.
    static func timescale(_ g: inout SplitMix64) -> Int32 {
        switch Int.random(in: 0..<3, using: &g) {
        case 0: return [1, 1000, 44_100, 48_000, 30_000, 24_000, 705_600_000].randomElement(using: &g)!
        case 1: return Int32.max - Int32.random(in: 0...100, using: &g)
        default: return Int32.random(in: 1...Int32.max, using: &g)
        }
    }

    static func time(_ g: inout SplitMix64) -> MediaTime { MediaTime(value: value(&g), timescale: timescale(&g)) }

    /// a.v / a.t compared with b.v / b.t by floor and remainder (not by cross-multiplying,
    /// which is how the type does it).
    static func referenceLess(_ a: MediaTime, _ b: MediaTime) -> Bool {
        func split(_ t: MediaTime) -> (Int128, Int128, Int128) {
            var q = Int128(t.value) / Int128(t.timescale), r = Int128(t.value) % Int128(t.timescale)
            if r < 0 { q -= 1; r += Int128(t.timescale) }
            return (q, r, Int128(t.timescale))
        }
        let (qa, ra, ta) = split(a), (qb, rb, tb) = split(b)
        if qa != qb { return qa < qb }
        return ra * tb < rb * ta
    }

    @Test func comparisonMatchesTheReference() {
        var g = SplitMix64(state: 1)
        for _ in 0..<20_000 {
            let a = Self.time(&g), b = Self.time(&g)
            #expect((a < b) == Self.referenceLess(a, b), "\(a) < \(b)")
            #expect((a == b) == (!Self.referenceLess(a, b) && !Self.referenceLess(b, a)), "\(a) == \(b)")
        }
    }

    @Test func additionIsExactOrFlaggedAndWithinHalfAUnit() {
        var g = SplitMix64(state: 2)
        for _ in 0..<20_000 {
            let a = Self.time(&g), b = Self.time(&g)
            let s = a + b
            let num = Int128(a.value) * Int128(b.timescale) + Int128(b.value) * Int128(a.timescale)
            let den = Int128(a.timescale) * Int128(b.timescale)
            if s.isPositiveInfinity || s.isNegativeInfinity {
                // Only when the sum lies beyond Int64 units of the larger timescale.
                let scale = Int128(max(a.timescale, b.timescale))
                #expect((num * scale / den).magnitude >= UInt128(Int64.max) - 1, "\(a) + \(b) = \(s)")
                #expect(s.isPositiveInfinity == (num > 0))
                continue
            }
            #expect(s.isNumeric)
            // |s - exact| in units of 1/(den * s.timescale): twice it is at most den.
            let diff = Int128(s.value) * den - num * Int128(s.timescale)
            if s.hasBeenRounded {
                #expect(2 * diff.magnitude <= UInt128(den), "\(a) + \(b) = \(s) rounded too far")
            } else {
                #expect(diff == 0, "\(a) + \(b) = \(s) is not exact")
            }
        }
    }

    @Test func framesRoundTripAndBracketTheTime() {
        var g = SplitMix64(state: 3)
        for _ in 0..<20_000 {
            let rate = [8_000, 44_100, 48_000, 96_000, 192_000, 768_000, Int(Int32.max)].randomElement(using: &g)!
            // Within the accepted range every rate's frame count fits Int64: no trap.
            let t = MediaTime(value: Int64.random(in: -3_600_000_000...3_600_000_000, using: &g) * 1000 + Int64.random(in: 0..<1000, using: &g),
                              timescale: 1000)
            #expect(t.isWithinAcceptedRange)
            let down = t.frames(atRate: rate, rounding: .down), up = t.frames(atRate: rate, rounding: .up)
            #expect(MediaTime(frames: down, sampleRate: rate) <= t && t < MediaTime(frames: down + 1, sampleRate: rate))
            #expect(up == down || up == down + 1)
            let nearest = t.frames(atRate: rate)
            #expect(nearest == down || nearest == up)
            // A frame position converts back to itself under every rule.
            let f = Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &g)
            for rule in FrameRounding.allCases {
                #expect(MediaTime(frames: f, sampleRate: rate).frames(atRate: rate, rounding: rule) == f)
            }
        }
    }

    @Test func parsingRoundTripsAndRefusesBeyondTheLimit() throws {
        var g = SplitMix64(state: 4)
        for _ in 0..<5_000 {
            let t = Self.time(&g)
            let text = "\(t.value)/\(t.timescale)"
            if t.isWithinAcceptedRange {
                #expect(try MediaTime(parsing: text) == t)
            } else {
                #expect(throws: TimeParseError.self) { try MediaTime(parsing: text) }
            }
            // Huge times print as what they are, never as 0:00:00.
            if t.value.magnitude >= UInt64(t.timescale) {
                let clock = t.clockDescription
                #expect(clock.hasPrefix(t.value < 0 ? "-" : "") && !clock.hasPrefix("0:00:00") && !clock.hasPrefix("-0:00:00"), "\(t): \(clock)")
            }
        }
        #expect(try MediaTime(parsing: "1000000:00:00") == .largestAccepted)
        #expect(try MediaTime(parsing: "-1000000:00:00") == -.largestAccepted)
        #expect(throws: TimeParseError.self) { try MediaTime(parsing: "1000000:00:00.000000001") }
        #expect(throws: TimeParseError.self) { try MediaTime(parsing: "99999999999999999999") }
        #expect(throws: TimeParseError.self) { try MediaTime(parsing: "\(Int64.max)f", frameRate: 48_000) }
        #expect(MediaTime(value: Int64.max, timescale: 1).clockDescription == "2562047788015215:30:07.000000")
    }

    @Test func checkedNamesTheParameterAndTheLimit() {
        #expect(throws: MixdownError.invalidParameter(name: "--start", value: "2000000:00:00.000000",
                                                      reason: "it is beyond the largest time Mixdown accepts, 1000000:00:00.000000 (1,000,000 hours)")) {
            try MediaTime(seconds: 7_200_000_000).checked("--start")
        }
        #expect((try? MediaTime(seconds: 3_600_000_000).checked("x")) == .largestAccepted)
        #expect(throws: MixdownError.self) { try MediaTime.positiveInfinity.checked("x") }
    }
}
