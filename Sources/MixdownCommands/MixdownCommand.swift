import ArgumentParser
import Foundation
import Mixdown

/// The `mixdown` command and its subcommands.
public struct MixdownCommand: ParsableCommand {
    public init() {}
    public static let configuration = CommandConfiguration(
        commandName: "mixdown",
        abstract: "An offline audio render engine: trim, fade, stretch and mix audio files exactly.",
        version: MixdownVersion.string,
        subcommands: [Info.self, Export.self, Stretch.self, Render.self, Sync.self, Loudness.self, Batch.self, GeneratePair.self, Generate.self, MeasureSync.self, MeasureLength.self, MeasureSine.self, Bench.self]
    )
}

/// A bad option value found after parsing (for example a malformed time): exit code 2.
public struct UsageError: Error {
    public let message: String
    public init(message: String) { self.message = message }
}

public func printError(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
}
