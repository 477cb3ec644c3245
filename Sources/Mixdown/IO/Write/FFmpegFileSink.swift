#if FFmpeg
import CFFmpeg
import Foundation
import MixdownKernels

/// Encodes and muxes m4a, mp4, mov, mkv and webm with FFmpeg's libraries: AAC (FFmpeg's
/// native encoder), ALAC or Opus (libopus).
///
/// Exact length: frames go to the encoder with timestamps counted in frames, the last one
/// short, so the encoder's packets carry its priming (a negative start) and a last duration
/// that ends on the last rendered frame. The MP4 muxer turns that into an edit list; for
/// m4a Mixdown also adds iTunes' `iTunSMPB` tag (priming, padding, valid frames). Matroska
/// gets CodecDelay and the last block's DiscardPadding from libopus.
///
/// With `videoFrom`, that file's first video stream is copied packet for packet (no
/// re-encode), with its own timestamps, and the render's frame 0 is placed at the
/// presentation time of the file's first audio stream (of its video, when it has none),
/// rounded to the nearest frame: the audio keeps the file's audio/video offset, to the
/// frame. The audio track itself starts at time 0 (where FFmpeg's muxers start the
/// video), with that offset written as leading silence: an MP4 edit list cannot both
/// delay a track and skip its encoder priming as FFmpeg's muxer writes it.
final class FFmpegFileSink: EncodedFileSink {
    private let path: String
    private let destination: String
    private let type: AudioFileType
    private let codecKind: AudioCodec
    private var output: UnsafeMutablePointer<AVFormatContext>?
    private var codec: UnsafeMutablePointer<AVCodecContext>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var audioIndex: Int32
    private let channels: Int
    private let sampleRate: Int
    private var frameSize: Int
    private let sampleFormat: SampleFormat?
    /// Per-channel staging of one encoder frame.
    private var staging: UnsafeMutablePointer<Float>
    /// Per-channel pointers into `staging`, for the interleaving kernel.
    private var planes: UnsafeMutablePointer<UnsafePointer<Float>?>
    private var fill = 0
    private var framesSent: Int64 = 0
    private var packetsFrames: Int64 = 0
    /// Frames of silence before the render (the video file's audio offset).
    private var audioOffset: Int64 = 0
    /// The output file, written on a thread of its own.
    private var file: WriteBehindFile?
    /// The video stream copied from another file, read ahead on a thread of its own, until
    /// the header is written; then the muxer's, which muxes on a thread of its own.
    private var video: VideoPacketReader?
    private var muxer: VideoMuxer?
    private var videoOutputIndex: Int32 = 0
    private var priming: Int64 = 0
    /// AAC and Opus on several cores; nil: the serial encoder.
    private var parallel: ChunkedEncoder?

