import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// The drift estimator against a truth Mixdown did not make: the drifting recording is
/// cut and sped up by sox (`trim`, `speed`, and its own `rate` resampler), so a fault
/// shared by Mixdown's resampler and its estimator cannot hide.
@Suite struct IndependentTruthTests {
    static let sox = ["/usr/bin/sox", "/usr/local/bin/sox"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test(.enabled(if: sox != nil), arguments: [(1.5, 131.0, 48_000), (-2.25, -250.0, 44_100)])
    func aPairDriftedBySoxIsPlacedWithin1msAnd2ppm(offset: Double, ppm: Double, rate: Int) throws {
        let dir = TempDir()
        let fs = 48_000, margin = 20, seconds = 600
        // The world: speech-like sound; REF is 600 s of it from 20 s on.
        let worldFrames = Int64((seconds + 2 * margin) * fs)
        let mono = AudioFormat(sampleRate: fs, channelCount: 1)
        try SyncTestPair.write(SpeechLikeSignal(format: mono, length: worldFrames, seed: 11), to: dir.file("world.wav"), frames: worldFrames)
        let refStart = Int64(margin * fs)
        try SyncTestPair.write(FileSource(path: dir.file("world.wav"), range: refStart..<(refStart + Int64(seconds * fs))),
                               to: dir.file("ref.wav"), frames: Int64(seconds * fs))
        // REC frame j plays world time (20 + offset) + r · j / rate: sox cuts the world at
        // 20 + offset s and plays it r times faster, at `rate`.
        let r = 1 + ppm / 1e6
        let p = Process()
        p.executableURL = URL(fileURLWithPath: Self.sox!)
        p.arguments = ["-q", dir.file("world.wav"), "-r", "\(rate)", "-b", "16", dir.file("rec.wav"),
                       "trim", String(format: "%.6f", Double(margin) + offset), "590", "speed", String(format: "%.9f", r)]
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let e = try DriftEstimator(reference: dir.file("ref.wav"), recording: dir.file("rec.wav")).run()
        #expect(abs(e.offsetSeconds - offset) < 0.001, "offset \(e.offsetSeconds) vs \(offset)")
        #expect(abs(e.ppm - ppm) < 2, "ppm \(e.ppm) vs \(ppm)")
        #expect(e.confidence > 0.8)
    }
}
