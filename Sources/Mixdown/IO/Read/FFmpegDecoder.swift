#if FFmpeg
import CFFmpeg
import FFmpegLoader
import Foundation
import MixdownKernels
import Synchronization

/// Decodes one audio stream of an MP4, MOV, M4A, MKV or WebM file (or anything else
/// libavformat reads) with FFmpeg's libraries, as planar Float32, sample-exact.
///
/// Exact length: the decoder runs with `AV_CODEC_FLAG2_SKIP_MANUAL`, so it drops nothing
/// itself; every decoded frame lands on a "raw" frame index counted from the stream's first
/// packet. Valid frame 0 is raw frame `priming`: the encoder delay the container declares
/// (the MP4 edit list's start or iTunSMPB, as the demuxer's skip-samples side data; Opus's
/// pre-skip, which Matroska's CodecDelay states). The valid length is the edit list's
/// duration (MP4/MOV), iTunSMPB's count, or, for Matroska/WebM, the packets' frames less
/// the priming and the last packet's DiscardPadding.
///
/// Seeking: opening scans the packets once (demuxing only, no decoding) and keeps one seek
/// point per second of audio: a packet's timestamp and the raw frame it starts on, counted
/// exactly from the packets' frame counts (not from timestamps, which Matroska keeps in
/// milliseconds). A seek goes to the last point at least `preroll` frames before the
/// target, decodes and discards up to the target.
///
/// Integer samples are scaled like libsndfile's: 16-bit by 1/32768, 32-bit by 1/2^31.
/// libavformat allocates packet buffers as it demuxes; Mixdown's side allocates nothing
/// after `prepare`.
final class FFmpegDecoder: AudioDecoder {
    private(set) var info: AudioFileInfo
    private var formatContext: UnsafeMutablePointer<AVFormatContext>?
    private var codecContext: UnsafeMutablePointer<AVCodecContext>?
    private var packet: UnsafeMutablePointer<AVPacket>?
    private var frame: UnsafeMutablePointer<AVFrame>?
    private var streamIndex: Int32
    private var timeBase: AVRational
    private var channelCount: Int
    /// Raw frames before valid frame 0.
    private var priming: Int64
    private var seekPoints: [SeekPoint]
    /// Raw frames decoded before a seek target, so that the decoder's state has settled
    /// (AAC overlaps one packet, Opus asks for 80 ms, MP3's bit reservoir a few frames).
    private var preroll: Int64

    struct SeekPoint: Sendable { let pts: Int64; let raw: Int64 }

    /// Raw index of the frame at `frameOffset` of the current decoded frame.
    private var rawPosition: Int64 = 0
    private var frameOffset = 0
    private var frameCount = 0
    /// Raw frames still to drop after a seek.
    private var discard: Int64 = 0
    /// After a seek, packets of the stream before this timestamp are dropped.
    private var waitingForPts: Int64?
    private var draining = false
    /// The current frame's samples are float or double, which can be NaN or infinite.
    private var decodesFloat = false
    /// Vorbis: every decoded frame's own skips (the decoder, run with manual skips, puts
    /// them on its frames: at the start, at the end, and where an Ogg page's granule
    /// corrects the stream mid-way) are dropped, and raw positions count what is kept.
    private var trimsEachFrame = false
    private var positioned = false
    /// Per-channel pointers aimed at an offset of the caller's buffer (for the kernels).
    private var targets: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>

    init(path: String, stream requested: Int?) throws(MixdownError) {
        if let why = ffmpegUnavailable { throw .unreadableFile(path: path, reason: why) }
        var fmt: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&fmt, path, nil, nil)
        guard opened >= 0, let fmt else {
            throw .unreadableFile(path: path, reason: Self.message(opened))
        }
        formatContext = fmt
        packet = av_packet_alloc()
        frame = av_frame_alloc()
        targets = .allocate(capacity: 1)
        streamIndex = -1; timeBase = AVRational(num: 1, den: 1); channelCount = 1
        priming = 0; seekPoints = []; preroll = 0
        info = AudioFileInfo(path: path, type: "", sampleFormat: "", sampleRate: 1, channelCount: 1, frames: 0)
        let found = avformat_find_stream_info(fmt, nil)
        guard found >= 0 else { throw .unreadableFile(path: path, reason: Self.message(found)) }

