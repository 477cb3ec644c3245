import CSndFile
import Foundation
import MixdownKernels
import Synchronization

/// Writes planar Float32 blocks to a file, atomically.
///
/// The audio goes to a hidden temporary file beside the destination
/// (`.NAME.mixdown-PID-RANDOM.tmp`). `commit()` flushes it, closes it, syncs it and moves
/// it into place in one step: the destination is either absent or complete. Without
/// `overwrite`, an existing destination is refused before anything is written, and the
/// final move uses link(2), which also refuses a file that appeared meanwhile. Until
/// `commit()` succeeds, `abort()` (or deinit) removes the temporary file.
///
/// libsndfile encodes its types; FFmpeg's libraries (the `FFmpeg` trait) encode and mux
/// m4a, mp4, mov, mkv and webm, with the encoder's priming and the valid length in the
/// container (edit list and iTunSMPB; CodecDelay and DiscardPadding).
public final class AudioFileWriter {
    public let destination: String
    public let encoding: OutputEncoding
    public let format: AudioFormat
    public private(set) var framesWritten: Int64 = 0
    /// Temporary files of this destination that runs which no longer exist left behind
    /// (killed, for example), removed when this writer opened: their paths.
    public private(set) var removedStaleTemporaryFiles: [String] = []

    private let overwrite: Bool
    private let durable: Bool
    private let temporaryPath: String
    private var sink: EncodedFileSink?
    private let capacity: Int
    private var committed = false

    /// Opens the temporary file. `maximumFrames` is the largest block `write` will get.
    /// `videoFrom` (MP4 and MOV only) names a file whose video stream is copied, packet for
    /// packet, beside the audio, which then starts at that video's presentation start.
    public init(destination: String, encoding: OutputEncoding, format: AudioFormat,
                maximumFrames: Int, overwrite: Bool, metadata: AudioMetadata = AudioMetadata(),
                durable: Bool = false, videoFrom: String? = nil) throws(MixdownError) {
        self.destination = destination
        self.durable = durable
        self.encoding = encoding
        self.format = format
        self.overwrite = overwrite
        capacity = maximumFrames

        let dir = try Self.checkDestination(destination, overwrite: overwrite)
        if videoFrom != nil && ![.mp4, .mov].contains(encoding.type) {
            throw .unsupportedOutput(path: destination, reason: "a video stream goes into mp4 or mov, not \(encoding.type.rawValue)")
        }
        #if FFmpeg
        if encoding.type.isFFmpegContainer, let why = ffmpegUnavailable { throw .unsupportedOutput(path: destination, reason: why) }
        #endif
        let temporaryName = Self.temporaryName(for: (destination as NSString).lastPathComponent)
        temporaryPath = dir + "/" + temporaryName
        removedStaleTemporaryFiles = Self.removeStaleTemporaryFiles(in: dir, like: temporaryName)
        try Self.checkFreeSpace(in: dir, for: encoding, destination: destination)
        let fd = try Self.createUnfinished(temporaryPath, destination: destination)
        do throws(MixdownError) {
            if encoding.type.isFFmpegContainer {
                #if FFmpeg
                sink = try FFmpegFileSink(fd: fd, path: temporaryPath, destination: destination, encoding: encoding, format: format,
                                          metadata: metadata, videoFrom: videoFrom)
                #else
                close(fd)
                throw MixdownError.unsupportedOutput(path: destination, reason: "\(encoding.type.rawValue) needs the FFmpeg trait, which this Mixdown was built without")
                #endif
            } else {
                sink = try SndFileSink(fd: fd, destination: destination, encoding: encoding, format: format,
                                       maximumFrames: maximumFrames, metadata: metadata)
            }
        } catch {
            unlink(temporaryPath)
            Self.unfinished(remove: temporaryPath)
            throw error
        }
    }

