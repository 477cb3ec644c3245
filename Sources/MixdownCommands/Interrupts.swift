import Foundation
import Mixdown
import Synchronization

/// What SIGINT (Ctrl-C), SIGTERM and SIGHUP do, from the first line of `main` on.
///
/// - While a job runs (`withInterruptCancellation`), the first one cancels it: the library
///   removes its temporary file and throws `cancelled` (exit 130).
/// - Outside a job (parsing, opening, printing), one exits 130 at once: nothing is being
///   written then.
/// - A second one exits 130 at once, after removing every unfinished output's temporary
///   file (a render stuck in a slow call need not be waited for). An output already moved
///   into place when it lands is complete and stays; the message names it.
///
/// The handler only writes a byte to a pipe (async-signal-safe); a thread of its own reads
/// the pipe and acts. Installed once, first thing, no signal falls into a gap: an earlier
/// design armed a dispatch source per job after setting the signals to SIG_IGN, and a
/// Ctrl-C in the milliseconds before the source was armed was dropped (the job then ran to
/// the end and exited 0). Before `install` (the dynamic loader's ~50 ms), a signal has its
/// default action: the process ends, having written nothing. SIGPIPE is ignored, so a
/// closed pipe never kills a render mid-write (a write to it fails with EPIPE instead).
/// A signal that Mixdown's parent set to be ignored (`nohup`, a background job of a
/// non-interactive shell) stays ignored: it is not handled at all.
public enum Interrupts {
    static let handled: [Int32] = [SIGINT, SIGTERM, SIGHUP]
    private static let job = Mutex<CancellationToken?>(nil)
    private static let count = Atomic<Int>(0)

    /// Installs the handlers and starts the watcher. Call once, first thing in `main`.
    public static func install() {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }   // left at the default: a signal kills, as before
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        _ = fcntl(fds[1], F_SETFL, O_NONBLOCK)
        interruptPipeWriteEnd = fds[1]
        let readEnd = fds[0]
        let watcher = Thread { watch(readEnd) }
        watcher.name = "mixdown signals"
        watcher.start()
        signal(SIGPIPE, SIG_IGN)
        for sig in handled {
            // A signal the parent set to be ignored stays ignored, as POSIX programs keep it
            // (a background job of a non-interactive shell starts with SIGINT and SIGQUIT
            // ignored, and `nohup` ignores SIGHUP): the shell meant Ctrl-C not to reach it.
            var inherited = sigaction()
            if sigaction(sig, nil, &inherited) == 0,
               unsafeBitCast(inherited.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self) { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = interruptHandler
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(sig, &action, nil)
        }
        // A process started from a thread that blocks signals (a dispatch worker, Swift's
        // concurrency pool: Foundation's Process spawns from there) starts with them
        // blocked, and would never see one. Unblocked here, one that arrived during startup
        // is delivered now, to the handler.
        var set = sigset_t()
        sigemptyset(&set)
        for sig in handled { sigaddset(&set, sig) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }

    /// A job starts: signals now cancel `token`.
    static func begin(_ token: CancellationToken) {
        job.withLock { $0 = token }
    }

    /// The job has ended: signals exit at once again.
    static func end() {
        job.withLock { $0 = nil }
    }

    private static func watch(_ fd: Int32) {
        var byte: UInt8 = 0
        while true {
            let n = read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            guard n == 1 else { return }
            let seen = count.add(1, ordering: .relaxed).newValue
            let cancelled = job.withLock { token -> Bool in
                guard seen == 1, let token else { return false }
                token.cancel()
                return true
            }
            if cancelled { continue }
            let outputs = AudioFileWriter.removeUnfinishedOutputs()
            printError((seen >= 2 ? "mixdown: error: interrupted twice: stopped at once" : "mixdown: error: interrupted")
                       + completeBeforeTheInterrupt(outputs.completeCount, last: outputs.lastComplete, twice: seen >= 2))
            _exit(130)
        }
    }
}

/// What the exit message adds about outputs: a signal can land after a job has moved its
/// file into place (while it returns or prints), and the file is then complete; the
/// message must not say "nothing was written".
func completeBeforeTheInterrupt(_ count: Int, last: [String], twice: Bool) -> String {
    if count == 0 { return twice ? "; nothing was written" : "" }
    let names = last.map { "'\($0)'" }.joined(separator: ", ")
    let earlier = count - last.count
    return "; complete before the interrupt: " + names + (earlier > 0 ? " and \(earlier) earlier" : "")
        + (twice ? "; nothing else was written" : "")
}

/// The pipe the handler writes to (-1 before `install`).
nonisolated(unsafe) private var interruptPipeWriteEnd: Int32 = -1

/// Async-signal-safe: one write(2), errno kept.
private func interruptHandler(_ signal: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: signal)
    _ = write(interruptPipeWriteEnd, &byte, 1)
    errno = saved
}