        var streams = Self.listStreams(fmt)
        let audio = streams.filter { $0.kind == .audio }
        let index: Int
        if let requested {
            guard requested >= 0, requested < streams.count else {
                throw .noAudioStream(path: path, reason: "has no stream \(requested) (it has \(streams.count): \(Self.summary(streams)))")
            }
            guard streams[requested].kind == .audio else {
                throw .noAudioStream(path: path, reason: "stream \(requested) is \(streams[requested].kind.rawValue) (\(streams[requested].codec)), not audio; audio streams: \(audio.isEmpty ? "none" : audio.map { "\($0.index)" }.joined(separator: ", "))")
            }
            index = requested
        } else {
            guard let first = audio.first else {
                throw .noAudioStream(path: path, reason: "has no audio stream (\(Self.summary(streams)))")
            }
            index = first.index
        }
        let st = fmt.pointee.streams[index]!
        let par = st.pointee.codecpar!
        guard let decoder = avcodec_find_decoder(par.pointee.codec_id) else {
            throw .unreadableFile(path: path, reason: "the audio codec '\(String(cString: avcodec_get_name(par.pointee.codec_id)))' of stream \(index) has no decoder in this FFmpeg")
        }
        guard let ctx = avcodec_alloc_context3(decoder) else { throw .unreadableFile(path: path, reason: "out of memory") }
        codecContext = ctx
        let copied = avcodec_parameters_to_context(ctx, par)
        guard copied >= 0 else { throw .unreadableFile(path: path, reason: Self.message(copied)) }
        ctx.pointee.pkt_timebase = st.pointee.time_base
        ctx.pointee.flags2 |= AV_CODEC_FLAG2_SKIP_MANUAL
        ctx.pointee.err_recognition |= AV_EF_EXPLODE
        ctx.pointee.thread_count = 1
        let codecOpened = avcodec_open2(ctx, decoder, nil)
        guard codecOpened >= 0 else { throw .unreadableFile(path: path, reason: "cannot open the \(String(cString: decoder.pointee.name)) decoder: \(Self.message(codecOpened))") }
        let rate = Int(ctx.pointee.sample_rate), channels = Int(ctx.pointee.ch_layout.nb_channels)
        guard rate > 0, rate <= Int(Int32.max), channels > 0 else {
            throw .unreadableFile(path: path, reason: "stream \(index) gives \(rate) Hz and \(channels) channels")
        }
        streamIndex = Int32(index)
        timeBase = st.pointee.time_base
        channelCount = channels
        targets.deallocate()
        targets = .allocate(capacity: channels)
        // Opus's CELT layer predicts each frame's band energies from the previous frame's,
        // so a restarted decoder converges geometrically: 80 ms (the spec's pre-roll) leaves
        // errors near 5e-4, one second leaves them below 1e-5 (measured).
        let codecName = String(cString: avcodec_get_name(par.pointee.codec_id))
        preroll = codecName == "opus" ? Int64(rate) : Int64(max(8192, rate / 5))
        trimsEachFrame = codecName == "vorbis"

