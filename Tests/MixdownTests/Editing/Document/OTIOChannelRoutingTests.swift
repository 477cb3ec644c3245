import Foundation
import Testing
@testable import Mixdown

/// Tracks that each hold one channel of a multi-channel source play that channel, as each
/// editor's export says, and the mix of all tracks is the source itself: never the whole
/// file on every track (a split stereo pair summed whole plays at +6 dB). The source's
/// channels differ (a 300 Hz sine at 0.25 and a 700 Hz one at 0.125, more for six), so a
/// channel played twice, swapped or summed shows in every sample.
@Suite struct OTIOChannelRoutingTests {
    typealias T = OTIOTimelineTests

    static let frames = 48_000
    /// Channel c of the source: a sine of 300 + 400c Hz at 0.25 / (c + 1).
    static func channel(_ c: Int) -> [Float] { sine(300 + 400 * Double(c), frames: frames, amplitude: 0.25 / Float(c + 1)) }

    static func clip(_ metadata: String = "{}") -> String {
        "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"src\", \"source_range\": \(T.range(0, 24, "24")), \"metadata\": \(metadata), "
            + "\"media_reference\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"src.wav\"}}"
    }

    static func track(_ name: String, _ children: [String], metadata: String = "{}", sourceRange: String = "null") -> String {
        "{\"OTIO_SCHEMA\": \"Track.1\", \"kind\": \"Audio\", \"name\": \"\(name)\", \"metadata\": \(metadata), \"source_range\": \(sourceRange), \"children\": [\(children.joined(separator: ", "))]}"
    }

    static func timeline(_ tracks: [String], global: String = "null") -> String {
        "{\"OTIO_SCHEMA\": \"Timeline.1\", \"global_start_time\": \(global), \"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"children\": [\(tracks.joined(separator: ", "))]}}"
    }

    /// Renders `text` (an .otio) beside src.wav of `channels` channels; the output planes.
    static func render(_ text: String, channels: Int = 2, from: String? = nil, in dir: TempDir = TempDir()) throws -> (planes: [[Float]], doc: CompositionDocument) {
        try writeFile(dir.file("src.wav"), (0..<channels).map(channel))
        try Data(text.utf8).write(to: URL(fileURLWithPath: dir.file("t.otio")))
        let doc = try CompositionDocument(contentsOf: dir.file("t.otio"), from: from)
        _ = try doc.render(to: dir.file("o.wav")).run()
        return (try readFile(dir.file("o.wav")).planes, doc)
    }

    static func expectSource(_ planes: [[Float]], _ sources: [[Int]], sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(planes.count == sources.count, sourceLocation: sourceLocation)
        for (out, channels) in zip(planes, sources) {
            var want = [Float](repeating: 0, count: frames)
            for c in channels { let s = channel(c); for i in 0..<frames { want[i] += s[i] } }
            #expect(out.count == frames, sourceLocation: sourceLocation)
            // One channel: exact. Several: the mixer may add them in another order (1e-6).
            let tolerance: Float = channels.count > 1 ? 1e-6 : 0
            #expect(zip(out, want).allSatisfy { abs($0 - $1) <= tolerance }, "output channel should be the sum of source channels \(channels)", sourceLocation: sourceLocation)
        }
    }

    /// The CMX 3600 adapter's `AA`: tracks A1 and A2 holding one event. A1 plays channel 1,
    /// A2 channel 2: the output is the source, sample for sample, at its own level.
    @Test func anEDLStereoEventIsTheSourceNotTwiceIt() throws {
        let r = try Self.render(Self.timeline([Self.track("A1", [Self.clip()]), Self.track("A2", [Self.clip()])]))
        Self.expectSource(r.planes, [[0], [1]])
        #expect(r.planes[0].map(abs).max()! <= 0.25)
    }

    /// Final Cut Pro 7's mono tracks: each clip's `sourcetrack.trackindex`, landing on the
    /// track's `outputchannelindex` (here crossed, to show it is read); a Premiere exploded
    /// pair ganged into one track plays the whole file.
    @Test func finalCut7MonoTracksPlayTheirSourceTrackOnTheirOutputChannel() throws {
        func clip(_ index: Int) -> String { Self.clip("{\"fcp_xml\": {\"sourcetrack\": {\"mediatype\": \"audio\", \"trackindex\": \"\(index)\"}}}") }
        func md(_ out: Int) -> String { "{\"fcp_xml\": {\"outputchannelindex\": \"\(out)\", \"enabled\": \"TRUE\"}}" }
        let plain = try Self.render(Self.timeline([Self.track("Audio 1", [clip(1)], metadata: md(1)), Self.track("Audio 2", [clip(2)], metadata: md(2))]))
        Self.expectSource(plain.planes, [[0], [1]])
        let crossed = try Self.render(Self.timeline([Self.track("Audio 1", [clip(1)], metadata: md(2)), Self.track("Audio 2", [clip(2)], metadata: md(1))]))
        Self.expectSource(crossed.planes, [[1], [0]])
        let ganged = "{\"fcp_xml\": {\"@currentExplodedTrackIndex\": \"0\", \"@totalExplodedTrackCount\": \"2\", \"outputchannelindex\": \"1\"}}"
        let pair = try Self.render(Self.timeline([Self.track("Audio 1", [clip(1)], metadata: ganged)]))
        Self.expectSource(pair.planes, [[0], [1]])
    }

