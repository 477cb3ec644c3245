import Foundation

/// The cores this process may run on: its CPU affinity (`taskset -c 0` gives 1), which
/// `ProcessInfo.activeProcessorCount` does not honour. Read from the kernel's
/// `Cpus_allowed` mask in /proc/self/status; that count where the mask cannot be read.
enum AvailableCores {
    static let count: Int = {
        if let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8),
           let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) {
            // Hex words separated by commas ("ffffffff,00000003").
            let mask = line.dropFirst("Cpus_allowed:".count).filter { $0.isHexDigit }
            let n = mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount }
            if n > 0 { return min(n, ProcessInfo.processInfo.activeProcessorCount) }
        }
        return ProcessInfo.processInfo.activeProcessorCount
    }()
}
