import Foundation
import Testing
@testable import Mixdown

@Suite struct PhaseContinuationTests {
    /// Two unrelated sines, 1 s at 48 kHz, the right channel's phase 40 degrees on.
    static func sines(frames n: Int) -> [[Float]] {
        (0..<2).map { c in
            (0..<n).map { i in
                let t = Double(i) / 48_000
                let shift = c == 1 ? 40 * Double.pi / 180 : 0
                return Float(0.3 * sin(2 * Double.pi * 1000.3 * t + shift) + 0.2 * sin(2 * Double.pi * 2717.9 * t + 1 + shift))
            }
        }
    }

    /// Runs a continuation over `x` from output frame `start` (delay 0) to `end`, jumping by
    /// `jump` input frames at `start`; returns its output from `start` and how many jumps turned.
    static func run(_ x: [[Float]], from start: Int, to end: Int, jump: Int64) throws -> (out: [[Float]], turned: Int) {
        let source = ContractCheck.wrap(ArraySource(planes: x))
        try source.prepare(maximumFrames: 4096)
        let window = InputWindow(input: source, length: Int64(x[0].count), capacity: x[0].count + 8192, maximumPull: 4096,
                                 start: -4096, label: "test")
        try window.slide(from: -4096, to: Int64(x[0].count + 4096))
        let continuation = PhaseContinuation(channels: 2, sampleRate: 48_000)
        let fifo = PlanarFIFO(channelCount: 2, capacity: end - start + continuation.hop)
        continuation.begin(at: Int64(start), delay: 0, input: window)
        if jump != 0 { continuation.jump(jump) }
        var made = start
        while made < end { made += continuation.step(input: window, into: fifo, limit: end - made) }
        let buffer = AudioBuffer(format: AudioFormat(sampleRate: 48_000, channelCount: 2), capacity: end - start)
        fifo.pop(into: buffer, frames: end - start)
        return ((0..<2).map { buffer.samples(channel: $0, frames: end - start) }, continuation.turnedJumps)
    }

    /// With no jump the continuation is the plain copy (within float rounding), and it can
    /// end at once.
    @Test func withoutAJumpItIsTheCopy() throws {
        let x = Self.sines(frames: 48_000)
        let (out, turned) = try Self.run(x, from: 12_000, to: 36_000, jump: 0)
        #expect(turned == 0)
        for c in 0..<2 {
            let error = zip(out[c], x[c][12_000..<36_000]).map { abs($0 - $1) }.max()!
            #expect(error < 1e-5, "channel \(c): \(error)")
        }
    }

    /// A physics check: steady partials run on through a jump as if no time had been taken
    /// (a repeat of 300 frames, and a skip of 517: neither a whole number of either sine's
    /// periods), so the output stays the input itself, every channel, to within -50 dB of
    /// the partials, where a plain jump leaves an error of about the signal's own size.
    @Test(arguments: [Int64(-300), Int64(517)])
    func steadyPartialsRunOnThroughAJump(jump: Int64) throws {
        let x = Self.sines(frames: 48_000)
        let (out, turned) = try Self.run(x, from: 12_000, to: 36_000, jump: jump)
        #expect(turned == 1)
        for c in 0..<2 {
            let error = zip(out[c], x[c][12_000..<36_000]).map { abs($0 - $1) }.max()!
            #expect(error < 0.5 * 0.003, "channel \(c): largest error \(error)")
            // What the jump alone would give: the input read `jump` frames on.
            let plain = (20_000..<30_000).map { abs(x[c][$0 + Int(jump)] - x[c][$0]) }.max()!
            #expect(plain > 0.1)
        }
    }
}
