import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// Synthetic pairs with known offsets and drifts, through another "microphone".
@Suite struct DriftEstimationTests {
    struct Case: Sendable, CustomStringConvertible {
        let offset: Double, ppm: Double, rate: Int, channels: Int, eq: Bool, snr: Double?
        var description: String { "offset \(offset) s, \(ppm) ppm, \(rate) Hz x \(channels), eq \(eq), snr \(snr.map { "\($0) dB" } ?? "none")" }
    }

    static let hourCases = [
        Case(offset: 12.3, ppm: 300, rate: 48_000, channels: 1, eq: true, snr: 10),
        Case(offset: -3.7, ppm: -300, rate: 44_100, channels: 2, eq: true, snr: 10),
        Case(offset: 0.75, ppm: 131, rate: 48_000, channels: 2, eq: false, snr: nil),
    ]

    @Test(arguments: hourCases)
    func anHourLongPairIsPlacedWithin1msAnd2ppm(_ c: Case) throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 3600
        pair.offsetSeconds = c.offset
        pair.ppm = c.ppm
        pair.recordingRate = c.rate
        pair.recordingChannels = c.channels
        pair.equalise = c.eq
        pair.snrDecibels = c.snr
        let truth = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        #expect(abs(e.offsetSeconds - truth.offsetSeconds) < 0.001, "offset \(e.offsetSeconds) vs \(truth.offsetSeconds)")
        #expect(abs(e.ppm - (truth.ratio - 1) * 1e6) < 2, "ppm \(e.ppm) vs \((truth.ratio - 1) * 1e6)")
        #expect(e.confidence > 0.8)
        // A window every 10 s of REC, centred at 5, 15, ... s, each a second long.
        let recSeconds = try AudioFileInfo.read(path: pair.recording).duration.approximateSeconds
        #expect(e.windows.count == Array(stride(from: 5.0, to: recSeconds - 0.5, by: 10)).count)
        let offGrid = e.windows.filter { w -> Bool in
            let phase: Double = abs(w.recordingTime.remainder(dividingBy: 10))
            return abs(phase - 5) > 0.001
        }
        #expect(offGrid.isEmpty)
        #expect(e.windows.filter { $0.status == "used" }.count == e.windowsUsed)
        // Every used window's residual is reported, and they are all under a millisecond.
        #expect(e.windows.filter { $0.status == "used" }.allSatisfy { abs($0.residual!) < 0.001 })
    }

    @Test func alignPutsTheRecordingOnTheReferencesClockWithin1ms() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 3600
        pair.offsetSeconds = 12.3
        pair.ppm = -287
        pair.equalise = true
        pair.snrDecibels = 10
        pair.recordingChannels = 2
        _ = try pair.run()
        let job = FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("aligned.wav"))
        let report = try job.run()
        let ref = try AudioFileInfo.read(path: pair.reference)
        let out = try AudioFileInfo.read(path: job.output)
        #expect(out.frames == ref.frames && out.sampleRate == ref.sampleRate && out.channelCount == 2)
        #expect(try #require(report.residualMaxLagMilliseconds) < 1)
        #expect(abs(try #require(report.residualPPM)) < 2)
        // An independent check of the file written.
        let check = try DriftEstimator(reference: pair.reference, recording: job.output).run()
        #expect(check.windows.filter { $0.status == "used" }.allSatisfy { abs($0.lag!) < 0.001 })
        #expect(check.windowsUsed > 300)
    }

    @Test func piecewiseFindsAChangeOfDriftWithin30sAndBothSlopesWithin5ppm() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 3600
        pair.offsetSeconds = 4
        pair.ppm = 200
        pair.ppmAfterHalf = -100
        pair.snrDecibels = 10
        let truth = try pair.run()
        var estimator = DriftEstimator(reference: pair.reference, recording: pair.recording)
        estimator.piecewise = true
        let e = try estimator.run()
        let segments = try #require(e.segments)
        #expect(segments.count == 2)
        #expect(abs(segments[0].end - truth.change!) < 30, "change at \(segments[0].end) vs \(truth.change!)")
        #expect(abs(segments[0].ppm - 200) < 5 && abs(segments[1].ppm + 100) < 5, "\(segments.map(\.ppm))")
        #expect(abs(segments[0].offsetSeconds - truth.offsetSeconds) < 0.001)
        // Without the drift change there is one segment.
        var steady = SyncTestPair(reference: dir.file("ref2.wav"), recording: dir.file("rec2.wav"))
        steady.duration = 900
        steady.ppm = 50
        _ = try steady.run()
        var again = DriftEstimator(reference: steady.reference, recording: steady.recording)
        again.piecewise = true
        #expect(try again.run().segments?.count == 1)
    }

    @Test func unrelatedRecordingsHaveLowConfidenceAndAlignRefuses() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.unrelated = true
        _ = try pair.run()
        let e = try DriftEstimator(reference: pair.reference, recording: pair.recording).run()
        #expect(e.confidence < 0.2)
        #expect(throws: MixdownError.self) { try e.requireConfidence(0.5) }
        let job = FileAlign(input: pair.recording, reference: pair.reference, output: dir.file("aligned.wav"))
        do {
            _ = try job.run()
            Issue.record("aligned unrelated recordings")
        } catch {
            #expect("\(error)".contains("with the two starts at most 60 s apart (--max-offset)"), "\(error)")
            #expect("\(error)".contains("else they are not recordings of the same event"))
        }
        #expect(!FileManager.default.fileExists(atPath: job.output))
        #expect(dir.contents.filter { $0.contains("aligned") }.isEmpty)
    }

    /// The caller's threshold decides acceptance only: the estimate of a pair is the same
    /// whatever minimum confidence is asked (it once chose its fit, and whether to look
    /// again more densely, by the caller's threshold).
    @Test func theMinimumConfidenceDoesNotChangeTheEstimate() throws {
        let dir = TempDir()
        for unrelated in [true, false] {
            var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
            pair.duration = 200
            pair.unrelated = unrelated
            pair.snrDecibels = unrelated ? nil : -6
            pair.ppm = 40
            _ = try pair.run()
            let estimates = try [0.0, 0.5, 0.95].map { minimum -> DriftEstimate in
                var estimator = DriftEstimator(reference: pair.reference, recording: pair.recording)
                estimator.tuning.minimumConfidence = minimum
                return try estimator.run()
            }
            for e in estimates.dropFirst() {
                #expect(e.offsetSeconds == estimates[0].offsetSeconds && e.ratio == estimates[0].ratio
                        && e.confidence == estimates[0].confidence && e.windowsUsed == estimates[0].windowsUsed,
                        "unrelated \(unrelated): \(e.confidence) against \(estimates[0].confidence)")
            }
        }
    }

    @Test func silentWindowsAreReportedNotUsed() throws {
        let dir = TempDir()
        // REF: speech-like; REC: the same with its middle minute silenced.
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 300
        pair.ppm = 100
        _ = try pair.run()
        var c = Composition()
        let id = c.addTrack()
        let rec = try AudioAsset(path: pair.recording)
        try c[trackID: id].addSegment(MediaTimeRange(start: .zero, duration: MediaTime(seconds: 120)), of: rec, at: .zero)
        try c[trackID: id].addSegment(MediaTimeRange(start: MediaTime(seconds: 180), end: rec.duration), of: rec, at: MediaTime(seconds: 180))
        try CompositionRender(composition: c, output: dir.file("holes.wav")).run()
        let e = try DriftEstimator(reference: pair.reference, recording: dir.file("holes.wav")).run()
        let silent = e.windows.filter { $0.status == "silent" }
        #expect(silent.count == 6)
        #expect(silent.allSatisfy { $0.recordingTime > 120 && $0.recordingTime < 180 })
        #expect(abs(e.ppm - 100) < 2)
    }

    @Test func aRecordingOfTheReferenceLoopedTwiceIsRefusedNamingBothCopies() throws {
        let dir = TempDir()
        var pair = SyncTestPair(reference: dir.file("ref.wav"), recording: dir.file("rec.wav"))
        pair.duration = 50
        _ = try pair.run()
        let (info, planes) = try readFile(pair.reference)
        try writeFile(dir.file("twice.wav"), planes.map { $0 + $0 }, sampleRate: info.sampleRate)
        // Both copies lie within the ±60 s search: REC's time 0 is REF's 0, or REF's -50 s.
        let e = try DriftEstimator(reference: pair.reference, recording: dir.file("twice.wav")).run()
        let offsets = [e.offsetSeconds, try #require(e.rivalOffsetSeconds)].sorted()
        #expect(abs(offsets[0] + 50) < 0.001 && abs(offsets[1]) < 0.001, "\(offsets)")
        #expect(throws: MixdownError.self) { try e.requireConfidence(0.5) }
    }
}
