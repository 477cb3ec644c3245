import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// Clocks that wander: the map's fit, its render, and the check of what was written.
@Suite struct ClockMapTests {
    // MARK: the smoother

    @Test func theSmootherPassesAQuadraticThroughAtAnyStiffnessAndFillsAGap() throws {
        // A clock whose rate ramps steadily has a quadratic lag: the third differences are
        // zero, so no stiffness bends it, and a window left out (weight 0) is filled exactly.
        let t = (0..<40).map { 5 + 10 * Double($0) }
        let y = t.map { 0.3 + 0.01 * $0 + 2e-5 * $0 * $0 }
        var w = [Double](repeating: 1, count: t.count)
        w[17] = 0
        w[18] = 0
        for lambda in [0.01, 1, 1e4, 1e8] {
            let z = try #require(ClockMapFit.smooth(t: t, y: y, weights: w, stiffness: lambda))
            for i in t.indices { #expect(abs(z[i] - y[i]) < 1e-6, "λ \(lambda), point \(i): \(z[i]) vs \(y[i])") }
        }
        // Too few points weigh: no fit.
        #expect(ClockMapFit.smooth(t: t, y: y, weights: t.indices.map { $0 < 3 ? 1 : 0 }, stiffness: 1) == nil)
    }

    /// Deterministic noise of the given rms, seconds.
    static func noise(_ n: Int, rms: Double, seed: UInt64 = 3) -> [Double] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return (Double(s >> 11) / Double(1 << 53) * 2 - 1) * rms * 1.7320508
        }
    }

    @Test func aSteadyClockKeepsItsLineAndAWanderingOneGetsAMap() throws {
        let t = (0..<60).map { 5 + 10 * Double($0) }
        let n = Self.noise(t.count, rms: 0.000_03)
        // Steady: 100 ppm and 0.03 ms of window noise. No map.
        let steady = t.indices.map { (t[$0], 2.5 + 1e-4 * t[$0] + n[$0]) }
        #expect(ClockMapFit.fit(steady) == nil)
        // 100 ppm ± 20 ppm over the 10 minutes: a map, within 0.05 ms of the truth at every
        // window (the line is 2 ms off).
        let amplitude = 20e-6 * 600 / (2 * Double.pi)
        let truth = { (x: Double) in 2.5 + 1e-4 * x + amplitude * (1 - cos(2 * Double.pi * x / 600)) }
        let wandering = t.indices.map { (t[$0], truth(t[$0]) + n[$0]) }
        let map = try #require(ClockMapFit.fit(wandering))
        #expect(map.lineHeldOutRMS > 10 * map.heldOutRMS)
        for i in t.indices { #expect(abs(map.fitted[i] - truth(t[i])) < 0.000_05, "window at \(t[i]) s") }
        // A gross outlier is dropped, not followed.
        var spiked = wandering
        spiked[30].1 += 0.004
        let robust = try #require(ClockMapFit.fit(spiked))
        #expect(!robust.inliers[30])
        #expect(abs(robust.fitted[30] - truth(t[30])) < 0.000_05)
    }

    @Test func aMapRefusesKnotsThatRunBackwards() throws {
        let k = [ClockMap.Knot(recordingFrame: 0, referenceTime: MediaTime(frames: 100, sampleRate: 48_000)),
                 ClockMap.Knot(recordingFrame: 48_000, referenceTime: MediaTime(frames: 48_105, sampleRate: 48_000)),
                 ClockMap.Knot(recordingFrame: 96_000, referenceTime: MediaTime(frames: 48_000, sampleRate: 48_000))]
        #expect(throws: MixdownError.self) { try ClockMap(recordingRate: 48_000, referenceRate: 48_000, knots: k) }
        do {
            _ = try ClockMap(recordingRate: 48_000, referenceRate: 48_000, knots: k)
        } catch {
            #expect(error.description.contains("clock map knot 2"))
            #expect(error.description.contains("must come after knot 1"))
        }
        let map = try ClockMap(recordingRate: 48_000, referenceRate: 48_000, knots: Array(k.prefix(2)))
        #expect(abs(map.referenceSeconds(atRecordingSeconds: 0.5) - (100 + 24_002.5) / 48_000) < 1e-12)
    }

    // MARK: the render along a map

    @Test(arguments: [[1], [64], [512], [4096], [1, 300, 4096, 17, 64]])
    func piecesOfOneRatioJoinIntoExactlyTheSingleResamplersOutput(_ blocks: [Int]) throws {
        // Knots on one line (ratio 3/2): the pieces' positions are the single node's, so the
        // output is bit-identical: no seam at the knots, whatever the block sizes.
        let input = (0..<9_000).map { Float(sin(Double($0) * 0.05) + 0.3 * sin(Double($0) * 0.71)) }
        let dir = TempDir()
        let path = dir.file("in.wav")
        try writeFile(path, [input], type: .wav)   // float WAV: exact samples
        let single = try renderAll(Resampler(input: ArraySource(planes: [try readFile(path).planes[0]]), ratio: StretchRatio(3, 2)), blockSizes: blocks)[0]
        let knots = [(0, 0), (2_000, 3_000), (2_002, 3_003), (6_000, 9_000), (9_000, 13_500)].map {
            ClockMap.Knot(recordingFrame: Int64($0.0), referenceTime: MediaTime(frames: Int64($0.1), sampleRate: 48_000))
        }
        let map = try ClockMap(recordingRate: 48_000, referenceRate: 48_000, knots: knots)
        let items = try FileAlign.mapItems(map, path: path, recordingFrames: 9_000, referenceFrames: 13_500, quality: .best, threads: 1, invert: false)
        let player = TrackPlayer(format: AudioFormat(sampleRate: 48_000, channelCount: 1), length: 13_500, items: items, label: "map")
        let pieces = try renderAll(player, blockSizes: blocks)[0]
        #expect(pieces.count == single.count)
        #expect(pieces == single)
    }

    // MARK: end to end

    @Test func aWanderingClockIsMappedAndAlignedWithinATenthOfAMillisecond() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 600
        pair.offsetSeconds = 2.5
        pair.ppm = 100
        pair.wander = .sinusoid(amplitudePPM: 20, periodSeconds: 600)
        let truth = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        let map = try #require(e.map)
        #expect(e.confidence >= 0.8)
        #expect(e.residualMaxMilliseconds < 0.25)
        // One ratio would be about 2 ms off: the map is what places it, and a caller that
        // takes only a line (the C API, Python) is refused rather than given it.
        #expect(try #require(e.lineDepartureMilliseconds) > 1.5)
        let oneLine = #expect(throws: MixdownError.self) { try e.requireOneLine() }
        #expect(oneLine?.description.contains("REC's clock wanders: the best single offset and ratio are") == true)
        let recSeconds = try AudioFileInfo.read(path: pair.recording).duration.approximateSeconds
        #expect(map.knots.first!.recordingFrame == 0)
        #expect(map.knots.last!.recordingFrame == (try AudioFileInfo.read(path: pair.recording).frames))
        for i in 0...200 {
            let t = recSeconds * Double(i) / 200
            let off = (map.referenceSeconds(atRecordingSeconds: t) - truth.referenceSeconds(atRecordingSeconds: t)) * 1000
            #expect(abs(off) < 0.1, "map at \(t) s: \(off) ms off")
        }
        // The render follows it: REF's exact length, and the check finds every window within 0.1 ms.
        let report = try FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("aligned.wav")).run()
        #expect(report.outputFrames == 600 * 48_000)
        #expect(report.mapKnots == map.knots.count)
        #expect(try #require(report.residualMaxLagMilliseconds) < 0.1)
        #expect(try AudioFileInfo.read(path: dir.file("aligned.wav")).frames == 600 * 48_000)

        // The same estimate without its map (one ratio, as before): the check finds the
        // output milliseconds off, and nothing is left.
        var line = e
        line.map = nil
        var job = FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("line.wav"))
        job.estimate = line
        let refused = #expect(throws: MixdownError.self) { try job.run() }
        var worst = 0.0
        if case .misaligned(let output, _, let w, _, _)? = refused {
            #expect(output == dir.file("line.wav"))
            worst = w
        }
        #expect(worst > 0.5, "\(String(describing: refused))")
        #expect(refused?.description.contains("nothing was written") == true)
        #expect(!FileManager.default.fileExists(atPath: dir.file("line.wav")))
        #expect(dir.contents == ["aligned.wav", "rec.wav", "ref.wav"])

        // Straight pieces through the curving clock are not confident.
        var piecewise = DriftEstimator(reference: pair.reference, recording: pair.recording)
        piecewise.piecewise = true
        let pieces = try piecewise.run()
        #expect(pieces.map == nil)
        #expect(pieces.confidence < 0.5, "piecewise confidence \(pieces.confidence), residual max \(pieces.residualMaxMilliseconds) ms")
    }

    struct LongCase: Sendable, CustomStringConvertible {
        let seconds: Int64, wander: SyncTestPair.Wander, eq: Bool
        var description: String { "\(seconds) s, \(wander)" }
    }

    /// Half an hour of a clock that follows a slow sinusoid (100 ± 20 ppm), through another
    /// microphone; an hour of a clock warming up (15 ppm more every hour: the 10 ms that
    /// 5 ppm per hour leaves over three hours, in a third of the time).
    @Test(arguments: [LongCase(seconds: 1800, wander: .sinusoid(amplitudePPM: 20, periodSeconds: 1800), eq: true),
                      LongCase(seconds: 3600, wander: .ramp(ppmPerHour: 15), eq: false)])
    func overLongRecordingsEveryMomentLandsWithinATenthOfAMillisecond(_ c: LongCase) throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = c.seconds
        pair.offsetSeconds = 2.5
        pair.ppm = 100
        pair.wander = c.wander
        pair.equalise = c.eq
        pair.snrDecibels = c.eq ? 20 : nil
        let truth = try pair.run()
        let report = try FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("aligned.wav")).run()
        #expect(report.mapKnots != nil)
        #expect(report.outputFrames == c.seconds * 48_000)
        #expect(try AudioFileInfo.read(path: dir.file("aligned.wav")).frames == c.seconds * 48_000)
        #expect(try #require(report.residualMaxLagMilliseconds) < 0.1)
        #expect(report.confidence >= 0.8)
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        let map = try #require(e.map)
        let recSeconds = try AudioFileInfo.read(path: pair.recording).duration.approximateSeconds
        var worst = 0.0
        for i in 0...1000 {
            let t = recSeconds * Double(i) / 1000
            worst = max(worst, abs(map.referenceSeconds(atRecordingSeconds: t) - truth.referenceSeconds(atRecordingSeconds: t)))
        }
        #expect(worst < 0.000_1, "the map is \(worst * 1000) ms off at worst")
        #expect(try #require(e.lineDepartureMilliseconds) > 2)
    }

    @Test func aSteadyClockGivesNoMapAndTheSameLine() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.offsetSeconds = 1.25
        pair.ppm = -180
        pair.equalise = true
        pair.snrDecibels = 15
        let truth = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        #expect(e.map == nil)
        #expect(e.lineDepartureMilliseconds == nil)
        try e.requireOneLine()
        #expect(abs(e.offsetSeconds - truth.offsetSeconds) < 0.000_1)
        #expect(e.confidence >= 0.8)
    }
}
