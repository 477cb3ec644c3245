import CSndFile
import Foundation

/// Settings for lossy encoders.
public struct EncoderSettings: Sendable, Equatable, Codable {
    /// Target bitrate in bits per second (all channels together): constant for MP3,
    /// the encoder's target for Opus. Nil: libsndfile's default quality.
    public var bitrate: Int?
    /// The codec for m4a, mp4, mov, mkv and webm outputs; nil: the type's default (AAC
    /// for the MP4 family, Opus for Matroska). Other types refuse one.
    public var codec: AudioCodec?

    public init(bitrate: Int? = nil, codec: AudioCodec? = nil) { self.bitrate = bitrate; self.codec = codec }

    /// libsndfile's compression level (0 best quality … 1 smallest) that gives `bitrate`
    /// for `type` at `format`, from libsndfile's own mappings: MP3 ≥ 32 kHz spans
    /// 320…32 kbps, 16–32 kHz 160…8, below 64…8; Opus spans 256…6 kbps per channel.
    func compressionLevel(for type: AudioFileType, format: AudioFormat, path: String) throws(MixdownError) -> Double? {
        guard let bitrate else { return nil }
        let (top, bottom): (Double, Double)
        switch type {
        case .mp3:
            (top, bottom) = format.sampleRate >= 32_000 ? (320_000, 32_000) : format.sampleRate >= 16_000 ? (160_000, 8_000) : (64_000, 8_000)
        case .opus:
            (top, bottom) = (256_000 * Double(format.channelCount), 6_000 * Double(format.channelCount))
        default:
            throw .unsupportedOutput(path: path, reason: "a bitrate applies to mp3 and opus outputs, not \(type.rawValue)")
        }
        let b = Double(bitrate)
        guard b >= bottom, b <= top else {
            throw .unsupportedOutput(path: path, reason: "a bitrate of \(bitrate / 1000) kbps is outside \(type.rawValue)'s \(Int(bottom) / 1000)…\(Int(top) / 1000) kbps at \(format)")
        }
        // Half a kbps of headroom: libsndfile truncates the bitrate it computes to an integer.
        return Swift.min(1, Swift.max(0, (top - b - (type == .mp3 ? 500 : 0)) / (top - bottom)))
    }
}

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
        let probe = NSTemporaryDirectory() + "/.mixdown-size-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).\(type.rawValue)"
        defer { unlink(probe) }
        let encoding = OutputEncoding(type: type, sampleFormat: sampleFormat, dataBytes: 0)
        let writer = try AudioFileWriter(destination: probe, encoding: encoding, format: format, maximumFrames: 1,
                                         overwrite: true, metadata: metadata)
        try writer.commit()
        var st = stat()
        guard stat(probe, &st) == 0 else {
            throw .writeFailed(path: path, reason: "cannot measure the header size of \(type.rawValue): \(String(cString: strerror(errno)))")
        }
        return Int64(st.st_size)
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
