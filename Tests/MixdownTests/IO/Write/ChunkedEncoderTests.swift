#if FFmpeg
import Foundation
import Testing
@testable import Mixdown

/// AAC and Opus encoded on several cores (`ChunkedEncoder`): the same frames, packets and
/// declared length as the serial encoder, and joins no decoder can find. Each encode is
/// decoded by FFmpeg and by an independent decoder (faad for AAC, opusdec for Opus), and
/// tools/check/encode-joins.py compares the error of every 1024-frame block with the serial
/// encode's: the worst block near a join no worse than the serial encode's worst, the
/// median within 0.4 dB. The chunks here are short (16 codec frames) so that 20 s of
/// material has dozens of joins; without the pre-roll the same check fails.
@Suite(.serialized) struct ChunkedEncoderTests {
    static let frames = 20 * 48_000 + 777
    static let python = OTIOPaths.repository.appendingPathComponent("tools/.venv/bin/python").path
    static let joins = OTIOPaths.repository.appendingPathComponent("tools/check/encode-joins.py").path

    /// Material that makes an encoder switch blocks: noise bursts out of silence, click
    /// trains and decaying plucks, at random places (so some sit on the joins).
    static let source: [[Float]] = {
        var state: UInt64 = 0x2545F4914F6CDD1D
        func random() -> Double {
            state ^= state << 13; state ^= state >> 7; state ^= state << 17
            return Double(state >> 11) / Double(1 << 53)
        }
        var l = [Float](repeating: 0, count: frames), r = l
        var t = 0
        while t < frames - 48_000 {
            let length = Int((0.05 + 0.45 * random()) * 48_000)
            switch Int(random() * 3) {
            case 0:
                let level = 0.05 + 0.45 * random()
                for i in t..<t + length { l[i] = Float((random() - 0.5) * 2 * level); r[i] = Float((random() - 0.5) * 2 * level) }
            case 1:
                for k in stride(from: 0, to: length, by: 2_400) {
                    let v = Float((random() - 0.5) * 1.6)
                    for i in t + k..<min(t + k + 64, frames) { l[i] += v; r[i] -= v }
                }
            default:
                let f = 100 + 1900 * random()
                for i in 0..<length {
                    let v = Float(0.5 * sin(2 * Double.pi * f * Double(i) / 48_000) * exp(-Double(i) / 4_800))
                    l[t + i] += v
                    r[t + i] += 0.7 * v
                }
            }
            t += length + Int(0.3 * random() * 48_000)
        }
        return [l.map { max(-1, min(1, $0)) }, r.map { max(-1, min(1, $0)) }]
    }()

    /// Encodes `source` to `name` with `encoders` encoders (1: serial) and the pre-roll given.
    static func encode(_ dir: TempDir, _ name: String, type: AudioFileType, codec: AudioCodec, encoders: Int,
                       preroll: Int = 8, chunk: Int = 16) throws -> String {
        let path = dir.file(name)
        var encoding = try OutputEncoding.resolve(path: path, type: type, sampleFormat: nil, frames: Int64(frames), channels: 2,
                                                  encoder: EncoderSettings(codec: codec))
        encoding.encoderThreads = encoders
        encoding.chunkFrames = chunk
        encoding.prerollFrames = preroll
        let source = ArraySource(planes: Self.source)
        let writer = try AudioFileWriter(destination: path, encoding: encoding, format: source.format, maximumFrames: 4096, overwrite: false)
        try Renderer.run(source: source, writer: writer, blockSizes: [4096, 1000, 7], expectedFrames: Int64(frames))
        try writer.commit()
        return path
    }

    /// FFmpeg's decode and the independent decoder's, as 32-bit float WAV files.
    static func decodes(_ path: String, codec: AudioCodec, _ dir: TempDir) throws -> [String] {
        let ffmpeg = path + ".ffmpeg.wav"
        try tool("ffmpeg", ["-v", "error", "-y", "-i", path, "-c:a", "pcm_f32le", ffmpeg])
        let other = path + ".other.wav"
        switch codec {
        case .aac:
            try tool("faad", ["-q", "-b", "4", "-o", other, path])
        default:
            // opusdec reads Ogg Opus: the same packets, remuxed.
            let ogg = path + ".opus"
            try tool("ffmpeg", ["-v", "error", "-y", "-i", path, "-c:a", "copy", ogg])
            try tool("opusdec", ["--quiet", "--float", ogg, other])
        }
        return [ffmpeg, other]
    }