        var scan: Scan
        let key = ScanCache.key(path: path, stream: index)
        if let key, let cached = ScanCache.shared.get(key) {
            scan = cached
        } else {
            scan = try Self.scan(fmt, stream: Int32(index), rate: rate, codecName: codecName, path: path, codec: ctx)
            if let key { ScanCache.shared.put(key, scan) }
        }
        let isMOV = String(cString: fmt.pointee.iformat.pointee.name).hasPrefix("mov")
        var frames = scan.rawFrames - scan.priming - scan.discardPadding
        var lengthSource: LengthSource = scan.priming > 0 || scan.discardPadding > 0 ? .codecDelayAndPadding : .decoded
        if isMOV {
            let declared = st.pointee.duration
            let exact = declared != mx_av_nopts() && declared > 0 ? Self.samples(declared, timeBase, rate) : nil
            if let smpb = Self.iTunSMPB(fmt, st), scan.priming == smpb.priming || scan.priming == 0, exact != smpb.frames {
                // No edit list (the track's duration counts every decoded frame): iTunSMPB rules.
                frames = smpb.frames
                lengthSource = .iTunSMPB
                if scan.priming == 0 { scan.priming = smpb.priming }
            } else if let exact {
                frames = exact
                lengthSource = scan.priming > 0 || exact < scan.rawFrames ? .editList : .sampleTable
            }
        }
        // Ogg declares a stream's valid length by its last page's granule position (what
        // ffmpeg's duration is and what a player plays): the Vorbis decoder, run with manual
        // skips, gives more past it (1,362 frames on wesnoth's northerners.ogg). That length rules.
        if String(cString: fmt.pointee.iformat.pointee.name) == "ogg", codecName == "vorbis",
           st.pointee.duration != mx_av_nopts(), st.pointee.duration > 0,
           let declared = Self.samples(st.pointee.duration, timeBase, rate) {
            if declared <= frames {
                frames = declared
                lengthSource = .header
            }
        }
        // A container that declares the stream's length apart from its packets (Matroska
        // and WebM's DURATION tag, a header's duration) and holds fewer: a truncated file,
        // whose demuxer drops the cut cluster without a word. 1 ms of slack: Matroska
        // rounds times to its millisecond timecode scale.
        if !isMOV, let declared = Self.declaredRawFrames(fmt, st, rate: rate), declared > scan.rawFrames + Int64(rate / 1000) + 1 {
            throw .truncatedAudio(path: path, expectedFrames: max(0, declared - scan.priming), readFrames: max(0, frames))
        }
        guard frames > 0 else { throw .emptyFile(path: path) }
        if let cut = scan.cutAt {
            throw .truncatedAudio(path: path, expectedFrames: frames, readFrames: max(0, cut - scan.priming))
        }
        priming = scan.priming
        seekPoints = scan.points
        if index < streams.count {
            streams[index].frames = frames
            streams[index].duration = MediaTime(frames: frames, sampleRate: rate)
        }
        let bits = Int(par.pointee.bits_per_raw_sample)
        info = AudioFileInfo(path: path, type: Self.containerName(fmt, path: path), sampleFormat: codecName,
                             sampleRate: rate, channelCount: channels, frames: frames, stream: index,
                             lengthSource: lengthSource, priming: scan.priming, bitsPerSample: bits > 0 ? bits : nil,
                             streams: streams)
        if let (start, source) = Self.startTimecode(fmt, audioStream: index, sampleRate: rate) {
            info.timeReference = start
            info.timeReferenceSource = source
        }
    }

    /// Where the file starts on its recorder's clock, in frames at `sampleRate`, and what
    /// said so: a QuickTime/MP4 `tmcd` track's timecode at its own rate; else a video
    /// stream's `timecode` tag at the video's rate; else the audio stream's or the
    /// container's (Matroska's TIMECODE) when its frames field is 0, which needs no rate.
    /// Frames at `sampleRate` are rounded half up from the exact time.
    static func startTimecode(_ fmt: UnsafeMutablePointer<AVFormatContext>, audioStream: Int,
                              sampleRate: Int) -> (Int64, String)? {
        func tag(_ dict: OpaquePointer?) -> String? {
            guard let e = av_dict_get(dict, "timecode", nil, 0), let v = e.pointee.value else { return nil }
            return String(cString: v)
        }
        let tmcd = UInt32(UInt8(ascii: "t")) | UInt32(UInt8(ascii: "m")) << 8 | UInt32(UInt8(ascii: "c")) << 16 | UInt32(UInt8(ascii: "d")) << 24
        var candidates: [(text: String, rate: AVRational?, source: String)] = []
        for i in 0..<Int(fmt.pointee.nb_streams) {
            guard let st = fmt.pointee.streams[i], let text = tag(st.pointee.metadata) else { continue }
            let par = st.pointee.codecpar.pointee
            let rate = st.pointee.avg_frame_rate.num > 0 ? st.pointee.avg_frame_rate : st.pointee.r_frame_rate
            if par.codec_tag == tmcd {
                candidates.insert((text, rate.num > 0 ? rate : nil, "tmcd track"), at: 0)
            } else if par.codec_type == AVMEDIA_TYPE_VIDEO {
                candidates.append((text, rate.num > 0 ? rate : nil, "video timecode"))
            } else if i == audioStream {
                candidates.append((text, nil, "timecode tag"))
            }
        }
        if let text = tag(fmt.pointee.metadata) { candidates.append((text, nil, "timecode tag")) }
        for c in candidates {
            if let frames = Timecode.frames(parsing: c.text, rate: c.rate.map { (Int64($0.num), Int64($0.den)) }, sampleRate: sampleRate) {
                return (frames, c.source)
            }
        }
        return nil
    }

    deinit {
        avcodec_free_context(&codecContext)
        avformat_close_input(&formatContext)
        av_packet_free(&packet)
        av_frame_free(&frame)
        targets.deallocate()
    }

    func prepare(maximumFrames: Int) {}

    func seek(toFrame target: Int64) throws(MixdownError) {
        let raw = priming + target
        if positioned, discard == 0, raw == rawPosition { return }
        guard let fmt = formatContext, let ctx = codecContext else { return }
        // The last seek point at least `preroll` frames before the target.
        var lo = 0, hi = seekPoints.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if seekPoints[mid].raw <= raw - preroll { lo = mid } else { hi = mid - 1 }
        }
        let point = seekPoints[lo]
        let r = av_seek_frame(fmt, streamIndex, point.pts, AVSEEK_FLAG_BACKWARD)
        guard r >= 0 else {
            throw .readFailed(path: info.path, reason: "cannot seek to \(MediaTime(frames: target, sampleRate: info.sampleRate).clockDescription): \(Self.message(r))")
        }
        avcodec_flush_buffers(ctx)
        waitingForPts = point.pts
        rawPosition = point.raw
        discard = raw - point.raw
        frameOffset = 0; frameCount = 0
        draining = false
        positioned = true
    }

    func read(into destinations: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, frames: Int) throws(MixdownError) -> Int {
        if !positioned { try seek(toFrame: 0) }
        var done = 0
        while done < frames {
            if frameOffset >= frameCount {
                guard try nextFrame() else { break }
                continue
            }
            let n = min(frames - done, frameCount - frameOffset)
            convert(n, into: destinations, at: done)
            if decodesFloat {
                for c in 0..<channelCount {
                    guard let i = NonFinite.firstIndex(in: destinations[c]! + done, count: n) else { continue }
                    throw MixdownError.nonFiniteSample(path: info.path, frame: max(0, rawPosition - priming) + Int64(i), channel: c,
                                                       value: destinations[c]![done + i], sampleRate: info.sampleRate)
                }
            }
            frameOffset += n
            done += n
            rawPosition += Int64(n)
        }
        return done
    }

    /// Decodes until a frame with samples at or after the seek target is ready; false at the end.
    private func nextFrame() throws(MixdownError) -> Bool {
        guard let ctx = codecContext, let frame else { return false }
        while true {
            let r = avcodec_receive_frame(ctx, frame)
            if r == 0 {
                if frame.pointee.flags & AV_FRAME_FLAG_CORRUPT != 0 || frame.pointee.decode_error_flags != 0 {
                    throw .corruptAudio(path: info.path, time: timeAt(raw: rawPosition), reason: "the decoder marked the frame corrupt")
                }
                let n = Int64(frame.pointee.nb_samples)
                let (first, end) = trimsEachFrame ? Self.frameSkips(frame, samples: n) : (0, n)
                let kept = end - first
                let skip = min(kept, discard)
                discard -= skip
                rawPosition += skip
                if skip == kept { continue }
                frameOffset = Int(first + skip)
                frameCount = Int(end)
                let format = AVSampleFormat(rawValue: frame.pointee.format)
                decodesFloat = [AV_SAMPLE_FMT_FLT, AV_SAMPLE_FMT_FLTP, AV_SAMPLE_FMT_DBL, AV_SAMPLE_FMT_DBLP].contains(format)
                return true
            }
            if r == mx_averror_eagain() {
                try feedPacket()
                continue
            }
            if r == mx_averror_eof() { return false }
            throw .corruptAudio(path: info.path, time: timeAt(raw: rawPosition), reason: Self.message(r))
        }
    }

    /// Sends the stream's next packet to the decoder, or the end of the stream.
    private func feedPacket() throws(MixdownError) {
        guard let fmt = formatContext, let ctx = codecContext, let packet else { return }
        while true {
            let r = av_read_frame(fmt, packet)
            if r == mx_averror_eof() {
                if !draining {
                    draining = true
                    _ = avcodec_send_packet(ctx, nil)
                }
                return
            }
            if r < 0 {
                throw .readFailed(path: info.path, reason: "at \(timeAt(raw: rawPosition)): \(Self.message(r))")
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == streamIndex else { continue }
            if packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 {
                // libavformat read fewer bytes than the packet has: the file ends inside it.
                throw .truncatedAudio(path: info.path, expectedFrames: info.frames, readFrames: max(0, rawPosition - priming))
            }
            let pts = Self.timestamp(packet)
            if let wanted = waitingForPts {
                if pts < wanted { continue }
                guard pts == wanted else {
                    throw .readFailed(path: info.path, reason: "seeking landed after the packet at \(clock(pts)) (at \(clock(pts)))")
                }
                waitingForPts = nil
            }
            let sent = avcodec_send_packet(ctx, packet)
            if sent < 0 && sent != mx_averror_eagain() {
                throw .corruptAudio(path: info.path, time: clock(pts), reason: Self.message(sent))
            }
            return
        }
    }

    /// Copies `n` frames from the current decoded frame (at `frameOffset`) to
    /// `destinations[c] + at`, converting to Float32.
    private func convert(_ n: Int, into destinations: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, at: Int) {
        guard let frame else { return }
        let ch = channelCount, off = frameOffset
        let data = frame.pointee.extended_data!
        let k = mx_kernels_active().pointee
        for c in 0..<ch { targets[c] = destinations[c]! + at }
        switch AVSampleFormat(rawValue: frame.pointee.format) {
        case AV_SAMPLE_FMT_FLTP:
            for c in 0..<ch {
                let src = UnsafeRawPointer(data[c]!).assumingMemoryBound(to: Float.self) + off
                targets[c]!.update(from: src, count: n)
            }
        case AV_SAMPLE_FMT_FLT:
            k.deinterleave(targets, UnsafeRawPointer(data[0]!).assumingMemoryBound(to: Float.self) + off * ch, ch, n)
        case AV_SAMPLE_FMT_S16:
            k.s16_deinterleave(targets, UnsafeRawPointer(data[0]!).assumingMemoryBound(to: Int16.self) + off * ch, ch, n)
        case AV_SAMPLE_FMT_S16P:
            for c in 0..<ch { Self.scale(UnsafeRawPointer(data[c]!).assumingMemoryBound(to: Int16.self) + off, 1, targets[c]!, n, 1 / 32768) }
        case AV_SAMPLE_FMT_S32:
            for c in 0..<ch { Self.scale(UnsafeRawPointer(data[0]!).assumingMemoryBound(to: Int32.self) + off * ch + c, ch, targets[c]!, n, 1 / 2_147_483_648) }
        case AV_SAMPLE_FMT_S32P:
            for c in 0..<ch { Self.scale(UnsafeRawPointer(data[c]!).assumingMemoryBound(to: Int32.self) + off, 1, targets[c]!, n, 1 / 2_147_483_648) }
        case AV_SAMPLE_FMT_DBL:
            for c in 0..<ch { Self.scale(UnsafeRawPointer(data[0]!).assumingMemoryBound(to: Double.self) + off * ch + c, ch, targets[c]!, n, 1) }
        case AV_SAMPLE_FMT_DBLP:
            for c in 0..<ch { Self.scale(UnsafeRawPointer(data[c]!).assumingMemoryBound(to: Double.self) + off, 1, targets[c]!, n, 1) }
        case AV_SAMPLE_FMT_U8:
            for c in 0..<ch { Self.scaleU8(UnsafeRawPointer(data[0]!).assumingMemoryBound(to: UInt8.self) + off * ch + c, ch, targets[c]!, n) }
        case AV_SAMPLE_FMT_U8P:
            for c in 0..<ch { Self.scaleU8(UnsafeRawPointer(data[c]!).assumingMemoryBound(to: UInt8.self) + off, 1, targets[c]!, n) }
        default:
            for c in 0..<ch { targets[c]!.update(repeating: 0, count: n) }
            assertionFailure("unsupported sample format \(frame.pointee.format)")
        }
    }

    private static func scale<T: BinaryInteger>(_ src: UnsafePointer<T>, _ stride: Int, _ dst: UnsafeMutablePointer<Float>, _ n: Int, _ factor: Double) {
        for i in 0..<n { dst[i] = Float(Double(src[i * stride]) * factor) }
    }

    private static func scale(_ src: UnsafePointer<Double>, _ stride: Int, _ dst: UnsafeMutablePointer<Float>, _ n: Int, _ factor: Double) {
        for i in 0..<n { dst[i] = Float(src[i * stride] * factor) }
    }

    private static func scaleU8(_ src: UnsafePointer<UInt8>, _ stride: Int, _ dst: UnsafeMutablePointer<Float>, _ n: Int) {
        for i in 0..<n { dst[i] = (Float(src[i * stride]) - 128) / 128 }
    }

    private func timeAt(raw: Int64) -> String {
        MediaTime(frames: max(0, raw - priming), sampleRate: info.sampleRate).clockDescription
    }

    private func clock(_ pts: Int64) -> String {
        guard pts != mx_av_nopts() else { return "an unknown time" }
        return MediaTime(value: pts * Int64(timeBase.num), timescale: timeBase.den).clockDescription
    }

    // MARK: - Opening

    struct Scan: Sendable {
        var rawFrames: Int64
        var priming: Int64
        var discardPadding: Int64
        var points: [SeekPoint]
        /// Raw frame where the file ends inside a packet (a truncated file).
        var cutAt: Int64?
    }

    /// Reads every packet of the stream once, without decoding: exact frame counts, the
    /// priming and end padding, and one seek point per second. A codec whose packets do not
    /// say their frame count is decoded instead (and then seeks decode from the start).
    private static func scan(_ fmt: UnsafeMutablePointer<AVFormatContext>, stream: Int32, rate: Int, codecName: String,
                             path: String, codec: UnsafeMutablePointer<AVCodecContext>) throws(MixdownError) -> Scan {
        guard let packet = av_packet_alloc() else { throw .unreadableFile(path: path, reason: "out of memory") }
        var pkt: UnsafeMutablePointer<AVPacket>? = packet
        defer { av_packet_free(&pkt) }
        let st = fmt.pointee.streams[Int(stream)]!
        let tb = st.pointee.time_base
        let par = st.pointee.codecpar!
        // Packet durations are frame counts only when the time base is 1/rate (or a divisor).
        let durationsExact = tb.num == 1 && Int(tb.den) == rate
        var raw: Int64 = 0, priming: Int64 = 0, discardPadding: Int64 = 0
        var points: [SeekPoint] = []
        var seenFirst = false, primingSettled = false, countable = true
        var lastPts = Int64.min
        var cutAt: Int64?
        let inline = codecName == "vorbis"
        var counted = Counted()
        while true {
            let r = av_read_frame(fmt, packet)
            if r == mx_averror_eof() { break }
            if r < 0 {
                throw .readFailed(path: path, reason: "at \(MediaTime(frames: max(0, raw - priming), sampleRate: rate).clockDescription): \(message(r))")
            }
            defer { av_packet_unref(packet) }
            guard packet.pointee.stream_index == stream else { continue }
            let pts = timestamp(packet)
            if !seenFirst || (pts != mx_av_nopts() && pts > lastPts && raw - (points.last?.raw ?? 0) >= Int64(rate) && countable) {
                if pts == mx_av_nopts() && !seenFirst {
                    throw .unreadableFile(path: path, reason: "the first audio packet has no timestamp")
                }
                points.append(SeekPoint(pts: pts, raw: raw))
            }
            if pts != mx_av_nopts() { lastPts = max(lastPts, pts) }
            // Timestamps must follow the frames counted so far: a jump means the demuxer
            // skipped damaged data, which would shift everything after it.
            if seenFirst, countable, pts != mx_av_nopts(), points[0].pts != mx_av_nopts() {
                let expected = points[0].pts + av_rescale_q(raw, AVRational(num: 1, den: Int32(rate)), tb)
                let tolerance = max(2, av_rescale_q(Int64(rate) / 250, AVRational(num: 1, den: Int32(rate)), tb))
                if abs(pts - expected) > tolerance {
                    let at = MediaTime(value: expected * Int64(tb.num), timescale: tb.den).clockDescription
                    let to = MediaTime(value: pts * Int64(tb.num), timescale: tb.den).clockDescription
                    throw .corruptAudio(path: path, time: at, reason: "the stream jumps to \(to): data is missing or damaged")
                }
            }
            if let cut = cutAt {
                // A short packet, then more: damage in the middle, not a cut file.
                throw .corruptAudio(path: path, time: MediaTime(frames: max(0, cut - priming), sampleRate: rate).clockDescription,
                                    reason: "a packet is damaged or short")
            }
            if packet.pointee.flags & AV_PKT_FLAG_CORRUPT != 0 { cutAt = raw }
            let (skipStart, skipEnd) = skipSamples(packet)
            let count = frames(of: packet, durationsExact: durationsExact, rate: rate, codecName: codecName,
                               frameSize: Int64(par.pointee.frame_size))
            if count == nil { countable = false }
            // Priming: whole packets the demuxer marks discarded, then a skip count.
            if !primingSettled {
                if packet.pointee.flags & AV_PKT_FLAG_DISCARD != 0 {
                    priming += count ?? 0
                } else {
                    if skipStart > 0 { priming += skipStart } else if !seenFirst, codecName == "opus" { priming = opusPreSkip(par) }
                    primingSettled = true
                }
            }
            discardPadding = skipEnd
            seenFirst = true
            raw += count ?? 0
            // Vorbis is counted by decoding it here, in the one pass: a seek back to the
            // start of an Ogg stream that begins before 0 fails on some real files.
            if inline { try decodeCounting(packet, codec: codec, path: path, into: &counted) }
        }
        guard seenFirst else { throw .emptyFile(path: path) }
        if inline {
            try decodeCounting(nil, codec: codec, path: path, into: &counted)
            avcodec_flush_buffers(codec)
            // The decoder's own skips, on its frames: at the start, at the end, and where a
            // page's granule corrects the stream (886 frames at 16 s of northerners.ogg).
            // Each frame's own skips are dropped as it is read: no priming or padding apart.
            raw = counted.frames
            priming = 0
            discardPadding = 0
            points = [points[0]]
        } else if !countable {
            raw = try decodedFrames(fmt, stream: stream, codec: codec, path: path, from: points[0].pts)
            points = [points[0]]
        }
        return Scan(rawFrames: raw, priming: priming, discardPadding: discardPadding, points: points, cutAt: cutAt)
    }

    /// The frames a packet decodes to, from what the packet and codec say, or nil.
    private static func frames(of packet: UnsafeMutablePointer<AVPacket>, durationsExact: Bool, rate: Int,
                               codecName: String, frameSize: Int64) -> Int64? {
        // Vorbis packets' durations are the Ogg demuxer's estimates (block sizes seen before
        // decoding), and its timestamps jump where a page's granule corrects them: the
        // frames are counted by decoding.
        if codecName == "vorbis" { return nil }
        if durationsExact, packet.pointee.duration > 0 { return packet.pointee.duration }
        if codecName == "opus", let data = packet.pointee.data, packet.pointee.size > 0 {
            return opusFrames(data, Int(packet.pointee.size)).map { $0 * Int64(rate) / 48_000 }
        }
        if frameSize > 0, ["aac", "mp3", "mp2", "ac3", "eac3"].contains(codecName) { return frameSize }
        return nil
    }

    /// What decoding a stream gave: the frames kept once each frame's skips are dropped.
    struct Counted {
        var frames: Int64 = 0
    }

    /// The part of a decoded frame of `samples` to keep, `first ..< end`: what is left once
    /// the skips a decoder run with manual skips puts on it (AV_FRAME_DATA_SKIP_SAMPLES:
    /// samples to drop at its start, and at its end) are dropped.
    static func frameSkips(_ frame: UnsafeMutablePointer<AVFrame>, samples n: Int64) -> (Int64, Int64) {
        guard let side = av_frame_get_side_data(frame, AV_FRAME_DATA_SKIP_SAMPLES), side.pointee.size >= 10 else { return (0, n) }
        let d = side.pointee.data!
        func le32(_ o: Int) -> Int64 { Int64(UInt32(d[o]) | UInt32(d[o + 1]) << 8 | UInt32(d[o + 2]) << 16 | UInt32(d[o + 3]) << 24) }
        let first = min(n, le32(0))
        return (first, max(first, n - le32(4)))
    }

    /// Sends `packet` (nil: the end) to `codec` and counts the frames it gives back, less
    /// the skips a decoder run with manual skips puts on them.
    private static func decodeCounting(_ packet: UnsafeMutablePointer<AVPacket>?, codec: UnsafeMutablePointer<AVCodecContext>,
                                       path: String, into counted: inout Counted) throws(MixdownError) {
        var frm = av_frame_alloc()
        defer { av_frame_free(&frm) }
        guard let frame = frm else { throw .unreadableFile(path: path, reason: "out of memory") }
        let s = avcodec_send_packet(codec, packet)
        if s < 0 && s != mx_averror_eof() { throw .corruptAudio(path: path, time: "frame \(counted.frames)", reason: message(s)) }
        while true {
            let r = avcodec_receive_frame(codec, frame)
            if r == mx_averror_eagain() || r == mx_averror_eof() { break }
            guard r == 0 else { throw .corruptAudio(path: path, time: "frame \(counted.frames)", reason: message(r)) }
            let (first, end) = frameSkips(frame, samples: Int64(frame.pointee.nb_samples))
            counted.frames += end - first
            av_frame_unref(frame)
        }
    }

    /// Counts the frames a whole decode gives (for codecs whose packets do not say).
    private static func decodedFrames(_ fmt: UnsafeMutablePointer<AVFormatContext>, stream: Int32,
                                      codec: UnsafeMutablePointer<AVCodecContext>, path: String, from pts: Int64) throws(MixdownError) -> Int64 {
        guard av_seek_frame(fmt, stream, pts, AVSEEK_FLAG_BACKWARD) >= 0 else {
            throw .readFailed(path: path, reason: "cannot seek back to the start to count its frames")
        }
        var pkt = av_packet_alloc(), frm = av_frame_alloc()
        defer { av_packet_free(&pkt); av_frame_free(&frm); avcodec_flush_buffers(codec) }
        guard let packet = pkt, let frame = frm else { throw .unreadableFile(path: path, reason: "out of memory") }
        var total: Int64 = 0
        var ended = false
        while true {
            let r = avcodec_receive_frame(codec, frame)
            if r == 0 { total += Int64(frame.pointee.nb_samples); continue }
            if r == mx_averror_eof() { break }
            guard r == mx_averror_eagain(), !ended else {
                throw .corruptAudio(path: path, time: "frame \(total)", reason: message(r))
            }
            let read = av_read_frame(fmt, packet)
            if read < 0 { ended = true; _ = avcodec_send_packet(codec, nil); continue }
            if packet.pointee.stream_index == stream {
                let s = avcodec_send_packet(codec, packet)
                if s < 0 { av_packet_unref(packet); throw .corruptAudio(path: path, time: "frame \(total)", reason: message(s)) }
            }
            av_packet_unref(packet)
        }
        return total
    }

    /// AV_PKT_DATA_SKIP_SAMPLES: frames to drop at the start and at the end of this packet.
    private static func skipSamples(_ packet: UnsafeMutablePointer<AVPacket>) -> (Int64, Int64) {
        var size: Int = 0
        guard let side = av_packet_get_side_data(packet, AV_PKT_DATA_SKIP_SAMPLES, &size), size >= 8 else { return (0, 0) }
        func le32(_ o: Int) -> Int64 { Int64(UInt32(side[o]) | UInt32(side[o + 1]) << 8 | UInt32(side[o + 2]) << 16 | UInt32(side[o + 3]) << 24) }
        return (le32(0), le32(4))
    }

    /// Opus's pre-skip, from Matroska's CodecDelay (as FFmpeg reports it) or the OpusHead.
    private static func opusPreSkip(_ par: UnsafeMutablePointer<AVCodecParameters>) -> Int64 {
        if par.pointee.initial_padding > 0 { return Int64(par.pointee.initial_padding) }
        guard let extra = par.pointee.extradata, par.pointee.extradata_size >= 12,
              String(decoding: UnsafeBufferPointer(start: extra, count: 8), as: UTF8.self) == "OpusHead" else { return 0 }
        return Int64(UInt16(extra[10]) | UInt16(extra[11]) << 8)
    }

    /// Frames at 48 kHz in an Opus packet, from its TOC byte (RFC 6716, section 3.1).
    static func opusFrames(_ data: UnsafePointer<UInt8>, _ size: Int) -> Int64? {
        guard size >= 1 else { return nil }
        let config = Int(data[0] >> 3)
        let perFrame: Int64
        switch config {
        case 0...11: perFrame = [480, 960, 1920, 2880][config % 4]
        case 12...15: perFrame = [480, 960][config % 2]
        default: perFrame = [120, 240, 480, 960][config % 4]
        }
        switch data[0] & 3 {
        case 0: return perFrame
        case 1, 2: return 2 * perFrame
        default:
            guard size >= 2 else { return nil }
            return Int64(data[1] & 0x3F) * perFrame
        }
    }

    /// iTunes' gapless tag: " 00000000 PRIMING PADDING FRAMES ...", in hexadecimal.
    private static func iTunSMPB(_ fmt: UnsafeMutablePointer<AVFormatContext>, _ st: UnsafeMutablePointer<AVStream>) -> (priming: Int64, frames: Int64)? {
        for dict in [st.pointee.metadata, fmt.pointee.metadata] {
            guard let entry = av_dict_get(dict, "iTunSMPB", nil, 0), let value = entry.pointee.value else { continue }
            let fields = String(cString: value).split(separator: " ").compactMap { Int64($0, radix: 16) }
            guard fields.count >= 4, fields[3] > 0 else { continue }
            return (fields[1], fields[3])
        }
        return nil
    }

    private static func timestamp(_ packet: UnsafeMutablePointer<AVPacket>) -> Int64 {
        packet.pointee.pts != mx_av_nopts() ? packet.pointee.pts : packet.pointee.dts
    }

    /// `value` in `tb` as frames at `rate`, when that is exact.
    /// The stream's length in raw frames (priming included) as the container declares it,
    /// rounded down, or nil when it declares none: Matroska's per-track `DURATION` tag
    /// ("HH:MM:SS.nnnnnnnnn"), else a stream duration the demuxer read from the header
    /// (never one estimated from the bitrate or from the last packets, which a truncated
    /// file changes too).
    static func declaredRawFrames(_ fmt: UnsafeMutablePointer<AVFormatContext>, _ st: UnsafeMutablePointer<AVStream>,
                                  rate: Int) -> Int64? {
        if let entry = av_dict_get(st.pointee.metadata, "DURATION", nil, 0), let value = entry.pointee.value,
           let nanoseconds = parseDuration(String(cString: value)) {
            let (high, low) = nanoseconds.multipliedFullWidth(by: Int64(rate))
            guard high < 500_000_000 else { return nil }   // beyond Int64 frames
            return (1_000_000_000 as Int64).dividingFullWidth((high, low)).quotient
        }
        let d = st.pointee.duration, tb = st.pointee.time_base
        guard fmt.pointee.duration_estimation_method == AVFMT_DURATION_FROM_STREAM, d != mx_av_nopts(), d > 0,
              tb.num > 0, tb.den > 0 else { return nil }
        let (high, low) = d.multipliedFullWidth(by: Int64(tb.num) * Int64(rate))
        guard high < Int64(tb.den) / 2 else { return nil }
        return Int64(tb.den).dividingFullWidth((high, low)).quotient
    }

    /// "01:02:03.500000000" as nanoseconds; nil unless it is that shape.
    static func parseDuration(_ text: String) -> Int64? {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, let h = Int64(parts[0]), let m = Int64(parts[1]), h >= 0, h < 1_000_000, m >= 0, m < 60 else { return nil }
        let sec = parts[2].split(separator: ".", omittingEmptySubsequences: false)
        guard sec.count <= 2, let s = Int64(sec[0]), s >= 0, s < 60 else { return nil }
        var fraction: Int64 = 0
        if sec.count == 2 {
            let digits = sec[1].prefix(9)
            guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let f = Int64(digits) else { return nil }
            fraction = f * Int64(pow(10, Double(9 - digits.count)))
        }
        return ((h * 60 + m) * 60 + s) * 1_000_000_000 + fraction
    }

    private static func samples(_ value: Int64, _ tb: AVRational, _ rate: Int) -> Int64? {
        let (n, overflow) = value.multipliedReportingOverflow(by: Int64(tb.num) * Int64(rate))
        guard !overflow, tb.den > 0, n % Int64(tb.den) == 0 else { return nil }
        return n / Int64(tb.den)
    }

    /// Every stream of `path`, without opening a decoder.
    static func probeStreams(path: String) throws(MixdownError) -> [MediaStreamInfo] {
        if let why = ffmpegUnavailable { throw .unreadableFile(path: path, reason: why) }
        var fmt: UnsafeMutablePointer<AVFormatContext>?
        let opened = avformat_open_input(&fmt, path, nil, nil)
        guard opened >= 0, let f = fmt else { throw .unreadableFile(path: path, reason: message(opened)) }
        defer { avformat_close_input(&fmt) }
        let found = avformat_find_stream_info(f, nil)
        guard found >= 0 else { throw .unreadableFile(path: path, reason: message(found)) }
        return listStreams(f)
    }

    private static func listStreams(_ fmt: UnsafeMutablePointer<AVFormatContext>) -> [MediaStreamInfo] {
        (0..<Int(fmt.pointee.nb_streams)).map { i in
            let st = fmt.pointee.streams[i]!
            let par = st.pointee.codecpar!
            let codec = String(cString: avcodec_get_name(par.pointee.codec_id))
            let tb = st.pointee.time_base
            let d = st.pointee.duration
            let duration: MediaTime? = d != mx_av_nopts() && d > 0 && tb.den > 0
                ? MediaTime(value: d * Int64(tb.num), timescale: tb.den) : nil
            switch par.pointee.codec_type {
            case AVMEDIA_TYPE_AUDIO:
                let rate = Int(par.pointee.sample_rate)
                return MediaStreamInfo(index: i, kind: .audio, codec: codec, sampleRate: rate,
                                       channelCount: Int(par.pointee.ch_layout.nb_channels),
                                       frames: rate > 0 ? samples(d, tb, rate) : nil, duration: duration)
            case AVMEDIA_TYPE_VIDEO:
                let fr = st.pointee.avg_frame_rate.num > 0 ? st.pointee.avg_frame_rate : st.pointee.r_frame_rate
                let g = gcd(Int(fr.num), Int(max(1, fr.den)))
                return MediaStreamInfo(index: i, kind: .video, codec: codec,
                                       frameRate: fr.num > 0 ? "\(Int(fr.num) / g)/\(Int(fr.den) / g)" : nil, duration: duration)
            case AVMEDIA_TYPE_SUBTITLE: return MediaStreamInfo(index: i, kind: .subtitle, codec: codec, duration: duration)
            case AVMEDIA_TYPE_DATA: return MediaStreamInfo(index: i, kind: .data, codec: codec, duration: duration)
            default: return MediaStreamInfo(index: i, kind: .other, codec: codec, duration: duration)
            }
        }
    }

    private static func summary(_ streams: [MediaStreamInfo]) -> String {
        streams.isEmpty ? "no streams" : streams.map { "\($0.index): \($0.kind.rawValue) \($0.codec)" }.joined(separator: ", ")
    }

    /// "m4a", "mp4", "mov" (from the ftyp brand), "webm", "matroska", or libavformat's name.
    private static func containerName(_ fmt: UnsafeMutablePointer<AVFormatContext>, path: String) -> String {
        let name = String(cString: fmt.pointee.iformat.pointee.name)
        if name.hasPrefix("mov") {
            let brand = av_dict_get(fmt.pointee.metadata, "major_brand", nil, 0).map { String(cString: $0.pointee.value) } ?? ""
            switch brand.trimmingCharacters(in: .whitespaces) {
            case "M4A", "M4B", "M4P": return "m4a"
            case "qt": return "mov"
            default: return "mp4"
            }
        }
        if name.hasPrefix("matroska") {
            let doctype = av_dict_get(fmt.pointee.metadata, "doctype", nil, 0).map { String(cString: $0.pointee.value) }
            if doctype == "webm" || (path as NSString).pathExtension.lowercased() == "webm" { return "webm" }
            return "matroska"
        }
        return name.split(separator: ",").first.map(String.init) ?? name
    }

    static func message(_ code: Int32) -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        return String(cString: mx_av_strerror(code, &buffer, buffer.count))
    }
}

