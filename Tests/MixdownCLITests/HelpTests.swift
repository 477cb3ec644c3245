import Foundation
import Testing

/// Every command's --help as a terminal of 80 columns shows it (the width the argument
/// parser takes when its output is not a terminal): the text is wrapped once, so no line of
/// one or two words stands inside a paragraph. Before, discussions written as wrapped lines
/// were wrapped again ("... (frames of the input),\n131/1000." and "to\n1\nat its end").
@Suite struct HelpTests {
    /// Lines of one or two words followed by more of the same paragraph (the next line
    /// holds text at the same indentation, not an option, a list item or a new section).
    static func orphans(_ help: String) -> [String] {
        let lines = help.components(separatedBy: "\n")
        var found: [String] = []
        for i in lines.indices.dropLast() {
            let line = lines[i], next = lines[i + 1]
            let words = line.split(separator: " ").count
            let text = next.trimmingCharacters(in: .whitespaces)
            guard (1...2).contains(words), !text.isEmpty, !text.hasPrefix("-"), !text.hasSuffix(":") else { continue }
            let indent = line.prefix { $0 == " " }.count, nextIndent = next.prefix { $0 == " " }.count
            if indent == nextIndent { found.append("\(line.trimmingCharacters(in: .whitespaces)) | \(text)") }
        }
        return found
    }

    @Test func theOrphanCheckFindsAWordLeftAlone() {
        #expect(Self.orphans("A fade-in rises from 0 on the first frame to\n1\nat its end.") == ["1 | at its end."])
        #expect(Self.orphans("  --explain               Print the segment table; render\n                          nothing.\n  --otio <otio>  x y z").isEmpty)
        #expect(Self.orphans("OPTIONS:\n  --json   Print JSON.").isEmpty)
    }

    @Test func everyCommandsHelpIsWrappedOnce() throws {
        let dir = FileManager.default.temporaryDirectory.path
        let top = try CLI.run(["--help"], in: dir)
        #expect(top.code == 0)
        let listed = top.stdout.components(separatedBy: "SUBCOMMANDS:").last ?? ""
        let commands = listed.components(separatedBy: "\n").compactMap { line -> String? in
            // "  name   abstract", not the closing "  See 'mixdown help <subcommand>' ...".
            guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first,
                  name.allSatisfy({ $0.isLowercase || $0 == "-" }) else { return nil }
            return String(name)
        }
        #expect(commands.count >= 13, "\(commands)")
        #expect(commands.contains("export") && commands.contains("sync"))
        #expect(Self.orphans(top.stdout).isEmpty, "mixdown --help: \(Self.orphans(top.stdout))")
        for command in commands {
            let help = try CLI.run([command, "--help"], in: dir)
            #expect(help.code == 0, "\(command) --help")
            #expect(help.stdout.split(separator: "\n").allSatisfy { $0.count <= 80 }, "\(command) --help: a line past 80 columns")
            #expect(Self.orphans(help.stdout).isEmpty, "mixdown \(command) --help: \(Self.orphans(help.stdout))")
        }
    }
}
