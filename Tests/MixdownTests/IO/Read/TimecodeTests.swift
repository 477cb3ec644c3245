import Foundation
import Testing
@testable import Mixdown

/// SMPTE timecode to frames at a sample rate, and (with FFmpeg) a file's start timecode read
/// from a QuickTime `tmcd` track, a video stream or a Matroska TIMECODE tag, then used by a
/// timeline that addresses the file by it.
@Suite struct TimecodeTests {
    @Test func timecodesCountAsSMPTEDoes() {
        #expect(Timecode.frames(parsing: "10:00:00:00", rate: (25, 1), sampleRate: 48_000) == 1_728_000_000)
        #expect(Timecode.frames(parsing: "00:00:01:12", rate: (24, 1), sampleRate: 48_000) == 72_000)
        // 29.97 drop-frame: an hour of timecode is 107,892 frames, 3599.9964 s.
        #expect(Timecode.frames(parsing: "01:00:00;00", rate: (30_000, 1001), sampleRate: 48_000) == 172_799_827)
        // Non-drop 29.97: 108,000 frames, 3603.6 s.
        #expect(Timecode.frames(parsing: "01:00:00:00", rate: (30_000, 1001), sampleRate: 48_000) == 172_972_800)
        // 00:10:00;00 DF: minute 10 drops nothing, the nine before drop 2 each.
        #expect(Timecode.frames(parsing: "00:10:00;00", rate: (30_000, 1001), sampleRate: 30_000) == Int64((18_000 - 18) * 1001))
        // Without a rate, only whole seconds.
        #expect(Timecode.frames(parsing: "10:00:00:00", rate: nil, sampleRate: 44_100) == Int64(36_000 * 44_100))
        #expect(Timecode.frames(parsing: "10:00:00:05", rate: nil, sampleRate: 44_100) == nil)
        for bad in ["", "10:00:00", "10:00:00:25", "24:00:00:00", "aa:00:00:00", "10:61:00:00"] {
            #expect(Timecode.frames(parsing: bad, rate: (25, 1), sampleRate: 48_000) == nil, "\(bad)")
        }
    }

    #if FFmpeg
    @Test func aFilesStartTimecodeIsReadFromItsContainer() throws {
        let dir = TempDir()
        let wav = dir.file("a.wav")
        try writeFile(wav, [sine(440, frames: 96_000)])
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-f", "lavfi", "-i", "color=c=black:s=64x48:r=25:d=2",
                            "-timecode", "10:00:00:00", "-c:a", "pcm_s24le", "-c:v", "mpeg4", dir.file("tc25.mov")])
        let mov = try AudioFileInfo.read(path: dir.file("tc25.mov"))
        #expect(mov.timeReference == 1_728_000_000 && mov.timeReferenceSource == "tmcd track")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-f", "lavfi", "-i", "color=c=black:s=64x48:r=30000/1001:d=2",
                            "-timecode", "01:00:00;00", "-c:a", "aac", "-c:v", "mpeg4", dir.file("df.mp4")])
        #expect(try AudioFileInfo.read(path: dir.file("df.mp4")).timeReference == 172_799_827)
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-metadata", "timecode=09:30:00:00", "-c:a", "pcm_s16le", dir.file("tc.mkv")])
        let mkv = try AudioFileInfo.read(path: dir.file("tc.mkv"))
        #expect(mkv.timeReference == 34_200 * 48_000 && mkv.timeReferenceSource == "timecode tag")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", "aac", dir.file("none.m4a")])
        #expect(try AudioFileInfo.read(path: dir.file("none.m4a")).timeReference == nil)
    }

    /// An EDL-style timeline addresses a camera's MOV by its tmcd timecode: a source in-point
    /// of 10:00:01:00 is one second into the file.
    @Test func aTimelineFindsTheFrameByTheTmcdTrack() throws {
        let dir = TempDir()
        let source = (0..<(100 * 1_920)).map { Float($0 / 1_920) / 1_000 }   // a step per 25 fps frame
        try writeFile(dir.file("src.wav"), [source])
        try tool("ffmpeg", ["-v", "error", "-y", "-i", dir.file("src.wav"), "-f", "lavfi", "-i", "color=c=black:s=64x48:r=25:d=4",
                            "-timecode", "10:00:00:00", "-c:a", "pcm_f32le", "-c:v", "mpeg4", "-shortest", dir.file("cam.mov")])
        // 10:00:01:00 at 25 fps is frame 900,025; 10 frames from there are the file's frames 25-34.
        let text = """
        {"OTIO_SCHEMA": "Timeline.1", "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "a", "children": [
            {"OTIO_SCHEMA": "Clip.2", "name": "cam", "source_range": \(OTIOTimelineTests.range(900_025, 10, "25")), "active_media_reference_key": "DEFAULT_MEDIA",
             "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "cam.mov"}}}]}]}}
        """
        let doc = try CompositionDocument(data: Data(text.utf8), path: dir.file("t.otio"))
        _ = try doc.render(to: dir.file("o.wav")).run()
        let out = try readFile(dir.file("o.wav")).planes[0]
        #expect(out.count == 19_200)
        for frame in 0..<10 {
            // The render is 16-bit: each value within half a step of 16-bit.
            #expect(out[(frame * 1_920)..<((frame + 1) * 1_920)].allSatisfy { abs($0 - Float(25 + frame) / 1_000) <= 0.5 / 32_768 }, "frame \(frame)")
        }
        #expect(doc.translationNotes.contains { $0.contains("within its timecode (tmcd track 36000.000000 s)") }, "\(doc.translationNotes)")
    }
    #endif
}