    /// Refuses a destination that cannot be a new output: a NUL in its path, a name that is
    /// a directory, an existing file without `overwrite`, a directory that does not exist.
    /// Returns its directory as the caller named it ("." for none), so messages quote
    /// their own words. Every output Mixdown writes (audio, and the report pages before
    /// their job runs) is checked by this one rule.
    static func checkDestination(_ destination: String, overwrite: Bool) throws(MixdownError) -> String {
        if destination.utf8.contains(0) {
            throw .outputNotWritable(path: MixdownError.printable(destination), reason: "the path holds a NUL character")
        }
        guard !destination.isEmpty, !destination.hasSuffix("/"), !destination.hasSuffix("/."), !destination.hasSuffix("/..") else {
            throw .outputNotWritable(path: destination, reason: "it names a directory, not a file (give a file name after the last '/')")
        }
        let parent = (destination as NSString).deletingLastPathComponent
        let dir = parent.isEmpty ? "." : parent
        var st = stat()
        if stat(destination, &st) == 0 {
            if (st.st_mode & S_IFMT) == S_IFDIR { throw .outputNotWritable(path: destination, reason: "it is a directory") }
            if !overwrite { throw .outputExists(path: destination) }
        }
        guard stat(dir, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
            throw .outputNotWritable(path: destination, reason: "directory '\(dir)' does not exist")
        }
        return dir
    }

    /// The outputs of every writer in this process: the temporary files of those that have
    /// neither committed nor aborted yet, and the destinations moved into place so far.
    /// One lock covers both and the move itself, so a process exiting at once (a second
    /// Ctrl-C) knows exactly which outputs are complete: none is moved after it has looked.
    struct Ledger {
        var unfinished: Set<String> = []
        /// How many destinations were moved into place, and the last few of them (a batch
        /// or an embedding process commits without end; the list stays short).
        var committedCount = 0
        var lastCommitted: [String] = []
        var closed = false
        static let lastKept = 8

        mutating func recordCommitted(_ destination: String) {
            committedCount += 1
            lastCommitted.append(destination)
            if lastCommitted.count > Self.lastKept { lastCommitted.removeFirst() }
        }

        /// Creates `path` exclusively (O_EXCL) for reading and writing and records it as
        /// unfinished; once closed, creates nothing and throws `cancelled`.
        mutating func create(_ path: String, destination: String) throws(MixdownError) -> Int32 {
            guard !closed else { throw MixdownError.cancelled }
            let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw MixdownError.outputNotWritable(path: destination, reason: String(cString: strerror(errno))) }
            unfinished.insert(path)
            return fd
        }

        /// Moves a finished temporary file into place as `moveIntoPlace` says; once closed,
        /// removes it instead and throws `cancelled`.
        mutating func move(_ temporaryPath: String, to destination: String, overwrite: Bool) throws(MixdownError) {
            // Moved or removed below: unfinished no more, whatever happens.
            defer { unfinished.remove(temporaryPath) }
            guard !closed else { unlink(temporaryPath); throw MixdownError.cancelled }
            if overwrite {
                guard rename(temporaryPath, destination) == 0 else {
                    let reason = String(cString: strerror(errno))
                    unlink(temporaryPath)
                    throw .writeFailed(path: destination, reason: "cannot move the finished file into place: \(reason)")
                }
            } else if link(temporaryPath, destination) == 0 {
                unlink(temporaryPath)
            } else {
                let err = errno
                if err == EEXIST {
                    unlink(temporaryPath)
                    throw .outputExists(path: destination)
                }
                // Filesystems without hard links: check, then rename (a narrow race, documented).
                var st = stat()
                if stat(destination, &st) == 0 { unlink(temporaryPath); throw .outputExists(path: destination) }
                guard rename(temporaryPath, destination) == 0 else {
                    let reason = String(cString: strerror(errno))
                    unlink(temporaryPath)
                    throw .writeFailed(path: destination, reason: "cannot move the finished file into place: \(reason)")
                }
            }
            recordCommitted(destination)
        }