    /// Writes the file open as `fd` (owned from now on: closed by `close()`, deinit or a
    /// failure here) at `path`, the temporary name only reopened to tag it at the end.
    init(fd: Int32, path: String, destination: String, encoding: OutputEncoding, format: AudioFormat,
         metadata: AudioMetadata, videoFrom: String?) throws(MixdownError) {
        let file = try WriteBehindFile(fd: fd, destination: destination)
        self.file = file
        self.path = path
        self.destination = destination
        type = encoding.type
        codecKind = encoding.encoder.codec ?? encoding.type.defaultCodec!
        channels = format.channelCount
        sampleRate = format.sampleRate
        sampleFormat = encoding.sampleFormat
        audioIndex = 0
        frameSize = 0
        staging = .allocate(capacity: 1)
        planes = .allocate(capacity: 1)
        packet = av_packet_alloc()
        frame = av_frame_alloc()

        let muxer: String = switch type {
        case .m4a: "ipod"
        case .mp4: "mp4"
        case .mov: "mov"
        case .webm: "webm"
        default: "matroska"
        }
        var oc: UnsafeMutablePointer<AVFormatContext>?
        let allocated = avformat_alloc_output_context2(&oc, nil, muxer, path)
        guard allocated >= 0, let oc else { throw fail("cannot set up the \(muxer) muxer: \(FFmpegDecoder.message(allocated))") }
        output = oc

        // The video first, so that its offset is known before the audio's timestamps.
        if let videoFrom {
            (video, videoOutputIndex) = try Self.openVideo(videoFrom, into: oc, destination: destination)
            audioOffset = try Self.audioStart(videoFrom, rate: sampleRate)
        }

        let setup = EncoderSetup(codec: codecKind, sampleRate: sampleRate, channels: channels, sampleFormat: sampleFormat,
                                 bitrate: encoding.encoder.bitrate ?? codecKind.defaultBitrate(channels: channels),
                                 globalHeader: oc.pointee.oformat.pointee.flags & AVFMT_GLOBALHEADER != 0,
                                 destination: destination, format: format)
        let ctx = try setup.open()
        codec = ctx
        frameSize = ctx.pointee.frame_size > 0 ? Int(ctx.pointee.frame_size) : 4096
        staging.deallocate()
        staging = .allocate(capacity: frameSize * channels)
        planes.deallocate()
        planes = .allocate(capacity: channels)
        for c in 0..<channels { planes[c] = UnsafePointer(staging + c * frameSize) }
        priming = Int64(ctx.pointee.initial_padding)
        // One frame buffer for the whole render (made writable again before each use).
        guard let frame else { throw fail("out of memory") }
        frame.pointee.nb_samples = Int32(frameSize)
        frame.pointee.format = ctx.pointee.sample_fmt.rawValue
        frame.pointee.sample_rate = ctx.pointee.sample_rate
        av_channel_layout_copy(&frame.pointee.ch_layout, &ctx.pointee.ch_layout)
        let buffered = av_frame_get_buffer(frame, 0)
        guard buffered >= 0 else { throw fail("cannot allocate the encoder's frame: \(FFmpegDecoder.message(buffered))") }

        guard let st = avformat_new_stream(oc, nil) else { throw fail("out of memory") }
        let copied = avcodec_parameters_from_context(st.pointee.codecpar, ctx)
        guard copied >= 0 else { throw fail(FFmpegDecoder.message(copied)) }
        st.pointee.time_base = ctx.pointee.time_base
        audioIndex = st.pointee.index

        for (key, value) in [("title", metadata.title), ("artist", metadata.artist), ("album", metadata.album),
                             ("comment", metadata.comment), ("date", metadata.date), ("encoder", metadata.software)] {
            if let value { av_dict_set(&oc.pointee.metadata, key, value, 0) }
        }
        oc.pointee.pb = file.context
        var options: OpaquePointer?
        if !encoding.writesEditList { av_dict_set(&options, "use_editlist", "0", 0) }
        if [.m4a, .mp4, .mov].contains(type) {
            // The edit list's durations are in the movie's timescale, 1000 by default: whole
            // milliseconds, rounded up. At the sample rate they are exact.
            av_dict_set(&options, "movie_timescale", "\(sampleRate)", 0)
        }
        let header = avformat_write_header(oc, &options)
        av_dict_free(&options)
        guard header >= 0 else {
            throw fail("cannot write the \(muxer) header\(videoFrom.map { " with the video of '\($0)'" } ?? ""): \(FFmpegDecoder.message(header))")
        }
        if let video {
            self.muxer = VideoMuxer(output: oc, video: video, videoIndex: videoOutputIndex,
                                    audioTimeBase: oc.pointee.streams[Int(audioIndex)]!.pointee.time_base, destination: destination)
            self.video = nil
        }
        // AAC and Opus on several cores (ChunkedEncoder); one encoder keeps the serial path.
        if encoding.encoderThreads > 1 && (codecKind == .aac || codecKind == .opus) {
            parallel = ChunkedEncoder(workers: encoding.encoderThreads, chunkFrames: encoding.chunkFrames,
                                      preroll: encoding.prerollFrames, postroll: encoding.postrollFrames,
                                      codec: codecKind, channels: channels, frameSize: frameSize, destination: destination) { () throws(MixdownError) in
                try setup.open()
            }
        }
        try writeSilence(audioOffset)
    }

    /// How the stream's encoder is made: once for the stream's parameters (and the serial
    /// encode), and again for every chunk of a parallel one.
    struct EncoderSetup: @unchecked Sendable {
        let codec: AudioCodec
        let sampleRate: Int
        let channels: Int
        let sampleFormat: SampleFormat?
        let bitrate: Int?
        let globalHeader: Bool
        let destination: String
        let format: AudioFormat

