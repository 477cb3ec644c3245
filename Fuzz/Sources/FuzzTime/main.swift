import Foundation
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

/// libFuzzer's entry for programs with their own main (SwiftPM gives the executable its
/// own entry point, so libFuzzer's `main` is not the one that runs).
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(_ argc: UnsafeMutablePointer<CInt>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
                         _ callback: @convention(c) (UnsafePointer<UInt8>, Int) -> CInt) -> CInt

// Top-level code: SwiftPM makes this file the program's entry point.
var argc = CommandLine.argc
var argv = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&argc, &argv, fuzzTime))
