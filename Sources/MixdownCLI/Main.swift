import ArgumentParser
import Foundation
import Mixdown

/// Exit codes: 0 success, 1 runtime failure, 2 usage error, 130 interrupted (Ctrl-C).
@main
struct Main {
    static func main() {
        Interrupts.install()
        do {
            var command = try MixdownCommand.parseAsRoot()
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

struct MixdownCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mixdown",
        abstract: "An offline audio render engine: trim, fade, stretch and mix audio files exactly.",
        version: MixdownVersion.string,
        subcommands: [Info.self, Export.self, Stretch.self, Render.self, Sync.self, Loudness.self, Batch.self, GeneratePair.self, Generate.self, MeasureSync.self, MeasureLength.self, MeasureSine.self, Bench.self]
    )
}

/// A bad option value found after parsing (for example a malformed time): exit code 2.
struct UsageError: Error {
    let message: String
}

func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
