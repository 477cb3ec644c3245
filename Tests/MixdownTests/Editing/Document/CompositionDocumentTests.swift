import Foundation
import Testing
@testable import Mixdown

@Suite struct CompositionDocumentTests {
    /// A directory with a.wav (2 s, 48 kHz stereo) and b.wav (1 s, 44.1 kHz mono).
    static func directory() throws -> TempDir {
        let dir = TempDir()
        try FileManager.default.createDirectory(atPath: dir.file("audio"), withIntermediateDirectories: true)
        let s = sine(300, frames: 96_000)
        try writeFile(dir.file("audio/a.wav"), [s, s])
        try writeFile(dir.file("audio/b.wav"), [sine(300, rate: 44_100, frames: 44_100)], sampleRate: 44_100)
        return dir
    }

    static func load(_ json: String, in dir: TempDir) throws(MixdownError) -> CompositionDocument {
        try CompositionDocument(data: Data(json.utf8), path: dir.file("doc.json"))
    }

    @Test func aDocumentSaysEverything() throws {
        let dir = try Self.directory()
        let doc = try Self.load("""
        {"version": 1,
         "output": {"sample_rate": 48000, "channels": 2, "preset": "wav24"},
         "time_range": {"start": "0.5", "end": "3"},
         "time_pitch_algorithm": "varispeed",
         "metadata": {"title": "T"},
         "tracks": [
           {"name": "music", "segments": [{"file": "audio/a.wav", "source": {"start": "0", "duration": "2"}, "at": "0"},
                                          {"empty": {"start": "2", "duration": "1.5"}}],
            "volume": [{"volume": 0.5, "at": "0"}, {"ramp": {"from": 0.5, "to": 1, "start": "3", "end": "168000f"}}]},
           {"name": "voice", "segments": [{"file": "audio/b.wav", "source": {"start": "22050f", "end": "1"}, "at": "1001/1000"}]}
         ],
         "scale": [{"time_range": {"start": "0", "duration": "1"}, "to_duration": "1.5"}],
         "ducking": [{"track": "music", "while": "voice", "level_db": -6, "ramp_down": "0.1", "ramp_up": "0.1"}]}
        """, in: dir)
        #expect(doc.composition.tracks.map(\.name) == ["music", "voice"])
        #expect(doc.outputFormat == AudioFormat(sampleRate: 48_000, channelCount: 2))
        #expect(doc.preset == .wav24 && doc.timePitchAlgorithm == .varispeed && doc.metadata.title == "T")
        let music = doc.composition.tracks[0]
        // Scaled: 0-1 s became 0-1.5 s; the rest moved by 0.5 s, the empty edit too.
        #expect(music.placedSegments.map(\.target.end.approximateSeconds) == [1.5, 2.5, 4])
        #expect(music.duration == MediaTime(seconds: 4))
        let voice = doc.composition.tracks[1].placedSegments[0]
        // 22050f counts at the file's rate (44.1 kHz): 0.5 s. "at" lies after the scaled range: it moves by 0.5 s, 1.001 s -> 1.501 s.
        #expect(voice.source?.range.start == MediaTime(value: 1, timescale: 2))
        #expect(voice.target.start == MediaTime(value: 1501, timescale: 1000))
        let plan = try doc.render(to: dir.file("o.wav")).plan()
        #expect(plan.frames == 24_000..<144_000)
        #expect(plan.encoding.sampleFormat == .s24)
        let events = doc.audioMix[trackID: music.trackID].volume.events
        #expect(events.count == 4)
    }

