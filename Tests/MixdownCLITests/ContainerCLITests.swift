#if FFmpeg
import Foundation
import Mixdown
import Testing

/// Runs ffmpeg from Debian's packages (tools/test installs it).
private func ffmpeg(_ args: [String], in dir: String) throws {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/ffmpeg")
    p.arguments = ["-v", "error", "-y"] + args
    p.currentDirectoryURL = URL(fileURLWithPath: dir)
    try p.run()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
}

@Suite(.serialized) struct ContainerCLITests {
    /// A write refused mid-render (the file-size limit: EFBIG) ends the job with the
    /// destination's name and the system's reason, exit 1, and nothing left, through each
    /// writer: libsndfile's (WAV), the FFmpeg sink's file written behind (M4A), and its
    /// muxer's thread with a video copied beside (MP4).
    @Test(arguments: [["export", "in.wav", "out.wav"], ["export", "in.wav", "out.m4a"],
                      ["export", "in.wav", "out.mp4", "--video-from", "v.mp4"]])
    func aRefusedWriteFailsCleanly(args: [String]) throws {
        let ws = try Workspace()
        if args.contains("v.mp4") {
            try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=25:d=3", "-c:v", "mpeg4", "v.mp4"], in: ws.path)
        }
        // 200 KiB: the 60 s input makes an 11.5 MB WAV and an M4A of about 1 MB.
        let r = try CLI.run(args + ["--overwrite", "-q"], in: ws.path, fileSizeBlocks: 400)
        #expect(r.code == 1, "\(r.stderr)")
        #expect(r.stderr.contains("'\(args[2])': write failed") && r.stderr.contains("File too large"), "\(r.stderr)")
        #expect(!ws.contents.contains { $0.hasPrefix("out") || $0.hasPrefix(".out") }, "\(ws.contents)")
    }

