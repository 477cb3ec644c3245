import Foundation
import Testing

/// The docs, checked rather than trusted: the README's shell examples run as written on
/// files made here, and docs/cli.md's synopsis names every command and option the parser
/// has, and no other.
@Suite(.serialized) struct DocsTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../..").standardized.path

    /// The fenced blocks of `language` in `markdown`, each as its lines.
    static func blocks(_ markdown: String, language: String) -> [[String]] {
        var blocks: [[String]] = [], current: [String]?
        for line in markdown.components(separatedBy: "\n") {
            if current == nil, line == "```" + language { current = [] }
            else if current != nil, line == "```" { blocks.append(current!); current = nil }
            else if current != nil { current!.append(line) }
        }
        return blocks
    }

    static func shell(_ command: String, in dir: String, environment: [String: String]) throws -> CLI.Result {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", command]
        p.currentDirectoryURL = URL(fileURLWithPath: dir)
        p.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        return try CLI.collect(p)
    }

    /// An OTIO timeline as an editor on another machine writes it: one clip at a path
    /// under /Volumes/Media (found under $HOME/Media by --relink), one at a path that
    /// exists nowhere (found by its file name under --media ~/footage).
    static func editorsTimeline() -> String {
        func clip(_ name: String, _ url: String) -> String {
            """
            {"OTIO_SCHEMA": "Clip.2", "name": "\(name)", "source_range": {"OTIO_SCHEMA": "TimeRange.1",
              "start_time": {"OTIO_SCHEMA": "RationalTime.1", "rate": 24.0, "value": 24.0},
              "duration": {"OTIO_SCHEMA": "RationalTime.1", "rate": 24.0, "value": 96.0}},
             "active_media_reference_key": "DEFAULT_MEDIA",
             "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": "\(url)"}}}
            """
        }
        return """
        {"OTIO_SCHEMA": "Timeline.1", "name": "cut", "global_start_time": null,
         "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
          {"OTIO_SCHEMA": "Track.1", "kind": "Audio", "name": "A1", "children": [
            \(clip("interview", "file:///Volumes/Media/day1/interview.wav")), \(clip("room tone", "/Users/editor/Desktop/tone.wav"))]}]}}
        """
    }

    /// README.md's "Five examples", every shell line as written (bash, in a directory that
    /// holds a copy of tools/examples, HOME pointing inside it, the built `mixdown` first
    /// on PATH), on recordings made here: each exits 0 and writes what it names.
    @Test func readmeShellExamplesRunAsWritten() throws {
        let readme = try String(contentsOfFile: Self.root + "/README.md", encoding: .utf8)
        guard let examples = readme.components(separatedBy: "## Five examples").dropFirst().first else {
            Issue.record("README.md has no '## Five examples'"); return
        }
        let lines = Self.blocks(examples.components(separatedBy: "\n## ")[0], language: "sh").joined()
            .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty && !$0.hasPrefix("#") }
        #expect(lines.count >= 7, "\(lines)")

        let dir = ScratchDir()
        let fm = FileManager.default
        let home = dir.file("home")
        for d in ["tools/examples", "home/Media/day1", "home/footage"] {
            try fm.createDirectory(atPath: dir.file(d), withIntermediateDirectories: true)
        }
        for name in try fm.contentsOfDirectory(atPath: Self.root + "/tools/examples") where name != "audio" {
            try fm.copyItem(atPath: Self.root + "/tools/examples/" + name, toPath: dir.file("tools/examples/" + name))
        }
        // The recordings: a camera (picture and sound), a recorder and a lav that drift
        // against it, a screen capture and a phone's m4a, a podcast.
        func run(_ args: [String]) throws {
            let r = try CLI.run(args, in: dir.path)
            #expect(r.code == 0, "\(args): \(r.stderr)")
        }
        try run(["generate-pair", "camera.wav", "recorder.wav", "--duration", "40", "--offset", "1.25", "--ppm", "131", "--seed", "7"])
        // The lav: the camera's sound on a clock 150 ppm fast, starting 1 s in.
        try run(["stretch", "camera.wav", "lav-long.wav", "--ratio", "0.99985", "--algorithm", "varispeed", "-q"])
        try run(["export", "lav-long.wav", "lav.wav", "--start", "1", "--duration", "35", "-q"])
        let ffmpeg = "ffmpeg -nostdin -loglevel error -y"
        for command in [
            "\(ffmpeg) -f lavfi -i testsrc=size=320x240:rate=25 -i camera.wav -t 40 -c:v libx264 -preset ultrafast -c:a pcm_s16le camera.mov",
            "\(ffmpeg) -f lavfi -i testsrc=size=320x240:rate=25 -i camera.wav -t 40 -c:v libx264 -preset ultrafast -c:a aac screen.mp4",
            "\(ffmpeg) -i lav.wav -c:a aac -b:a 128k mic.m4a",
        ] {
            let r = try Self.shell(command, in: dir.path, environment: [:])
            #expect(r.code == 0, "\(command): \(r.stderr)")
        }
        try run(["generate", "podcast.wav", "--duration", "20", "-q"])
        try run(["generate", "home/Media/day1/interview.wav", "--duration", "8", "-q"])
        try run(["generate", "home/footage/tone.wav", "--duration", "8", "-q"])
        try Self.editorsTimeline().write(toFile: dir.file("cut.otio"), atomically: true, encoding: .utf8)

        let bin = CLI.executable.deletingLastPathComponent().path
        let environment = ["PATH": bin + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"),
                           "HOME": home, "MIXDOWN": ""]
        // A build without the FFmpeg trait refuses the lines that read or write MP4, MOV or
        // M4A, naming the trait; it runs the others.
        #if FFmpeg
        let containers = false
        #else
        let containers = true
        #endif
        func needsFFmpeg(_ line: String) -> Bool {
            containers && line.components(separatedBy: "#")[0].contains(/\.(m4a|mp4|mov|mkv|webm)\b/)
        }
        for line in lines {
            let r = try Self.shell(line, in: dir.path, environment: environment)
            if needsFFmpeg(line) {
                #expect(r.code != 0 && r.stderr.contains("FFmpeg trait"), "README without FFmpeg: \(line)\n\(r.stderr)")
            } else {
                #expect(r.code == 0, "README: \(line)\n\(r.stderr)")
            }
        }
        var outputs = ["fixed.wav", "tools/examples/audio/music.wav", "out.wav", "mix.wav"]
        if !containers { outputs += ["fixed.mp4", "synced", "event.otio", "episode.m4a"] }
        for output in outputs {
            #expect(fm.fileExists(atPath: dir.file(output)), "README's examples did not write \(output)")
        }
    }

    /// Every long option of every command, as the parser has them.
    static func parserOptions() throws -> [String: Set<String>] {
        let r = try CLI.run(["--experimental-dump-help"], in: NSTemporaryDirectory())
        #expect(r.code == 0)
        let root = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as! [String: Any]
        let command = root["command"] as! [String: Any]
        var options: [String: Set<String>] = [:]
        for sub in command["subcommands"] as! [[String: Any]] {
            let name = sub["commandName"] as! String
            guard name != "help" else { continue }
            var set = Set<String>()
            for argument in sub["arguments"] as? [[String: Any]] ?? [] {
                for n in argument["names"] as? [[String: Any]] ?? [] where n["kind"] as? String == "long" {
                    let long = n["name"] as! String
                    if long != "help" && long != "version" { set.insert("--" + long) }
                }
            }
            options[name] = set
        }
        return options
    }

    /// docs/cli.md's synopsis: each command's lines (a line "mixdown NAME ..." and the
    /// indented lines after it, comments cut) name the options the parser has, all of them
    /// and no other; every command has a line.
    @Test func cliDocSynopsisIsTheParsersOptions() throws {
        let doc = try String(contentsOfFile: Self.root + "/docs/cli.md", encoding: .utf8)
        let synopsis = try #require(Self.blocks(doc, language: "sh").first)
        var documented: [String: Set<String>] = [:], current: String?
        for line in synopsis {
            let code = line.components(separatedBy: "#")[0]
            if code.hasPrefix("mixdown ") {
                current = code.split(separator: " ")[1].description
            } else if !code.hasPrefix(" ") {
                current = nil
            }
            guard let current else { continue }
            let options = code.matches(of: /--[a-z][a-z0-9-]*/).map { String($0.output) }
            documented[current, default: []].formUnion(options)
        }
        let parser = try Self.parserOptions()
        #expect(Set(documented.keys) == Set(parser.keys), "commands: the synopsis has \(documented.keys.sorted()), the parser \(parser.keys.sorted())")
        for (command, options) in parser.sorted(by: { $0.key < $1.key }) {
            let written = documented[command] ?? []
            #expect(options.subtracting(written).isEmpty, "docs/cli.md's synopsis of \(command) misses \(options.subtracting(written).sorted())")
            #expect(written.subtracting(options).isEmpty, "docs/cli.md's synopsis of \(command) names \(written.subtracting(options).sorted()), which it does not take")
        }
    }
}
