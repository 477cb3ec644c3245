import ArgumentParser
import Foundation
import Mixdown
import MixdownCommands

/// Exit codes: 0 success, 1 runtime failure, 2 usage error, 130 interrupted (Ctrl-C).
@main
struct Main {
    static func main() {
        Interrupts.install()
        Warnings.setHandler { printError("mixdown: warning: \($0)") }
        let arguments = Array(CommandLine.arguments.dropFirst())
        // Bare `mixdown` is a usage error, as with git: the usage goes to standard error.
        if arguments.isEmpty {
            printError(MixdownCommand.helpMessage())
            printError("mixdown: error: give a command (mixdown --help lists them)")
            exit(2)
        }
        // A first word that is no command: say which command was meant, as git and cargo do,
        // rather than ArgumentParser's "3 unexpected arguments".
        if let word = arguments.first, !word.hasPrefix("-"), !CommandSuggestion.commands.contains(word) {
            printError("mixdown: error: " + CommandSuggestion.message(for: word))
            exit(2)
        }
        do {
            var command = try MixdownCommand.parseAsRoot(arguments)
            try command.run()
        } catch let error as MixdownError {
            printError("mixdown: error: \(error)")
            switch error {
            case .cancelled: exit(130)
            // A value that cannot be used whatever the files hold: a usage error.
            case .invalidParameter, .invalidTime: exit(2)
            default: exit(1)
            }
        } catch let code as ExitCode {
            // A command that has printed its own report (a batch with failed jobs).
            exit(code.rawValue)
        } catch let error as UsageError {
            printError("mixdown: error: \(error.message)")
            exit(2)
        } catch {
            // Help and version requests come here as "errors" with a success code.
            if MixdownCommand.exitCode(for: error) == .success {
                print(MixdownCommand.fullMessage(for: error))
                exit(0)
            }
            printError(MixdownCommand.fullMessage(for: error))
            exit(2)
        }
    }
}

/// What to say of a first word that names no command.
enum CommandSuggestion {
    /// The commands' names, and ArgumentParser's own `help`.
    static let commands = MixdownCommand.configuration.subcommands.map { $0._commandName } + ["help"]

    static func message(for word: String) -> String {
        let near = suggestions(for: word)
        let tail = near.isEmpty ? "the commands are \(commands.joined(separator: ", "))"
            : "did you mean \(near.map { "'\($0)'" }.joined(separator: " or "))?"
        return "'\(word)' is not a mixdown command; \(tail)"
    }

    /// The commands within a few edits of `word` (Damerau-Levenshtein: a swap of two
    /// neighbours is one edit), or that it begins: nearest first.
    static func suggestions(for word: String) -> [String] {
        let w = word.lowercased()
        let limit = max(1, min(3, w.count / 3))
        return commands
            .map { ($0, w.count >= 2 && $0.hasPrefix(w) ? 0 : editDistance(w, $0)) }
            .filter { $0.1 <= limit }
            .sorted { ($0.1, $0.0) < ($1.1, $1.0) }
            .map(\.0)
    }

    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { d[i][0] = i }
        for j in 0...b.count { d[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                }
            }
        }
        return d[a.count][b.count]
    }
}

