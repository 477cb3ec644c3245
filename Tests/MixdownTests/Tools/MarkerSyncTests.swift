import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

@Suite struct MarkerSyncTests {
    /// A copy delayed by exactly 5 ms (240 frames of silence in front) reads as +5 ms at
    /// every marker; the untouched copy reads as 0.
    @Test func knownShiftsReadBackExactly() throws {
        let dir = TempDir()
        let rate = 48_000
        let signal = TestSignal(format: AudioFormat(sampleRate: rate, channelCount: 1), length: 200 * 48_000,
                                markerInterval: 60 * 48_000)
        let original = try renderAll(signal, blockSizes: [65_536])[0]
        try writeFile(dir.file("original.wav"), [original], format: .f32)
        try writeFile(dir.file("delayed.wav"), [[Float](repeating: 0, count: 240) + original.dropLast(240)], format: .f32)

        var same = MarkerSync(original: dir.file("original.wav"), stretched: dir.file("original.wav"))
        same.ratio = StretchRatio(1, 1)
        let zero = try same.run()
        #expect(zero.markers.map(\.sourceFrame) == [2_880_000, 5_760_000, 8_640_000])
        #expect(zero.markers.allSatisfy { abs($0.errorFrames) < 0.01 })

        var delayed = MarkerSync(original: dir.file("original.wav"), stretched: dir.file("delayed.wav"))
        delayed.ratio = StretchRatio(1, 1)
        let five = try delayed.run()
        #expect(five.markers.count == 3)
        #expect(five.markers.allSatisfy { abs($0.errorMilliseconds - 5) < 0.001 }, "\(five.markers)")
        #expect(abs(five.worstMilliseconds - 5) < 0.001)
    }

    @Test func mismatchedRatesAreRefused() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [[Float](repeating: 0, count: 1000)], sampleRate: 48_000)
        try writeFile(dir.file("b.wav"), [[Float](repeating: 0, count: 1000)], sampleRate: 44_100)
        #expect(throws: MixdownError.self) { try MarkerSync(original: dir.file("a.wav"), stretched: dir.file("b.wav")).run() }
    }
}