        /// Removes every unfinished file and closes: nothing is created or moved into
        /// place afterwards. Returns the files removed and the outputs complete.
        mutating func close() -> (removed: [String], completeCount: Int, lastComplete: [String]) {
            let removed = unfinished.sorted()
            for p in removed { unlink(p) }
            unfinished.removeAll()
            closed = true
            return (removed, committedCount, lastCommitted)
        }
    }
    private static let ledger = Mutex(Ledger())

    static func unfinished(remove path: String) { ledger.withLock { _ = $0.unfinished.remove(path) } }

    /// Creates the temporary file `path` exclusively (O_EXCL: the name is this writer's
    /// alone) for reading and writing, and records it as unfinished, in one step under the
    /// ledger's lock. Once a process exiting at once has removed the unfinished files (its
    /// other threads run on until `_exit`), no new one is created: this throws `cancelled`.
    /// The caller owns the descriptor returned; errors name `destination`.
    static func createUnfinished(_ path: String, destination: String) throws(MixdownError) -> Int32 {
        try ledger.withLock { (l: inout Ledger) throws(MixdownError) -> Int32 in try l.create(path, destination: destination) }
    }

    /// Removes every unfinished output's temporary file now and says which outputs this
    /// process did complete (moved into place): their count and the last few destinations,
    /// in order. For a process about to exit at once (a second Ctrl-C) that must leave
    /// nothing unfinished and say what it finished. No writer commits afterwards; call it
    /// only on the way out.
    public static func removeUnfinishedOutputs() -> (removed: [String], completeCount: Int, lastComplete: [String]) {
        ledger.withLock { $0.close() }
    }

    /// Moves a finished temporary file to `destination` (replacing it only with `overwrite`)
    /// and records it as complete. The move and its record are one step under the ledger's
    /// lock: a process exiting at once has either removed the file first (it is not moved,
    /// and this throws `cancelled`) or sees it complete. On failure the temporary file is
    /// removed.
    static func moveIntoPlace(_ temporaryPath: String, destination: String, overwrite: Bool) throws(MixdownError) {
        try ledger.withLock { (l: inout Ledger) throws(MixdownError) in
            try l.move(temporaryPath, to: destination, overwrite: overwrite)
        }
    }

    /// Refuses a PCM output whose exact size (audio data plus the headers' allowance) is
    /// more than the free space of `dir`'s filesystem for an unprivileged writer. The
    /// temporary file and an existing destination live side by side until the rename, so
    /// the whole size is needed. Compressed outputs have no size in advance and are not
    /// checked here: a full disk during their render fails cleanly and leaves nothing.
    static func checkFreeSpace(in dir: String, for encoding: OutputEncoding, destination: String) throws(MixdownError) {
        guard let data = encoding.dataBytes else { return }
        var fs = statvfs()
        // Pseudo filesystems (/proc, some FUSE mounts) report no size at all: not checked.
        guard statvfs(dir, &fs) == 0, fs.f_blocks > 0 else { return }
        let available = Int64(clamping: UInt64(fs.f_bavail).multipliedReportingOverflow(by: UInt64(fs.f_frsize)).partialValue)
        let (needed, overflow) = data.addingReportingOverflow(OutputEncoding.headerAllowance)
        if overflow || needed > available {
            throw .notEnoughSpace(path: destination, neededBytes: overflow ? .max : needed, availableBytes: available)
        }
    }

    /// `.NAME.mixdown-PID-RANDOM.tmp`, with NAME cut (at a character boundary) so that the
    /// whole name stays within the 255 bytes a file name may have.
    static func temporaryName(for name: String) -> String {
        let suffix = ".mixdown-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"
        let budget = 255 - 1 - suffix.utf8.count
        var kept = ""
        for ch in name {
            if kept.utf8.count + String(ch).utf8.count > budget { break }
            kept.append(ch)
        }
        return "." + kept + suffix
    }

    /// Removes the temporary files in `dir` that belong to the same destination as
    /// `temporaryName` and whose process is gone (`kill(pid, 0)` says no such process; a
    /// live or reused PID keeps its file). Returns their paths.
    static func removeStaleTemporaryFiles(in dir: String, like temporaryName: String) -> [String] {
        guard let marker = temporaryName.range(of: ".mixdown-", options: .backwards) else { return [] }
        let prefix = String(temporaryName[..<marker.upperBound])
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        var removed: [String] = []
        for name in names where name.hasPrefix(prefix) && isTemporaryName(name) {
            let fields = name.dropFirst(prefix.count).dropLast(4).split(separator: "-")
            guard let pid = Int32(fields[0]), pid > 0 else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH, unlink(dir + "/" + name) == 0 {
                removed.append(dir + "/" + name)
            }
        }
        return removed.sorted()
    }

    /// Removes the temporary files that dead processes left for `destination` (a file: its
    /// own; a directory: every one inside it) and returns their paths. A writer does this
    /// for its own destination when it opens; a batch does it for all of its outputs first.
    public static func removeStaleTemporaryFiles(of destination: String) -> [String] {
        var st = stat()
        if stat(destination, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: destination)) ?? []
            return names.filter(isTemporaryName).flatMap { removeStaleTemporaryFiles(in: destination, like: $0) }.sorted()
        }
        let dir = (destination as NSString).deletingLastPathComponent
        return removeStaleTemporaryFiles(in: dir.isEmpty ? "." : dir, like: temporaryName(for: (destination as NSString).lastPathComponent))
    }

    /// Whether `name` is one of Mixdown's temporary files (an unfinished output).
    public static func isTemporaryName(_ name: String) -> Bool {
        guard name.hasPrefix("."), name.hasSuffix(".tmp"), let marker = name.range(of: ".mixdown-", options: .backwards) else { return false }
        let middle = name[marker.upperBound..<name.index(name.endIndex, offsetBy: -4)].split(separator: "-", omittingEmptySubsequences: false)
        return middle.count == 2 && middle.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }

    /// Whether Mixdown can write `type` at `format`. Opus takes only 8, 12, 16, 24 or
    /// 48 kHz; MP3 only the MPEG rates and at most two channels; AAC at most 96 kHz.
    public static func canWrite(_ type: AudioFileType, format: AudioFormat, codec: AudioCodec? = nil) -> Bool {
        if type.isFFmpegContainer {
            guard AudioFileProbe.readsContainers else { return false }
            switch codec ?? type.defaultCodec! {
            case .opus: return AudioCodec.opusRates.contains(format.sampleRate) && format.channelCount <= 8
            case .aac: return [8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000, 64_000, 88_200, 96_000].contains(format.sampleRate) && format.channelCount <= 8
            case .alac: return format.channelCount <= 8
            }
        }
        switch type {
        case .opus where !AudioCodec.opusRates.contains(format.sampleRate): return false
        case .mp3 where ![8_000, 11_025, 12_000, 16_000, 22_050, 24_000, 32_000, 44_100, 48_000].contains(format.sampleRate)
                        || format.channelCount > 2: return false
        default: break
        }
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = OutputEncoding(type: type, sampleFormat: type.isLossy ? nil : .s16, dataBytes: nil).sndfileFormat
        return sf_format_check(&info) != 0
    }

    deinit {
        abort()
    }

    /// Writes the first `frames` frames of `buffer` (which has `format.channelCount` channels).
    public func write(_ buffer: AudioBuffer, frames: Int) throws(MixdownError) {
        guard let sink else { preconditionFailure("write after commit or abort") }
        assert(frames <= capacity && buffer.channelCount == format.channelCount)
        guard frames > 0 else { return }
        // The last guard of the NaN policy: a non-finite sample never reaches a file (a
        // damaged input is refused where it is read; this would be a bug of a node).
        for c in 0..<format.channelCount {
            if let i = NonFinite.firstIndex(in: buffer[channel: c], count: frames) {
                throw .writeFailed(path: destination, reason: "the render produced \(NonFinite.name(buffer[channel: c][i])) at frame \(framesWritten + Int64(i)), channel \(c + 1) (Mixdown writes only finite samples)")
            }
        }
        // An integer output clips what lies at or past full scale: counted, and said (`Warnings`)
        // once the file is in place.
        if encoding.sampleFormat == .s16 || encoding.sampleFormat == .s24, !encoding.type.isLossy {
            let top: Float = encoding.sampleFormat == .s16 ? 32767.5 / 32768 : 8388607.5 / 8388608
            let kernels = mx_kernels_active().pointee
            for c in 0..<format.channelCount {
                let p = buffer[channel: c]
                // The kernel's peak first (SIMD): a block under full scale is not walked.
                guard kernels.peak(p, frames) >= top else { continue }
                var n = 0
                for i in 0..<frames where p[i] >= top || p[i] < -1 { n += 1 }
                clippedSamples += Int64(n)
            }
        }
        try sink.write(buffer, frames: frames)
        framesWritten += Int64(frames)
    }

    /// Samples that an integer output clipped (at or past full scale), so far.
    public private(set) var clippedSamples: Int64 = 0

    /// Flushes, closes and moves the file into place. After it, the destination is complete.
    /// A `cancellation` that fires before the move (the flush of an encoder can take a
    /// while) removes the file and throws `cancelled`: a job cancelled before it returned
    /// leaves nothing.
    public func commit(cancellation: CancellationToken? = nil) throws(MixdownError) {
        guard let s = sink else { preconditionFailure("commit after commit or abort") }
        sink = nil
        defer { Self.unfinished(remove: temporaryPath) }
        do { try s.finish(durable: durable) } catch {
            unlink(temporaryPath)
            throw error
        }
        if cancellation?.isCancelled == true {
            unlink(temporaryPath)
            throw .cancelled
        }
        if durable {
            // The data is on disk before the name points at it.
            let fd = open(temporaryPath, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { fsync(fd); close(fd) }
        }
        try Self.moveIntoPlace(temporaryPath, destination: destination, overwrite: overwrite)
        if durable {
            let dirfd = open((temporaryPath as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dirfd >= 0 { fsync(dirfd); close(dirfd) }
        }
        committed = true
        if clippedSamples > 0 {
            let bits = encoding.sampleFormat == .s16 ? 16 : 24
            Warnings.emit("'\(destination)': \(clippedSamples) sample\(clippedSamples == 1 ? "" : "s") clipped at full scale of the \(bits)-bit output (--format f32 keeps them)")
        }
    }

    /// Flushes and closes the file, and returns its size in bytes instead of moving it into
    /// place: the temporary file is removed and the destination untouched. For a file
    /// Mixdown writes only to measure (a header-size probe): it is never anywhere but in the
    /// ledger's unfinished files, so a process exiting at once leaves nothing of it.
    func finishedSize() throws(MixdownError) -> Int64 {
        guard let s = sink else { preconditionFailure("finishedSize after commit or abort") }
        sink = nil
        defer {
            unlink(temporaryPath)
            Self.unfinished(remove: temporaryPath)
        }
        try s.finish(durable: false)
        var st = stat()
        guard stat(temporaryPath, &st) == 0 else {
            throw .writeFailed(path: destination, reason: "cannot measure the finished file: \(String(cString: strerror(errno)))")
        }
        return Int64(st.st_size)
    }

    /// Closes and removes the temporary file; the destination is untouched. Safe to repeat.
    public func abort() {
        guard let s = sink else { return }
        sink = nil
        s.close()
        unlink(temporaryPath)
        Self.unfinished(remove: temporaryPath)
    }
}

/// Encodes planar Float32 blocks into an open temporary file.
protocol EncodedFileSink: AnyObject {
    func write(_ buffer: AudioBuffer, frames: Int) throws(MixdownError)
    /// Encodes what is buffered, writes the trailer and closes the file.
    func finish(durable: Bool) throws(MixdownError)
    /// Closes without finishing (the caller removes the file).
    func close()
}
