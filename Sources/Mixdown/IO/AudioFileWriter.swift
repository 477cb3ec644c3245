import CSndFile
import Foundation
import MixdownKernels

/// Tags written into the output where the type has room for them (libsndfile's strings).
public struct AudioMetadata: Sendable, Equatable, Codable {
    public var title: String?
    public var artist: String?
    public var album: String?
    public var comment: String?
    public var date: String?
    public var software: String?

    public init(title: String? = nil, artist: String? = nil, album: String? = nil,
                comment: String? = nil, date: String? = nil, software: String? = "Mixdown") {
        self.title = title; self.artist = artist; self.album = album
        self.comment = comment; self.date = date; self.software = software
    }
}

/// Writes planar Float32 blocks to a file, atomically.
///
/// The audio goes to a hidden temporary file beside the destination
/// (`.NAME.mixdown-PID-RANDOM.tmp`). `commit()` flushes it, closes it, syncs it and moves
/// it into place in one step: the destination is either absent or complete. Without
/// `overwrite`, an existing destination is refused before anything is written, and the
/// final move uses link(2), which also refuses a file that appeared meanwhile. Until
/// `commit()` succeeds, `abort()` (or deinit) removes the temporary file.
public final class AudioFileWriter {
    public let destination: String
    public let encoding: OutputEncoding
    public let format: AudioFormat
    public private(set) var framesWritten: Int64 = 0

    private let overwrite: Bool
    private let durable: Bool
    private let temporaryPath: String
    private var handle: OpaquePointer?
    private var interleaved: UnsafeMutablePointer<Float>
    private var converted: UnsafeMutableRawPointer
    private let capacity: Int
    private var committed = false

    /// Opens the temporary file. `maximumFrames` is the largest block `write` will get.
    public init(destination: String, encoding: OutputEncoding, format: AudioFormat,
                maximumFrames: Int, overwrite: Bool, metadata: AudioMetadata = AudioMetadata(),
                durable: Bool = false) throws(MixdownError) {
        self.destination = destination
        self.durable = durable
        self.encoding = encoding
        self.format = format
        self.overwrite = overwrite
        capacity = maximumFrames

        // The directory as the caller named it, so messages quote their own words.
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
        temporaryPath = dir + "/." + (destination as NSString).lastPathComponent + ".mixdown-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).tmp"

        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = encoding.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            throw .unsupportedOutput(path: destination, reason: "libsndfile cannot write \(encoding.type.rawValue) at \(format)")
        }
        let compression = try encoding.encoder.compressionLevel(for: encoding.type, format: format, path: destination)
        // Open by descriptor so the temporary file is created exclusively (O_EXCL).
        let fd = open(temporaryPath, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw .outputNotWritable(path: destination, reason: String(cString: strerror(errno)))
        }
        guard let h = sf_open_fd(fd, Int32(SFM_WRITE), &info, 1) else {
            let reason = String(cString: sf_strerror(nil))
            unlink(temporaryPath)
            throw .unsupportedOutput(path: destination, reason: "libsndfile cannot write \(encoding.type.rawValue) at \(format): \(reason)")
        }
        handle = h
        if let level = compression {
            var value = level
            if encoding.type == .mp3 {
                var mode = Int32(SF_BITRATE_MODE_CONSTANT)
                _ = sf_command(h, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
            }
            guard sf_command(h, Int32(SFC_SET_COMPRESSION_LEVEL), &value, Int32(MemoryLayout<Double>.size)) == 1 else {
                sf_close(h)
                unlink(temporaryPath)
                throw .unsupportedOutput(path: destination, reason: "libsndfile refused the bitrate \(encoding.encoder.bitrate ?? 0) for \(encoding.type.rawValue)")
            }
        }
        interleaved = .allocate(capacity: max(1, maximumFrames * format.channelCount))
        converted = .allocate(byteCount: max(4, maximumFrames * format.channelCount * 4), alignment: 16)
        for (key, value) in [(SF_STR_TITLE, metadata.title), (SF_STR_ARTIST, metadata.artist),
                             (SF_STR_ALBUM, metadata.album), (SF_STR_COMMENT, metadata.comment),
                             (SF_STR_DATE, metadata.date), (SF_STR_SOFTWARE, metadata.software)] {
            // Types without tags (for example raw FLAC frames in some builds) refuse quietly.
            if let value { _ = sf_set_string(h, Int32(key), value) }
        }
    }

    /// Whether libsndfile can write `type` at `format`. Opus takes only 8, 12, 16, 24 or
    /// 48 kHz; MP3 only the MPEG rates and at most two channels.
    public static func canWrite(_ type: AudioFileType, format: AudioFormat) -> Bool {
        switch type {
        case .opus where ![8_000, 12_000, 16_000, 24_000, 48_000].contains(format.sampleRate): return false
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
        interleaved.deallocate()
        converted.deallocate()
    }

    /// Writes the first `frames` frames of `buffer` (which has `format.channelCount` channels).
    public func write(_ buffer: AudioBuffer, frames: Int) throws(MixdownError) {
        guard let h = handle else { preconditionFailure("write after commit or abort") }
        assert(frames <= capacity && buffer.channelCount == format.channelCount)
        guard frames > 0 else { return }
        let k = mx_kernels_active().pointee
        let samples = frames * format.channelCount
        k.interleave(interleaved, UnsafePointer(OpaquePointer(buffer.channelPointers)), format.channelCount, frames)
        let written: sf_count_t
        switch encoding.sampleFormat {
        case .s16?:
            let out = converted.assumingMemoryBound(to: Int16.self)
            k.f32_to_s16(out, interleaved, samples)
            written = sf_writef_short(h, out, sf_count_t(frames))
        case .s24?:
            let out = converted.assumingMemoryBound(to: Int32.self)
            k.f32_to_s24(out, interleaved, samples)
            written = sf_writef_int(h, out, sf_count_t(frames))
        case .f32?, nil:
            written = sf_writef_float(h, interleaved, sf_count_t(frames))
        }
        guard written == frames else {
            throw .writeFailed(path: destination, reason: String(cString: sf_strerror(h)))
        }
        framesWritten += Int64(frames)
    }

    /// Flushes, closes and moves the file into place. After it, the destination is complete.
    public func commit() throws(MixdownError) {
        guard let h = handle else { preconditionFailure("commit after commit or abort") }
        // sf_close flushes libsndfile's buffers; sf_write_sync would also fsync, which only
        // a durable commit wants.
        if durable { sf_write_sync(h) }
        handle = nil
        let closeStatus = sf_close(h)
        guard closeStatus == 0 else {
            unlink(temporaryPath)
            throw .writeFailed(path: destination, reason: String(cString: sf_error_number(closeStatus)))
        }
        if durable {
            // The data is on disk before the name points at it.
            let fd = open(temporaryPath, O_RDONLY | O_CLOEXEC)
            if fd >= 0 { fsync(fd); close(fd) }
        }
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
        if durable {
            let dirfd = open((temporaryPath as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if dirfd >= 0 { fsync(dirfd); close(dirfd) }
        }
        committed = true
    }

    /// Closes and removes the temporary file; the destination is untouched. Safe to repeat.
    public func abort() {
        guard let h = handle else { return }
        handle = nil
        sf_close(h)
        unlink(temporaryPath)
    }
}
