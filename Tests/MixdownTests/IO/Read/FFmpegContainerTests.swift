#if FFmpeg
import Foundation
import Testing
@testable import Mixdown

/// Runs a tool from Debian's packages (ffmpeg, ffprobe), which tools/test installs.
@discardableResult
func tool(_ name: String, _ args: [String]) throws -> String {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/" + name)
    p.arguments = args
    let out = Pipe(), err = Pipe()
    p.standardOutput = out
    p.standardError = err
    try p.run()
    let o = out.fileHandleForReading.readDataToEndOfFile(), e = err.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    guard p.terminationStatus == 0 else {
        throw CocoaError(.executableLoad, userInfo: [NSLocalizedDescriptionKey: "\(name) \(args.joined(separator: " ")): \(String(decoding: e, as: UTF8.self))"])
    }
    return String(decoding: o, as: UTF8.self)
}

/// Deterministic band-limited noise: no period, so a cross-correlation has one peak.
func noise(frames n: Int, seed: UInt64, amplitude: Float = 0.3) -> [Float] {
    var state = seed &* 6364136223846793005 &+ 1442695040888963407
    var last: Float = 0
    return (0..<n).map { _ in
        state = state &* 6364136223846793005 &+ 1442695040888963407
        let white = Float(Int64(bitPattern: state >> 11) % 65536) / 65536 - 0.5
        last = 0.7 * last + 0.3 * white  // a gentle low-pass keeps lossy codecs honest
        return (amplitude * 4 * last * 32768).rounded() / 32768
    }
}

@Suite(.serialized) struct FFmpegContainerTests {
    /// 7 s + 1234 frames of stereo noise at 48 kHz, 16-bit: not a whole number of codec frames.
    static let frames = 48_000 * 7 + 1234
    static let source: [[Float]] = [noise(frames: frames, seed: 1), noise(frames: frames, seed: 2)]

    /// Tones at unrelated frequencies under a slow swell: no period, and nothing an AAC
    /// encoder codes as noise (its noise substitution draws from a running random
    /// generator, which no decoder that seeks can reproduce bit for bit).
    static let tonal: [[Float]] = (0..<2).map { c in
        (0..<frames).map { i in
            let t = Double(i) / 48_000
            let swell = 0.6 + 0.4 * sin(2 * .pi * 0.37 * t + Double(c))
            let tones = [220.7, 531.3, 1187.9, 2903.1, 6011.3].enumerated().reduce(0.0) { $0 + sin(2 * .pi * $1.element * t * (1 + 0.001 * Double(c)) + Double($1.offset)) }
            // Raised-cosine ends: an abrupt stop is a transient the encoder codes as noise.
            let edge = min(1, Double(min(i, frames - 1 - i)) / 4096)
            let fade = 0.5 - 0.5 * cos(.pi * edge)
            return Float((0.08 * fade * swell * tones * 32768).rounded() / 32768)
        }
    }

    /// Ogg Vorbis through FFmpeg's decoder (the reader libsndfile hands a file it stops
    /// short in): the length the last page's granule declares (ffprobe's duration_ts), and
    /// every sample ffmpeg's own decode gives, each frame's skips dropped. Read from the
    /// start and after a seek.
    @Test(arguments: ["libvorbis", "vorbis"])
    func oggVorbisReadsAsFFmpegDecodesIt(encoder: String) throws {
        let dir = TempDir()
        let wav = try Self.sourceWAV(dir, Self.tonal)
        let ogg = dir.file("v-\(encoder).ogg")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", encoder, "-strict", "-2", ogg])
        let declared = Int64(try tool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", ogg])
            .trimmingCharacters(in: .whitespacesAndNewlines))!
        let raw = dir.file("v.f32")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", ogg, "-f", "f32le", raw])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: raw))
        let interleaved = bytes.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
        let decoder = try AudioFileProbe.openWithFFmpeg(path: ogg, stream: nil)
        #expect(decoder.info.frames == declared && Int(declared) * 2 == interleaved.count, "\(decoder.info.frames) frames, declared \(declared), ffmpeg \(interleaved.count / 2)")
        let source = try FileSource(decoder: decoder, range: nil)
        let planes = try renderAll(source, blockSizes: [4096])
        let count = min(planes[0].count, interleaved.count / 2)
        var wrong: [Int] = []
        for i in 0..<count where planes[0][i] != interleaved[2 * i] || planes[1][i] != interleaved[2 * i + 1] { wrong.append(i) }
        #expect(planes[0].count == Int(declared) && wrong.isEmpty, "\(wrong.count) frames differ from ffmpeg's decode, first \(wrong.first ?? -1)")
        // A seek lands on the same samples.
        let part = try renderAll(FileSource(decoder: try AudioFileProbe.openWithFFmpeg(path: ogg, stream: nil), range: 100_000..<150_000), blockSizes: [1000])
        #expect(part[0] == Array(planes[0][100_000..<150_000]))
    }

