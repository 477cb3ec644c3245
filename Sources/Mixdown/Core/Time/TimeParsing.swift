import Foundation

/// Why a time string was refused.
public struct TimeParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text as given.
    public let text: String
    /// What is wrong with it, in words.
    public let reason: String
    public var description: String { "'\(text)' is not a time: \(reason)" }
}

extension MediaTime {
    /// Parses user text exactly, without going through floating point.
    ///
    /// Accepted forms (an optional leading `-` on any of them):
    /// - `"30"`: whole seconds;
    /// - `"30.25"`: decimal seconds, up to 9 decimal places (timescale 10^places);
    /// - `"1:02:03.5"` or `"02:03.5"`: hours:minutes:seconds or minutes:seconds, where
    ///   minutes and seconds below a larger unit are under 60;
    /// - `"1440000f"`: a whole number of frames at `frameRate` (an error without one);
    /// - `"131/1000"`: a rational number of seconds, the denominator at most 2^31 - 1.
    /// Anything else, including "nan", "inf", exponents and empty text, is an error.
    /// No time beyond ``largestAccepted`` parses.
    public init(parsing rawText: String, frameRate: Int? = nil) throws(TimeParseError) {
        let t = try Self.parsedWithoutLimit(rawText, frameRate: frameRate)
        guard t.isWithinAcceptedRange else { throw TimeParseError(text: rawText, reason: Self.beyondLimit) }
        self = t
    }

