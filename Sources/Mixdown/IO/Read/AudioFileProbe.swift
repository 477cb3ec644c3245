import Foundation

/// The one place that decides which reader opens a file: by its content, not its name.
///
/// MP4/MOV/M4A (an `ftyp`, `moov`, `mdat`, `free` or `wide` box first) and Matroska/WebM
/// (the EBML magic) go to FFmpeg's libraries; everything else to libsndfile, with FFmpeg
/// as the fallback for what libsndfile does not recognise (ADTS AAC, AC-3, ...). A FIFO
/// cannot be peeked at without consuming it, so it goes to libsndfile.
public enum AudioFileProbe {
    public enum Reader: String, Sendable { case sndfile, ffmpeg }

    /// Whether this build reads MP4, MOV, M4A, MKV and WebM (the `FFmpeg` package trait).
    public static var readsContainers: Bool {
        #if FFmpeg
        return true
        #else
        return false
        #endif
    }

    /// The reader the first bytes of a file call for, or nil when they do not say.
    public static func reader(forHead head: [UInt8]) -> Reader? {
        if head.count >= 4, head[0..<4].elementsEqual([0x1A, 0x45, 0xDF, 0xA3]) { return .ffmpeg }
        if head.count >= 8 {
            let box = String(decoding: head[4..<8], as: UTF8.self)
            if ["ftyp", "moov", "mdat", "free", "wide", "skip"].contains(box) { return .ffmpeg }
        }
        if head.count >= 4 {
            let magic = String(decoding: head[0..<4], as: UTF8.self)
            if ["RIFF", "RF64", "BW64", "FORM", "fLaC", "OggS", "caff", "riff", "ID3\u{3}", ".snd"].contains(magic) { return .sndfile }
        }
        return nil
    }

    /// Opens the audio stream `stream` of `path` (the container's stream index; nil: the
    /// first audio stream). Missing, empty, unreadable or non-audio files throw, naming the path.
    static func open(path: String, stream: Int? = nil) throws(MixdownError) -> AudioDecoder {
        // A C string ends at its first NUL: the file opened would be another one.
        if path.utf8.contains(0) { throw .unreadableFile(path: MixdownError.printable(path), reason: "the path holds a NUL character") }
        var st = stat()
        guard stat(path, &st) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { throw .fileNotFound(path: path) }
            throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
        }
        // A pipe, device or socket has no length to read first (and a FIFO with no writer
        // blocks the open): only regular files are read.
        guard st.st_mode & S_IFMT == S_IFREG else { throw .notAFile(path: path) }
        if AudioFileWriter.isTemporaryName((path as NSString).lastPathComponent) {
            throw .unreadableFile(path: path, reason: "is an unfinished Mixdown output (a temporary file a killed render left behind), not a complete audio file")
        }
        if st.st_size == 0 { throw .emptyFile(path: path) }
        let head = try readHead(path)
        switch reader(forHead: head) {
        case .ffmpeg?:
            return try openWithFFmpeg(path: path, stream: stream)
        case .sndfile?:
            try requireSingleStream(path, stream)
            return try SndFileDecoder(path: path)
        case nil:
            do {
                try requireSingleStream(path, stream)
                return try SndFileDecoder(path: path)
            } catch {
                guard readsContainers, case .unreadableFile = error else { throw error }
                // What libsndfile does not know may still be audio FFmpeg reads.
                do { return try openWithFFmpeg(path: path, stream: stream) } catch let second {
                    if case .noAudioStream = second { throw second }
                    throw error
                }
            }
        }
    }

    static func openWithFFmpeg(path: String, stream: Int?) throws(MixdownError) -> AudioDecoder {
        #if FFmpeg
        return try FFmpegDecoder(path: path, stream: stream)
        #else
        throw .unreadableFile(path: path, reason: "an MP4/MOV/M4A/MKV/WebM file, which this Mixdown cannot read: it was built without the FFmpeg trait")
        #endif
    }

    private static func requireSingleStream(_ path: String, _ stream: Int?) throws(MixdownError) {
        if let stream, stream != 0 {
            throw .invalidParameter(name: "--stream", value: "\(stream)", reason: "'\(path)' has one audio stream, stream 0")
        }
    }

    private static func readHead(_ path: String) throws(MixdownError) -> [UInt8] {
        let fd = Foundation.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 16)
        let n = head.withUnsafeMutableBytes { Foundation.read(fd, $0.baseAddress, 16) }
        guard n >= 0 else { throw .unreadableFile(path: path, reason: String(cString: strerror(errno))) }
        return Array(head.prefix(n))
    }
}
