import CSndFile
import Foundation
import MixdownKernels

/// libsndfile's types: WAV, RF64, W64, AIFF, CAF, FLAC, Ogg Vorbis/Opus, MP3.
final class SndFileSink: EncodedFileSink {
    private let destination: String
    private let encoding: OutputEncoding
    private let format: AudioFormat
    private var handle: OpaquePointer?
    private var interleaved: UnsafeMutablePointer<Float>
    private var converted: UnsafeMutableRawPointer

    init(fd: Int32, destination: String, encoding: OutputEncoding, format: AudioFormat,
         maximumFrames: Int, metadata: AudioMetadata) throws(MixdownError) {
        self.destination = destination
        self.encoding = encoding
        self.format = format
        var info = SF_INFO()
        info.samplerate = Int32(format.sampleRate)
        info.channels = Int32(format.channelCount)
        info.format = encoding.sndfileFormat
        guard sf_format_check(&info) != 0 else {
            Foundation.close(fd)
            throw .unsupportedOutput(path: destination, reason: "libsndfile cannot write \(encoding.type.rawValue) at \(format)")
        }
        let compression: Double?
        do { compression = try encoding.encoder.compressionLevel(for: encoding.type, format: format, path: destination) } catch {
            Foundation.close(fd)
            throw error
        }
        guard let h = sf_open_fd(fd, Int32(SFM_WRITE), &info, 1) else {
            let reason = String(cString: sf_strerror(nil))
            throw .unsupportedOutput(path: destination, reason: "libsndfile cannot write \(encoding.type.rawValue) at \(format): \(reason)")
        }
        handle = h
        interleaved = .allocate(capacity: max(1, maximumFrames * format.channelCount))
        converted = .allocate(byteCount: max(4, maximumFrames * format.channelCount * 4), alignment: 16)
        if let level = compression {
            var value = level
            if encoding.type == .mp3 {
                var mode = Int32(SF_BITRATE_MODE_CONSTANT)
                _ = sf_command(h, Int32(SFC_SET_BITRATE_MODE), &mode, Int32(MemoryLayout<Int32>.size))
            }
            guard sf_command(h, Int32(SFC_SET_COMPRESSION_LEVEL), &value, Int32(MemoryLayout<Double>.size)) == 1 else {
                throw .unsupportedOutput(path: destination, reason: "libsndfile refused the bitrate \(encoding.encoder.bitrate ?? 0) for \(encoding.type.rawValue)")
            }
        }
        if let reference = metadata.timeReference, [.wav, .rf64].contains(encoding.type) {
            // Before any audio: libsndfile writes the bext chunk ahead of the data.
            var bext = SF_BROADCAST_INFO()
            bext.time_reference_low = UInt32(truncatingIfNeeded: reference)
            bext.time_reference_high = UInt32(truncatingIfNeeded: reference >> 32)
            bext.version = 1
            withUnsafeMutableBytes(of: &bext.originator) { p in
                for (i, b) in "Mixdown".utf8.prefix(p.count - 1).enumerated() { p[i] = b }
            }
            guard sf_command(h, Int32(SFC_SET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == SF_TRUE else {
                throw .unsupportedOutput(path: destination, reason: "libsndfile refused the bext chunk (the start timecode) for \(encoding.type.rawValue)")
            }
        }
        for (key, value) in [(SF_STR_TITLE, metadata.title), (SF_STR_ARTIST, metadata.artist),
                             (SF_STR_ALBUM, metadata.album), (SF_STR_COMMENT, metadata.comment),
                             (SF_STR_DATE, metadata.date), (SF_STR_SOFTWARE, metadata.software)] {
            // Types without tags (for example raw FLAC frames in some builds) refuse quietly.
            if let value { _ = sf_set_string(h, Int32(key), value) }
        }
    }

    deinit {
        close()
        interleaved.deallocate()
        converted.deallocate()
    }

    func write(_ buffer: AudioBuffer, frames: Int) throws(MixdownError) {
        guard let h = handle else { preconditionFailure("write after close") }
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
    }

    func finish(durable: Bool) throws(MixdownError) {
        guard let h = handle else { return }
        // sf_close flushes libsndfile's buffers; sf_write_sync would also fsync, which only
        // a durable commit wants.
        if durable { sf_write_sync(h) }
        handle = nil
        let closeStatus = sf_close(h)
        guard closeStatus == 0 else {
            throw .writeFailed(path: destination, reason: String(cString: sf_error_number(closeStatus)))
        }
    }

    func close() {
        guard let h = handle else { return }
        handle = nil
        sf_close(h)
    }
}
