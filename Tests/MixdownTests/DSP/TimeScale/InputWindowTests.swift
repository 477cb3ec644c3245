import Testing
@testable import Mixdown

/// `InputWindow` directly: any window of absolute frames holds the input's frames, with
/// silence before frame 0 and from the length on; the input is read once, in order, and a
/// window that jumps past what it holds reads and drops the frames in between.
@Suite struct InputWindowTests {
    @Test(arguments: [1, 64, 4096])
    func windowsHoldTheInputsFrames(pull: Int) throws {
        let n = 10_000
        let up: [Float] = (0..<n).map { Float($0) + 1 }
        let planes: [[Float]] = [up, up.map { -$0 }]
        let source = ContractCheck.wrap(ArraySource(planes: planes))
        try source.prepare(maximumFrames: pull)
        let window = InputWindow(input: source, length: Int64(n), capacity: 3_000, maximumPull: pull, start: -700, label: "test")
        func expected(_ c: Int, _ f: Int64) -> Float { f < 0 || f >= Int64(n) ? 0 : planes[c][Int(f)] }
        var low: Int64 = -700
        var appendedFrames = 0
        var skipped: Int64 = 0
        var rng: UInt64 = 3
        while low < Int64(n) + 500 {
            rng = rng &* 6364136223846793005 &+ 1442695040888963407
            let width = Int64(rng >> 33) % 2_000 + 1
            if low > window.end { skipped += low - window.end }
            try window.slide(from: low, to: low + width) { _, count in appendedFrames += count }
            #expect(window.start == low && window.end >= low + width)
            for f in stride(from: low, to: low + width, by: 97) {
                for c in 0..<2 { #expect(window.pointer(c, at: f).pointee == expected(c, f), "frame \(f)") }
            }
            low += Int64(rng >> 40) % 900
        }
        // Every frame from the first window's start to the last one's end arrived once,
        // except those a jump forward passed over (read from the input and dropped).
        #expect(skipped > 0)
        #expect(Int64(appendedFrames) == window.end + 700 - skipped)
    }
}
