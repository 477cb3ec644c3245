import Foundation
import Testing
@testable import Mixdown

/// The OTIO reader and writer through the library (the CLI and the real client are tested in
/// MixdownCLITests/OTIOTests): a timeline is a document like any other, for a render and for
/// an export session, and a document written as OTIO reads back to the same segments.
@Suite struct OTIOTimelineTests {
    static func rt(_ value: Int, _ rate: String) -> String { "{\"OTIO_SCHEMA\": \"RationalTime.1\", \"value\": \(value), \"rate\": \(rate)}" }
    static func range(_ start: Int, _ duration: Int, _ rate: String) -> String {
        "{\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(rt(start, rate)), \"duration\": \(rt(duration, rate))}"
    }

    /// a.wav (3 s of a 300 Hz sine, 48 kHz stereo): a 36-frame cut at 23.976 from frame 12,
    /// a 24-frame gap, a 24-frame cut from frame 0 at gain 0.5.
    static let timeline = """
    {"OTIO_SCHEMA": "Timeline.1", "name": "t", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
      {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "dialogue", "children": [
        {"OTIO_SCHEMA": "Clip.2", "name": "a", "source_range": \(range(12, 36, "23.976")), "active_media_reference_key": "DEFAULT_MEDIA",
         "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "a.wav"}}},
        {"OTIO_SCHEMA": "Gap.1", "source_range": \(range(0, 24, "23.976"))},
        {"OTIO_SCHEMA": "Clip.2", "name": "b", "source_range": \(range(0, 24, "23.976")), "metadata": {"mixdown": {"volume": 0.5}},
         "active_media_reference_key": "DEFAULT_MEDIA",
         "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "file://DIR/a.wav"}}}]}]}}
    """

    @Test func aTimelineIsADocumentForARenderAndAnExportSession() async throws {
        let dir = TempDir()
        let s = sine(300, frames: 144_000)
        try writeFile(dir.file("a.wav"), [s, s])
        try Self.timeline.replacingOccurrences(of: "DIR", with: dir.path).write(toFile: dir.file("t.otio"), atomically: true, encoding: .utf8)
        let doc = try CompositionDocument(contentsOf: dir.file("t.otio"))
        let ntsc = { (frames: Int64) in MediaTime(value: frames * 1001, timescale: 24_000) }
        let segments = doc.composition.tracks[0].placedSegments.filter { $0.source != nil }
        #expect(segments.map(\.target) == [MediaTimeRange(start: .zero, duration: ntsc(36)), MediaTimeRange(start: ntsc(60), duration: ntsc(24))])
        #expect(segments.map { $0.source!.range.start } == [ntsc(12), .zero])
        #expect(doc.translationNotes.contains("rate 23.976 read as 24000/1001 exactly"), "\(doc.translationNotes)")

        _ = try doc.render(to: dir.file("render.wav")).run()
        let session = try ExportSession(asset: .composition(doc.composition), preset: .wav16)
        session.outputPath = dir.file("session.wav")
        session.outputFormat = doc.outputFormat
        session.audioMix = doc.audioMix
        _ = try await session.export()
        let a = try readFile(dir.file("render.wav")).planes, b = try readFile(dir.file("session.wav")).planes
        // 84 frames at 24000/1001 are 168,168 frames at 48 kHz; the second cut at half gain.
        #expect(a[0].count == 168_168)
        #expect(a[0].enumerated().allSatisfy { f, x in abs(x - Self.expected(frame: f, sine: s)) <= 1.0 / 32_768 })
        // The file render's default sample format is the source's (f32); the session's preset is 16-bit.
        #expect(zip(a[0], b[0]).allSatisfy { abs($0 - $1) <= 1.0 / 32_768 } && a[0].count == b[0].count)
    }

