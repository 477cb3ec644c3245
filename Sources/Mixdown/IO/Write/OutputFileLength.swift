import CSndFile
import Foundation

extension OutputEncoding {
    /// Chunk alignment as libsndfile writes it: data of odd length gets a pad byte in
    /// WAV, RF64 and AIFF; W64 and CAF get none (measured, and checked by the tests).
    private static func padded(_ bytes: Int64, _ type: AudioFileType) -> Int64 {
        let align: Int64 = switch type { case .wav, .rf64, .aiff: 2; default: 1 }
        return (bytes + align - 1) / align * align
    }

    /// The bytes a PCM file of `type` holds besides its samples (header, metadata chunks,
    /// trailer), measured by writing an empty file of the same kind with libsndfile.
    static func overheadBytes(path: String, type: AudioFileType, sampleFormat: SampleFormat,
                              format: AudioFormat, metadata: AudioMetadata) throws(MixdownError) -> Int64 {
        // Named in the temporary directory; only its temporary file is ever written (and
        // removed), so an existing file there is no matter.
        let probe = NSTemporaryDirectory() + "/.mixdown-size-\(getpid()).\(type.rawValue)"
        let encoding = OutputEncoding(type: type, sampleFormat: sampleFormat, dataBytes: 0)
        let writer = try AudioFileWriter(destination: probe, encoding: encoding, format: format, maximumFrames: 1,
                                         overwrite: true, metadata: metadata)
        do { return try writer.finishedSize() } catch {
            throw .writeFailed(path: path, reason: "cannot measure the header size of \(type.rawValue): \(error)")
        }
    }

    /// The exact size of a PCM output of `frames` frames.
    static func fileLength(path: String, type: AudioFileType, sampleFormat: SampleFormat, format: AudioFormat,
                           metadata: AudioMetadata, frames: Int64) throws(MixdownError) -> Int64 {
        let overhead = try overheadBytes(path: path, type: type, sampleFormat: sampleFormat, format: format, metadata: metadata)
        return overhead + padded(frames * Int64(format.channelCount * sampleFormat.bytesPerSample), type)
    }

    /// The most frames a PCM output can hold within `limit` bytes (0 when not even one fits).
    /// A `.wav` request that needs RF64 is measured as RF64.
    static func maximumFrames(fitting limit: Int64, path: String, type: AudioFileType, sampleFormat: SampleFormat?,
                              format: AudioFormat, metadata: AudioMetadata) throws(MixdownError) -> Int64 {
        let sf = sampleFormat ?? .s16
        let bpf = Int64(format.channelCount * sf.bytesPerSample)
        var resolved = type
        if type.has32BitSizes && limit > Int64(UInt32.max) { resolved = type == .wav ? .rf64 : type }
        let overhead = try overheadBytes(path: path, type: resolved, sampleFormat: sf, format: format, metadata: metadata)
        guard limit > overhead else { return 0 }
        var n = (limit - overhead) / bpf
        while n > 0 && overhead + padded(n * bpf, resolved) > limit { n -= 1 }
        return n
    }
}
