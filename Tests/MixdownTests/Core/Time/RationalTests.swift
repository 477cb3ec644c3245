import Testing
@testable import Mixdown

/// Core's exact rational: every result exact and reduced, or refused; never rounded or wrapped.
@Suite struct RationalTests {
    @Test func sumsAcrossUnrelatedRatesAreExactAndReduced() throws {
        // One frame at 24000/1001, one at 44.1 kHz, one at 48 kHz.
        let ntsc = try Rational(1001, over: 24_000), cd = try Rational(1, over: 44_100), dat = try Rational(1, over: 48_000)
        let sum = try ntsc.adding(cd).adding(dat)
        // 1001/24000 + 1/44100 + 1/48000, reduced (Python's Fraction says the same).
        #expect(sum.numerator == 294_601 && sum.denominator == 7_056_000)
        #expect(try sum.subtracting(cd).subtracting(dat) == ntsc)
        #expect(try ntsc.multiplied(by: 24_000).divided(by: 1001) == (try Rational(1, over: 1)))
        #expect(try Rational(6, over: -4).description == "-3/2")
        #expect(try Rational(10, over: 5).description == "2")
        #expect(try ntsc.divided(by: ntsc) == (try Rational(1, over: 1)))
    }

    @Test func aResultBeyond64BitsIsRefusedNotWrapped() throws {
        // Three unrelated rates near 10^9: their common denominator needs more than 64 bits.
        let a = try Rational(1, over: 999_999_937), b = try Rational(1, over: 999_999_929), c = try Rational(1, over: 999_999_893)
        let ab = try a.adding(b)
        #expect(throws: MixdownError.self) { try ab.adding(c) }
        #expect(throws: MixdownError.self) { try Rational(1, over: 0) }
        #expect(throws: MixdownError.self) { try a.divided(by: Rational.zero) }
        #expect(throws: MixdownError.self) { try Rational(Int128(Int64.max) * 4, over: 3) }
    }

    @Test func aMediaTimeConvertsExactlyAndBackOnlyWhenItsDenominatorFits() throws {
        let t = MediaTime(value: 2002, timescale: 48_000)
        #expect(Rational(t).description == "1001/24000")
        #expect(MediaTime(exactly: Rational(t)) == t)
        #expect(t.rationalText == "1001/24000")
        // 52,920,000,000 units a second (a track rate Mixdown writes): no 32-bit timescale.
        let fine = try Rational(436_266_776_131, over: 52_920_000_000)
        #expect(MediaTime(exactly: fine) == nil)
        #expect(MediaTime(exactly: 3, over: 52_920_000_000) == nil)
        #expect(MediaTime(exactly: 52_920_000, over: 52_920_000_000) == MediaTime(value: 1, timescale: 1000))
        // A length between two places that fit a timescale can need more bits than either.
        let a = try Rational(1, over: 192_000), b = try Rational(1, over: 6_890_625)
        #expect(MediaTime(exactly: a) != nil && MediaTime(exactly: b) != nil)
        let length = try a.subtracting(b)
        #expect(length.numerator == 17_863 && length.denominator == 3_528_000_000)
        #expect(MediaTime(exactly: length) == nil)
    }
}
