import Foundation
import Testing
@testable import Mixdown

/// Several recordings of one event, made by sox from one ambience "world": REF holds
/// world 20–160 s at 48 kHz; a lavalier world 26.5–286.5 s at 44.1 kHz, 200 ppm slow; a far
/// recorder world 180–295 s, 150 ppm fast, which does not overlap REF but overlaps the
/// lavalier; and a camera whose clock runs 120 ppm slow, stopped and started: clips at
/// world 10–70 s and 100–160 s.
@Suite(.serialized) struct EventSyncTests {
    struct Event { let ref, lav, far, cam1, cam2: String }

    static func event(_ dir: TempDir) throws -> Event {
        let world = try MaterialTests.ambience(dir)
        let sox = { (arguments: [String]) throws in try MaterialTests.sox(arguments) }
        try sox([world, "-b", "16", dir.file("ref.wav"), "trim", "20", "140"])
        try sox([world, "-r", "44100", "-b", "16", dir.file("lav.wav"), "trim", "26.5", "260", "speed", "1.0002", "bass", "+3"])
        try sox([world, "-b", "16", dir.file("far.wav"), "trim", "180", "115", "speed", "0.99985", "treble", "-3"])
        // The camera's own clock: world 10 + 1.00012 τ at its time τ.
        try sox([world, "-b", "16", dir.file("camclock.wav"), "trim", "10", "170", "speed", "1.00012"])
        try sox([dir.file("camclock.wav"), dir.file("cam1.wav"), "trim", "0", String(format: "%.6f", 60 / 1.00012)])
        try sox([dir.file("camclock.wav"), dir.file("cam2.wav"), "trim", String(format: "%.6f", 90 / 1.00012), String(format: "%.6f", 60 / 1.00012)])
        return Event(ref: dir.file("ref.wav"), lav: dir.file("lav.wav"), far: dir.file("far.wav"), cam1: dir.file("cam1.wav"), cam2: dir.file("cam2.wav"))
    }

    static func sync(_ e: Event) throws -> EventSync.Result {
        var job = EventSync(reference: e.ref, recordings: [e.lav, e.far, e.cam1, e.cam2])
        job.devices = [SyncDevice(name: "camera", clips: [e.cam1, e.cam2])]
        return try job.run()
    }

    @Test(.enabled(if: MaterialTests.sox != nil)) func everyRecordingLandsWithin1msAnd1ppmAndSaysHow() throws {
        let dir = TempDir()
        let e = try Self.event(dir)
        let result = try Self.sync(e)
        try result.requireAllPlaced()
        let p = Dictionary(uniqueKeysWithValues: result.placements.map { ($0.recording, $0) })
        let truth: [(String, Double, Double)] = [(e.lav, 6.5, 200), (e.far, 160, -150), (e.cam1, -10, 120), (e.cam2, 80, 120)]
        for (path, offset, ppm) in truth {
            let estimate = try #require(p[path]?.estimate)
            #expect(abs(estimate.offsetSeconds - offset) < 0.001, "\(path): offset \(estimate.offsetSeconds)")
            #expect(abs(estimate.ppm - ppm) < 1, "\(path): \(estimate.ppm) ppm")
        }
        // REF cannot place the far recorder; the lavalier can.
        #expect(p[e.far]?.placedVia == [e.lav])
        #expect(p[e.lav]?.placedVia == [])
        // One clock, one drift.
        #expect(p[e.cam1]?.estimate?.ratio == p[e.cam2]?.estimate?.ratio)
        #expect(p[e.cam1]?.device == "camera" && p[e.lav]?.device == nil)
    }

    @Test(.enabled(if: MaterialTests.sox != nil)) func theDocumentPutsEveryClipOnItsPlaceAndTheStemsLineUp() throws {
        let dir = TempDir()
        let e = try Self.event(dir)
        let result = try Self.sync(e)
        let docPath = dir.file("event.json")
        try SyncDocument(result: result, devices: [SyncDevice(name: "camera", clips: [e.cam1, e.cam2])], documentPath: docPath)
            .write(to: docPath, overwrite: false)
        let doc = try CompositionDocument(contentsOf: docPath)
        #expect(doc.composition.tracks.map(\.name) == ["ref", "camera", "lav", "far"])
        // Every file segment starts where its estimate puts its first frame and lasts its
        // frames times the ratio, to the microsecond, after the track's scales rippled.
        for track in doc.composition.tracks.dropFirst() {
            for segment in track.segments {
                guard let source = segment.source else { continue }
                let placement = try #require(result.placements.first { URL(fileURLWithPath: $0.recording).lastPathComponent == URL(fileURLWithPath: source.asset.path).lastPathComponent })
                let estimate = try #require(placement.estimate)
                let start = source.range.start.approximateSeconds
                #expect(abs(segment.target.start.approximateSeconds - (estimate.offsetSeconds + estimate.ratio * start)) < 2e-6, "\(source.asset.path)")
                #expect(abs(segment.target.duration.approximateSeconds - estimate.ratio * source.range.duration.approximateSeconds) < 2e-6)
                #expect(segment.isScaled)
            }
        }
        // The stems: REF's length at REF's rate, and each on REF's clock.
        var stems = SyncStems(directory: dir.file("stems"))
        stems.settings.overwrite = false
        let reports = try stems.run(result)
        #expect(reports.count == 4)
        let refInfo = try AudioFileInfo.read(path: e.ref)
        for r in reports {
            let info = try AudioFileInfo.read(path: r.output)
            #expect(info.frames == refInfo.frames && info.sampleRate == refInfo.sampleRate)
            guard !r.output.hasSuffix("far.wav") else { continue }   // silent: it never overlaps REF
            let check = try DriftEstimator(reference: e.ref, recording: r.output).run()
            #expect(abs(check.offsetSeconds) < 0.001 && abs(check.ppm) < 1, "\(r.output): \(check.summary)")
        }
    }

