import Foundation
import Testing
@testable import Mixdown

/// The OTIO reader's one-way flow: the walk in exact `Rational` time, the lanes as a typed
/// draft, and the document's own checks, each error at the timeline's path.
@Suite struct OTIODraftTests {
    typealias T = OTIOTimelineTests

    static func timeline(_ tracks: String, metadata: String = "{}") -> String {
        "{\"OTIO_SCHEMA\": \"Timeline.1\", \"metadata\": \(metadata), \"tracks\": {\"OTIO_SCHEMA\": \"Stack.1\", \"children\": [\(tracks)]}}"
    }

    static func clip(_ start: Int, _ duration: Int, _ rate: String, metadata: String = "{}") -> String {
        "{\"OTIO_SCHEMA\": \"Clip.2\", \"name\": \"a\", \"source_range\": \(T.range(start, duration, rate)), \"metadata\": \(metadata), "
            + "\"media_reference\": {\"OTIO_SCHEMA\": \"ExternalReference.1\", \"target_url\": \"a.wav\"}}"
    }

    static func gap(_ duration: Int, _ rate: String) -> String {
        "{\"OTIO_SCHEMA\": \"Gap.1\", \"source_range\": \(T.range(0, duration, rate))}"
    }

    static func track(_ children: [String], kind: String = "Audio", metadata: String = "{}") -> String {
        "{\"OTIO_SCHEMA\": \"Track.1\", \"kind\": \"\(kind)\", \"name\": \"t\", \"metadata\": \(metadata), \"children\": [\(children.joined(separator: ", "))]}"
    }

    func read(_ text: String, in dir: TempDir) throws(MixdownError) -> CompositionDocument {
        try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
    }

