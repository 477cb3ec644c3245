import ArgumentParser
import Foundation
import Mixdown
import MixdownCommands

/// Exit codes: 0 success, 1 runtime failure, 2 usage error, 130 interrupted (Ctrl-C).
@main
struct Main {
    static func main() {
        ProcessMemory.returnLargeBlocksWhenFreed()
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

/// The command's allocator settings (the library leaves its host's alone).
enum ProcessMemory {
    /// glibc's malloc serves a block of 128 KiB or more from its own mapping, which goes
    /// back to the system when freed, but after the first such free it raises that
    /// threshold to the freed size (up to 32 MiB): later buffers of a few MB then come from
    /// the heap and stay in the process's memory after they are freed. A fixed threshold
    /// keeps the first behaviour: `mixdown sync` of a 1 h pair, whose searches free and
    /// allocate 2 MB transforms block after block, peaked at 47.0-48.3 MiB and now at
    /// 45.3-45.7 MiB, in the same time. Nothing else changes (the same blocks, the same
    /// values). Looked up at run time: a C library without `mallopt` is left as it is.
    static func returnLargeBlocksWhenFreed() {
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        // M_MMAP_THRESHOLD in glibc's <malloc.h>, which Swift's Glibc module does not import.
        let mmapThreshold: Int32 = -3
        guard let handle = dlopen(nil, RTLD_NOW), let symbol = dlsym(handle, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThreshold, 128 * 1024)
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