    @Test(.enabled(if: MaterialTests.sox != nil)) func aRecordingOfAnotherEventIsNamedAndTheOthersStillPlaced() throws {
        let dir = TempDir()
        let e = try Self.event(dir)
        // sox -R restarts one noise sequence in every call: the world's pink swell is that
        // sequence from its time 0, so a pink noise from its start is the swell itself, which
        // the high band finds (at -20 s: it is no other event). Its part from 250 s on is
        // heard nowhere in REF (the world's 20-160 s).
        try MaterialTests.sox(["-n", "-r", "48000", "-c", "1", "-b", "16", dir.file("other.wav"), "synth", "400", "pinknoise", "tremolo", "0.5", "80",
                               "trim", "250", "120"])
        let result = try EventSync(reference: e.ref, recordings: [e.lav, dir.file("other.wav")]).run()
        #expect(result.unplaced.map(\.recording) == [dir.file("other.wav")])
        #expect(result.placements[0].isPlaced)
        #expect {
            try result.requireAllPlaced()
        } throws: { error in
            guard case MixdownError.unplaced(let recordings, let reasons) = error else { return false }
            return recordings == [dir.file("other.wav")] && reasons[0].contains("other.wav")
        }
    }

    @Test func badDeviceListsAreRefusedBeforeAnythingIsRead() throws {
        let dir = TempDir()
        // The lists are checked before any file is opened: these need not even be audio.
        for name in ["a.wav", "b.wav"] { FileManager.default.createFile(atPath: dir.file(name), contents: Data("x".utf8)) }
        var job = EventSync(reference: dir.file("a.wav"), recordings: [dir.file("b.wav")])
        job.devices = [SyncDevice(name: "cam", clips: [dir.file("b.wav"), dir.file("missing.wav")])]
        #expect(throws: MixdownError.invalidEvent(parameter: "--device cam", reason: "names '\(dir.file("missing.wav"))', which does not exist")) { try job.validate() }
        job.devices = [SyncDevice(name: "cam", clips: [dir.file("b.wav")]), SyncDevice(name: "cam", clips: [dir.file("a.wav")])]
        #expect(throws: MixdownError.invalidEvent(parameter: "--device cam", reason: "two devices are named 'cam'; names must be unique")) { try job.validate() }
        job.devices = []
        let stems = SyncStems(directory: dir.file("a.wav"))
        #expect(throws: MixdownError.invalidEvent(parameter: "--stems '\(dir.file("a.wav"))'", reason: "is a file, not a directory")) { try stems.checkDirectory() }
    }

    @Test func aDevicesClipsShareOneDriftAndOnePolarity() throws {
        // Two clips of one device, 100 ppm slow: one found inverted in 20 windows, the other
        // upright in 3 (a few eq'd windows can turn over): the device is wired one way.
        func clip(offset: Double, polarity: Int, used: Int) -> DriftEstimate {
            let windows = (0..<used).map { k -> DriftEstimate.Window in
                let t = 5 + 10 * Double(k)
                return .init(recordingTime: t, lag: offset + 100e-6 * t, correlation: 0.9, residual: 0, status: "used")
            }
            return DriftEstimate(reference: "ref.wav", recording: "clip\(offset).wav", offsetSeconds: offset, ratio: 1.0001, ppm: 100,
                                 confidence: 0.9, windowsUsed: used, windowsRejected: 0, residualRMSMilliseconds: 0,
                                 residualMaxMilliseconds: 0, segments: nil, windows: windows, seconds: 1, coarse: "envelope",
                                 polarity: polarity, rivalOffsetSeconds: nil)
        }
        let shared = try #require(EventSync.shareDrift([(1, clip(offset: 3, polarity: -1, used: 20)), (2, clip(offset: 90, polarity: 1, used: 3))],
                                                       fixedRatio: false))
        #expect(shared.map(\.1.polarity) == [-1, -1])
        #expect(shared.allSatisfy { abs($0.1.ppm - 100) < 1e-6 })
        #expect(abs(shared[0].1.offsetSeconds - 3) < 1e-9 && abs(shared[1].1.offsetSeconds - 90) < 1e-9)
        // REF's own device keeps REF's clock and REF's polarity.
        let withReference = try #require(EventSync.shareDrift([(1, clip(offset: 3, polarity: -1, used: 20))], fixedRatio: true))
        #expect(withReference[0].1.polarity == 1 && withReference[0].1.ratio == 1)
    }
}