        func open() throws(MixdownError) -> UnsafeMutablePointer<AVCodecContext> {
            func fail(_ reason: String) -> MixdownError { .unsupportedOutput(path: destination, reason: reason) }
            guard let encoder = avcodec_find_encoder_by_name(codec.encoderName) else {
                throw fail("this FFmpeg has no \(codec.encoderName) encoder")
            }
            guard var ctx = avcodec_alloc_context3(encoder) else { throw fail("out of memory") }
            ctx.pointee.sample_rate = Int32(sampleRate)
            av_channel_layout_default(&ctx.pointee.ch_layout, Int32(channels))
            ctx.pointee.time_base = AVRational(num: 1, den: Int32(sampleRate))
            switch codec {
            case .aac: ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLTP
            case .opus: ctx.pointee.sample_fmt = AV_SAMPLE_FMT_FLT
            case .alac:
                ctx.pointee.sample_fmt = sampleFormat == .s24 ? AV_SAMPLE_FMT_S32P : AV_SAMPLE_FMT_S16P
                ctx.pointee.bits_per_raw_sample = sampleFormat == .s24 ? 24 : 16
            }
            if let bitrate { ctx.pointee.bit_rate = Int64(bitrate) }
            if globalHeader { ctx.pointee.flags |= AV_CODEC_FLAG_GLOBAL_HEADER }
            let opened = avcodec_open2(ctx, encoder, nil)
            guard opened >= 0 else {
                let rate = ctx.pointee.bit_rate > 0 ? " at \(ctx.pointee.bit_rate / 1000) kbps" : ""
                var holder: UnsafeMutablePointer<AVCodecContext>? = ctx
                avcodec_free_context(&holder)
                throw fail("the \(codec.rawValue) encoder refused \(format)\(rate): \(FFmpegDecoder.message(opened))")
            }
            return ctx
        }
    }

    /// Encodes `frames` frames of silence (the lead-in before the render).
    private func writeSilence(_ frames: Int64) throws(MixdownError) {
        if let parallel {
            var left = frames
            while left > 0 {
                let n = Int(min(left, 65_536))
                try parallel.append(frames: n, channel: { _ in nil }, mux: writePacket)
                left -= Int64(n)
            }
            return
        }
        var left = frames
        while left > 0 {
            let n = Int(min(left, Int64(frameSize - fill)))
            for c in 0..<channels { (staging + c * frameSize + fill).update(repeating: 0, count: n) }
            fill += n
            left -= Int64(n)
            if fill == frameSize { try encodeStaged() }
        }
    }

    deinit {
        close()
        staging.deallocate()
        planes.deallocate()
    }

    private func fail(_ reason: String) -> MixdownError {
        .unsupportedOutput(path: destination, reason: reason)
    }

    func write(_ buffer: AudioBuffer, frames: Int) throws(MixdownError) {
        if let parallel {
            try parallel.append(frames: frames, channel: { UnsafePointer(buffer[channel: $0]) }, mux: writePacket)
            return
        }
        var done = 0
        while done < frames {
            let n = min(frames - done, frameSize - fill)
            for c in 0..<channels {
                (staging + c * frameSize + fill).update(from: buffer[channel: c] + done, count: n)
            }
            fill += n
            done += n
            if fill == frameSize { try encodeStaged() }
        }
    }

    /// Sends the staged frames (a whole encoder frame, or the short last one) to the encoder.
    private func encodeStaged() throws(MixdownError) {
        guard let ctx = codec, let frame, fill > 0 else { return }
        // The encoder may still hold the last frame's buffer; then this makes a new one.
        let writable = av_frame_make_writable(frame)
        guard writable >= 0 else { throw .writeFailed(path: destination, reason: FFmpegDecoder.message(writable)) }
        frame.pointee.nb_samples = Int32(fill)
        frame.pointee.pts = framesSent
        let data = frame.pointee.extended_data!
        let k = mx_kernels_active().pointee
        switch codecKind {
        case .aac:
            for c in 0..<channels {
                UnsafeMutableRawPointer(data[c]!).assumingMemoryBound(to: Float.self).update(from: staging + c * frameSize, count: fill)
            }
        case .opus:
            k.interleave(UnsafeMutableRawPointer(data[0]!).assumingMemoryBound(to: Float.self), planes, channels, fill)
        case .alac:
            for c in 0..<channels {
                if sampleFormat == .s24 {
                    k.f32_to_s24(UnsafeMutableRawPointer(data[c]!).assumingMemoryBound(to: Int32.self), staging + c * frameSize, fill)
                } else {
                    k.f32_to_s16(UnsafeMutableRawPointer(data[c]!).assumingMemoryBound(to: Int16.self), staging + c * frameSize, fill)
                }
            }
        }
        framesSent += Int64(fill)
        fill = 0
        let sent = avcodec_send_frame(ctx, frame)
        guard sent >= 0 else { throw .writeFailed(path: destination, reason: "the \(codecKind.rawValue) encoder: \(FFmpegDecoder.message(sent))") }
        try drainPackets()
    }

