import Foundation

/// The CMX 3600 dialect, as otio-cmx3600-adapter writes it: a track's record timecode
/// is a window starting at minus its first record in, on a track named A1, A2...; the
/// render starts at the timecode hour of the earliest record in.
extension OTIOTimeline.Reader {
    /// A track name the CMX 3600 adapter gives an audio channel: A1, A2, ... (its `A` is A1).
    static func isCMXChannel(_ name: String) -> Bool {
        name.count >= 2 && name.hasPrefix("A") && name.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The timecode hour at or before `t` at `rate`, in seconds: whole hours of
    /// non-drop-frame timecode (3600 x the nominal rate frames), or at 29.97 and 59.94 of
    /// drop-frame timecode (108 or 216 frames fewer an hour) when that lies nearer.
    static func hourStart(of t: OTIOTimeline.Q, rate: (num: Int64, den: Int64)) throws(MixdownError) -> OTIOTimeline.Q {
        // Whole frames at the rate, rounded down (t is after 0 and exact).
        let exact = try t * OTIOTimeline.Q(rate.num, rate.den)
        let frames = exact.n / exact.d
        let nominal = (rate.num + rate.den / 2) / rate.den
        let hour = 3600 * nominal
        var best = frames / hour * hour
        if rate.den == 1001, nominal % 30 == 0 {
            let dropHour = hour - 108 * (nominal / 30)
            best = max(best, frames / dropHour * dropHour)
        }
        return try OTIOTimeline.Q(best, 1) / OTIOTimeline.Q(rate.num, rate.den)
    }

    /// "01:00:05:00" (non-drop-frame) for a time at `rate`.
    static func timecode(_ t: OTIOTimeline.Q, rate: (num: Int64, den: Int64)) -> String {
        let nominal = (rate.num + rate.den / 2) / rate.den
        let frames = Int64((t.seconds * Double(rate.num) / Double(rate.den)).rounded())
        let f = frames % nominal, secs = frames / nominal
        return String(format: "%02lld:%02lld:%02lld:%02lld", secs / 3600, secs / 60 % 60, secs % 60, f)
    }
}
