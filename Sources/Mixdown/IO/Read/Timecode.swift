/// SMPTE timecode ("HH:MM:SS:FF", or "HH:MM:SS;FF" for drop-frame) as a file's start on its
/// recorder's clock.
enum Timecode {
    /// The frames at `sampleRate` from midnight to `text` at the timecode rate `rate`
    /// (num/den frames per second), rounded half up from the exact time. Drop-frame at
    /// 30000/1001 and 60000/1001 skips frames 0 and 1 (0 to 3) of every minute but each
    /// tenth, as SMPTE 12M counts. Without a rate only a timecode whose frames field is 0
    /// can be read. Nil for text that is not a timecode, or a frames field past the rate.
    static func frames(parsing text: String, rate: (num: Int64, den: Int64)?, sampleRate: Int) -> Int64? {
        let dropFrame = text.contains(";") || text.contains(".")
        let parts = text.split(whereSeparator: { $0 == ":" || $0 == ";" || $0 == "." }).map { Int64($0) }
        guard parts.count == 4, parts.allSatisfy({ $0 != nil }) else { return nil }
        let h = parts[0]!, m = parts[1]!, s = parts[2]!, f = parts[3]!
        guard h >= 0, h < 24, m >= 0, m < 60, s >= 0, s < 60, f >= 0 else { return nil }
        let rateSamples = Int64(sampleRate)
        guard let (num, den) = rate, num > 0, den > 0 else {
            return f == 0 ? ((h * 60 + m) * 60 + s) * rateSamples : nil
        }
        let fps = (num + den / 2) / den
        guard f < fps else { return nil }
        var n = ((h * 60 + m) * 60 + s) * fps + f
        if dropFrame && den == 1001 && (fps == 30 || fps == 60) {
            let minutes = 60 * h + m
            n -= (fps / 15) * (minutes - minutes / 10)
        }
        // n frames of den/num seconds: n * den * sampleRate / num samples, half up.
        return (n * den * rateSamples + num / 2) / num
    }
}