    /// Writes every packet the encoder has ready, with the video due before it.
    private func drainPackets() throws(MixdownError) {
        guard let ctx = codec, let packet else { return }
        while true {
            let r = avcodec_receive_packet(ctx, packet)
            if r == mx_averror_eagain() || r == mx_averror_eof() { return }
            guard r >= 0 else { throw .writeFailed(path: destination, reason: "the \(codecKind.rawValue) encoder: \(FFmpegDecoder.message(r))") }
            try writePacket(packet)
        }
    }

    /// Muxes one packet of the audio (timestamps in the encoder's time base, frames), with
    /// the video due before it.
    private func writePacket(_ packet: UnsafeMutablePointer<AVPacket>) throws(MixdownError) {
        guard let ctx = codec, let oc = output else { return }
        packetsFrames += Int64(frameSize)
        // The encoder rounds the last packet up (FFmpeg's AAC to 32 frames): its end is
        // the last rendered frame, which is what the edit list then declares. (While a
        // parallel encode runs, `framesSent` is 0: the end is known at `finish`.)
        if codecKind != .opus, framesSent > 0, packet.pointee.pts != mx_av_nopts(), packet.pointee.pts + packet.pointee.duration > framesSent {
            packet.pointee.duration = max(0, framesSent - packet.pointee.pts)
        }
        packet.pointee.stream_index = audioIndex
        let st = oc.pointee.streams[Int(audioIndex)]!
        av_packet_rescale_ts(packet, ctx.pointee.time_base, st.pointee.time_base)
        if let muxer {
            try muxer.write(packet)
            return
        }
        let w = av_interleaved_write_frame(oc, packet)
        guard w >= 0 else { throw .writeFailed(path: destination, reason: FFmpegDecoder.message(w)) }
    }

    func finish(durable: Bool) throws(MixdownError) {
        guard let ctx = codec, let oc = output else { return }
        if let parallel {
            framesSent = parallel.received
            try parallel.finish(mux: writePacket)
            self.parallel = nil
        } else {
            try encodeStaged()
            let flushed = avcodec_send_frame(ctx, nil)
            guard flushed >= 0 else { throw .writeFailed(path: destination, reason: FFmpegDecoder.message(flushed)) }
            try drainPackets()
        }
        if let muxer {
            try muxer.finish()
            self.muxer = nil
        }
        let trailer = av_write_trailer(oc)
        guard trailer >= 0 else { throw .writeFailed(path: destination, reason: FFmpegDecoder.message(trailer)) }
        oc.pointee.pb = nil
        let closed = file?.close() ?? 0
        file = nil
        guard closed >= 0 else { throw .writeFailed(path: destination, reason: FFmpegDecoder.message(closed)) }
        avformat_free_context(oc)
        output = nil
        avcodec_free_context(&codec)
        if type == .m4a && codecKind == .aac {
            let padding = packetsFrames - priming - framesSent
            try MP4Tags.addITunSMPB(path: path, destination: destination, priming: priming,
                                    padding: max(0, padding), frames: framesSent)
        }
    }

    func close() {
        parallel = nil
        // The muxer's thread stops before the output it writes is freed.
        muxer = nil
        if let oc = output {
            oc.pointee.pb = nil
            avformat_free_context(oc)
            output = nil
        }
        _ = file?.close()
        file = nil
        avcodec_free_context(&codec)
        av_packet_free(&packet)
        av_frame_free(&frame)
        video = nil
    }

    // MARK: - Video