    static func sourceWAV(_ dir: TempDir, _ planes: [[Float]] = source) throws -> String {
        let path = dir.file("source-\(planes[0][100]).wav")
        try writeFile(path, planes, type: .wav, format: .s16)
        return path
    }

    /// ffmpeg's own encoders and muxers, decoded by Mixdown: exactly the source's frames
    /// where the container declares them, and aligned with the source (lag 0).
    @Test(arguments: [("aac", "m4a", LengthSource.editList), ("aac", "mp4", .editList), ("aac", "mov", .editList),
                      ("alac", "m4a", .sampleTable), ("libopus", "mkv", .codecDelayAndPadding),
                      ("libopus", "webm", .codecDelayAndPadding), ("libmp3lame", "mp3", .header)])
    func decodesFFmpegsFilesToTheSourceLength(codec: String, ext: String, lengthSource: LengthSource) throws {
        let dir = TempDir()
        let wav = try Self.sourceWAV(dir)
        let path = dir.file("x.\(ext)")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", codec, path])
        let (info, planes) = try readFile(path)
        #expect(info.lengthSource == lengthSource)
        #expect(planes[0].count == Int(info.frames))
        if ext == "m4a" || ext == "mp4" || ext == "mov" {
            // What the container declares, exactly: ffmpeg's AAC encoder rounds its last
            // packet up to 32 frames, and its muxer declares that (Mixdown's writer does not).
            let declared = try tool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path])
            #expect("\(info.frames)" == declared.trimmingCharacters(in: .whitespacesAndNewlines))
            #expect(info.frames - Int64(Self.frames) >= 0 && info.frames - Int64(Self.frames) < (codec == "aac" ? 32 : 1))
        } else {
            #expect(info.frames == Int64(Self.frames), "\(codec) in \(ext)")
        }
        for c in 0..<2 {
            #expect(bestLag(planes[c], Self.source[c], start: 48_000, length: 20_000, maxLag: 1500) == 0, "\(codec) in \(ext), channel \(c)")
        }
        if codec == "alac" { #expect(planes == Self.source, "ALAC is lossless") }
    }

    /// A range starting at frame k gives the samples a decode from the start gives from k:
    /// in the first packet, across packet boundaries, near the end, at random places. ALAC
    /// is bit-exact; AAC within 1e-4 (its noise substitution draws from a running random
    /// generator that no seeking decoder can reproduce; measured at most 4.2e-5); Opus
    /// within 1e-5 after its one-second pre-roll (measured 0). A one-frame shift of these
    /// tones would differ by more than 1e-2.
    @Test(arguments: [("aac", "m4a"), ("alac", "mov"), ("libopus", "webm"), ("aac", "mkv")])
    func seekingIsSampleAccurate(codec: String, ext: String) throws {
        let dir = TempDir()
        let wav = try Self.sourceWAV(dir, Self.tonal)
        let path = dir.file("x.\(ext)")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", codec, path])
        let (info, whole) = try readFile(path)
        let n = Int(info.frames)
        var generator = SystemRandomNumberGenerator()
        var starts = [0, 1, 311, 312, 1023, 1024, 1025, 4095, 9000, n / 2, n - 2048, n - 1]
        for _ in 0..<24 { starts.append(Int.random(in: 0..<n, using: &generator)) }
        for k in starts {
            let end = min(n, k + 5000)
            let part = try renderAll(FileSource(path: path, range: Int64(k)..<Int64(end)), blockSizes: BlockSizes.irregular)
            let tolerance: Float = codec == "aac" ? 1e-4 : codec == "libopus" ? 1e-5 : 0
            for c in 0..<2 {
                let expected = Array(whole[c][k..<end])
                let first = expected.indices.first { $0 >= part[c].count || abs(part[c][$0] - expected[$0]) > tolerance }
                let worst = zip(part[c], expected).map { abs($0 - $1) }.max() ?? 0
                #expect(part[c].count == expected.count && first == nil,
                        "\(codec) in \(ext): range from \(k), channel \(c): \(part[c].count) frames, first difference at \(first.map(String.init) ?? "-"), largest \(worst)")
            }
        }
    }

    /// Mixdown's own m4a, mp4, mov, mkv and webm: read back by Mixdown and by ffmpeg
    /// (ffprobe's declared length for the MP4 family, a decode for Matroska) as exactly
    /// the frames rendered, aligned with the source; ALAC bit for bit.
    @Test(arguments: [(AudioFileType.m4a, AudioCodec.aac), (.mp4, .aac), (.mov, .aac), (.m4a, .alac),
                      (.mkv, .opus), (.webm, .opus)])
    func writesTheExactLength(type: AudioFileType, codec: AudioCodec) throws {
        let dir = TempDir()
        let path = dir.file("out.\(type.rawValue)")
        let encoding = try OutputEncoding.resolve(path: path, type: type, sampleFormat: codec == .alac ? .s16 : nil,
                                                  frames: Int64(Self.frames), channels: 2, encoder: EncoderSettings(codec: codec))
        let source = ArraySource(planes: Self.source)
        let writer = try AudioFileWriter(destination: path, encoding: encoding, format: source.format, maximumFrames: 4096, overwrite: false)
        try Renderer.run(source: source, writer: writer, expectedFrames: Int64(Self.frames))
        try writer.commit()

        let (info, planes) = try readFile(path)
        #expect(info.frames == Int64(Self.frames))
        #expect(info.sampleFormat == codec.rawValue)
        for c in 0..<2 { #expect(bestLag(planes[c], Self.source[c], start: 48_000, length: 20_000, maxLag: 1500) == 0) }
        if codec == .alac { #expect(planes == Self.source) }
        if type == .mkv || type == .webm {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: try Self.decodeWithFFmpeg(path, dir)))
            #expect(bytes.count / 4 == Self.frames, "ffmpeg decodes \(bytes.count / 4) frames")
        } else {
            let probe = try tool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-show_entries", "stream=duration_ts", "-of", "csv=p=0", path])
            #expect(probe.trimmingCharacters(in: .whitespacesAndNewlines) == "\(Self.frames)")
        }
        if type == .m4a && codec == .aac {
            let tags = try tool("ffprobe", ["-v", "error", "-show_entries", "format_tags=iTunSMPB", "-of", "csv=p=0", path])
            let fields = tags.split(separator: " ").compactMap { Int64($0.trimmingCharacters(in: .whitespacesAndNewlines), radix: 16) }
            #expect(fields.count == 12)
            #expect(fields[1] == 1024, "priming")
            #expect(fields[3] == Int64(Self.frames), "valid frames")
            #expect((fields[1] + fields[2] + fields[3]) % 1024 == 0, "priming + padding + frames fill whole AAC frames")
        }
    }

    /// An M4A with no edit list but an iTunSMPB tag: the tag's priming and length rule.
    @Test func iTunSMPBAloneGivesTheLength() throws {
        let dir = TempDir()
        let path = dir.file("smpb.m4a")
        var encoding = try OutputEncoding.resolve(path: path, type: .m4a, sampleFormat: nil, frames: Int64(Self.frames), channels: 2)
        encoding.writesEditList = false
        let source = ArraySource(planes: Self.source)
        let writer = try AudioFileWriter(destination: path, encoding: encoding, format: source.format, maximumFrames: 4096, overwrite: false)
        try Renderer.run(source: source, writer: writer, expectedFrames: Int64(Self.frames))
        try writer.commit()
        let (info, planes) = try readFile(path)
        #expect(info.lengthSource == .iTunSMPB)
        #expect(info.frames == Int64(Self.frames))
        #expect(info.priming == 1024)
        for c in 0..<2 { #expect(bestLag(planes[c], Self.source[c], start: 48_000, length: 20_000, maxLag: 1500) == 0) }
    }

    /// `stream` picks an audio stream by the container's index; video, missing and
    /// out-of-range streams are clear errors.
    @Test func streamsArePickedByIndex() throws {
        let dir = TempDir()
        let path = dir.file("two.mkv")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=25:d=2",
                            "-f", "lavfi", "-i", "sine=f=440:r=48000:d=2", "-f", "lavfi", "-i", "sine=f=1000:r=44100:d=2",
                            "-map", "0:v", "-map", "1:a", "-map", "2:a", "-c:v", "mpeg4", "-c:a", "flac", path])
        let first = try AudioFileInfo.read(path: path)
        #expect(first.stream == 1 && first.sampleRate == 48_000)
        #expect(first.streams.map(\.kind) == [.video, .audio, .audio])
        let second = try AudioFileInfo.read(path: path, stream: 2)
        #expect(second.sampleRate == 44_100 && second.frames == 88_200)
        #expect(throws: MixdownError.noAudioStream(path: path, reason: "stream 0 is video (mpeg4), not audio; audio streams: 1, 2")) {
            try AudioFileInfo.read(path: path, stream: 0)
        }
        #expect(throws: MixdownError.noAudioStream(path: path, reason: "has no stream 3 (it has 3: 0: video mpeg4, 1: audio flac, 2: audio flac)")) {
            try AudioFileInfo.read(path: path, stream: 3)
        }
        let videoOnly = dir.file("v.mp4")
        try tool("ffmpeg", ["-v", "error", "-y", "-f", "lavfi", "-i", "testsrc=size=64x48:rate=30000/1001:d=2", "-c:v", "mpeg4", videoOnly])
        #expect(throws: MixdownError.noAudioStream(path: videoOnly, reason: "has no audio stream (0: video mpeg4)")) {
            try AudioFileInfo.read(path: videoOnly)
        }
        // A video-only reference still has an exact duration: 60 frames at 30000/1001 fps.
        let (d, source) = try MediaFileStreams.referenceDuration(path: videoOnly)
        #expect(d == MediaTime(value: 2002, timescale: 1000))
        #expect(source.hasPrefix("video stream 0"))
    }

    /// Truncated, corrupt and unknown-codec files: typed errors naming the file (and the
    /// time, for data that does not decode), never silence.
    @Test func badContainersAreClearErrors() throws {
        let dir = TempDir()
        let wav = try Self.sourceWAV(dir)
        // moov first, so that a cut keeps the index and loses the data.
        let fast = dir.file("fast.m4a")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", "aac", "-movflags", "+faststart", fast])
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fast))
        let cut = dir.file("cut.m4a")
        try bytes.prefix(bytes.count * 2 / 3).write(to: URL(fileURLWithPath: cut))
        #expect {
            _ = try readFile(cut)
        } throws: { error in
            guard case MixdownError.truncatedAudio(let p, let expected, let read) = error else { return false }
            return p == cut && expected >= Int64(Self.frames) && read < expected && read > Int64(Self.frames) / 3
        }
        // moov last: a cut loses the index, and the file cannot be opened.
        let plain = dir.file("plain.m4a")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", "aac", plain])
        let whole = try Data(contentsOf: URL(fileURLWithPath: plain))
        let headless = dir.file("headless.m4a")
        try whole.prefix(whole.count / 2).write(to: URL(fileURLWithPath: headless))
        #expect {
            _ = try AudioFileInfo.read(path: headless)
        } throws: { error in
            guard case MixdownError.unreadableFile(let p, _) = error else { return false }
            return p == headless
        }
        // Garbage over packets in the middle of an Opus stream.
        let webm = dir.file("x.webm")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", wav, "-c:a", "libopus", webm])
        var damaged = try Data(contentsOf: URL(fileURLWithPath: webm))
        let middle = damaged.count / 2
        for i in middle..<(middle + 4000) { damaged[i] = UInt8(truncatingIfNeeded: i &* 2654435761 >> 7) }
        let corrupt = dir.file("corrupt.webm")
        try damaged.write(to: URL(fileURLWithPath: corrupt))
        #expect {
            _ = try readFile(corrupt)
        } throws: { error in
            switch error as? MixdownError {
            case .corruptAudio(let p, let time, _)?: return p == corrupt && !time.isEmpty
            case .truncatedAudio(let p, _, _)?, .readFailed(let p, _)?: return p == corrupt
            default: return false
            }
        }
        // A codec no decoder knows: Matroska's CodecID rewritten.
        var unknown = try Data(contentsOf: URL(fileURLWithPath: webm))
        let id = Data("A_OPUS".utf8)
        let at = try #require(unknown.range(of: id))
        unknown.replaceSubrange(at, with: Data("A_ZZZZ".utf8))
        let strange = dir.file("unknown.mkv")
        try unknown.write(to: URL(fileURLWithPath: strange))
        #expect {
            _ = try AudioFileInfo.read(path: strange)
        } throws: { error in
            guard case MixdownError.unreadableFile(let p, let reason) = error else { return false }
            return p == strange && reason.contains("no decoder")
        }
    }

    /// Opening scans a file once per version of it: a file rewritten in place reads anew.
    @Test func aRewrittenFileIsScannedAgain() throws {
        let dir = TempDir()
        let path = dir.file("take.m4a")
        for n in [10_000, 20_001, 5_123] {
            let encoding = try OutputEncoding.resolve(path: path, type: .m4a, sampleFormat: nil, frames: Int64(n), channels: 1)
            let source = ArraySource(planes: [sine(440, frames: n)])
            let writer = try AudioFileWriter(destination: path, encoding: encoding, format: source.format, maximumFrames: 4096, overwrite: true)
            try Renderer.run(source: source, writer: writer, expectedFrames: Int64(n))
            try writer.commit()
            #expect(try AudioFileInfo.read(path: path).frames == Int64(n))
            #expect(try readFile(path).planes[0].count == n)
        }
    }

    /// Decodes `path` with the ffmpeg CLI to interleaved stereo s16 and returns the raw file.
    static func decodeWithFFmpeg(_ path: String, _ dir: TempDir) throws -> String {
        let raw = dir.file(UUID().uuidString + ".raw")
        try tool("ffmpeg", ["-v", "error", "-y", "-i", path, "-f", "s16le", "-ac", "2", raw])
        return raw
    }
}
#endif