    /// `info` lists every stream of an MP4: the video's codec, frame rate and exact
    /// duration; the audio's codec, rate, channels and exact frames.
    @Test func infoListsEveryStream() throws {
        let ws = try Workspace()
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=30000/1001:d=3", "-i", "in.wav", "-t", "3",
                    "-c:v", "mpeg4", "-c:a", "aac", "av.mp4"], in: ws.path)
        let r = try CLI.run(["info", "av.mp4", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect(obj["type"] as? String == "mp4")
        #expect(obj["stream"] as? Int == 1)
        #expect(obj["length_source"] as? String == "edit list")
        #expect(obj["priming"] as? Int == 1024)
        let streams = obj["streams"] as! [[String: Any]]
        #expect(streams.map { $0["kind"] as? String } == ["video", "audio"])
        #expect(streams[0]["frame_rate"] as? String == "30000/1001")
        #expect(streams[0]["duration"] as? String == "3003/1000")
        #expect(streams[1]["frames"] as? Int == obj["frames"] as? Int)
        let text = try CLI.run(["info", "av.mp4"], in: ws.path)
        #expect(text.stdout.contains("0: video mpeg4, 30000/1001 fps"))
        #expect(text.stdout.contains("<- played"))
    }

    /// Container files that cannot be used: exit 1, a message naming the file and what is
    /// wrong (and the time, for damage), nothing written.
    @Test func badContainersExitOneAndWriteNothing() throws {
        let ws = try Workspace()
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=25:d=2", "-c:v", "mpeg4", "video.mp4"], in: ws.path)
        try ffmpeg(["-i", "in.wav", "-t", "20", "-c:a", "libopus", "voice.webm"], in: ws.path)
        try ffmpeg(["-i", "in.wav", "-t", "20", "-c:a", "aac", "-movflags", "+faststart", "fast.m4a"], in: ws.path)
        let fast = try Data(contentsOf: URL(fileURLWithPath: ws.file("fast.m4a")))
        try fast.prefix(fast.count / 2).write(to: URL(fileURLWithPath: ws.file("cut.m4a")))
        var webm = try Data(contentsOf: URL(fileURLWithPath: ws.file("voice.webm")))
        let codecID = try #require(webm.range(of: Data("A_OPUS".utf8)))
        var unknown = webm
        unknown.replaceSubrange(codecID, with: Data("A_ZZZZ".utf8))
        try unknown.write(to: URL(fileURLWithPath: ws.file("unknown.mkv")))
        for i in (webm.count / 2)..<(webm.count / 2 + 3000) { webm[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 9) }
        try webm.write(to: URL(fileURLWithPath: ws.file("damaged.webm")))
        let before = ws.contents

        let cases: [([String], String)] = [
            (["export", "video.mp4", "out.wav"], "'video.mp4': has no audio stream (0: video mpeg4)"),
            (["export", "unknown.mkv", "out.wav"], "has no decoder"),
            (["export", "cut.m4a", "out.wav"], "'cut.m4a': the file is truncated"),
            (["export", "damaged.webm", "out.wav"], "'damaged.webm': "),
            (["stretch", "in.wav", "out.wav", "--align", "video.mp4"], "'video.mp4': has no audio stream"),
            (["export", "in.wav", "out.mp4", "--video-from", "video.mp4", "--codec", "opus"], "'out.mp4': mp4 does not hold opus"),
            (["export", "in.wav", "out.m4a", "--format", "f32", "--codec", "alac"], "alac stores s16 or s24 samples, not f32"),
            (["export", "in.wav", "out.m4a", "--bitrate", "9000"], "outside aac's"),
            (["export", "in.wav", "out.wav", "--codec", "aac"], "--codec aac applies to m4a, mp4, mov, mkv and webm, not wav"),
        ]
        for (args, message) in cases {
            let r = try CLI.run(args, in: ws.path)
            #expect(r.code == 1, "\(args): exit \(r.code), \(r.stderr)")
            #expect(r.stderr.contains(message), "\(args): \(r.stderr)")
            #expect(ws.contents == before, "\(args) wrote something")
        }
        // A damaged stream names the time at fault.
        let damaged = try CLI.run(["export", "damaged.webm", "out.wav"], in: ws.path)
        #expect(damaged.stderr.contains("cannot decode the audio at 0:00:") || damaged.stderr.contains("truncated"), "\(damaged.stderr)")
    }

    /// The user's job in one command: a separate microphone (M4A) drifting against a screen
    /// recording (MP4 with video) is put on the video's clock, and written back beside the
    /// video, which is copied bit for bit. The output is exactly the reference's length.
    @Test func alignsAMicrophoneToAScreenRecordingAndKeepsItsVideo() throws {
        let ws = try Workspace()
        let made = try CLI.run(["generate-pair", "ref.wav", "rec.wav", "--duration", "60", "--offset", "1.5", "--ppm", "200"], in: ws.path)
        #expect(made.code == 0, "\(made.stderr)")
        try ffmpeg(["-f", "lavfi", "-i", "testsrc=size=64x48:rate=30:d=60", "-i", "ref.wav", "-t", "60",
                    "-c:v", "mpeg4", "-c:a", "aac", "screen.mp4"], in: ws.path)
        try ffmpeg(["-i", "rec.wav", "-c:a", "aac", "mic.m4a"], in: ws.path)
        let r = try CLI.run(["stretch", "mic.m4a", "fixed.mp4", "--align", "screen.mp4", "--video-from", "screen.mp4", "--json"], in: ws.path)
        #expect(r.code == 0, "\(r.stderr)")
        let obj = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        #expect((obj["residual_max_lag_milliseconds"] as? Double ?? 99) < 1, "\(obj)")
        let screen = try CLI.run(["info", "screen.mp4", "--json"], in: ws.path)
        let fixed = try CLI.run(["info", "fixed.mp4", "--json"], in: ws.path)
        let s = try JSONSerialization.jsonObject(with: Data(screen.stdout.utf8)) as! [String: Any]
        let f = try JSONSerialization.jsonObject(with: Data(fixed.stdout.utf8)) as! [String: Any]
        #expect(f["frames"] as? Int == s["frames"] as? Int, "the output ends at the reference's exact length")
        #expect((f["streams"] as! [[String: Any]]).first?["kind"] as? String == "video")
    }
}
#endif