    private static func openVideo(_ path: String, into oc: UnsafeMutablePointer<AVFormatContext>,
                                  destination: String) throws(MixdownError) -> (VideoPacketReader, Int32) {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .fileNotFound(path: path) }
        var input: UnsafeMutablePointer<AVFormatContext>?
        guard (st.st_mode & S_IFMT) == S_IFREG else { throw .notAFile(path: path) }
        func damaged(_ reason: String) -> MixdownError { .unsupportedInput(path: path, reason: "--video-from: \(reason)") }
        let opened = avformat_open_input(&input, path, nil, nil)
        guard opened >= 0, let input else { throw damaged("cannot read it as a video file: \(FFmpegDecoder.message(opened))") }
        var holder: UnsafeMutablePointer<AVFormatContext>? = input
        let found = avformat_find_stream_info(input, nil)
        guard found >= 0 else { avformat_close_input(&holder); throw damaged("cannot read its streams: \(FFmpegDecoder.message(found))") }
        let index = av_find_best_stream(input, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0)
        guard index >= 0 else {
            avformat_close_input(&holder)
            throw .invalidParameter(name: "--video-from", value: "'\(path)'", reason: "has no video stream")
        }
        let inStream = input.pointee.streams[Int(index)]!
        // What the muxer would refuse in its header with a bare "Invalid argument".
        let par = inStream.pointee.codecpar.pointee
        let codecName = String(cString: avcodec_get_name(par.codec_id))
        guard par.codec_id != AV_CODEC_ID_NONE, par.width > 0, par.height > 0 else {
            avformat_close_input(&holder)
            throw damaged("its video stream \(index) is damaged (codec \(codecName), \(par.width)x\(par.height))")
        }
        guard avformat_query_codec(oc.pointee.oformat, par.codec_id, FF_COMPLIANCE_NORMAL) == 1 else {
            avformat_close_input(&holder)
            let muxer = String(cString: oc.pointee.oformat.pointee.name)
            throw damaged("its video is \(codecName), which \(muxer) cannot hold: convert the video first (to H.264, for example)")
        }
        guard let out = avformat_new_stream(oc, nil) else { avformat_close_input(&holder); throw .writeFailed(path: destination, reason: "out of memory") }
        let copied = avcodec_parameters_copy(out.pointee.codecpar, inStream.pointee.codecpar)
        guard copied >= 0 else { avformat_close_input(&holder); throw .writeFailed(path: destination, reason: FFmpegDecoder.message(copied)) }
        out.pointee.codecpar.pointee.codec_tag = 0
        out.pointee.time_base = inStream.pointee.time_base
        out.pointee.avg_frame_rate = inStream.pointee.avg_frame_rate
        out.pointee.r_frame_rate = inStream.pointee.r_frame_rate
        out.pointee.sample_aspect_ratio = inStream.pointee.sample_aspect_ratio
        av_dict_copy(&out.pointee.metadata, inStream.pointee.metadata, 0)
        return (VideoPacketReader(path: path, input: input, streamIndex: index), out.pointee.index)
    }

    /// Where `path`'s audio frame 0 is presented, in frames at `rate` (rounded half away
    /// from zero): its first audio stream's start, else its video's.
    private static func audioStart(_ path: String, rate: Int) throws(MixdownError) -> Int64 {
        var input: UnsafeMutablePointer<AVFormatContext>?
        guard avformat_open_input(&input, path, nil, nil) >= 0, let fmt = input else { throw .unreadableFile(path: path, reason: "cannot open") }
        defer { avformat_close_input(&input) }
        _ = avformat_find_stream_info(fmt, nil)
        var index = av_find_best_stream(fmt, AVMEDIA_TYPE_AUDIO, -1, -1, nil, 0)
        if index < 0 { index = av_find_best_stream(fmt, AVMEDIA_TYPE_VIDEO, -1, -1, nil, 0) }
        guard index >= 0 else { return 0 }
        let st = fmt.pointee.streams[Int(index)]!
        let start = st.pointee.start_time
        guard start != mx_av_nopts() else { return 0 }
        return av_rescale_q_rnd(start, st.pointee.time_base, AVRational(num: 1, den: Int32(rate)),
                                AVRounding(rawValue: AV_ROUND_NEAR_INF.rawValue | AV_ROUND_PASS_MINMAX.rawValue))
    }
}

