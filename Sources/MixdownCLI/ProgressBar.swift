import Foundation
import Mixdown

/// A progress bar on standard error, drawn only when standard error is a terminal and
/// the user did not ask for quiet. Redrawn at most ten times a second.
final class ProgressBar {
    private let enabled: Bool
    private let label: String
    private var lastDraw = -1.0
    private var drawn = false
    private let started = Stopwatch()

    init(label: String, quiet: Bool) {
        enabled = !quiet && isatty(STDERR_FILENO) == 1
        self.label = label
    }

    /// The callback to hand to a render.
    var callback: ((Double) -> Void)? {
        enabled ? { [self] fraction in update(fraction) } : nil
    }

    func update(_ fraction: Double) {
        let secs = started.seconds
        guard fraction >= 1 || lastDraw < 0 || secs - lastDraw >= 0.1 else { return }
        lastDraw = secs
        let width = 30
        let filled = Int((fraction * Double(width)).rounded(.down))
        let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
        let eta = fraction > 0 ? secs * (1 - fraction) / fraction : 0
        let line = String(format: "\r%@ [%@] %5.1f%%  %.1fs left ", label, bar, fraction * 100, eta)
        FileHandle.standardError.write(Data(line.utf8))
        drawn = true
    }

    /// Clears the bar's line.
    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
