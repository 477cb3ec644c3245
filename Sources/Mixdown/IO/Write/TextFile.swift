import Foundation

/// A small text output (a composition document, an OTIO timeline, an SVG plot).
enum TextFile {
    /// Writes `text` as UTF-8 to `path` atomically (complete or absent); an existing file is
    /// replaced only with `overwrite`. It goes through a temporary file beside `path`, moved
    /// into place as an audio output is, so an interrupt knows whether it is complete.
    static func write(_ text: String, to path: String, overwrite: Bool) throws(MixdownError) {
        if !overwrite && FileManager.default.fileExists(atPath: path) { throw .outputExists(path: path) }
        let dir = (path as NSString).deletingLastPathComponent
        let temporaryPath = (dir.isEmpty ? "" : dir + "/") + AudioFileWriter.temporaryName(for: (path as NSString).lastPathComponent)
        let fd = try AudioFileWriter.createUnfinished(temporaryPath, destination: path)
        defer { AudioFileWriter.unfinished(remove: temporaryPath) }
        let bytes = Array(text.utf8)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                let reason = String(cString: strerror(errno))
                close(fd); unlink(temporaryPath)
                throw .writeFailed(path: path, reason: reason)
            }
            done += n
        }
        guard close(fd) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporaryPath)
            throw .writeFailed(path: path, reason: reason)
        }
        try AudioFileWriter.moveIntoPlace(temporaryPath, destination: path, overwrite: overwrite)
    }
}
