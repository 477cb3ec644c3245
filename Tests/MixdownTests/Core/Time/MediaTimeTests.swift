import Testing
@testable import Mixdown

@Suite struct MediaTimeTests {
    @Test func comparisonIsExactAcrossTimescales() {
        #expect(MediaTime(value: 1, timescale: 2) == MediaTime(value: 24_000, timescale: 48_000))
        #expect(MediaTime(value: 1001, timescale: 30_000) < MediaTime(value: 1, timescale: 29))
        #expect(MediaTime(value: 1, timescale: Int32.max) > .zero)
        // Differ by one unit of 1/(2^31 - 1) s after a day: still ordered correctly.
        let day = Int64(86_400) * Int64(Int32.max)
        #expect(MediaTime(value: day, timescale: Int32.max) < MediaTime(value: day + 1, timescale: Int32.max))
        #expect(MediaTime(value: day, timescale: Int32.max) == MediaTime(seconds: 86_400))
        #expect(Set([MediaTime(value: 1, timescale: 2), MediaTime(value: 3, timescale: 6)]).count == 1)
    }

    @Test func nonNumericOrdering() {
        let n = MediaTime(seconds: 5)
        #expect(MediaTime.negativeInfinity < n && n < .positiveInfinity)
        #expect(MediaTime.positiveInfinity < .indefinite && MediaTime.indefinite < .invalid)
        #expect(!MediaTime.invalid.isValid && !MediaTime.positiveInfinity.isNumeric)
        #expect((MediaTime.positiveInfinity + .negativeInfinity).isValid == false)
        #expect(MediaTime.positiveInfinity + n == .positiveInfinity)
    }

    @Test func framesAtTwentyFourHoursAnd192kHzAreExact() {
        let day = MediaTime(seconds: 86_400)
        #expect(day.frames(atRate: 192_000) == 16_588_800_000)
        // A timescale of 2^31 - 1: value * rate exceeds Int64, the 128-bit path keeps it exact.
        let t = MediaTime(value: 86_400 * Int64(Int32.max) - 1, timescale: Int32.max)
        #expect(t.frames(atRate: 192_000, rounding: .down) == 16_588_800_000 - 1)
        #expect(t.frames(atRate: 192_000, rounding: .up) == 16_588_800_000)
        #expect(t.frames(atRate: 192_000, rounding: .toNearestOrAwayFromZero) == 16_588_800_000)
    }

    @Test func roundingRulesOnTies() {
        let half = MediaTime(value: 1, timescale: 96_000)      // 0.5 frame at 48 kHz
        let oneAndHalf = MediaTime(value: 3, timescale: 96_000) // 1.5 frames
        #expect(half.frames(atRate: 48_000, rounding: .toNearestOrAwayFromZero) == 1)
        #expect(half.frames(atRate: 48_000, rounding: .toNearestOrEven) == 0)
        #expect(oneAndHalf.frames(atRate: 48_000, rounding: .toNearestOrEven) == 2)
        #expect(half.frames(atRate: 48_000, rounding: .down) == 0)
        #expect(half.frames(atRate: 48_000, rounding: .up) == 1)
        let minusHalf = MediaTime(value: -1, timescale: 96_000)
        #expect(minusHalf.frames(atRate: 48_000, rounding: .toNearestOrAwayFromZero) == -1)
        #expect(minusHalf.frames(atRate: 48_000, rounding: .towardZero) == 0)
        #expect(minusHalf.frames(atRate: 48_000, rounding: .down) == -1)
    }

    @Test func additionIsExactWhenTheLcmFits() {
        let a = MediaTime(value: 1001, timescale: 30_000), b = MediaTime(value: 1, timescale: 44_100)
        let sum = a + b
        #expect(!sum.hasBeenRounded)
        #expect(sum == MediaTime(value: 1001 * 147 + 100, timescale: 4_410_000))
        #expect(sum - b == a)
        // Two large coprime timescales: the lcm does not fit in Int32, so it is rounded and says so.
        let c = MediaTime(value: 1, timescale: Int32.max), d = MediaTime(value: 1, timescale: Int32.max - 1)
        let r = c + d
        #expect(r.hasBeenRounded)
        #expect(r.timescale == Int32.max)
        #expect(r.value == 2)
    }

    @Test func rangesTileWithoutGapsInFrames() {
        // Three ranges of 1/3 s each at 44.1 kHz: frame ranges touch exactly.
        let third = MediaTime(value: 1, timescale: 3)
        var start = MediaTime.zero
        var lastEnd: Int64 = 0
        for _ in 0..<3 {
            let f = MediaTimeRange(start: start, duration: third).frames(atRate: 44_100)
            #expect(f.lowerBound == lastEnd)
            lastEnd = f.upperBound
            start = start + third
        }
        #expect(lastEnd == 44_100)
    }
}

