#if FFmpeg
import Foundation
import Testing
@testable import Mixdown

@Suite(.serialized) struct VideoFromTests {
    /// A 10 s MP4: 25 fps video, white on frames 50, 130 and 190 (2.0, 5.2, 7.6 s);
    /// 48 kHz AAC audio delayed by about a quarter second, with a 1 ms click at each flash.
    static func flashAndClick(_ dir: TempDir) throws -> String {
        let path = dir.file("flash.mp4")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "color=c=black:s=64x48:r=25:d=10",
                            "-itsoffset", "0.25", "-f", "lavfi",
                            "-i", "aevalsrc='0.9*(between(t,1.75,1.751)+between(t,4.95,4.951)+between(t,7.35,7.351))':s=48000:d=9.75",
                            "-vf", "drawbox=c=white:t=fill:enable='eq(n\\,50)+eq(n\\,130)+eq(n\\,190)'",
                            "-c:v", "mpeg4", "-c:a", "aac", path])
        return path
    }

    /// Each stream's kind, time base and first timestamp, as ffprobe reads them.
    static func starts(_ path: String) throws -> [(kind: String, timeBase: String, start: Int)] {
        try tool("ffprobe", ["-v", "error", "-show_entries", "stream=codec_type,start_pts,time_base", "-of", "compact=p=0", path])
            .split(separator: "\n").map { line in
                let fields = Dictionary(uniqueKeysWithValues: line.split(separator: "|").map { kv -> (String, String) in
                    let parts = kv.split(separator: "=", maxSplits: 1).map(String.init)
                    return (parts[0], parts.count > 1 ? parts[1] : "")
                })
                return (fields["codec_type"] ?? "", fields["time_base"] ?? "", Int(fields["start_pts"] ?? "") ?? -1)
            }
    }

    /// The render goes beside FILE's video, copied bit for bit, and each click keeps its
    /// place against the flashes, to the frame: the video's packets and timestamps are
    /// FILE's, and the render's frame 0 sits where FILE's audio frame 0 was presented.
    @Test func audioKeepsTheFilesOffsetToTheFrame() throws {
        let dir = TempDir()
        let input = try Self.flashAndClick(dir)
        let output = dir.file("out.mp4")
        var job = FileExport(input: input, output: output)
        job.videoFrom = input
        let report = try job.run()
        #expect(report.type == .mp4)

        // The video: the same packets, the same timestamps.
        let md5 = { (p: String) in try tool("ffmpeg", ["-v", "error", "-i", p, "-map", "0:v", "-c", "copy", "-f", "md5", "-"]) }
        #expect(try md5(input) == md5(output))
        let inStarts = try Self.starts(input), outStarts = try Self.starts(output)
        #expect(inStarts[0].kind == "video" && outStarts[0].kind == "video")
        #expect(inStarts[0].timeBase == outStarts[0].timeBase && inStarts[0].start == outStarts[0].start, "video start \(inStarts) -> \(outStarts)")

        // FILE's audio frame 0 is presented at start_pts / 48000 s.
        #expect(inStarts[1].kind == "audio" && inStarts[1].timeBase == "1/48000")
        let audioStart = inStarts[1].start
        #expect(audioStart > 10_000 && audioStart < 12_000)
        #expect(outStarts[1].start == 0, "the output's audio track starts with the video, at 0")

        // Every click at the same presentation frame: the output's frame audioStart + s is
        // the input's frame s (cross-correlation around each click peaks at lag 0).
        let (inInfo, inPlanes) = try readFile(input)
        let (outInfo, outPlanes) = try readFile(output)
        #expect(outInfo.frames == inInfo.frames + Int64(audioStart))
        #expect(outPlanes[0][0..<audioStart].allSatisfy { abs($0) < 1e-3 }, "silence before FILE's audio starts")
        let shifted = Array(outPlanes[0][audioStart...])
        func onsets(_ x: [Float]) -> [Int] { (1..<x.count).filter { abs(x[$0]) > 0.3 && abs(x[$0 - 1]) <= 0.3 && ($0 < 480 || x[($0 - 480)..<$0].allSatisfy { abs($0) <= 0.3 }) } }
        let clicks = onsets(inPlanes[0])
        #expect(clicks.count == 3, "\(clicks)")
        #expect(onsets(shifted) == clicks)
        for at in clicks {
            #expect(bestLag(inPlanes[0], shifted, start: at - 480, length: 1_440, maxLag: 400) == 0, "click at frame \(at)")
        }
    }

    /// --video-from needs a video stream, and an mp4 or mov output; nothing is written otherwise.
    @Test func refusesWhatCannotHoldVideo() throws {
        let dir = TempDir()
        let input = try Self.flashAndClick(dir)
        let wav = dir.file("in.wav")
        try writeFile(wav, [sine(440, frames: 48_000)], format: .s16)
        var job = FileExport(input: wav, output: dir.file("out.m4a"))
        job.videoFrom = input
        #expect(throws: MixdownError.unsupportedOutput(path: dir.file("out.m4a"), reason: "a video stream goes into mp4 or mov, not m4a")) { try job.run() }
        var noVideo = FileExport(input: wav, output: dir.file("out.mp4"))
        noVideo.videoFrom = wav
        #expect(throws: MixdownError.invalidParameter(name: "--video-from", value: "'\(wav)'", reason: "has no video stream")) { try noVideo.run() }
        #expect(dir.contents == ["flash.mp4", "in.wav"])
    }
}
#endif