    /// (document, JSON path the error names, words the message holds)
    static let bad: [(String, String, String)] = [
        (#"{"version": 2, "tracks": []}"#, "version", "unknown version 2"),
        (#"{"tracks": []}"#, "(top level)", "missing 'version'"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/missing.wav", "at": "0"}]}]}"#,
         "tracks[0].segments[0].file", "no such file"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "1:7x"}]}]}"#,
         "tracks[0].segments[0].at", "is not a time"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": 3}]}]}"#,
         "tracks[0].segments[0].at", "must be a time string"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}, {"segments": [{"file": "audio/a.wav", "at": "0"}, {"file": "audio/b.wav", "at": "1.5"}]}]}"#,
         "tracks[1].segments[1]", "overlaps tracks[1].segments[0]"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "source": {"start": "1", "duration": "2"}, "at": "0"}]}]}"#,
         "tracks[0].segments[0].source", "lies outside"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"ramp": {"from": 0, "to": 1, "start": "1", "end": "0.5"}}]}]}"#,
         "tracks[0].volume[0].ramp.end", "is not after its start"),
        (#"{"version": 1, "tracks": [{"name": "m", "segments": [{"file": "audio/a.wav", "at": "0"}]}], "ducking": [{"track": "m", "while": "voice", "level": 0.2}]}"#,
         "ducking[0].while", "no track named 'voice'"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0", "gain": 2}]}]}"#,
         "tracks[0].segments[0].gain", "unknown key 'gain'"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"volume": 1, "at": "1"}, {"ramp": {"from": 0, "to": 1, "start": "0.5", "end": "1.5"}}]}]}"#,
         "tracks[0].volume", "overlaps"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}], "scale": [{"time_range": {"start": "0", "duration": "1"}, "to_duration": "9"}]}"#,
         "scale[0].to_duration", "by 9.0: a scale must lie between 0.25 and 4"),
        (#"{"version": 1, "tracks": [ }"#, "tracks[0]", "is not valid JSON (line 1, column 28): unexpected '}' where a value should be"),
        // Issue 18, point 4: each with its JSON path, never a usage error without one.
        (#"{"version": 1, "version": 2, "tracks": []}"#, "version", "the key \"version\" is given twice in one object"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"volume": 1e999, "at": "0"}]}]}"#,
         "tracks[0].volume[0].volume", "lies beyond the range of a Double"),
        (#"{"version": 1, "time_range": {"start": "-1", "duration": "1"}, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}]}"#,
         "time_range.start", "must start at or after 0"),
        (#"{"version": 1, "output": {"channels": 3}, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}]}"#,
         "output.channels", "3 channels cannot be made from"),
        (#"{"version": 1, "output": {"sample_rate": 100}, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}]}"#,
         "output.sample_rate", "100 Hz cannot be made from"),
        (#"{"version": 1, "output": {"sample_rate": 1}, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}]}"#,
         "output.sample_rate", "1 Hz cannot be made from"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]}]}]}"#,
         "tracks[0].segments[0].at" + String(repeating: "[0]", count: 59), "nested deeper than 64 levels"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "5124095576:00:00"}]}]}"#,
         "tracks[0].segments[0].at", "beyond the largest time Mixdown accepts, 1000000:00:00.000000"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "1000000000000000"}]}]}"#,
         "tracks[0].segments[0].at", "beyond the largest time Mixdown accepts"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "source": {"start": "0", "duration": "99999999999:00:00"}, "at": "0"}]}]}"#,
         "tracks[0].segments[0].source.duration", "beyond the largest time"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"volume": 1, "at": "9223372036854775807f"}]}]}"#,
         "tracks[0].volume[0].at", "beyond the largest time"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"ramp": {"from": 0, "to": 1, "start": "0", "duration": "99999999999:00:00"}}]}]}"#,
         "tracks[0].volume[0].ramp.duration", "beyond the largest time"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}], "scale": [{"time_range": {"start": "0", "duration": "1"}, "to_duration": "1000000000000000"}]}"#,
         "scale[0].to_duration", "beyond the largest time"),
        (#"{"version": 1, "time_range": {"start": "0", "duration": "1000000000000000"}, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}]}"#,
         "time_range.duration", "beyond the largest time"),
        (#"{"version": 1, "tracks": [{"segments": [{"empty": {"start": "0", "duration": "99999999999:00:00"}}]}]}"#,
         "tracks[0].segments[0].empty.duration", "beyond the largest time"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0"}]}, {"segments": [{"file": "audio/a.wav", "at": "0"}]}], "ducking": [{"track": "track 1", "while": "track 2", "level": 0.5, "ramp_down": "1000000000000000"}]}"#,
         "ducking[0].ramp_down", "beyond the largest time"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0", "source": {"start": "0", "duration": "1", "start": "1"}}]}]}"#,
         "tracks[0].segments[0].source.start", "given twice"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0", "duration": "9"}]}]}"#,
         "tracks[0].segments[0].duration", "by 4.5: a scale must lie between 0.25 and 4"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0", "duration": "0"}]}]}"#,
         "tracks[0].segments[0].duration", "must be longer than 0"),
        (#"{"version": 1, "tracks": [{"segments": [{"file": "audio/a.wav", "at": "0", "duration": "2.5"}, {"file": "audio/b.wav", "at": "2.4"}]}]}"#,
         "tracks[0].segments[1]", "overlaps tracks[0].segments[0]"),
        (#"{"version": 1, "tracks": [{"segments": [{"empty": {"start": "0", "duration": "1"}, "duration": "2"}]}]}"#,
         "tracks[0].segments[0]", "an empty edit takes only 'empty'"),
        // Without a ramp up, the duck's restore lands on the voice's end: a ramp of the music's own there clashes (found by fuzzing; it used to fail only at render).
        (#"{"version": 1, "tracks": [{"name": "m", "segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"ramp": {"from": 1, "to": 0.5, "start": "1.5", "end": "2"}}]}, {"name": "v", "segments": [{"file": "audio/b.wav", "at": "0.5"}]}], "ducking": [{"track": "m", "while": "v", "level": 0.2, "ramp_down": "0.25", "ramp_up": "0"}]}"#,
         "ducking[0]", "overlaps ducking of track 1 'm' under track 2 'v' from 0:00:00.250000 to 0:00:01.500000"),
        // The restore 1/200000 s before the music's ramp: apart in time, on the ramp's frame at 48 kHz (found by
        // fuzzing: the document loaded and its OTIO, which carries the duck as events, did not).
        (#"{"version": 1, "tracks": [{"name": "m", "segments": [{"file": "audio/a.wav", "at": "0"}], "volume": [{"ramp": {"from": 1, "to": 0.5, "start": "1.5", "end": "2"}}]}, {"name": "v", "segments": [{"file": "audio/b.wav", "at": "99999/200000"}]}], "ducking": [{"track": "m", "while": "v", "level": 0.2}]}"#,
         "ducking[0]", "volume 1.0 at 0:00:01.499995"),
    ]

    /// Ducking without ramps under a trigger whose audio a scale split in two (touching
    /// segments): one duck across both, not a restore and a new duck at the same instant
    /// (found by fuzzing: the render refused its own document's events).
    @Test func aDuckWithoutRampsSpansTouchingSegments() throws {
        let dir = try Self.directory()
        let doc = try Self.load("""
        {"version": 1, "tracks": [{"name": "m", "segments": [{"file": "audio/a.wav", "at": "0"}]},
                                  {"name": "v", "segments": [{"file": "audio/b.wav", "source": {"start": "0", "duration": "0.5"}, "at": "0.1"}]}],
         "scale": [{"time_range": {"start": "0", "duration": "0.3"}, "to_duration": "0.45"}],
         "ducking": [{"track": "m", "while": "v", "level": 0.25}]}
        """, in: dir)
        #expect(doc.composition.tracks[1].placedSegments.filter { $0.source != nil }.count == 2)
        let envelope = try doc.audioMix.inputParameters[0].volume.envelope(sampleRate: 48_000)
        // The voice plays from 0.15 s to 0.15 + 0.3 + 0.3 = 0.75 s (its first 0.2 s scaled by 1.5).
        #expect([envelope.gain(atFrame: 7_199), envelope.gain(atFrame: 7_200), envelope.gain(atFrame: 21_600),
                 envelope.gain(atFrame: 35_999), envelope.gain(atFrame: 36_000)] == [1, 0.25, 0.25, 0.25, 1])
        _ = try doc.render(to: dir.file("o.wav")).plan()
    }

    /// A segment's own place is kept exactly, even where scaleTimeRange's arithmetic would
    /// round it (start + duration has no 32-bit timescale; found by fuzzing OTIO round trips).
    @Test func aSegmentsOwnPlaceIsExact() throws {
        let dir = try Self.directory()
        let doc = try Self.load("""
        {"version": 1, "tracks": [{"segments": [
          {"file": "audio/a.wav", "source": {"start": "0", "duration": "0.3"}, "at": "36004713/359999999", "duration": "35284619/117600000"}]}]}
        """, in: dir)
        let target = doc.composition.tracks[0].placedSegments.last!.target
        #expect(target.start == MediaTime(value: 36_004_713, timescale: 359_999_999))
        #expect(target.duration == MediaTime(value: 35_284_619, timescale: 117_600_000))
    }

    /// A segment's own `duration` scales it alone: it lands on exactly that range, its source
    /// unchanged, and the segments after it stay where the document puts them.
    @Test func aSegmentWithItsOwnDurationIsScaledAlone() throws {
        let dir = try Self.directory()
        let doc = try Self.load("""
        {"version": 1, "tracks": [{"segments": [
          {"file": "audio/a.wav", "source": {"start": "0.5", "duration": "1"}, "at": "1/3", "duration": "1001/1000"},
          {"file": "audio/b.wav", "at": "1335/1000"},
          {"file": "audio/a.wav", "at": "3", "duration": "1.5"}]}]}
        """, in: dir)
        let segments = doc.composition.tracks[0].placedSegments.filter { $0.source != nil }
        #expect(segments.map(\.target) == [MediaTimeRange(start: MediaTime(value: 1, timescale: 3), duration: MediaTime(value: 1001, timescale: 1000)),
                                            MediaTimeRange(start: MediaTime(value: 1335, timescale: 1000), duration: MediaTime(seconds: 1)),
                                            MediaTimeRange(start: MediaTime(seconds: 3), duration: MediaTime(value: 3, timescale: 2))])
        #expect(segments.map { $0.source!.range } == [MediaTimeRange(start: MediaTime(value: 1, timescale: 2), duration: MediaTime(seconds: 1)),
                                                      MediaTimeRange(start: .zero, duration: MediaTime(seconds: 1)),
                                                      MediaTimeRange(start: .zero, duration: MediaTime(seconds: 2))])
        #expect(segments.map(\.isScaled) == [true, false, true])
    }

    @Test(arguments: 0..<bad.count)
    func aBadDocumentNamesTheJSONPathAtFault(case i: Int) throws {
        let dir = try Self.directory()
        let (json, location, words) = Self.bad[i]
        do {
            let doc = try Self.load(json, in: dir)
            // Some faults show only when the render is planned (a scale factor out of range).
            _ = try doc.render(to: dir.file("o.wav")).plan()
            Issue.record("accepted: \(json)")
        } catch {
            let message = "\(error)"
            if !location.isEmpty {
                guard case .invalidDocument(_, let at, _) = error else { Issue.record("not a document error: \(message)"); return }
                #expect(at == location, "\(message)")
            }
            #expect(message.contains(words), "\(message)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("o.wav")))
    }
}