/// Packet scans by file (path, stream, size, modification time, inode): a composition
/// opens one file once per segment, and a scan reads the whole file. A changed file has a
/// new key. At most 256 entries (16 bytes per second of audio each), oldest dropped first.
final class ScanCache: Sendable {
    struct Key: Hashable, Sendable { let path: String; let stream: Int; let size: Int64; let mtime: Int64; let mtimeNanos: Int; let inode: UInt64 }
    static let shared = ScanCache()
    private let entries = Mutex<(map: [Key: FFmpegDecoder.Scan], order: [Key])>(([:], []))

    static func key(path: String, stream: Int) -> Key? {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return Key(path: path, stream: stream, size: Int64(st.st_size), mtime: Int64(st.st_mtim.tv_sec),
                   mtimeNanos: Int(st.st_mtim.tv_nsec), inode: UInt64(st.st_ino))
    }

    func get(_ key: Key) -> FFmpegDecoder.Scan? { entries.withLock { $0.map[key] } }

    func put(_ key: Key, _ scan: FFmpegDecoder.Scan) {
        entries.withLock { e in
            if e.map.updateValue(scan, forKey: key) == nil { e.order.append(key) }
            while e.order.count > 256 { e.map[e.order.removeFirst()] = nil }
        }
    }
}

/// FFmpeg's libraries, loaded by the first job that reads or writes a container, not at
/// start (Sources/FFmpegLoader says why): nil once loaded, or why they cannot be (the
/// library missing and the Debian package that holds it), for an error naming the file.
/// Every path into FFmpeg asks this first. libav's own log is off (Mixdown reports its
/// errors itself) unless MIXDOWN_FFMPEG_LOG is set in the environment.
let ffmpegUnavailable: String? = {
    var message = [CChar](repeating: 0, count: 512)
    guard mx_ffmpeg_load(&message, message.count) == 0 else { return String(cString: message) }
    av_log_set_level(getenv("MIXDOWN_FFMPEG_LOG") == nil ? AV_LOG_QUIET : AV_LOG_VERBOSE)
    return nil
}()

private func gcd(_ a: Int, _ b: Int) -> Int { b == 0 ? max(1, abs(a)) : gcd(b, a % b) }
#endif
