import Foundation
import FuzzSupport
import Mixdown

/// The time parser on any bytes: it must refuse or give a time within the accepted range,
/// and everything done with that time must not trap.
func fuzzTime(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: count), as: UTF8.self)
    for rate in [nil, 1, 44_100, 768_000] as [Int?] {
        guard let t = try? MediaTime(parsing: text, frameRate: rate) else { continue }
        precondition(t.isWithinAcceptedRange, "accepted \(t), beyond the limit")
        for r in [1, 48_000, 768_000, Int(Int32.max)] {
            for rule in FrameRounding.allCases { _ = t.frames(atRate: r, rounding: rule) }
        }
        precondition((try? MediaTime(parsing: t.description)) == t, "\(t) does not parse back")
        _ = t.clockDescription
        _ = (t + t - t).converted(toTimescale: 48_000)
        _ = try? t.checked("fuzz")
    }
    return 0
}

runFuzzer(fuzzTime)