    /// DaVinci Resolve: a clip's `Channels` list names the source channel (from 0) of each of
    /// its track's channels.
    @Test func resolveMonoTracksPlayTheirSourceChannel() throws {
        func clip(_ ids: [Int]) -> String {
            Self.clip("{\"Resolve_OTIO\": {\"Channels\": [\(ids.map { "{\"Source Channel ID\": \($0), \"Source Track ID\": 0}" }.joined(separator: ", "))]}}")
        }
        let r = try Self.render(Self.timeline([Self.track("Audio 1", [clip([0])]), Self.track("Audio 2", [clip([1])])]))
        Self.expectSource(r.planes, [[0], [1]])
        let whole = try Self.render(Self.timeline([Self.track("Audio 1", [clip([0, 1])])]))
        Self.expectSource(whole.planes, [[0], [1]])
        #expect(throws: MixdownError.self) { try Self.render(Self.timeline([Self.track("Audio 1", [clip([1, 0])])])) }
    }

    /// A 6-channel master clip over six Avid tracks, as otio-aaf-adapter converts it by
    /// default: every track names the timeline track (`PhysicalTrackNumber` 1-6), not the
    /// source channel, so the channel is unknown. Each track plays its channel in track
    /// order, folded to stereo as Avid pans (odd left, even right), with a note.
    @Test func sixAvidTracksOfOneSixChannelClipEachPlayTheirChannel() throws {
        func md(_ n: Int) -> String { "{\"AAF\": {\"ClassName\": \"TimelineMobSlot\", \"PhysicalTrackNumber\": \(n)}}" }
        let clip = Self.clip("{\"AAF\": {\"ClassName\": \"MasterMob\"}}")
        let r = try Self.render(Self.timeline((1...6).map { Self.track("Audio 1", [clip], metadata: md($0)) }), channels: 6)
        Self.expectSource(r.planes, [[0, 2, 4], [1, 3, 5]])
        #expect(r.doc.translationNotes.contains { $0.contains("in track order") && $0.contains("simplify=False") })
    }

    /// The same converted with `simplify=False`: each clip sits on a nested track that is the
    /// master clip's slot, whose `PhysicalTrackNumber` is the source channel. Here the
    /// first timeline track plays channel 2 and the second channel 1: read, not assumed.
    @Test func avidMasterClipChannelsAreReadWhereTheConversionKeptThem() throws {
        func nested(_ timelineTrack: Int, channel: Int) -> String {
            let inner = Self.track("A\(timelineTrack)", [Self.clip("{\"AAF\": {\"ClassName\": \"MasterMob\"}}")],
                                   metadata: "{\"AAF\": {\"ClassName\": \"TimelineMobSlot\", \"PhysicalTrackNumber\": \(channel)}}")
            return Self.track("Audio \(timelineTrack)", [inner], metadata: "{\"AAF\": {\"ClassName\": \"TimelineMobSlot\", \"PhysicalTrackNumber\": \(timelineTrack)}}")
        }
        let r = try Self.render(Self.timeline([nested(1, channel: 2), nested(2, channel: 1)]))
        Self.expectSource(r.planes, [[0], [1]])
        #expect(!r.doc.translationNotes.contains { $0.contains("in track order") })
        let six = try Self.render(Self.timeline([nested(1, channel: 6), nested(2, channel: 5), nested(3, channel: 4)]), channels: 6)
        Self.expectSource(six.planes, [[4], [5, 3]])
    }

    /// More tracks split one file than it has channels, with nothing to say which: refused,
    /// naming the tracks and how to convert. A channel a track asks for that the file lacks:
    /// refused, naming the file and its channels.
    @Test func splitsThatCannotBeRoutedAreRefusedByName() throws {
        let clip = Self.clip()
        #expect {
            try Self.render(Self.timeline([Self.track("x", [clip]), Self.track("y", [clip]), Self.track("z", [clip])]))
        } throws: { e in
            "\(e)".contains("3 tracks ('x', 'y', 'z') play") && "\(e)".contains("which has 2 channels") && "\(e)".contains("simplify=False")
        }
        // An EDL's clip (the adapter's metadata.cmx_3600) on track A3 of a stereo file.
        let edlClip = Self.clip("{\"cmx_3600\": {\"reel\": \"R1\"}}")
        #expect {
            try Self.render(Self.timeline([Self.track("A3", [edlClip])]))
        } throws: { e in "\(e)".contains("channel 3 of") && "\(e)".contains("src.wav', which has 2 channels") }
        // A mono file cannot be split: A2 plays its one channel, centred.
        let mono = try Self.render(Self.timeline([Self.track("A2", [edlClip])]), channels: 1)
        Self.expectSource(mono.planes, [[0]])
    }

    /// A track someone named A1 in a timeline of their own (no record timecode, no
    /// metadata.cmx_3600) plays its whole file; an EDL's A1 (either mark) plays channel 1.
    @Test func onlyAnEDLsTrackNamePicksAChannel() throws {
        let own = try Self.render(Self.timeline([Self.track("A1", [Self.clip()])]))
        Self.expectSource(own.planes, [[0], [1]])
        let edl = try Self.render(Self.timeline([Self.track("A1", [Self.clip("{\"cmx_3600\": {\"comments\": [\"AUD  3\"]}}")])]))
        Self.expectSource(edl.planes, [[0], []])
    }

    /// An EDL whose first record in is 00:59:53:11 starts there, not at 00:00:00:00 (59 min
    /// 53 s of silence); `--from 00:59:50:00` gives 3 s 11 frames of lead; a sequence whose
    /// audio starts 5 s after 00:00:00:00 keeps its 5 s (the hour lies within a minute).
    @Test func anEDLRendersFromItsFirstEventUnlessTheHourIsNear() throws {
        let recordIn = ((59 * 60) + 53) * 24 + 11
        let window = T.range(-recordIn, 24, "24")
        let text = Self.timeline([Self.track("A1", [Self.clip()], sourceRange: window)])
        let r = try Self.render(text, channels: 1)
        Self.expectSource(r.planes, [[0]])
        #expect(r.doc.translationNotes.contains { $0.contains("starts at the first record in, 00:59:53:11") })
        let lead = try Self.render(text, channels: 1, from: "00:59:50:00")
        #expect(lead.planes[0].count == (3 * 24 + 11) * 2_000 + Self.frames)
        #expect(lead.planes[0][..<((3 * 24 + 11) * 2_000)].allSatisfy { $0 == 0 })
        #expect(Array(lead.planes[0][((3 * 24 + 11) * 2_000)...]) == Self.channel(0))
        #expect { try Self.render(text, channels: 1, from: "00:59:54:00") } throws: { e in "\(e)".contains("lies after the first record in") }
        #expect { try Self.render(text, channels: 1, from: "1:2") } throws: { e in "\(e)".contains("is not a timecode") }
        let late = try Self.render(Self.timeline([Self.track("A1", [Self.clip()], sourceRange: T.range(-120, 24, "24"))]), channels: 1)
        #expect(late.planes[0].count == 5 * 48_000 + Self.frames)
    }

    /// A composition document says the same with `channel` and `output_channel`; a channel
    /// the file lacks is refused at that key.
    @Test func aDocumentSegmentPlaysOneChannel() throws {
        let dir = TempDir()
        try writeFile(dir.file("src.wav"), (0..<2).map(Self.channel))
        let text = """
        {"version": 1, "tracks": [{"segments": [{"file": "src.wav", "at": "0", "channel": 2, "output_channel": 1}]},
                    {"segments": [{"file": "src.wav", "at": "0", "channel": 1}]}]}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("d.json"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        Self.expectSource(try readFile(dir.file("o.wav")).planes, [[1, 0], []])
        #expect {
            _ = try CompositionDocument(data: Data(#"{"version": 1, "tracks": [{"segments": [{"file": "src.wav", "at": "0", "channel": 3}]}]}"#.utf8), path: dir.file("d.json"))
        } throws: { e in
            guard case .invalidDocument(_, let location, let reason) = e as? MixdownError else { return false }
            return location == "tracks[0].segments[0].channel" && reason.contains("which has 2 channels")
        }
    }

    /// A routed track into a mono output plays its channel at 1/N: a split stereo pair sums
    /// to the file's own downmix (the mean of its channels).
    @Test func aSplitPairIntoMonoIsTheFilesDownmix() throws {
        let dir = TempDir()
        try writeFile(dir.file("src.wav"), (0..<2).map(Self.channel))
        let pair = try CompositionDocument(data: Data(#"{"version": 1, "output": {"channels": 1}, "tracks": [{"segments": [{"file": "src.wav", "at": "0", "channel": 1}]}, {"segments": [{"file": "src.wav", "at": "0", "channel": 2}]}]}"#.utf8), path: dir.file("a.json"))
        _ = try pair.render(to: dir.file("a.wav")).run()
        let whole = try CompositionDocument(data: Data(#"{"version": 1, "output": {"channels": 1}, "tracks": [{"segments": [{"file": "src.wav", "at": "0"}]}]}"#.utf8), path: dir.file("b.json"))
        _ = try whole.render(to: dir.file("b.wav")).run()
        let a = try readFile(dir.file("a.wav")).planes[0], b = try readFile(dir.file("b.wav")).planes[0]
        #expect(a.count == b.count && zip(a, b).allSatisfy { abs($0 - $1) <= 1e-7 })
    }
}
