#if FFmpeg
import Foundation
import Testing

/// FFmpeg's libraries are loaded by the first job that reads or writes a container, never
/// at start (Sources/FFmpegLoader). Where they cannot be loaded, a job that needs them
/// fails naming its file, the library and the package, and writes nothing; every other job
/// runs as before.
@Suite(.serialized) struct FFmpegLoadingTests {
    /// libavformat's soname on this system (libavformat.so.59 on Debian 12), from the
    /// dynamic loader's cache.
    static func libavformatSoname() throws -> String {
        let r = try DocsTests.shell("/sbin/ldconfig -p", in: "/", environment: [:])
        let names = r.stdout.split(separator: "\n").compactMap { line -> String? in
            let name = line.trimmingCharacters(in: .whitespaces).split(separator: " ").first.map(String.init)
            return name.map { $0.range(of: #"^libavformat\.so\.[0-9]+$"#, options: .regularExpression) != nil } == true ? name : nil
        }
        return try #require(names.first, "no libavformat.so.N in ldconfig -p")
    }

    /// Runs the command where libavformat's soname is found first in `ws`, as an empty
    /// file: a load of FFmpeg fails there ("file too short").
    static func withoutFFmpeg(_ args: [String], in ws: Workspace, soname: String) throws -> CLI.Result {
        FileManager.default.createFile(atPath: ws.file("broken-libs/" + soname), contents: Data())
        let quoted = ([CLI.executable.path] + args).map { "'" + $0 + "'" }.joined(separator: " ")
        return try DocsTests.shell("exec " + quoted, in: ws.path, environment: ["LD_LIBRARY_PATH": ws.file("broken-libs")])
    }

    /// The command's ELF file names none of FFmpeg's libraries: the loader does not map
    /// them (and the 130 they pull in) at start.
    @Test func theCommandDoesNotLinkFFmpeg() throws {
        let r = try DocsTests.shell("readelf -d '\(CLI.executable.path)'", in: "/", environment: [:])
        #expect(r.code == 0, "\(r.stderr)")
        let needed = r.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }
        #expect(needed.contains { $0.contains("libsndfile") }, "\(needed)")
        #expect(!needed.contains { $0.contains("libavformat") || $0.contains("libavcodec") || $0.contains("libavutil") },
                "\(needed)")
    }

    /// With FFmpeg unloadable, a WAV job runs and writes the same bytes as with it: it
    /// never loads FFmpeg. A container job fails with exit 1, naming the file, the library
    /// and the Debian package, and writes nothing; reading one names the input.
    @Test func aJobWithoutContainersNeverLoadsFFmpeg() throws {
        let ws = try Workspace()
        let soname = try Self.libavformatSoname()
        try FileManager.default.createDirectory(atPath: ws.file("broken-libs"), withIntermediateDirectories: true)
        let version = try Self.withoutFFmpeg(["--version"], in: ws, soname: soname)
        #expect(version.code == 0, "\(version.stderr)")

        let plain = try CLI.run(["stretch", "in.wav", "a.flac", "--ratio", "1.003", "-q"], in: ws.path)
        #expect(plain.code == 0, "\(plain.stderr)")
        let without = try Self.withoutFFmpeg(["stretch", "in.wav", "b.flac", "--ratio", "1.003", "-q"], in: ws, soname: soname)
        #expect(without.code == 0, "\(without.stderr)")
        #expect(FileManager.default.contentsEqual(atPath: ws.file("a.flac"), andPath: ws.file("b.flac")))

        let major = soname.split(separator: ".").last!
        let write = try Self.withoutFFmpeg(["export", "in.wav", "out.m4a", "-q"], in: ws, soname: soname)
        #expect(write.code == 1, "\(write.stderr)")
        #expect(write.stderr.contains("'out.m4a': MP4, MOV, M4A, MKV and WebM need FFmpeg's \(soname)"), "\(write.stderr)")
        #expect(write.stderr.contains("apt-get install libavformat\(major)") && write.stderr.contains("file too short"),
                "\(write.stderr)")
        #expect(!ws.contents.contains { $0.hasPrefix("out") || $0.hasPrefix(".out") }, "\(ws.contents)")

        let made = try CLI.run(["export", "in.wav", "in.m4a", "--duration", "5", "-q"], in: ws.path)
        #expect(made.code == 0, "\(made.stderr)")
        for args in [["info", "in.m4a"], ["export", "in.m4a", "back.wav", "-q"]] {
            let read = try Self.withoutFFmpeg(args, in: ws, soname: soname)
            #expect(read.code == 1, "\(args): \(read.stderr)")
            #expect(read.stderr.contains("'in.m4a': cannot read audio: MP4, MOV, M4A, MKV and WebM need FFmpeg's \(soname)"),
                    "\(args): \(read.stderr)")
        }
        #expect(!ws.contents.contains { $0.hasPrefix("back") || $0.hasPrefix(".back") }, "\(ws.contents)")
        // The same file with FFmpeg where it belongs: read.
        let info = try CLI.run(["info", "in.m4a", "--json"], in: ws.path)
        #expect(info.code == 0, "\(info.stderr)")
        let object = try JSONSerialization.jsonObject(with: Data(info.stdout.utf8)) as? [String: Any]
        #expect(object?["type"] as? String == "m4a" && object?["frames"] as? Int == 240_000, "\(info.stdout)")
    }
}
#endif
