import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

@Suite struct OutputChecksTests {
    /// A file padded by 100 frames reads +100; one 10 frames short reads −10.
    @Test func lengthDifferencesReadBackExactly() throws {
        let dir = TempDir()
        try writeFile(dir.file("in.wav"), [[Float](repeating: 0.1, count: 48_000)])
        try writeFile(dir.file("padded.wav"), [[Float](repeating: 0.1, count: 48_100)])
        try writeFile(dir.file("short.wav"), [[Float](repeating: 0.1, count: 47_990)])
        let one = StretchRatio(1, 1)
        #expect(try LengthCheck.measure(original: dir.file("in.wav"), output: dir.file("padded.wav"), ratio: one).difference == 100)
        #expect(try LengthCheck.measure(original: dir.file("in.wav"), output: dir.file("short.wav"), ratio: one).difference == -10)
        let drift = try LengthCheck.measure(original: dir.file("in.wav"), output: dir.file("padded.wav"), ratio: StretchRatio(10_001_309, 10_000_000))
        #expect(drift.targetFrames == 48_006 && drift.difference == 94)
    }

    /// A sine with uniform noise of known power: SINAD = 10·log10((A²/2) / (a²/3)).
    @Test func sinadOfAKnownMixture() throws {
        let dir = TempDir()
        let n = 10 * 48_000, a = 0.005
        let x = (0..<n).map { i in Float(0.5 * sin(2 * Double.pi * 997 * Double(i) / 48_000) + a * TestSignal.noise(Int64(i))) }
        try writeFile(dir.file("mix.wav"), [x], format: .f32)
        let fit = try SineFit.measure(path: dir.file("mix.wav"), frequency: 997)
        let expected = 10 * log10((0.25 / 2) / (a * a / 3))
        #expect(abs(fit.sinadDecibels - expected) < 0.2, "\(fit.sinadDecibels) vs \(expected)")
        #expect(abs(fit.amplitude - 0.5) < 1e-3)
        // A pure Float32 sine is far cleaner than any 16-bit file.
        try writeFile(dir.file("pure.wav"), [sine(997, frames: n)], format: .f32)
        #expect(try SineFit.measure(path: dir.file("pure.wav"), frequency: 997).sinadDecibels > 120)
        #expect(throws: MixdownError.self) { try SineFit.measure(path: dir.file("pure.wav"), frequency: 30_000) }
    }
}