@Suite struct TimeParsingTests {
    @Test(arguments: [
        ("30", MediaTime(seconds: 30)),
        ("30.25", MediaTime(value: 3025, timescale: 100)),
        ("1:02:03.5", MediaTime(value: 37_235, timescale: 10)),
        ("02:03.5", MediaTime(value: 1235, timescale: 10)),
        ("131/1000", MediaTime(value: 131, timescale: 1000)),
        ("-3.7", MediaTime(value: -37, timescale: 10)),
        ("0.000000001", MediaTime(value: 1, timescale: 1_000_000_000)),
        ("1001/30000", MediaTime(value: 1001, timescale: 30_000)),
        ("24:00:00", MediaTime(seconds: 86_400)),
    ])
    func parsesExactly(text: String, expected: MediaTime) throws {
        let t = try MediaTime(parsing: text)
        #expect(t == expected)
        #expect(!t.hasBeenRounded)
    }

    @Test func framesUseTheGivenRate() throws {
        let t = try MediaTime(parsing: "1440000f", frameRate: 48_000)
        #expect(t == MediaTime(seconds: 30))
        #expect(t.frames(atRate: 48_000) == 1_440_000)
        #expect(throws: TimeParseError.self) { try MediaTime(parsing: "1440000f") }
    }

    @Test(arguments: ["", " ", "nan", "NaN", "inf", "-", "1e3", "1.2.3", "30.", ".5", "1:60", "1:60:00", "1/0", "abc",
                      "1:2:3:4", "0.1234567891", "1/4294967296", "99999999999999999999", "--1", "5 s"])
    func refusesMalformedText(text: String) {
        #expect(throws: TimeParseError.self) { try MediaTime(parsing: text) }
    }

    @Test func errorNamesTheText() {
        do {
            _ = try MediaTime(parsing: "nan")
            Issue.record("parsed nan")
        } catch {
            #expect(error.text == "nan")
            #expect(error.description.contains("'nan' is not a time"))
        }
        // Infinity with a frame rate is not read as the frame count "in" + "f".
        #expect { try MediaTime(parsing: "inf", frameRate: 48_000) } throws: { e in
            "\(e)".contains("'inf' is not a time: a time must be a finite number") && !"\(e)".contains("frame count")
        }
    }

    @Test func clockDescription() {
        #expect(MediaTime(value: 37_235, timescale: 10).clockDescription == "1:02:03.500000")
        #expect(MediaTime(value: -1, timescale: 4).clockDescription == "-0:00:00.250000")
    }
}

/// Times and ratios that arrive as two integers (the C API): reduced exactly, or refused
/// with the parameter named.
@Suite struct IntegerPairTests {
    @Test func aPairOfIntegersIsAnExactTimeOrANamedError() throws {
        let t = try MediaTime(numerator: 6, denominator: 4, parameter: "start")
        #expect(t.value == 3 && t.timescale == 2)
        let big = try MediaTime(numerator: Int64.max, denominator: Int64.max, parameter: "start")
        #expect(big.value == 1 && big.timescale == 1)
        #expect(try MediaTime(numerator: 0, denominator: 7, parameter: "start").timescale == 1)
        #expect(try MediaTime(numerator: -1001, denominator: 30_000, parameter: "start") == MediaTime(value: -1001, timescale: 30_000))
        #expect(throws: MixdownError.invalidParameter(name: "duration", value: "3/0", reason: "needs a denominator above 0")) {
            _ = try MediaTime(numerator: 3, denominator: 0, parameter: "duration")
        }
        #expect(throws: MixdownError.invalidParameter(name: "fade", value: "1/-2", reason: "needs a denominator above 0")) {
            _ = try MediaTime(numerator: 1, denominator: -2, parameter: "fade")
        }
        #expect(throws: MixdownError.invalidParameter(name: "start", value: "1/4294967296", reason: "needs a reduced denominator of at most 2147483647")) {
            _ = try MediaTime(numerator: 1, denominator: 1 << 32, parameter: "start")
        }
        // Reduced first: 2^32 / 2^33 is 1/2.
        #expect(try MediaTime(numerator: 1 << 32, denominator: 1 << 33, parameter: "start") == MediaTime(value: 1, timescale: 2))
    }

    @Test func aDoubleBecomesTheNearestMicrosecond() throws {
        #expect(try MediaTime(microsecondsOf: 3.0000006, parameter: "x").value == 3_000_001)
        #expect(try MediaTime(microsecondsOf: 3.0000004, parameter: "x").value == 3_000_000)
        #expect(try MediaTime(microsecondsOf: -1.25, parameter: "x") == MediaTime(value: -5, timescale: 4))
        for bad in [Double.nan, .infinity, 4e9] {
            #expect(throws: MixdownError.self) { _ = try MediaTime(microsecondsOf: bad, parameter: "x") }
        }
    }

    @Test func aRatioOfTwoIntegersMustBePositive() throws {
        #expect(try StretchRatio(checkedNumerator: 20, denominator: 10) == StretchRatio(2, 1))
        for (n, d) in [(0, 0), (0, 1), (1, 0), (-1, 1), (1, -1)] as [(Int64, Int64)] {
            #expect(throws: MixdownError.invalidParameter(name: "ratio", value: "\(n)/\(d)", reason: "needs a numerator and a denominator above 0")) {
                _ = try StretchRatio(checkedNumerator: n, denominator: d)
            }
        }
    }
}
