/// An exact time-stretch ratio R = output length / input length = `numerator / denominator`.
///
/// R > 1 lengthens (plays slower), R < 1 shortens. The input position of output frame j
/// is j / R = j · denominator / numerator input frames, kept as an integer and a remainder
/// (never a Double that is incremented), so a marker at input frame m lands at output
/// m · R after any number of hours.
public struct StretchRatio: Sendable, Hashable, CustomStringConvertible {
    public let numerator: Int64
    public let denominator: Int64

    /// A stretch takes ratios in [1/4, 4]; a rate conversion in [1/256, 256]. Every range
    /// check (ratios, scaled edits) goes through `lies(_:over:within:)`, exactly.
    public static let stretchLimit: Int64 = 4
    public static let rateConversionLimit: Int64 = 256

    /// The limit for a resampler: a rate conversion (`outputRate` given) or a varispeed.
    static func limit(convertingRate: Bool) -> Int64 { convertingRate ? rateConversionLimit : stretchLimit }

    /// Whether p / q (both positive) lies in [1/limit, limit], in exact integers.
    static func lies(_ p: Int128, over q: Int128, within limit: Int64) -> Bool {
        p * Int128(limit) >= q && p <= q * Int128(limit)
    }

    /// Whether scaling a range of `source` to `target` (both positive, numeric) stays in
    /// the stretch range [1/4, 4], judged exactly (no Double).
    public static func isSupportedScale(from source: MediaTime, to target: MediaTime) -> Bool {
        lies(Int128(target.value) * Int128(source.timescale), over: Int128(source.value) * Int128(target.timescale), within: stretchLimit)
    }

    /// `numerator / denominator`, reduced. Both must be positive.
    public init(_ numerator: Int64, _ denominator: Int64) {
        precondition(numerator > 0 && denominator > 0, "a ratio needs a positive numerator and denominator")
        let g = gcd(numerator, denominator)
        self.numerator = numerator / g
        self.denominator = denominator / g
    }

    /// `numerator / denominator`, reduced, for callers that hold a ratio as two integers
    /// (the C API): refused, naming `parameter`, unless both are positive.
    public init(checkedNumerator numerator: Int64, denominator: Int64, parameter: String = "ratio") throws(MixdownError) {
        guard numerator > 0 && denominator > 0 else {
            throw .invalidParameter(name: parameter, value: "\(numerator)/\(denominator)", reason: "needs a numerator and a denominator above 0")
        }
        self.init(numerator, denominator)
    }

    /// The exact binary value of `value` (finite and positive; check with `validate`).
    public init(exactly value: Double) {
        precondition(value.isFinite && value > 0)
        // value = significand * 2^exponent exactly, with an integer significand.
        let exponent = Int(value.exponent) - Double.significandBitCount
        let significand = Int64(value.significandBitPattern | (1 << UInt64(Double.significandBitCount)))
        if exponent >= 0 {
            self.init(significand << Int64(exponent), 1)
        } else {
            var num = significand, den = Int64(1), shift = -exponent
            // Drop trailing zero bits first so the denominator stays small.
            while shift > 0 && num & 1 == 0 { num >>= 1; shift -= 1 }
            precondition(shift <= 62, "ratio too small to represent")
            den <<= Int64(shift)
            self.init(num, den)
        }
    }