    /// Two gaps whose lengths each need a denominator past 32 bits (8535 and 275,625 units
    /// at 52,920,000,000 a second, a rate Mixdown writes) end on a place that fits one:
    /// 37/6890625 s. A MediaTime could not hold the gaps; the walk's Rational does, and the
    /// clip lands on that place exactly.
    @Test func placesReachedThroughLengthsPast32BitsAreExact() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 48_000)])
        let rate = "52920000000.0"
        let doc = try read(Self.timeline(Self.track([Self.gap(8535, rate), Self.gap(275_625, rate), Self.clip(0, 7680 * 6890, rate)])), in: dir)
        let segments = doc.composition.tracks[0].placedSegments.filter { $0.source != nil }
        #expect(segments.map(\.target.start) == [MediaTime(value: 37, timescale: 6_890_625)])
        #expect(segments.map(\.target.duration) == [MediaTime(value: 6890, timescale: 6_890_625)])
        #expect(!segments[0].target.start.hasBeenRounded)
    }

    /// A clip whose own length has no 32-bit timescale cannot be a segment: refused at the
    /// clip's source range, not rounded.
    @Test func aClipLengthWithNoTimescaleIsRefusedAtTheClip() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 48_000)])
        #expect {
            _ = try read(Self.timeline(Self.track([Self.clip(0, 8535, "52920000000.0")])), in: dir)
        } throws: { e in
            guard case .invalidDocument(_, let location, let reason) = e as? MixdownError else { return false }
            return location == "tracks[0].children[0].source_range" && reason.contains("569/3528000000 s has no exact timescale of 32 bits")
        }
    }

    /// The settings Mixdown keeps in `metadata.mixdown` are read as a document's are: an
    /// error names the key itself.
    @Test func aSettingsErrorNamesItsKeyInTheTimelinesMetadata() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 48_000)])
        let tracks = Self.track([Self.clip(0, 24, "24")])
        #expect {
            _ = try read(Self.timeline(tracks, metadata: "{\"mixdown\": {\"output\": {\"sample_rate\": 0}}}"), in: dir)
        } throws: { e in
            guard case .invalidDocument(_, let location, let reason) = e as? MixdownError else { return false }
            return location == "metadata.mixdown.output.sample_rate" && reason.contains("must be a sample rate between 1 and 768000 Hz, not 0")
        }
        #expect {
            _ = try read(Self.timeline(tracks, metadata: "{\"mixdown\": {\"time_range\": {\"start\": \"0\", \"duration\": \"2\"}}}"), in: dir)
        } throws: { e in
            guard case .invalidDocument(_, let location, let reason) = e as? MixdownError else { return false }
            return location == "metadata.mixdown.time_range" && reason.contains("after the composition")
        }
        let ok = try read(Self.timeline(tracks, metadata: "{\"mixdown\": {\"output\": {\"sample_rate\": 44100, \"channels\": 2}, \"time_range\": {\"start\": \"12f\", \"duration\": \"0.25\"}}}"), in: dir)
        #expect(ok.outputFormat == AudioFormat(sampleRate: 44_100, channelCount: 2) && ok.outputRateGiven)
        // Frames count at the output rate, as in a document.
        #expect(ok.timeRange == MediaTimeRange(start: MediaTime(value: 12, timescale: 44_100), duration: MediaTime(value: 1, timescale: 4)))
    }

    /// Mixdown's own track volume events (`metadata.mixdown.volume.events`) are read as a
    /// document's, at the timeline's path: two that overlap are named there.
    @Test func trackVolumeEventsAreCheckedAtTheirOwnPath() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 48_000)])
        let events = "[{\"ramp\": {\"from\": 1, \"to\": 0, \"start\": \"0\", \"end\": \"0.5\"}}, {\"ramp\": {\"from\": 0, \"to\": 1, \"start\": \"0.25\", \"end\": \"0.75\"}}]"
        #expect {
            _ = try read(Self.timeline(Self.track([Self.clip(0, 24, "24")], metadata: "{\"mixdown\": {\"volume\": {\"events\": \(events)}}}")), in: dir)
        } throws: { e in
            guard case .invalidDocument(_, let location, let reason) = e as? MixdownError else { return false }
            return location == "tracks[0].metadata.mixdown.volume.events" && reason.contains("overlaps")
        }
        let one = "[{\"ramp\": {\"from\": 1, \"to\": 0, \"start\": \"0\", \"end\": \"24000f\"}}]"
        let doc = try read(Self.timeline(Self.track([Self.clip(0, 24, "24")], metadata: "{\"mixdown\": {\"volume\": {\"events\": \(one)}}}")), in: dir)
        let envelope = try doc.audioMix.inputParameters[0].volume.envelope(sampleRate: 48_000)
        #expect(envelope.gain(atFrame: 0) == 1 && envelope.gain(atFrame: 12_000) == 0.5 && envelope.gain(atFrame: 24_000) == 0)
    }

    /// A timeline of picture alone says so: Mixdown renders audio.
    @Test func aTimelineWithoutAudioSaysWhatItIgnored() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 48_000)])
        let video = Self.track([Self.clip(0, 24, "24")], kind: "Video")
        #expect {
            _ = try read(Self.timeline(video + ", " + video), in: dir)
        } throws: { e in
            guard case .invalidDocument(_, let location, let reason) = e as? MixdownError else { return false }
            return location == "tracks" && reason == "has no enabled audio clip to render, and no length (Mixdown renders audio; it ignored 2 Video tracks)"
        }
    }

    /// Each dialect is asked about each effect, in order; their gains multiply: an FCP 7
    /// Audio Levels of 0.5 and an AAF Audio Gain of 1/4 on one clip are 1/8.
    @Test func everyDialectIsAskedAndTheirGainsMultiply() throws {
        let dir = TempDir()
        try writeFile(dir.file("a.wav"), [sine(300, frames: 48_000)])
        let levels = "{\"OTIO_SCHEMA\": \"Effect.1\", \"effect_name\": \"\", \"metadata\": {\"fcp_xml\": {\"effectid\": \"audiolevels\", \"parameter\": {\"parameterid\": \"level\", \"value\": \"0.5\"}}}}"
        let gain = "{\"OTIO_SCHEMA\": \"Effect.1\", \"effect_name\": \"\", \"metadata\": {\"AAF\": {\"Operation\": {\"Name\": \"Audio Gain\"}, \"Parameters\": {\"Amplitude multiplier\": \"25/100\"}}}}"
        let clip = Self.clip(0, 24, "24").replacingOccurrences(of: "\"metadata\": {}", with: "\"effects\": [\(levels), \(gain)], \"metadata\": {}")
        let doc = try read(Self.timeline(Self.track([clip])), in: dir)
        let envelope = try doc.audioMix.inputParameters[0].volume.envelope(sampleRate: 48_000)
        #expect(envelope.gain(atFrame: 0) == 0.125 && envelope.gain(atFrame: 47_999) == 0.125)
        #expect(OTIOTimeline.dialects.map { "\($0)" } == ["FinalCutXML", "Resolve", "AvidAAF", "CMX3600"])
    }
}