    /// The grammar above, for any time that fits Int64 units.
    private static func parsedWithoutLimit(_ rawText: String, frameRate: Int?) throws(TimeParseError) -> MediaTime {
        // Spaces and tabs around the text are ignored (trimmed by hand: Foundation's
        // trimming costs more than the whole parse, and documents hold 100,000s of times).
        var text = Substring(rawText)
        while let c = text.first, c == " " || c == "\t" { text = text.dropFirst() }
        while let c = text.last, c == " " || c == "\t" { text = text.dropLast() }
        func fail(_ reason: String) -> TimeParseError { TimeParseError(text: rawText, reason: reason) }
        guard !text.isEmpty else { throw fail("it is empty") }
        var body = text
        var negative = false
        if body.first == "-" { negative = true; body = body.dropFirst() }
        guard !body.isEmpty else { throw fail("a sign with no number") }
        // "inf", "Infinity", "nan": not a frame count "in" + "f" (as the grammar would read it).
        if ["inf", "infinity", "nan"].contains(body.lowercased()) {
            throw fail("a time must be a finite number: seconds (30, 30.25), h:mm:ss (1:02:03.5), frames (1440000f) or a fraction of seconds (131/1000)")
        }

        func digits(_ s: Substring, _ what: String) throws(TimeParseError) -> Int64 {
            var v: Int64 = 0
            var overflow = false, digitsOnly = !s.isEmpty
            for b in s.utf8 {
                guard b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") else { digitsOnly = false; break }
                let (m, o1) = v.multipliedReportingOverflow(by: 10)
                let (a, o2) = m.addingReportingOverflow(Int64(b - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                v = a
            }
            guard digitsOnly else {
                throw fail("\(what) '\(s)' is not a whole number; a time is seconds (30, 30.25), h:mm:ss (1:02:03.5), frames (1440000f) or a fraction of seconds (131/1000)")
            }
            guard !overflow else { throw fail("\(what) '\(s)' is too large: \(Self.beyondLimit)") }
            return v
        }
        func signed(_ t: MediaTime) throws(TimeParseError) -> MediaTime {
            negative ? MediaTime(value: -t.value, timescale: t.timescale) : t
        }

        if body.last == "f" || body.last == "F" {
            let n = try digits(body.dropLast(), "the frame count")
            guard let rate = frameRate else { throw fail("a frame count needs a sample rate, and none is known here") }
            return try signed(MediaTime(frames: n, sampleRate: rate))
        }
        if let slash = body.firstIndex(of: "/") {
            let num = try digits(body[..<slash], "the numerator")
            let den = try digits(body[body.index(after: slash)...], "the denominator")
            guard den > 0 else { throw fail("the denominator is zero") }
            guard den <= Int64(Int32.max) else { throw fail("the denominator is above 2^31 - 1") }
            return try signed(MediaTime(value: num, timescale: Int32(den)))
        }
        let parts = body.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 3 else { throw fail("more than hours:minutes:seconds") }
        // The last part holds seconds, possibly with a fraction.
        let secondsPart = parts[parts.count - 1]
        var whole = secondsPart, fraction: Substring = ""
        if let dot = secondsPart.firstIndex(of: ".") {
            whole = secondsPart[..<dot]
            fraction = secondsPart[secondsPart.index(after: dot)...]
            guard !fraction.isEmpty else { throw fail("nothing after the decimal point") }
        }
        let secs = try digits(whole, "the seconds")
        var scale: Int64 = 1
        var frac: Int64 = 0
        if !fraction.isEmpty {
            guard fraction.count <= 9 else { throw fail("more than 9 decimal places") }
            frac = try digits(fraction, "the fraction")
            for _ in 0..<fraction.count { scale *= 10 }
        }
        var totalSeconds = Int128(secs)
        if parts.count >= 2 {
            guard secs < 60 else { throw fail("seconds must be under 60 after minutes") }
            let mins = try digits(parts[parts.count - 2], "the minutes")
            if parts.count == 3 {
                guard mins < 60 else { throw fail("minutes must be under 60 after hours") }
                let hours = try digits(parts[0], "the hours")
                totalSeconds += Int128(hours) * 3600
            }
            totalSeconds += Int128(mins) * 60
        }
        let value = totalSeconds * Int128(scale) + Int128(frac)
        guard let v = Int64(exactly: value) else { throw fail(Self.beyondLimit) }
        return try signed(MediaTime(value: v, timescale: Int32(scale)))
    }

    static let beyondLimit = "it is beyond the largest time Mixdown accepts, \(MediaTime.largestAccepted.clockDescription) (1,000,000 hours)"

    /// The largest magnitude of a time that Mixdown accepts anywhere: 1,000,000 hours
    /// (about 114 years). Every time a person or a document gives is checked against it,
    /// so that frame arithmetic on it can never overflow: 2 x this at 768 kHz, times 64
    /// channels of 4-byte samples, is still far below Int64's range.
    public static let largestAccepted = MediaTime(value: 3_600_000_000, timescale: 1)

    /// Numeric and no further from 0 than ``largestAccepted``.
    public var isWithinAcceptedRange: Bool {
        isNumeric && Int128(value).magnitude <= UInt128(Self.largestAccepted.value) * UInt128(UInt32(timescale))
    }

    /// This time, or `invalidParameter` naming `name` when it is not numeric or lies beyond
    /// ``largestAccepted`` (the message gives the limit): the check every API boundary that
    /// takes a time makes before turning it into frames.
    public func checked(_ name: String) throws(MixdownError) -> MediaTime {
        guard isWithinAcceptedRange else {
            throw .invalidParameter(name: name, value: clockDescription, reason: isNumeric ? Self.beyondLimit : "is not a number of seconds")
        }
        return self
    }

    /// The time as text a person reads: "1:02:03.500000" (h:mm:ss with 6 decimals,
    /// rounded to the nearest microsecond), for display only.
    public var clockDescription: String {
        guard isNumeric else { return description }
        // In 128 bits: every Int64 value at every timescale has a microsecond count here.
        let micro = FrameRounding.standard.divide(Int128(value) * 1_000_000, by: Int128(timescale))
        let sign = micro < 0 ? "-" : ""
        let m = micro.magnitude
        let h = m / 3_600_000_000, mi = (m / 60_000_000) % 60, s = (m / 1_000_000) % 60, us = m % 1_000_000
        func pad(_ x: UInt128, _ n: Int) -> String { let t = String(x); return String(repeating: "0", count: max(0, n - t.count)) + t }
        return "\(sign)\(h):\(pad(mi, 2)):\(pad(s, 2)).\(pad(us, 6))"
    }
}
