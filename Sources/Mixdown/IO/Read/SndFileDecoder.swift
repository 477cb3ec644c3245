import CSndFile
import Foundation
import MixdownKernels

/// An open libsndfile handle for reading, closed on deinit: WAV, RF64, W64, AIFF, CAF,
/// FLAC, Ogg Vorbis/Opus, MP3, as planar Float32. Integer samples are scaled by 1/32768
/// (16-bit) or 1/2^31 (24/32-bit, left-justified), libsndfile's normalisation; seeking is
/// sample-accurate (`sf_seek`).
final class SndFileDecoder: AudioDecoder {
    let info: AudioFileInfo
    let handle: OpaquePointer
    private var interleaved: UnsafeMutablePointer<Float>?
    /// For 16-bit PCM: read as integers and decode in the C kernel (libsndfile's own
    /// conversion is scalar), with the same result, x / 32768.
    private var shorts: UnsafeMutablePointer<Int16>?
    private var position: Int64 = 0
    /// Float and decoded formats can hold NaN or infinity; integer PCM cannot.
    private lazy var mayHoldNonFinite = !(info.sampleFormat.hasPrefix("pcm_") || info.sampleFormat == "ulaw" || info.sampleFormat == "alaw")

    /// Opens `path`, which `AudioFileProbe` has checked is a non-empty regular file.
    init(path: String) throws(MixdownError) {
        var sfinfo = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &sfinfo) else {
            let reason = String(cString: sf_strerror(nil))
            if access(path, R_OK) != 0 {
                throw .unreadableFile(path: path, reason: String(cString: strerror(errno)))
            }
            // libsndfile refuses a CAF whose rate is no rate with "SF_INFO struct incomplete".
            try HeaderSampleRate.check(path: path, major: nil)
            throw .unreadableFile(path: path, reason: reason)
        }
        guard sfinfo.frames > 0, sfinfo.frames != Int64.max else {
            sf_close(h)
            throw .emptyFile(path: path)
        }
        guard sfinfo.samplerate > 0, sfinfo.channels > 0 else {
            sf_close(h)
            throw .unreadableFile(path: path, reason: "the header gives \(sfinfo.samplerate) Hz and \(sfinfo.channels) channels")
        }
        // AIFF and CAF store the rate as a float, which libsndfile turns into an integer
        // without a word: 0 or NaN becomes 1 Hz, infinity 67 MHz.
        do { try HeaderSampleRate.check(path: path, major: sfinfo.format & Int32(SF_FORMAT_TYPEMASK)) } catch {
            sf_close(h)
            throw error
        }
        let declared = Self.declaredLength(h, sfinfo)
        if case .promises(let promised) = declared, promised > sfinfo.frames {
            sf_close(h)
            throw .truncatedAudio(path: path, expectedFrames: promised, readFrames: sfinfo.frames)
        }
        var frames = sfinfo.frames, lengthSource: LengthSource = declared == .streamed ? .fileSize : .header
        if sfinfo.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_OGG) {
            let links = OggChain.links(of: path)
            do { try OggChain.refuseChain(path, sampleRate: Int(sfinfo.samplerate), links: links) } catch {
                sf_close(h)
                throw error
            }
            // libsndfile counts an Ogg Vorbis stream from its first audio page's granule
            // position; where that is negative (hyperrogue-music's hr-savino-*.ogg: the header
            // packets again at the head of the first audio page, granule -104), its count is
            // that much over what it decodes, and FFmpeg refuses the headers. The stream ends
            // whole (EOS) at its last page's granule position, where libsndfile's decode ends,
            // and libvorbisfile (sox) reads that length: it is the length.
            if let link = links.first, links.count == 1, link.ended, link.lastGranule > 0, link.lastGranule < frames, !Self.lastFrameReads(h, sfinfo),
               Self.framesDecodable(path, from: max(0, link.lastGranule - 65_536)) == link.lastGranule {
                frames = link.lastGranule
                lengthSource = .lastGranule
            }
        }
        // FLAC's STREAMINFO gives the length whatever the file holds: a damaged header can
        // promise 397 hours in a 1 MB file, which a job then refuses for want of disk space.
        // Its last frame is read before the length is believed.
        if sfinfo.format & Int32(SF_FORMAT_TYPEMASK) == Int32(SF_FORMAT_FLAC), !Self.lastFrameReads(h, sfinfo) {
            sf_close(h)
            let held = Self.framesDecodable(path)
            throw .truncatedAudio(path: path, expectedFrames: sfinfo.frames, readFrames: held)
        }
        handle = h
        var info = AudioFileInfo(path: path, type: Self.majorName(sfinfo.format), sampleFormat: Self.subtypeName(sfinfo.format),
                                 sampleRate: Int(sfinfo.samplerate), channelCount: Int(sfinfo.channels), frames: frames,
                                 lengthSource: lengthSource)
        info.timeReference = Self.timeReference(h)
        if info.timeReference != nil { info.timeReferenceSource = "bext TimeReference" }
        self.info = info
    }

    /// True when the frame before `sfinfo.frames` decodes; the handle is left at frame 0.
    static func lastFrameReads(_ h: OpaquePointer, _ sfinfo: SF_INFO) -> Bool {
        var frame = [Float](repeating: 0, count: Int(sfinfo.channels))
        let reads = sf_seek(h, sfinfo.frames - 1, SEEK_SET) == sfinfo.frames - 1 && sf_readf_float(h, &frame, 1) == 1
        return sf_seek(h, 0, SEEK_SET) == 0 && reads
    }

    /// Where a damaged file's decode ends, read from frame `start` (0: its start) to its end
    /// on a handle of its own (a failed seek leaves libsndfile's FLAC decoder lost); -1
    /// when it cannot seek there.
    static func framesDecodable(_ path: String, from start: Int64 = 0) -> Int64 {
        var sfinfo = SF_INFO()
        guard let h = sf_open(path, Int32(SFM_READ), &sfinfo), sfinfo.channels > 0 else { return 0 }
        defer { sf_close(h) }
        guard start == 0 || sf_seek(h, start, SEEK_SET) == start else { return -1 }
        let block = 65_536
        var scratch = [Float](repeating: 0, count: block * Int(sfinfo.channels))
        var total: Int64 = start
        while true {
            let got = sf_readf_float(h, &scratch, sf_count_t(block))
            guard got > 0 else { return total }
            total += got
        }
    }

    /// A Broadcast WAV's `bext` TimeReference (frames since midnight), or nil.
    static func timeReference(_ h: OpaquePointer) -> Int64? {
        var bext = SF_BROADCAST_INFO()
        guard sf_command(h, Int32(SFC_GET_BROADCAST_INFO), &bext, Int32(MemoryLayout<SF_BROADCAST_INFO>.size)) == SF_TRUE else { return nil }
        return Int64(bext.time_reference_high) << 32 | Int64(bext.time_reference_low)
    }

    deinit {
        sf_close(handle)
        interleaved?.deallocate()
        shorts?.deallocate()
    }

    /// Prepared again when a composition's next segment of the same file reuses the
    /// decoder: the scratch space is kept when it is large enough.
    private var preparedFrames = 0

    /// The decoder that reads the rest where libsndfile stops short of the length its own
    /// header gives (an Ogg Vorbis file it cannot read whole: wesnoth's northerners.ogg,
    /// 9,129,710 of 9,135,516 frames), when FFmpeg reads that length.
    private var fallback: AudioDecoder?
    private var triedFallback = false

    func prepare(maximumFrames: Int) {
        fallback?.prepare(maximumFrames: maximumFrames)
        guard maximumFrames > preparedFrames else { return }
        preparedFrames = maximumFrames
        shorts?.deallocate(); shorts = nil
        interleaved?.deallocate(); interleaved = nil
        let n = max(1, maximumFrames * info.channelCount)
        if info.sampleFormat == "pcm_16" { shorts = .allocate(capacity: n) } else { interleaved = .allocate(capacity: n) }
    }

    func seek(toFrame frame: Int64) throws(MixdownError) {
        if let fallback {
            try fallback.seek(toFrame: frame)
            position = frame
            return
        }
        guard frame != position else { return }
        guard sf_seek(handle, frame, SEEK_SET) == frame else {
            throw .readFailed(path: info.path, reason: "cannot seek to frame \(frame): \(String(cString: sf_strerror(handle)))")
        }
        position = frame
    }

    func read(into destinations: UnsafeMutablePointer<UnsafeMutablePointer<Float>?>, frames: Int) throws(MixdownError) -> Int {
        if let fallback {
            let got = try fallback.read(into: destinations, frames: Int(min(Int64(frames), info.frames - position)))
            position += Int64(got)
            return got
        }
        let channels = info.channelCount
        let want = Int(min(Int64(frames), info.frames - position))
        var done = 0
        let k = mx_kernels_active().pointee
        // libsndfile may return short reads before the end (compressed formats); loop.
        while done < want {
            let got = shorts.map { Int(sf_readf_short(handle, $0, sf_count_t(want - done))) }
                ?? Int(sf_readf_float(handle, interleaved!, sf_count_t(want - done)))
            if got <= 0 {
                if sf_error(handle) != 0 {
                    throw .readFailed(path: info.path, reason: String(cString: sf_strerror(handle)))
                }
                // A truncation verdict only when no decoder reads the declared length: FFmpeg
                // may (its Vorbis decoder reads files libsndfile's stops short in).
                if !triedFallback, let other = Self.decoderReadingWhole(info) {
                    triedFallback = true
                    other.prepare(maximumFrames: max(preparedFrames, want))
                    try other.seek(toFrame: position + Int64(done))
                    fallback = other
                    // The destinations point `done` frames on: the rest goes there, then they
                    // are given back as they came.
                    let rest = try other.read(into: destinations, frames: want - done)
                    for c in 0..<channels { destinations[c] = destinations[c]! - done }
                    position += Int64(done + rest)
                    return done + rest
                }
                throw .truncatedAudio(path: info.path, expectedFrames: info.frames, readFrames: position + Int64(done))
            }
            if let shorts {
                k.s16_deinterleave(destinations, shorts, channels, got)
            } else {
                if mayHoldNonFinite, let i = NonFinite.firstIndex(in: interleaved!, count: got * channels) {
                    throw MixdownError.nonFiniteSample(path: info.path, frame: position + Int64(done + i / channels), channel: i % channels,
                                                       value: interleaved![i], sampleRate: info.sampleRate)
                }
                k.deinterleave(destinations, interleaved, channels, got)
            }
            for c in 0..<channels { destinations[c] = destinations[c]! + got }
            done += got
        }
        for c in 0..<channels { destinations[c] = destinations[c]! - done }
        position += Int64(done)
        return done
    }

    /// FFmpeg's decoder of `info`'s file when it reads exactly the length, rate and channels
    /// libsndfile's header gave (Ogg only: the formats both read); nil otherwise, or without FFmpeg.
    static func decoderReadingWhole(_ info: AudioFileInfo) -> AudioDecoder? {
        guard info.type == "ogg", AudioFileProbe.readsContainers,
              let other = try? AudioFileProbe.openWithFFmpeg(path: info.path, stream: nil),
              other.info.frames == info.frames, other.info.sampleRate == info.sampleRate,
              other.info.channelCount == info.channelCount else { return nil }
        return other
    }

    /// What a PCM file's header says of its length, beside what libsndfile found.
    enum DeclaredLength: Equatable {
        /// The header agrees with the file.
        case agrees
        /// The data chunk is declared longer than the file: this many whole frames (a
        /// truncated file: libsndfile would quietly play what is there).
        case promises(Int64)
        /// A streamed WAV (`ffmpeg ... -f wav -`, an interrupted recorder): the data size is
        /// 0xFFFFFFFF, "as long as the file", and the length comes from the file's size.
        case streamed
    }

    /// Reads libsndfile's header log ("data : 576000 (should be 199908)").
    static func declaredLength(_ h: OpaquePointer, _ sfinfo: SF_INFO) -> DeclaredLength {
        var log = [CChar](repeating: 0, count: 16_384)
        sf_command(h, Int32(SFC_GET_LOG_INFO), &log, Int32(log.count))
        let text = String(decoding: log.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        for line in text.split(separator: "\n") {
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("data :") || t.hasPrefix("SSND :"), let open = t.range(of: "(should be ") else { continue }
            let declared = t[t.index(t.startIndex, offsetBy: 6)..<open.lowerBound].trimmingCharacters(in: .whitespaces)
            let actual = t[open.upperBound...].prefix { $0.isNumber }
            guard let d = Int64(declared), let a = Int64(actual), d > a else { continue }
            if d == 0xFFFF_FFFF && t.hasPrefix("data :") { return .streamed }
            let bytesPerSample: Int64 = switch sfinfo.format & Int32(SF_FORMAT_SUBMASK) {
            case Int32(SF_FORMAT_PCM_S8), Int32(SF_FORMAT_PCM_U8), Int32(SF_FORMAT_ULAW), Int32(SF_FORMAT_ALAW): 1
            case Int32(SF_FORMAT_PCM_16): 2
            case Int32(SF_FORMAT_PCM_24): 3
            case Int32(SF_FORMAT_PCM_32), Int32(SF_FORMAT_FLOAT): 4
            case Int32(SF_FORMAT_DOUBLE): 8
            default: 0
            }
            guard bytesPerSample > 0 else { return .promises(sfinfo.frames + 1) }
            // Whole frames of the declared size (a cut inside a frame leaves that frame out
            // of what was read, not out of what was promised).
            return .promises(d / (bytesPerSample * Int64(sfinfo.channels)))
        }
        return .agrees
    }

    static func majorName(_ format: Int32) -> String {
        switch format & Int32(SF_FORMAT_TYPEMASK) {
        case Int32(SF_FORMAT_WAV): return "wav"
        case Int32(SF_FORMAT_AIFF): return "aiff"
        case Int32(SF_FORMAT_FLAC): return "flac"
        case Int32(SF_FORMAT_CAF): return "caf"
        case Int32(SF_FORMAT_OGG): return "ogg"
        case Int32(SF_FORMAT_W64): return "w64"
        case Int32(SF_FORMAT_RF64): return "rf64"
        case Int32(SF_FORMAT_MPEG): return "mpeg"
        case Int32(SF_FORMAT_AU): return "au"
        case Int32(SF_FORMAT_RAW): return "raw"
        default: return String(format: "sndfile-0x%06x", format & Int32(SF_FORMAT_TYPEMASK))
        }
    }

    static func subtypeName(_ format: Int32) -> String {
        switch format & Int32(SF_FORMAT_SUBMASK) {
        case Int32(SF_FORMAT_PCM_S8): return "pcm_s8"
        case Int32(SF_FORMAT_PCM_U8): return "pcm_u8"
        case Int32(SF_FORMAT_PCM_16): return "pcm_16"
        case Int32(SF_FORMAT_PCM_24): return "pcm_24"
        case Int32(SF_FORMAT_PCM_32): return "pcm_32"
        case Int32(SF_FORMAT_FLOAT): return "float"
        case Int32(SF_FORMAT_DOUBLE): return "double"
        case Int32(SF_FORMAT_ULAW): return "ulaw"
        case Int32(SF_FORMAT_ALAW): return "alaw"
        case Int32(SF_FORMAT_VORBIS): return "vorbis"
        case Int32(SF_FORMAT_OPUS): return "opus"
        case Int32(SF_FORMAT_MPEG_LAYER_I): return "mp1"
        case Int32(SF_FORMAT_MPEG_LAYER_II): return "mp2"
        case Int32(SF_FORMAT_MPEG_LAYER_III): return "mp3"
        default: return String(format: "sndfile-0x%04x", format & Int32(SF_FORMAT_SUBMASK))
        }
    }
}
