import Foundation
import Mixdown
import Testing

/// The example documents under tools/examples, rendered by the CLI on audio their own
/// generator makes; every output frame is checked against gains computed here in Double.
@Suite(.serialized) struct ExamplesTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../tools/examples").standardized.path

    /// A directory with the example documents and their audio (made once per run).
    static let prepared: Result<String, Error> = Result {
        let dir = NSTemporaryDirectory() + "mixdown-examples-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for name in try FileManager.default.contentsOfDirectory(atPath: examples) where name.hasSuffix(".json") {
            try FileManager.default.copyItem(atPath: examples + "/" + name, toPath: dir + "/" + name)
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: examples + "/make-audio")
        p.arguments = [dir + "/audio"]
        p.environment = ProcessInfo.processInfo.environment.merging(["MIXDOWN": CLI.executable.path]) { $1 }
        try p.run()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        return dir
    }

    static func read(_ path: String) throws -> [[Float]] {
        let source = try FileSource(path: path)
        try source.prepare(maximumFrames: 65_536)
        let buffer = AudioBuffer(format: source.format, capacity: 65_536)
        var planes = [[Float]](repeating: [], count: source.format.channelCount)
        while true {
            let s = try source.render(into: buffer, frames: 65_536)
            for c in planes.indices { planes[c] += buffer.samples(channel: c, frames: s.frames) }
            if s.ended { return planes }
        }
    }

    /// Renders `name`.json to 32-bit float and returns the output and the directory.
    static func render(_ name: String) throws -> (out: [[Float]], dir: String) {
        let dir = try prepared.get()
        let r = try CLI.run(["render", "\(name).json", "\(name).wav", "--format", "f32", "--overwrite", "-q"], in: dir)
        #expect(r.code == 0, "\(r.stderr)")
        return (try read(dir + "/\(name).wav"), dir)
    }

    /// A piecewise-linear gain over frames: (frame, gain) corners, held after the last.
    static func gain(_ corners: [(Int, Double)], at f: Int) -> Double {
        guard f >= corners[0].0 else { return 1 }
        for (a, b) in zip(corners, corners.dropFirst()) where f < b.0 {
            return a.1 + (b.1 - a.1) * Double(f - a.0) / Double(b.0 - a.0)
        }
        return corners.last!.1
    }

    static func check(_ out: [[Float]], expected: (Int, Int) -> Double, tolerance: Double = 2e-6) {
        var worst = 0.0, at = (0, 0)
        for c in out.indices {
            for f in out[c].indices {
                let e = abs(Double(out[c][f]) - expected(c, f))
                if e > worst { worst = e; at = (c, f) }
            }
        }
        #expect(worst <= tolerance, "worst error \(worst) at channel \(at.0), frame \(at.1)")
    }

    @Test func qa1730() throws {
        let (out, dir) = try Self.render("qa1730")
        let src = try Self.read(dir + "/audio/source.wav")
        #expect(out.count == 2 && out[0].count == 960_000)
        // Exactly 0 on frame 0, exactly the source from frame 480000 (10 s) on.
        Self.check(out) { c, f in Double(src[c][1_440_000 + f]) * Self.gain([(0, 0), (480_000, 1)], at: f) }
        #expect(out[0][0] == 0)
        #expect(Array(out[1][480_000...]) == Array(src[1][1_920_000..<2_400_000]))
    }

    @Test func musicUnderAVoiceOver() throws {
        let (out, dir) = try Self.render("voiceover")
        let music = try Self.read(dir + "/audio/music.wav")
        let line1 = try Self.read(dir + "/audio/line1.wav")[0], line2 = try Self.read(dir + "/audio/line2.wav")[0]
        #expect(out[0].count == 1_440_000)
        // Fade in 0-2 s; duck to 0.2 from 4.5 s, back from 8 s to 8.5 s; again at 14.5-18.5 s; fade out 27-30 s.
        let corners = [(0, 0.0), (96_000, 1), (216_000, 1), (240_000, 0.2), (384_000, 0.2), (408_000, 1),
                       (696_000, 1), (720_000, 0.2), (864_000, 0.2), (888_000, 1), (1_296_000, 1), (1_440_000, 0)]
        Self.check(out) { c, f in
            var voice = 0.0
            if (240_000..<384_000).contains(f) { voice = Double(line1[f - 240_000]) }
            if (720_000..<864_000).contains(f) { voice = Double(line2[f - 720_000]) }
            return Double(music[c][f]) * Self.gain(corners, at: f) + voice
        }
        // The ramps reach their values on their exact frames.
        #expect(out[0][240_000] == Float(Double(Float(0.2)) * Double(music[0][240_000])) + line1[0])
        #expect(out[1][96_000] == music[1][96_000])
    }

    @Test func wwdc2010EditingDemo() throws {
        let (out, dir) = try Self.render("wwdc2010")
        let clips = try (1...3).map { try Self.read(dir + "/audio/clip\($0).wav") }
        let commentary = try Self.read(dir + "/audio/commentary.wav")[0]
        #expect(out[0].count == 768_000)
        let duck = pow(10.0, -12.0 / 20)
        let corners = [(516_000, 1.0), (528_000, duck)]
        Self.check(out) { c, f in
            let main: Float = f < 192_000 ? clips[0][c][f] : f < 384_000 ? clips[1][c][f - 192_000 + 48_000] : clips[2][c][f - 384_000 + 96_000]
            let talk = f >= 528_000 ? Double(commentary[f - 528_000]) : 0
            return Double(main) * Self.gain(corners, at: f) + talk
        }
        // The cuts are sample-exact: the frame before and after each edit.
        #expect(out[0][191_999] == clips[0][0][191_999] && out[0][192_000] == clips[1][0][48_000])
        #expect(out[0][384_000] == clips[2][0][96_000])
    }

    @Test func aMonoFileAt44kAndAStereoFileAt48k() throws {
        let (out, dir) = try Self.render("mixed-rates")
        let stereo = try Self.read(dir + "/audio/stereo48k.wav")
        #expect(out.count == 2 && out[0].count == 480_000)
        // Take the 48 kHz file out: what is left is the resampled mono file, the same on both channels.
        var worst: Float = 0
        for f in 2_000..<478_000 {
            let left = out[0][f] - 0.5 * stereo[0][f], right = out[1][f] - 0.5 * stereo[1][f]
            #expect(abs(left - right) < 1e-6)
            let ideal = Float(0.25 * sin(2 * Double.pi * 441 * Double(f) / 48_000))
            worst = max(worst, abs(left - ideal))
        }
        #expect(worst < 1e-3, "resampled sine off by \(worst)")
    }

    @Test func explainPrintsTheSegmentTableAndGainsAndWritesNothing() throws {
        let dir = try Self.prepared.get()
        let r = try CLI.run(["render", "wwdc2010.json", "--explain", "--json"], in: dir)
        #expect(r.code == 0)
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let segments = obj["segments"] as! [[String: Any]]
        #expect(segments.map { $0["target_start_frame"] as! Int } == [0, 192_000, 384_000, 0, 528_000])
        #expect(segments.map { $0["source_start_frame"] as? Int } == [0, 48_000, 96_000, nil, 0])
        let gains = (obj["gains"] as! [[String: Any]])[0]["spans"] as! [[String: Any]]
        // The ramp back up starts where the commentary ends, at the end of the composition.
        #expect(gains.map { $0["start_frame"] as! Int } == [0, 516_000, 528_000, 768_000, 792_000])
        let text = try CLI.run(["render", "voiceover.json", "--explain"], in: dir)
        #expect(text.stdout.contains("216000..<240000  ramp 1 -> 0.2"))
        #expect(text.stdout.contains("[1] 0:00:05.000000-0:00:08.000000 frames 240000..<384000"))
    }

    @Test func aBadDocumentExitsWithItsJSONPathAndWritesNothing() throws {
        let dir = try Self.prepared.get()
        let doc = #"{"version": 1, "tracks": [{"segments": [{"file": "audio/music.wav", "at": "0"}]}, {"segments": [{"file": "audio/nope.wav", "at": "0"}]}]}"#
        try doc.write(toFile: dir + "/bad.json", atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "bad.json", "bad.wav"], in: dir)
        #expect(r.code == 1)
        #expect(r.stderr.contains("tracks[1].segments[0].file"))
        #expect(r.stderr.contains("no such file"))
        #expect(!FileManager.default.fileExists(atPath: dir + "/bad.wav"))
        let none = try CLI.run(["render", "missing.json", "x.wav"], in: dir)
        #expect(none.code == 1 && none.stderr.contains("missing.json"))
    }
}
