import Foundation
import Testing

/// `mixdown loudness`, and --loudness on the file commands: JSON keys, the normalised
/// file's measurement, and bad values refused with exit code 2 and nothing written.
@Suite struct LoudnessCLITests {
    struct Measured: Decodable {
        let integratedLufs: Double?
        let rangeLu: Double?
        let truePeakDbtp: Double?
        let samplePeakDbfs: Double?
    }
    struct Report: Decodable { let input: String; let loudness: Measured }

    static func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        let d = JSONDecoder()
        d.keyDecodingStrategy = .convertFromSnakeCase
        return try d.decode(type, from: Data(text.utf8))
    }

    @Test func measuresAFileAndNormalisesIt() throws {
        let ws = try Workspace()
        let r = try CLI.run(["loudness", "in.wav", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let m = try Self.decode(Report.self, r.stdout).loudness
        let before = try #require(m.integratedLufs)
        #expect(before < -3 && before > -70)
        #expect(m.rangeLu != nil && m.samplePeakDbfs != nil)
        #expect(try #require(m.truePeakDbtp) >= m.samplePeakDbfs!)

        let e = try CLI.run(["export", "in.wav", "out.wav", "--loudness", "-30", "--true-peak", "-2", "--json"], in: ws.path)
        #expect(e.code == 0, "\(e.stderr)")
        let after = try Self.decode(Report.self, try CLI.run(["loudness", "out.wav", "--json"], in: ws.path).stdout).loudness
        #expect(abs(try #require(after.integratedLufs) - -30) <= 0.05)
        #expect(try #require(after.truePeakDbtp) <= -2 + 0.01)

        let text = try CLI.run(["stretch", "in.wav", "s.wav", "--ratio", "1.0002", "--loudness", "-30"], in: ws.path)
        #expect(text.code == 0, "\(text.stderr)")
        #expect(text.stdout.contains("loudness: ") && text.stdout.contains("(input)"), "\(text.stdout)")
    }

    @Test func explainPrintsEachLevelledTrack() throws {
        let ws = try Workspace()
        try #"{"version": 1, "tracks": [{"name": "host", "loudness": -20, "segments": [{"file": "in.wav", "at": "0"}]}]}"#
            .write(toFile: ws.file("doc.json"), atomically: true, encoding: .utf8)
        let r = try CLI.run(["render", "doc.json", "--explain"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        #expect(r.stdout.contains("track 1 'host' levelled to -20.0 LUFS: measured "), "\(r.stdout)")
        let rendered = try CLI.run(["render", "doc.json", "out.wav", "--json"], in: ws.path)
        #expect(rendered.code == 0 && rendered.stdout.contains("\"track_loudness\":[{"), "\(rendered.stdout.prefix(300))")
    }

    @Test func badValuesAreUsageErrorsAndWriteNothing() throws {
        let ws = try Workspace()
        for (args, message) in [
            (["export", "in.wav", "a.wav", "--loudness", "2"], "--loudness 2.0: must be a loudness from -60 to 0 LUFS"),
            (["export", "in.wav", "a.wav", "--loudness", "-16", "--true-peak", "1"], "--true-peak 1.0: must be a ceiling from -30 to 0 dBTP"),
            (["export", "in.wav", "a.wav", "--true-peak", "-1"], "--true-peak and --limit go with --loudness"),
            (["export", "in.wav", "a.wav", "--limit"], "--true-peak and --limit go with --loudness"),
        ] {
            let r = try CLI.run(args, in: ws.path)
            #expect(r.code == 2, "\(args): \(r.code) \(r.stderr)")
            #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: ws.file("a.wav")))
        }
        let missing = try CLI.run(["loudness", "nothere.wav"], in: ws.path)
        #expect(missing.code == 1 && missing.stderr.contains("'nothere.wav': no such file"), "\(missing.stderr)")
    }
}
