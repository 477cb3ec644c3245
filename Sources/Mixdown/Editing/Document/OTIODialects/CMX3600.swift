import Foundation

/// The CMX 3600 dialect, as otio-cmx3600-adapter writes an EDL: a track's record
/// timecode is a window starting at minus its first record in and exactly as long as the
/// track, on a track named A1, A2...; the render starts at the timecode hour of the
/// earliest record in, and every event lands at its record timecode relative to it.
enum CMX3600: OTIODialect {
    /// A track name the CMX 3600 adapter gives an audio channel: A1, A2, ... (its `A` is A1).
    static func isChannel(_ name: String) -> Bool {
        name.count >= 2 && name.hasPrefix("A") && name.dropFirst().allSatisfy { $0.isASCII && $0.isNumber }
    }

    /// The adapter's window: one that lies wholly before the track (OTIO itself finds no
    /// child inside it), or on a track the adapter named (A1, A2...). Elsewhere a window
    /// that reaches into the track (-7 frames for 9 on a track named "a") is OTIO's own:
    /// silence, then the track.
    static func recordStart(track: JSONCursor, sourceRange sr: JSONCursor, trim r: (start: Rational, duration: Rational),
                            itemsLength t: Rational, name: String, nested: Bool) throws(MixdownError) -> OTIOTimeline.RecordStart? {
        let end = try r.start.adding(r.duration)
        guard r.start < .zero, !(end > .zero) || (!nested && r.duration == t && isChannel(name)) else { return nil }
        guard !nested, r.duration == t else {
            throw sr.fail("lies wholly before the track (\(String(format: "%.6f", -r.start.approximateSeconds)) s before it, \(String(format: "%.6f", r.duration.approximateSeconds)) s long) and is not as long as the track, as a CMX 3600 record timecode is: a window with nothing in it", at: "start_time")
        }
        let start = try Rational.zero.subtracting(r.start)
        var rate: (num: Int64, den: Int64)?
        if case .object(let so) = sr.value, let st = sr.member("start_time", in: so), case .object(let sto) = st.value,
           let rv = try st.member("rate", in: sto)?.number() {
            rate = OTIOTimeline.Reader.exactRate(rv)
        }
        var sequenceStart = Rational.zero
        var note = ""
        if let rate {
            // The sequence starts at the hour of its first record in (01:00:00:00, or
            // 00:00:00:00 for a sequence whose audio starts a little after it), when that
            // hour lies within a minute of it; else at the first record in: an EDL gives no
            // sequence start, and a rule that adds nearly an hour of silence no event asks
            // for (00:59:53:11 from 00:00:00:00) is wrong.
            let hour = try hourStart(of: start, rate: rate)
            if !(try start.subtracting(hour) > (try Rational(60, over: 1))) {
                sequenceStart = hour
                note = "the render starts at \(timecode(hour, rate: rate)), the hour of the first record in (\(timecode(start, rate: rate))), which lies within a minute of it: every event lands at its record timecode (--from sets another start)"
            } else {
                sequenceStart = start
                note = "the render starts at the first record in, \(timecode(start, rate: rate)) (the hour before it, \(timecode(hour, rate: rate)), lies more than a minute earlier): every event lands at its record timecode (--from sets another start)"
            }
        }
        return OTIOTimeline.RecordStart(start: start, sequenceStart: sequenceStart, note: note, rate: rate)
    }

    /// The timecode hour at or before `t` at `rate`, in seconds: whole hours of
    /// non-drop-frame timecode (3600 x the nominal rate frames), or at 29.97 and 59.94 of
    /// drop-frame timecode (108 or 216 frames fewer an hour) when that lies nearer.
    static func hourStart(of t: Rational, rate: (num: Int64, den: Int64)) throws(MixdownError) -> Rational {
        // Whole frames at the rate, rounded down (t is after 0 and exact).
        let frames = Int64(FrameRounding.down.divide(Int128(t.numerator) * Int128(rate.num), by: Int128(t.denominator) * Int128(rate.den)))
        let nominal = (rate.num + rate.den / 2) / rate.den
        let hour = 3600 * nominal
        var best = frames / hour * hour
        if rate.den == 1001, nominal % 30 == 0 {
            let dropHour = hour - 108 * (nominal / 30)
            best = max(best, frames / dropHour * dropHour)
        }
        return try Rational(Int128(best) * Int128(rate.den), over: Int128(rate.num))
    }

    /// A timecode ("HH:MM:SS:FF"; a ';' or '.' before the frames is drop-frame at 29.97
    /// and 59.94) at `rate`, in seconds, exactly; nil when it is not one.
    static func seconds(ofTimecode text: String, rate: (num: Int64, den: Int64)) -> Rational? {
        let nominal = (rate.num + rate.den / 2) / rate.den
        let drop = text.contains(";") || text.contains(".")
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == ";" || $0 == "." }).map { Int64($0) }
        guard parts.count == 4, parts.allSatisfy({ $0 != nil && $0! >= 0 }) else { return nil }
        let (h, m, s, f) = (parts[0]!, parts[1]!, parts[2]!, parts[3]!)
        guard m < 60, s < 60, f < nominal, h < 1_000_000 else { return nil }
        var frames = ((h * 60 + m) * 60 + s) * nominal + f
        if drop {
            guard rate.den == 1001, nominal % 30 == 0 else { return nil }
            let minutes = h * 60 + m, dropped = 2 * (nominal / 30)
            frames -= dropped * (minutes - minutes / 10)
        }
        return try? Rational(Int128(frames) * Int128(rate.den), over: Int128(rate.num))
    }

    /// "01:00:05:00" (non-drop-frame) for a time at `rate`.
    static func timecode(_ t: Rational, rate: (num: Int64, den: Int64)) -> String {
        let nominal = (rate.num + rate.den / 2) / rate.den
        let frames = Int64((t.approximateSeconds * Double(rate.num) / Double(rate.den)).rounded())
        let f = frames % nominal, secs = frames / nominal
        return String(format: "%02lld:%02lld:%02lld:%02lld", secs / 3600, secs / 60 % 60, secs % 60, f)
    }
}

extension CMX3600 {
    /// An EDL's audio channel is its track: the adapter names them A1, A2... (`A` is A1,
    /// `AA` is A1 and A2, each holding the event), and CMX 3600 patches source channel n to
    /// record channel n. A track `A<n>` of an EDL plays channel n of its file (a mono file's
    /// one channel: it cannot be split), at that channel's own place. An EDL is told by what
    /// the adapter leaves: the track's record timecode, or the clip's `metadata.cmx_3600`; a
    /// track someone named A1 in a timeline of their own plays its whole file (an `AA` event
    /// that carries neither is still split, by the split rule).
    static func clipChannel(_ clip: JSONCursor, _ members: JSONObject, track: OTIOTimeline.TrackContext) throws(MixdownError) -> OTIOTimeline.ChannelRequest? {
        guard isChannel(track.name), let n = Int(track.name.dropFirst()), n >= 1, n <= 64,
              track.recordTimecode || OTIOTimeline.metadata("cmx_3600", clip, members) != nil else { return nil }
        return .channel(source: n - 1, output: nil)
    }
}
