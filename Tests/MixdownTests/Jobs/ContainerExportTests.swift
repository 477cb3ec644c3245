#if FFmpeg
import Foundation
import Testing
@testable import Mixdown

@Suite(.serialized) struct ContainerExportTests {
    /// QA1730's job through the m4a-aac preset: exactly the frames of the time range, with
    /// the priming and length declared; metadata written.
    @Test func m4aAACPresetWritesTheExactRange() async throws {
        let dir = TempDir()
        let input = dir.file("in.wav")
        try writeFile(input, [noise(frames: 48_000 * 6, seed: 7), noise(frames: 48_000 * 6, seed: 8)], format: .s16)
        let session = try ExportSession(asset: .file(AudioAsset(path: input)), preset: .m4aAAC)
        session.outputPath = dir.file("out.m4a")
        session.timeRange = MediaTimeRange(start: MediaTime(value: 1, timescale: 3), duration: MediaTime(value: 4001, timescale: 1000))
        session.metadata = AudioMetadata(title: "Take 3", artist: "Mixdown tests")
        let report = try await session.export()
        #expect(report.type == .m4a)
        let info = try AudioFileInfo.read(path: dir.file("out.m4a"))
        #expect(info.frames == 192_048 && report.frames == 192_048)
        #expect(info.sampleFormat == "aac" && info.lengthSource == .editList)
        let tags = try tool("ffprobe", ["-v", "error", "-show_entries", "format_tags=title,artist", "-of", "compact=p=0", dir.file("out.m4a")])
        #expect(tags.contains("Take 3") && tags.contains("Mixdown tests"))
        #expect(try session.estimatedOutputFileLength() == nil, "compressed: no exact size")
        let presets = ExportSession.exportPresets(compatibleWith: .file(try AudioAsset(path: input)))
        #expect(presets.contains(.m4aALAC) && presets.contains(.m4aAAC))
    }

    /// m4a-alac keeps a 24-bit input's samples exactly.
    @Test func m4aALACPresetIsLosslessAt24Bits() async throws {
        let dir = TempDir()
        let input = dir.file("in.wav")
        let planes = [noise(frames: 30_011, seed: 3), noise(frames: 30_011, seed: 4)].map { $0.map { ($0 * 8_388_608 + 0.37).rounded() / 8_388_608 } }
        try writeFile(input, planes, format: .s24)
        let session = try ExportSession(asset: .file(AudioAsset(path: input)), preset: .m4aALAC)
        session.outputPath = dir.file("out.m4a")
        _ = try await session.export()
        let (info, back) = try readFile(dir.file("out.m4a"))
        #expect(info.sampleFormat == "alac" && info.bitsPerSample == 24 && info.frames == 30_011)
        #expect(back == planes)
    }

    /// A document picks a segment's audio stream by index and writes ALAC beside a copied video.
    @Test func documentStreamCodecAndVideo() throws {
        let dir = TempDir()
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25:d=3",
                            "-f", "lavfi", "-i", "sine=f=440:r=48000:d=3", "-f", "lavfi", "-i", "sine=f=1000:r=48000:d=3",
                            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v", "mpeg4", "-c:a", "pcm_s16le", dir.file("two.mov")])
        let doc = """
        {"version": 1, "output": {"type": "mov", "codec": "alac", "video_from": "two.mov"},
         "tracks": [{"name": "second", "segments": [{"file": "two.mov", "stream": 2, "source": {"start": "1", "duration": "1"}, "at": "0.5"}]}]}
        """
        try Data(doc.utf8).write(to: URL(fileURLWithPath: dir.file("doc.json")))
        let document = try CompositionDocument(contentsOf: dir.file("doc.json"))
        let report = try document.render(to: dir.file("out.mov")).run()
        #expect(report.frames == 72_000)
        let (info, planes) = try readFile(dir.file("out.mov"))
        #expect(info.sampleFormat == "alac" && info.streams.map(\.kind) == [.video, .audio])
        // Frames 24000..<72000 are the 1000 Hz stream's second 1..<2, exactly (16-bit in, ALAC out).
        let expected = try renderAll(FileSource(path: dir.file("two.mov"), range: 48_000..<96_000, stream: 2), blockSizes: [4096])
        #expect(Array(planes[0][24_000..<72_000]) == expected[0])
        #expect(planes[0][0..<24_000].allSatisfy { $0 == 0 })

        let bad = doc.replacingOccurrences(of: "\"stream\": 2", with: "\"stream\": 0")
        try Data(bad.utf8).write(to: URL(fileURLWithPath: dir.file("bad.json")))
        #expect {
            _ = try CompositionDocument(contentsOf: dir.file("bad.json"))
        } throws: { error in
            guard case MixdownError.invalidDocument(_, let location, let reason) = error else { return false }
            return location == "tracks[0].segments[0].stream" && reason.contains("stream 0 is video")
        }
    }
}
#endif
