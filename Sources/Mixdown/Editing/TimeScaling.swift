extension MediaTime {
    /// 705,600,000 ticks per second: a multiple of every common audio rate (8 kHz to
    /// 192 kHz, 44.1 kHz's family included), so frame boundaries at those rates are exact.
    public static let flickTimescale: Int32 = 705_600_000

    /// `self × numerator / denominator`, for rescaling edits. Exact when the reduced
    /// result's timescale fits in Int32; otherwise rounded to the nearest flick
    /// (1/705,600,000 s), half away from zero, and flagged `hasBeenRounded`. Nil when the
    /// result does not fit at all, or `denominator` is zero.
    func scaled(by numerator: MediaTime, over denominator: MediaTime) -> MediaTime? {
        guard isNumeric, numerator.isNumeric, denominator.isNumeric, denominator.value != 0 else { return nil }
        // (v/s)·(a/as)/(b/bs) = v·a·bs / (s·as·b)
        let (p1, o1) = Int128(value).multipliedReportingOverflow(by: Int128(numerator.value))
        let (num0, o2) = p1.multipliedReportingOverflow(by: Int128(denominator.timescale))
        let (q1, o3) = Int128(timescale).multipliedReportingOverflow(by: Int128(numerator.timescale))
        let (den0, o4) = q1.multipliedReportingOverflow(by: Int128(denominator.value))
        guard !(o1 || o2 || o3 || o4) else { return nil }
        var num = den0 < 0 ? -num0 : num0
        var den = den0 < 0 ? -den0 : den0
        var a = num < 0 ? -num : num, b = den
        while b != 0 { (a, b) = (b, a % b) }
        if a > 1 { num /= a; den /= a }
        if den <= Int128(Int32.max), let v = Int64(exactly: num) {
            return MediaTime(value: v, timescale: Int32(den))
        }
        let (wide, o5) = num.multipliedReportingOverflow(by: Int128(Self.flickTimescale))
        guard !o5, let v = Int64(exactly: FrameRounding.standard.divide(wide, by: den)) else { return nil }
        return MediaTime(value: v, timescale: Self.flickTimescale, flags: [.valid, .hasBeenRounded])
    }
}