    static func packets(_ path: String) throws -> String {
        try tool("ffprobe", ["-v", "error", "-select_streams", "a:0", "-count_packets", "-show_entries", "stream=nb_read_packets",
                             "-of", "csv=p=0", path]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// joins.py's verdict on serial/parallel pairs of decodes: its exit status and report.
    static func checkJoins(_ reference: String, _ pairs: [(String, String)], chunkFrames: Int) throws -> (Int32, String) {
        try runProcess(python, [joins, reference, "\(chunkFrames)"] + pairs.flatMap { [$0.0, $0.1] })
    }

    /// Chunk k is coded by worker k mod n, whatever the threads' timing: three parallel
    /// encodes of the same audio hold the same packets, byte for byte (FFmpeg's framemd5 of
    /// the stream copied; Matroska's segment UID is random, so the files are compared by
    /// their packets). With a shared queue, which worker took which chunk varied from run
    /// to run, and with it the packets and the quality.
    @Test(arguments: [(AudioFileType.m4a, AudioCodec.aac), (.webm, .opus)])
    func aParallelEncodeHasTheSamePacketsEveryRun(type: AudioFileType, codec: AudioCodec) throws {
        let dir = TempDir()
        let runs = try (0..<3).map { i in
            let path = try Self.encode(dir, "run\(i).\(type.rawValue)", type: type, codec: codec, encoders: 3)
            return try tool("ffmpeg", ["-v", "error", "-i", path, "-map", "0:a", "-c", "copy", "-f", "framemd5", "-"])
                .split(separator: "\n").filter { !$0.hasPrefix("#") }
        }
        #expect(runs[0].count > 100, "\(type): \(runs[0].count) packets")
        #expect(runs[1] == runs[0] && runs[2] == runs[0], "\(type): the packets differ between runs")
    }

    @Test(arguments: [(AudioFileType.m4a, AudioCodec.aac, 1024), (.webm, .opus, 960)])
    func parallelJoinsAreSeamlessToEveryDecoder(type: AudioFileType, codec: AudioCodec, frameSize: Int) throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.python), "tools/.venv is missing: run tools/check/otio/setup")
        let dir = TempDir()
        let reference = dir.file("reference.wav")
        try writeFile(reference, Self.source)
        let serial = try Self.encode(dir, "serial.\(type.rawValue)", type: type, codec: codec, encoders: 1)
        let parallel = try Self.encode(dir, "parallel.\(type.rawValue)", type: type, codec: codec, encoders: 2)
        let bare = try Self.encode(dir, "bare.\(type.rawValue)", type: type, codec: codec, encoders: 2, preroll: 0)
        // The same length, declared the same way, in as many packets.
        for path in [serial, parallel] {
            #expect(try readFile(path).info.frames == Int64(Self.frames))
        }
        #expect(try Self.packets(parallel) == Self.packets(serial))
        let s = try Self.decodes(serial, codec: codec, dir), p = try Self.decodes(parallel, codec: codec, dir)
        let b = try Self.decodes(bare, codec: codec, dir)
        let chunk = 16 * frameSize
        let good = try Self.checkJoins(reference, [(s[0], p[0]), (s[1], p[1])], chunkFrames: chunk)
        #expect(good.0 == 0, "\(good.1)")
        #expect(good.1.contains("\(Self.frames / chunk) joins"), "\(good.1)")
        // Without the pre-roll, each chunk's encoder starts cold at its join: audible.
        let cold = try Self.checkJoins(reference, [(s[0], b[0]), (s[1], b[1])], chunkFrames: chunk)
        #expect(cold.0 == 1 && cold.1.contains("a join is audible"), "\(cold.1)")
    }

    /// Lengths around the chunks: shorter than one chunk, a chunk plus one frame, exact
    /// multiples, and three encoders for two cores: every frame there, declared exactly,
    /// in the serial encode's number of packets.
    @Test(arguments: [100, 16 * 1024 + 1, 32 * 1024, 5 * 16 * 1024 - 1])
    func everyLengthIsExact(frames n: Int) throws {
        let dir = TempDir()
        for (encoders, name) in [(1, "serial"), (3, "parallel")] {
            let path = dir.file("\(name).m4a")
            var encoding = try OutputEncoding.resolve(path: path, type: .m4a, sampleFormat: nil, frames: Int64(n), channels: 2)
            encoding.encoderThreads = encoders
            encoding.chunkFrames = 16
            let source = ArraySource(planes: Self.source.map { Array($0[0..<n]) })
            let writer = try AudioFileWriter(destination: path, encoding: encoding, format: source.format, maximumFrames: 4096, overwrite: false)
            try Renderer.run(source: source, writer: writer, expectedFrames: Int64(n))
            try writer.commit()
            #expect(try readFile(path).info.frames == Int64(n), "\(name), \(n) frames")
        }
        #expect(try Self.packets(dir.file("parallel.m4a")) == Self.packets(dir.file("serial.m4a")))
    }
}
#endif