    /// What the timeline puts on output frame f: frames round(t × 48000), halves away from zero.
    /// A document of one track, "voice", holding `segment` of b.wav (0.5 s of a 300 Hz sine
    /// at 44.1 kHz, written into `dir`): the coarse-rate places FuzzDocument found.
    static func voice(_ segment: String, in dir: TempDir) throws -> CompositionDocument {
        try writeFile(dir.file("b.wav"), [sine(300, frames: 22_050)], sampleRate: 44_100)
        let json = #"{"version": 1, "tracks": [{"name": "voice", "segments": ["# + segment + "]}]}"
        return try CompositionDocument(data: Data(json.utf8), path: dir.file("doc.json"))
    }

    static func expected(frame f: Int, sine s: [Float]) -> Float {
        let cut1 = 72_072, gapEnd = 120_120   // 36 and 60 frames at 24000/1001
        if f < cut1 { return s[f + 24_024] }  // from frame 12 (24,024 at 48 kHz)
        if f < gapEnd { return 0 }
        return 0.5 * s[f - gapEnd]
    }

    /// Written by `OTIOTimeline.json` and read back: the same segments, the same gains.
    @Test func aDocumentWrittenAsOTIOReadsBackToTheSameSegments() throws {
        let dir = TempDir()
        let s = sine(300, frames: 96_000)
        try writeFile(dir.file("a.wav"), [s, s])
        let doc = try CompositionDocument(data: Data("""
        {"version": 1, "time_pitch_algorithm": "varispeed", "tracks": [
          {"name": "m", "segments": [{"file": "a.wav", "source": {"start": "0.25", "duration": "1"}, "at": "1/3"},
                                     {"file": "a.wav", "at": "1.5"}],
           "scale": [{"time_range": {"start": "0.5", "duration": "2"}, "to_duration": "2.0002619"}],
           "volume": [{"ramp": {"from": 0, "to": 1, "start": "0", "duration": "1"}}]}]}
        """.utf8), path: dir.file("doc.json"))
        let text = try OTIOTimeline.json(for: doc, relativeTo: dir.path)
        #expect(text.contains("\"target_url\": \"a.wav\"") && text.contains("LinearTimeWarp.1"))
        let back = try CompositionDocument(data: Data(text.utf8), path: dir.file("doc.otio"))
        let (x, y) = (doc.composition.tracks[0].placedSegments.filter { $0.source != nil }, back.composition.tracks[0].placedSegments.filter { $0.source != nil })
        #expect(x.map(\.target) == y.map(\.target) && x.map { $0.source!.range } == y.map { $0.source!.range })
        #expect(x.count == 4 && x.map(\.isScaled) == [false, true, true, false])
        #expect(doc.audioMix.inputParameters.map(\.volume.events) == back.audioMix.inputParameters.map(\.volume.events))
        #expect(back.timePitchAlgorithm == .varispeed)
    }

