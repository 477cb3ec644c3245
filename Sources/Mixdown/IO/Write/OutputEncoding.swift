import CSndFile
import Foundation

/// The container and encoding an output will really use, decided before a byte is written.
public struct OutputEncoding: Sendable, Equatable {
    /// The container written: `.rf64` when a `.wav` request would pass 4 GiB.
    public let type: AudioFileType
    /// The PCM sample format, or nil for lossy types.
    public let sampleFormat: SampleFormat?
    /// The exact size of the audio data in bytes, for PCM types.
    public let dataBytes: Int64?
    /// Bitrate for lossy types, and the codec for FFmpeg's containers.
    public var encoder = EncoderSettings()
    /// MP4 family: write the priming and valid length as an edit list (off only to test
    /// that readers fall back on iTunSMPB).
    var writesEditList = true
    /// AAC and Opus: encoders running at once on chunks of the stream (`ChunkedEncoder`);
    /// 1 encodes serially, byte for byte as before. Other codecs are always serial.
    public var encoderThreads = 1
    /// A parallel encode's chunks, in codec frames (512 AAC frames: 10.9 s at 48 kHz).
    var chunkFrames = 512
    /// Codec frames each chunk's encoder is fed before its chunk (real audio), and after it.
    /// Chosen by measurement (docs/containers.md); tests set 0 to show what it prevents.
    var prerollFrames = 8
    var postrollFrames = 2

    init(type: AudioFileType, sampleFormat: SampleFormat?, dataBytes: Int64?) {
        self.type = type
        self.sampleFormat = sampleFormat
        self.dataBytes = dataBytes
    }

    /// Room left for headers and metadata chunks below the 4 GiB limit of WAV and AIFF.
    static let headerAllowance: Int64 = 64 * 1024

    /// Resolves a requested type and sample format for `frames` frames of `channels`
    /// channels. A WAV past 4 GiB becomes RF64; an AIFF past 4 GiB is refused (no type
    /// holds it under that name). A sample format the type does not store is an error,
    /// never quietly replaced.
    public static func resolve(path: String, type: AudioFileType, sampleFormat: SampleFormat?,
                               frames: Int64, channels: Int, encoder: EncoderSettings = EncoderSettings()) throws(MixdownError) -> OutputEncoding {
        if type.isFFmpegContainer {
            guard AudioFileProbe.readsContainers else {
                throw .unsupportedOutput(path: path, reason: "\(type.rawValue) is written through FFmpeg's libraries, and this Mixdown was built without the FFmpeg trait")
            }
            let codec = encoder.codec ?? type.defaultCodec!
            guard type.codecs.contains(codec) else {
                throw .unsupportedOutput(path: path, reason: "\(type.rawValue) does not hold \(codec.rawValue) (it holds \(type.codecs.map(\.rawValue).joined(separator: ", ")))")
            }
            var resolvedFormat: SampleFormat?
            if codec.isLossy {
                if let f = sampleFormat {
                    throw .unsupportedOutput(path: path, reason: "--format \(f.rawValue) does not apply to \(codec.rawValue), a lossy codec")
                }
            } else {
                let f = sampleFormat ?? .s16
                guard f != .f32 else { throw .unsupportedOutput(path: path, reason: "\(codec.rawValue) stores s16 or s24 samples, not f32") }
                resolvedFormat = f
            }
            if let bitrate = encoder.bitrate {
                guard let range = codec.bitrateRange(channels: channels) else {
                    throw .unsupportedOutput(path: path, reason: "a bitrate does not apply to \(codec.rawValue), which is lossless")
                }
                guard range.contains(bitrate) else {
                    throw .unsupportedOutput(path: path, reason: "a bitrate of \(EncoderSettings.describe(bitrate: bitrate)) is outside \(codec.rawValue)'s \(range.lowerBound / 1000)…\(range.upperBound / 1000) kbps for \(channels) channels")
                }
            }
            var e = OutputEncoding(type: type, sampleFormat: resolvedFormat, dataBytes: nil)
            e.encoder = encoder
            e.encoder.codec = codec
            return e
        }
        if let codec = encoder.codec {
            throw .unsupportedOutput(path: path, reason: "--codec \(codec.rawValue) applies to m4a, mp4, mov, mkv and webm, not \(type.rawValue)")
        }
        if type.isLossy {
            if let f = sampleFormat {
                throw .unsupportedOutput(path: path, reason: "--format \(f.rawValue) does not apply to \(type.rawValue), a lossy type")
            }
            var e = OutputEncoding(type: type, sampleFormat: nil, dataBytes: nil)
            e.encoder = encoder
            return e
        }
        let format = sampleFormat ?? .s16
        guard type.supportedSampleFormats.contains(format) else {
            let names = type.supportedSampleFormats.map(\.rawValue).joined(separator: ", ")
            throw .unsupportedOutput(path: path, reason: "\(type.rawValue) does not store \(format.rawValue) samples (it stores \(names))")
        }
        let bytes = frames * Int64(channels) * Int64(format.bytesPerSample)
        var resolved = type
        if type.has32BitSizes && bytes + headerAllowance > Int64(UInt32.max) {
            guard type == .wav else {
                throw .outputTooLarge(path: path, bytes: bytes,
                                      reason: "AIFF holds at most 4 GiB; use .caf, .w64 or .rf64")
            }
            resolved = .rf64
        }
        var e = OutputEncoding(type: resolved, sampleFormat: format, dataBytes: type == .flac ? nil : bytes)
        e.encoder = encoder
        return e
    }

    var sndfileFormat: Int32 {
        switch type {
        case .ogg: return type.sndfileMajor | Int32(SF_FORMAT_VORBIS)
        case .opus: return type.sndfileMajor | Int32(SF_FORMAT_OPUS)
        case .mp3: return type.sndfileMajor | Int32(SF_FORMAT_MPEG_LAYER_III)
        default: return type.sndfileMajor | (sampleFormat ?? .s16).sndfileSubtype
        }
    }
}
