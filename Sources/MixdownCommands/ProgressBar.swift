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
        show(force: fraction >= 1) { secs in
            let width = 30
            let filled = Int((fraction * Double(width)).rounded(.down))
            let bar = String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled)
            let eta = fraction > 0 ? secs * (1 - fraction) / fraction : 0
            return String(format: "%@ [%@] %5.1f%%  %.1fs left ", label, bar, fraction * 100, eta)
        }
    }

    /// Redraws the line with `text(seconds since the start)`: at most ten times a second
    /// unless `force`.
    func show(force: Bool, _ text: (Double) -> String) {
        guard enabled else { return }
        let secs = started.seconds
        guard force || lastDraw < 0 || secs - lastDraw >= 0.1 else { return }
        lastDraw = secs
        FileHandle.standardError.write(Data(("\r" + text(secs) + "\u{1B}[K").utf8))
        drawn = true
    }

    /// Clears the bar's line.
    func finish() {
        guard drawn else { return }
        FileHandle.standardError.write(Data("\r\u{1B}[K".utf8))
        drawn = false
    }
}