/// iTunes' gapless tag, added to an M4A's `moov/udta/meta/ilst` after FFmpeg has muxed it.
enum MP4Tags {
    /// Appends a `----` (com.apple.iTunes, iTunSMPB) atom. Needs `moov` to be the file's
    /// last box (FFmpeg's default, so no chunk offset moves) and an `ilst` inside it.
    static func addITunSMPB(path: String, destination: String, priming: Int64, padding: Int64, frames: Int64) throws(MixdownError) {
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw .writeFailed(path: destination, reason: "cannot reopen the file to tag it")
        }
        defer { try? handle.close() }
        guard let size = try? handle.seekToEnd() else { throw .writeFailed(path: destination, reason: "cannot size the file") }
        // Find the top-level boxes.
        var offset: UInt64 = 0
        var moov: (UInt64, UInt64)?
        while offset + 8 <= size {
            try? handle.seek(toOffset: offset)
            guard let head = try? handle.read(upToCount: 16), head.count >= 8 else { break }
            var boxSize = UInt64(be32(head, 0))
            let name = String(decoding: head[4..<8], as: UTF8.self)
            if boxSize == 1, head.count >= 16 { boxSize = be64(head, 8) } else if boxSize == 0 { boxSize = size - offset }
            guard boxSize >= 8 else { break }
            if name == "moov" { moov = (offset, boxSize) }
            offset += boxSize
        }
        guard let (moovOffset, moovSize) = moov, moovOffset + moovSize == size, moovSize < UInt64(UInt32.max) else { return }
        try? handle.seek(toOffset: moovOffset)
        guard var box = try? handle.read(upToCount: Int(moovSize)), box.count == Int(moovSize) else {
            throw .writeFailed(path: destination, reason: "cannot read the moov box to tag it")
        }
        // The path moov > udta > meta (a full box: 4 more bytes) > ilst.
        var chain: [Int] = [0]
        var cursor = 8, end = box.count
        for (name, skip) in [("udta", 0), ("meta", 4), ("ilst", 0)] {
            var found: Int?
            var p = cursor
            while p + 8 <= end {
                let s = Int(be32(box, p))
                guard s >= 8, p + s <= end else { break }
                if String(decoding: box[p + 4..<p + 8], as: UTF8.self) == name { found = p; break }
                p += s
            }
            guard let at = found else { return }
            chain.append(at)
            cursor = at + 8 + skip
            end = at + Int(be32(box, at))
        }
        let text = String(format: " 00000000 %08X %08X %016llX 00000000 00000000 00000000 00000000 00000000 00000000 00000000 00000000",
                          UInt32(priming), UInt32(padding), UInt64(frames))
        func atom(_ name: String, _ payload: [UInt8]) -> [UInt8] {
            let n = UInt32(8 + payload.count)
            return [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + Array(name.utf8) + payload
        }
        let freeform = atom("----", atom("mean", [0, 0, 0, 0] + Array("com.apple.iTunes".utf8))
                                  + atom("name", [0, 0, 0, 0] + Array("iTunSMPB".utf8))
                                  + atom("data", [0, 0, 0, 1, 0, 0, 0, 0] + Array(text.utf8)))
        let ilstEnd = end
        box.insert(contentsOf: freeform, at: ilstEnd)
        for at in chain {
            let s = be32(box, at) + UInt32(freeform.count)
            box[at] = UInt8(s >> 24); box[at + 1] = UInt8(s >> 16 & 0xFF); box[at + 2] = UInt8(s >> 8 & 0xFF); box[at + 3] = UInt8(s & 0xFF)
        }
        do {
            try handle.seek(toOffset: moovOffset)
            try handle.write(contentsOf: box)
        } catch {
            throw .writeFailed(path: destination, reason: "cannot write the iTunSMPB tag: \(error)")
        }
    }

    private static func be32(_ d: Data, _ o: Int) -> UInt32 {
        let b = d.startIndex + o
        return UInt32(d[b]) << 24 | UInt32(d[b + 1]) << 16 | UInt32(d[b + 2]) << 8 | UInt32(d[b + 3])
    }

    private static func be64(_ d: Data, _ o: Int) -> UInt64 { UInt64(be32(d, o)) << 32 | UInt64(be32(d, o + 4)) }
}
#endif