    /// Parses "1.0001309" (exact decimal), "10001309/10000000", or "2".
    /// Throws `invalidParameter` naming `parameter` for anything else, or a ratio outside [1/4, 4].
    public init(parsing text: String, parameter: String = "--ratio") throws(MixdownError) {
        let t = text.trimmingCharacters(in: .whitespaces)
        func fail(_ reason: String) -> MixdownError { .invalidParameter(name: parameter, value: text, reason: reason) }
        if t.hasPrefix("-"), (try? StretchRatio(parsing: String(t.dropFirst()), parameter: parameter)) != nil {
            throw fail("must be positive")
        }
        var num: Int64, den: Int64 = 1
        if let slash = t.firstIndex(of: "/") {
            guard let a = Int64(t[..<slash]), let b = Int64(t[t.index(after: slash)...]) else { throw fail("is not a number (use 1.0001309 or 10001309/10000000)") }
            (num, den) = (a, b)
        } else {
            let parts = t.split(separator: ".", omittingEmptySubsequences: false)
            guard (1...2).contains(parts.count), parts.allSatisfy({ !$0.isEmpty && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
                  let whole = Int64(parts[0]) else {
                throw fail("is not a number (use 1.0001309 or 10001309/10000000)")
            }
            num = whole
            if parts.count == 2 {
                guard parts[1].count <= 15, let frac = Int64(parts[1]) else { throw fail("has more than 15 decimal places") }
                for _ in 0..<parts[1].count { den *= 10 }
                let (m, o1) = whole.multipliedReportingOverflow(by: den)
                let (s, o2) = m.addingReportingOverflow(frac)
                guard !o1 && !o2 else { throw fail("is too large") }
                num = s
            }
        }
        guard num > 0, den > 0 else { throw fail("must be positive") }
        self.init(num, den)
        try validate(parameter: parameter, text: text)
    }

    /// Whether the ratio lies in [1/4, 4], the range a stretch takes, in exact integers.
    public var isWithinStretchLimit: Bool {
        Self.lies(Int128(numerator), over: Int128(denominator), within: Self.stretchLimit)
    }

    /// Throws unless the ratio lies in [1/4, 4].
    public func validate(parameter: String = "--ratio", text: String? = nil) throws(MixdownError) {
        guard isWithinStretchLimit else {
            throw .invalidParameter(name: parameter, value: text ?? description, reason: "must lie between 0.25 and 4")
        }
    }

    /// Throws unless the ratio lies in [1/limit, limit], naming `parameter`.
    public func validate(limit: Int64, parameter: String) throws(MixdownError) {
        guard Self.lies(Int128(numerator), over: Int128(denominator), within: limit) else {
            throw .invalidParameter(name: parameter, value: "ratio \(description)", reason: "must lie between 1/\(limit) and \(limit)")
        }
    }

    /// For display, reports, buffer sizes and the libraries that take a double ratio
    /// (libsamplerate, Rubber Band). No choice depends on it: the algorithm (`auto`), the
    /// range checks and the filter design decide on the exact integers.
    public var doubleValue: Double { Double(numerator) / Double(denominator) }

    /// The output length for `inputFrames` input frames: round(inputFrames · R), half away from zero.
    public func outputFrames(forInput inputFrames: Int64) -> Int64 {
        Int64(FrameRounding.standard.divide(Int128(inputFrames) * Int128(numerator), by: Int128(denominator)))
    }

    /// The lengths a stretch node over `input` works with: the input's frames, and the exact
    /// output length (`outputFrames` when given, else round(N · R)). Throws when the input's
    /// length is unknown (naming `node`) or the ratio lies outside [1/limit, limit]
    /// (4 for a stretch; 256 for libsamplerate's rate conversions).
    func lengths(of input: AudioNode, outputFrames: Int64?, node: String, limit: Int64 = stretchLimit) throws(MixdownError) -> (input: Int64, output: Int64) {
        guard let n = input.length else {
            throw .invalidParameter(name: "input", value: "stream", reason: "\(node) needs an input of known length")
        }
        if limit == Self.stretchLimit { try validate() } else { try validate(limit: limit, parameter: node) }
        return (n, outputFrames ?? self.outputFrames(forInput: n))
    }

    /// The exact input position of output frame `j`: `frame` = floor(j / R), and
    /// `remainder / numerator` the fraction, 0 <= remainder < numerator.
    public func inputPosition(ofOutput j: Int64) -> (frame: Int64, remainder: Int64) {
        let x = Int128(j) * Int128(denominator)
        let n = FrameRounding.down.divide(x, by: Int128(numerator))
        return (Int64(n), Int64(x - n * Int128(numerator)))
    }

    public var description: String { "\(numerator)/\(denominator)" }
}