    /// A clip placed where its start and duration have no common timescale a MediaTime holds
    /// (at 10/302518 s, 13,230 frames of a 44.1 kHz file: its end rounds, and the track's
    /// rate, 302518, puts OTIO's end 1.3 µs from the exact one): found by FuzzDocument.
    /// Written as OTIO and read back, the same place.
    @Test func aPlaceOnACoarseTrackRateReadsBackTheSame() throws {
        let dir = TempDir()
        let doc = try Self.voice(#"{"file": "b.wav", "source": {"start": "4410f", "end": "0.4"}, "at": "10/302518"}"#, in: dir)
        let text = try OTIOTimeline.json(for: doc, relativeTo: dir.path)
        let back = try CompositionDocument(data: Data(text.utf8), path: dir.file("doc.otio"))
        let (x, y) = (doc.composition.tracks[0].placedSegments.filter { $0.source != nil }, back.composition.tracks[0].placedSegments.filter { $0.source != nil })
        #expect(x.map(\.target) == y.map(\.target), "\(x.map(\.target)) against \(y.map(\.target))")
        #expect(x.map { $0.source!.range } == y.map { $0.source!.range }, "\(x.map { $0.source!.range }) against \(y.map { $0.source!.range })")
        // Trimmed by one unit of that rate in an editor: OTIO's values are taken, not the old place.
        let trimmed = text.replacingOccurrences(of: "\"rate\": 302518.0, \"value\": 90755.0", with: "\"rate\": 302518.0, \"value\": 90754.0")
        #expect(trimmed != text)
        let edited = try CompositionDocument(data: Data(trimmed.utf8), path: dir.file("edited.otio"))
        let z = edited.composition.tracks[0].placedSegments.filter { $0.source != nil }
        #expect(z.map { $0.target.duration } == [MediaTime(value: 90754, timescale: 302518)], "\(z.map(\.target))")
    }

    /// The same on the other side: 13,229 frames from 4411f, whose end OTIO's rate puts
    /// 1.52 µs late (found by FuzzDocument). The track ends where its clip does: no trailing
    /// gap, and no end time that has no 32-bit timescale.
    @Test func aClipsEndOnACoarseTrackRateAddsNoTrailingGap() throws {
        let dir = TempDir()
        let doc = try Self.voice(#"{"file": "b.wav", "source": {"start": "4411f", "end": "0.4"}, "at": "10/302518"}"#, in: dir)
        let text = try OTIOTimeline.json(for: doc, relativeTo: dir.path)
        #expect(text.contains("\"rate\": 302518.0, \"value\": 90749.0"))
        let back = try CompositionDocument(data: Data(text.utf8), path: dir.file("doc.otio"))
        #expect(back.composition.tracks.map { $0.placedSegments.map(\.target) } == doc.composition.tracks.map { $0.placedSegments.map(\.target) })
        #expect(back.composition.tracks[0].placedSegments.allSatisfy { $0.source != nil })
    }

    /// A clip whose exact end lies exactly half a unit of the track's rate from OTIO's (at
    /// 1/302518 s, 0.25 s long: the end is 75630.5 units, written as 75630): the place
    /// Mixdown wrote is still taken, though in Doubles the distance came out a hair over
    /// half a unit (found by FuzzDocument).
    @Test func aClipsEndHalfAUnitFromTheGridReadsBackTheSame() throws {
        let dir = TempDir()
        let doc = try Self.voice(#"{"file": "b.wav", "source": {"start": "2205f", "end": "0.3"}, "at": "1/302518"}"#, in: dir)
        let text = try OTIOTimeline.json(for: doc, relativeTo: dir.path)
        #expect(text.contains("\"rate\": 302518.0, \"value\": 75629.0"))
        let back = try CompositionDocument(data: Data(text.utf8), path: dir.file("doc.otio"))
        let played = { (d: CompositionDocument) in d.composition.tracks[0].placedSegments.filter { $0.source != nil } }
        #expect(played(back).map(\.target.duration) == [MediaTime(value: 1, timescale: 4)])
        #expect(played(back).map(\.target) == played(doc).map(\.target))
    }

    /// Track keyframes (`metadata.mixdown.volume.keyframes`, times in the track's time):
    /// linear between them, the first value held before the first, the last after the last;
    /// a first keyframe at 0 included.
    @Test(arguments: [0, 6])
    func trackKeyframesAreLinearRampsBetweenThem(firstAt first: Int) throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 96_000)])
        let keys = "[{\"time\": \(Self.rt(first, "24")), \"value\": 0.25}, {\"time\": \(Self.rt(12, "24")), \"value\": 1}, {\"time\": \(Self.rt(24, "24")), \"value\": 0.5}]"
        let text = """
        {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "metadata": {"mixdown": {"volume": {"keyframes": \(keys)}}}, "children": [
            {"OTIO_SCHEMA": "Clip.2", "name": "a", "source_range": \(Self.range(0, 36, "24")), "active_media_reference_key": "DEFAULT_MEDIA",
             "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "a.wav"}}}]}]}}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
        let envelope = try doc.audioMix.inputParameters[0].volume.envelope(sampleRate: 48_000)
        let a = Int64(first) * 2_000   // frames at 48 kHz of a keyframe at 24 fps
        #expect(envelope.gain(atFrame: 0) == 0.25 && envelope.gain(atFrame: a) == 0.25)
        #expect(abs(envelope.gain(atFrame: (a + 24_000) / 2) - 0.625) < 1e-6)
        #expect(envelope.gain(atFrame: 24_000) == 1)
        #expect(abs(envelope.gain(atFrame: 36_000) - 0.75) < 1e-6)
        #expect(envelope.gain(atFrame: 48_000) == 0.5 && envelope.gain(atFrame: 70_000) == 0.5)
    }

    /// A track is as long as its items in OTIO: a trailing gap, and a track of gaps alone,
    /// make the render that long (the silence is rendered, not cut off).
    @Test func trailingGapsLastToTheEndOfTheTimeline() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 96_000)])
        let clip = "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"a\", \"source_range\": \(Self.range(0, 12, "24")), \"active_media_reference_key\": \"DEFAULT_MEDIA\", "
            + "\"media_references\": {\"DEFAULT_MEDIA\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"a.wav\"}}}"
        func load(_ second: String) throws -> CompositionDocument {
            try CompositionDocument(data: Data("""
            {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
              {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "children": [\(clip), {"OTIO_SCHEMA": "Gap.1", "source_range": \(Self.range(0, 6, "24"))}]}\(second)]}}
            """.utf8), path: dir.file("t.otio"))
        }
        #expect(try load("").composition.duration == MediaTime(value: 3, timescale: 4))
        let gaps = ", {\"OTIO_SCHEMA\": \"Track.1\", \"kind\": \"Audio\", \"name\": \"b\", \"children\": [{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(Self.range(0, 48, "24"))}]}"
        let long = try load(gaps)
        #expect(long.composition.duration == MediaTime(seconds: 2))
        let plan = try long.render(to: dir.file("o.wav")).plan()
        #expect(plan.frames == 0..<96_000)
    }

    /// opentimelineio writes non-finite floats in metadata as Infinity and NaN (its own
    /// big_int.otio sample has them): the timeline renders; a time that is one is refused.
    @Test func nonFiniteMetadataIsReadAndANonFiniteTimeIsRefused() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 96_000)])
        func text(_ rate: String) -> String {
            """
            {"OTIO_SCHEMA": "Timeline.1", "metadata": {"max": Infinity, "min": -Infinity, "undefined": NaN},
             "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
              {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "children": [
                {"OTIO_SCHEMA": "Clip.2", "name": "a", "source_range": \(Self.range(0, 12, rate)), "metadata": {"nan": NaN},
                 "active_media_reference_key": "DEFAULT_MEDIA",
                 "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "a.wav"}}}]}]}}
            """
        }
        let doc = try CompositionDocument(data: Data(text("24").utf8), path: dir.file("t.otio"))
        #expect(doc.composition.duration == MediaTime(value: 1, timescale: 2))
        #expect {
            try CompositionDocument(data: Data(text("NaN").utf8), path: dir.file("t.otio"))
        } throws: { error in
            "\(error)".contains("source_range") && "\(error)".contains("must be a finite number, not nan")
        }
        // Mixdown's own documents stay strict.
        #expect(throws: MixdownError.self) {
            try CompositionDocument(data: Data("{\"tracks\": [], \"x\": NaN}".utf8), path: dir.file("d.json"))
        }
    }

    /// A track window that starts before the track: OTIO's semantics (checked with
    /// opentimelineio 0.17: `transformed_time` puts clip frame 100 at timeline frame 7 in
    /// both, and the timeline lasts 9 and 16 frames). (-7, 9) shows clip frames 0-1 at
    /// timeline frames 7-8; (-7, 16) the whole 9-frame clip at 7-15. Not a CMX 3600 record
    /// timecode, which lies wholly before the track.
    @Test(arguments: [(9, 2), (16, 9)])
    func aTrackWindowBeforeTheTrackIsSilenceThenTheTrack(window: Int, shown: Int) throws {
        let dir = TempDir()
        // Each 24 fps frame of the source (2,000 samples) holds its own value: frame k is k / 1000.
        let source = (0..<(200 * 2_000)).map { Float($0 / 2_000) / 1_000 }
        try writeFile(dir.file("a.wav"), [source])
        let text = """
        {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "source_range": \(Self.range(-7, window, "24")), "children": [
            {"OTIO_SCHEMA": "Clip.2", "name": "a", "source_range": \(Self.range(100, 9, "24")), "active_media_reference_key": "DEFAULT_MEDIA",
             "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "a.wav"}}}]}]}}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        let out = try readFile(dir.file("o.wav")).planes[0]
        #expect(out.count == window * 2_000)
        for frame in 0..<window {
            let expected: Float = frame >= 7 && frame < 7 + shown ? Float(100 + frame - 7) / 1_000 : 0
            #expect(out[(frame * 2_000)..<((frame + 1) * 2_000)].allSatisfy { $0 == expected }, "timeline frame \(frame)")
        }
        #expect(!doc.translationNotes.contains("record timecode"))
    }

    /// Avid's fades: a dissolve beside filler (a Gap, here one of zero length at the start)
    /// or at the track's edge is a fade from or to silence, with the crossfade's
    /// equal-power curve: silence before it, full level after, sin(45°) at the cut.
    @Test func aDissolveBesideAGapIsAFade() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [[Float](repeating: 0.5, count: 240_000)])
        func dissolve(_ i: Int, _ o: Int) -> String {
            "{\"OTIO_SCHEMA\": \"Transition.1\", \"transition_type\": \"SMPTE_Dissolve\", \"in_offset\": \(Self.rt(i, "24")), \"out_offset\": \(Self.rt(o, "24"))}"
        }
        let clip = "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"a\", \"source_range\": \(Self.range(24, 48, "24")), \"active_media_reference_key\": \"DEFAULT_MEDIA\", "
            + "\"media_references\": {\"DEFAULT_MEDIA\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"a.wav\"}}}"
        func gap(_ n: Int) -> String { "{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(Self.range(0, n, "24"))}" }
        // Timeline frames: gap 0-23, a 12-frame fade-in centred on 24 (18-30), the clip to 72,
        // a 12-frame fade-out from 66 to 72 into a gap of 24 frames (to 96), then a zero-length
        // gap and a fade-in that starts at its cut (in_offset 0) over 12 frames: 96-108.
        let children = [gap(24), dissolve(6, 6), clip, dissolve(12, 0), gap(24), gap(0), dissolve(0, 12), clip]
        let text = """
        {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "children": [\(children.joined(separator: ", "))]}]}}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        let g = try readFile(dir.file("o.wav")).planes[0].map { $0 / 0.5 }
        let f = 2_000   // samples per 24 fps frame
        #expect(g.count == 144 * f)
        #expect(g[0..<(18 * f)].allSatisfy { $0 == 0 })
        #expect(abs(g[24 * f] - 0.70711) < 0.002)
        #expect(zip(g[(18 * f)..<(30 * f)], g[(18 * f + 1)..<(30 * f + 1)]).allSatisfy { $0 <= $1 + 1e-6 })
        #expect(g[(30 * f)..<(60 * f)].allSatisfy { abs($0 - 1) < 1e-6 })
        #expect(abs(g[66 * f] - 0.70711) < 0.002 && g[72 * f] == 0)
        #expect(g[(72 * f)..<(96 * f)].allSatisfy { $0 == 0 })
        #expect(g[96 * f] < 0.01 && abs(g[102 * f] - 0.70711) < 0.002)
        #expect(g[(108 * f)..<(144 * f)].allSatisfy { abs($0 - 1) < 1e-6 })
        #expect(doc.translationNotes.filter { $0.contains("dissolve") } == ["tracks[0].children[1]: a dissolve from a gap, rendered as a fade-in",
                                                                               "tracks[0].children[3]: a dissolve into a gap, rendered as a fade-out",
                                                                               "tracks[0].children[6]: a dissolve from a gap, rendered as a fade-in"])
    }

    /// A 30 fps sequence over media whose available range is 47 frames at 24 fps (1.958333 s)
    /// asks for 59 frames (1.966667 s): a quarter of a frame past the media. Rendered with
    /// silence for it and noted; a clip a frame or more past its media is still refused.
    @Test func anOverrunOfLessThanAFrameIsSilence() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [[Float](repeating: 0.5, count: 96_000)])
        func text(_ frames: Int) -> String {
            let available = "{\"OTIO_SCHEMA\": \"TimeRange.1\", \"start_time\": \(Self.rt(0, "24")), \"duration\": \(Self.rt(47, "24"))}"
            return """
            {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
              {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "children": [
                {"OTIO_SCHEMA": "Clip.2", "name": "a", "source_range": \(Self.range(0, frames, "30")), "active_media_reference_key": "DEFAULT_MEDIA",
                 "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "a.wav", "available_range": \(available)}}},
                {"OTIO_SCHEMA": "Gap.1", "source_range": \(Self.range(0, 3, "30"))}]}]}}
            """
        }
        let doc = try CompositionDocument(data: Data(text(59).utf8), path: dir.file("t.otio"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        let out = try readFile(dir.file("o.wav")).planes[0]
        // 62 frames at 30 fps; the media's 1.958333 s are 94,000 samples.
        #expect(out.count == 99_200)
        #expect(out[..<94_000].allSatisfy { $0 == 0.5 } && out[94_000...].allSatisfy { $0 == 0 })
        #expect(doc.translationNotes.contains("tracks[0].children[0].source_range: runs 0.008333 s (less than a frame) past its media's available range: silence there"))
        #expect {
            try CompositionDocument(data: Data(text(61).utf8), path: dir.file("t.otio"))
        } throws: { error in
            "\(error)".contains("tracks[0].children[0].source_range: 0.0-2.033333333333333 s lies outside its media's available range 0.0-1.9583333333333333 s")
        }
    }

    /// Smaller gaps of the reader: a Track directly inside a Track (OTIO's nested_example)
    /// is a Stack of one; the legacy `Sequence.1` is a Track; a GeneratorReference (bars and
    /// tone) is silence of its length, noted; an ignored effect is named by its effect_name.
    @Test(arguments: ["Track.1", "Sequence.1"])
    func nestedTracksGeneratorsAndLegacySequencesAreRead(outer: String) throws {
        let dir = TempDir()
        let source = (0..<(100 * 2_000)).map { Float($0 / 2_000) / 1_000 }
        try writeFile(dir.file("a.wav"), [source])
        func clip(_ start: Int, _ n: Int, effects: String = "[]") -> String {
            "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"a\", \"source_range\": \(Self.range(start, n, "24")), \"effects\": \(effects), \"active_media_reference_key\": \"DEFAULT_MEDIA\", "
                + "\"media_references\": {\"DEFAULT_MEDIA\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"a.wav\"}}}"
        }
        let bars = "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"tone\", \"source_range\": \(Self.range(0, 6, "24")), \"active_media_reference_key\": \"DEFAULT_MEDIA\", "
            + "\"media_references\": {\"DEFAULT_MEDIA\": {\"OTIO_SCHEMA\": \"GeneratorReference.1\", \"generator_kind\": \"SMPTEBars\"}}}"
        let reverb = "[{\"OTIO_SCHEMA\": \"Effect.1\", \"name\": \"\", \"effect_name\": \"Reverb\"}]"
        let inner = "{\"OTIO_SCHEMA\": \"Track.1\", \"name\": \"inner\", \"children\": [\(clip(24, 12, effects: reverb))]}"
        let text = """
        {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "\(outer)", "kind": "Audio", "name": "a", "children": [\(clip(0, 12)), \(inner), \(bars), \(clip(50, 6))]}]}}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        let out = try readFile(dir.file("o.wav")).planes[0]
        // Timeline frames: 0-11 source 0-11; 12-23 source 24-35 (the inner track); 24-29 the
        // generator's silence; 30-35 source 50-55.
        #expect(out.count == 36 * 2_000)
        for frame in 0..<36 {
            let expected: Float = frame < 12 ? Float(frame) / 1_000 : frame < 24 ? Float(frame + 12) / 1_000 : frame < 30 ? 0 : Float(frame + 20) / 1_000
            #expect(out[(frame * 2_000)..<((frame + 1) * 2_000)].allSatisfy { $0 == expected }, "timeline frame \(frame)")
        }
        #expect(doc.translationNotes.contains("tracks[0].children[1]: a Track inside a Track, read as a Stack of one"))
        #expect(doc.translationNotes.contains("tracks[0].children[2].media_references.DEFAULT_MEDIA: SMPTEBars (a GeneratorReference): rendered as silence of the clip's length"))
        #expect(doc.translationNotes.contains("tracks[0].children[1].children[0].effects[0]: effect 'Reverb' ignored"))
    }

    /// `path` (a WAV) with a Broadcast WAV `bext` chunk whose TimeReference is `frames`.
    static func addBext(_ path: String, timeReference frames: Int64) throws {
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        var payload = Data(count: 602)
        // Description 256, Originator 32, OriginatorReference 32, date 10, time 8: then the reference.
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: frames).littleEndian) { payload.replaceSubrange(338..<342, with: $0) }
        withUnsafeBytes(of: UInt32(truncatingIfNeeded: frames >> 32).littleEndian) { payload.replaceSubrange(342..<346, with: $0) }
        payload[346] = 1   // version
        var chunk = Data("bext".utf8)
        withUnsafeBytes(of: UInt32(payload.count).littleEndian) { chunk.append(contentsOf: $0) }
        chunk.append(payload)
        data.insert(contentsOf: chunk, at: 12)
        let riff = UInt32(data.count - 8).littleEndian
        withUnsafeBytes(of: riff) { data.replaceSubrange(4..<8, with: $0) }
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// An EDL addresses a recorder's BWF by its timecode: a source in-point of 10:00:01:00 is
    /// one second into a file whose bext TimeReference is 10:00:00:00, not ten hours into it.
    @Test func sourceTimecodeFindsTheFrameInABroadcastWAV() throws {
        let dir = TempDir()
        let source = (0..<(100 * 2_000)).map { Float($0 / 2_000) / 1_000 }
        try writeFile(dir.file("bwf.wav"), [source])
        try Self.addBext(dir.file("bwf.wav"), timeReference: 36_000 * 48_000)
        #expect(try AudioFileInfo.read(path: dir.file("bwf.wav")).timeReference == 1_728_000_000)
        // 10:00:01:00 at 24 fps is frame 864,024; 12 frames from there are the file's frames 24-35.
        let text = """
        {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "children": [
            {"OTIO_SCHEMA": "Clip.2", "name": "bwf", "source_range": \(Self.range(864_024, 12, "24")), "active_media_reference_key": "DEFAULT_MEDIA",
             "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "bwf.wav"}}}]}]}}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        let out = try readFile(dir.file("o.wav")).planes[0]
        #expect(out.count == 24_000)
        for frame in 0..<12 {
            #expect(out[(frame * 2_000)..<((frame + 1) * 2_000)].allSatisfy { $0 == Float(24 + frame) / 1_000 }, "frame \(frame)")
        }
        #expect(doc.translationNotes.contains { $0.contains("within its timecode (bext TimeReference 36000.000000 s)") }, "\(doc.translationNotes)")
        // A range past the file on both clocks is still refused.
        let far = text.replacingOccurrences(of: "864024", with: "866400")
        #expect(throws: MixdownError.self) { try CompositionDocument(data: Data(far.utf8), path: dir.file("t.otio")).render(to: dir.file("p.wav")).plan() }
    }
}
