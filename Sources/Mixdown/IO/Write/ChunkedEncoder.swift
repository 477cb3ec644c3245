#if FFmpeg
import CFFmpeg
import Foundation
import MixdownKernels
import Synchronization

/// Encodes one AAC or Opus stream on several cores, for `FFmpegFileSink`.
///
/// The stream is cut into chunks of `chunkFrames` whole codec frames (AAC 1024 frames,
/// Opus 960 at 48 kHz), encoded by `workers` threads at once. Each worker keeps one encoder
/// for every chunk it takes, so its rate control (FFmpeg's AAC lambda, the psychoacoustic
/// model's bit reservoir) stays settled: a fresh encoder takes seconds to settle, and its
/// first seconds come out at another quality. Before each chunk the worker's encoder is fed
/// `preroll` codec frames of the real audio before it (so the window history and the MDCT
/// overlap at the join are the serial encoder's), and after it `postroll` frames (so its
/// look-ahead sees what the serial encoder's would); a worker's first chunk gets a whole
/// chunk more before it, to settle. Only the packets of the chunk's own codec frames are
/// kept: packet i (pts = i x frameSize - the encoder's delay) belongs to chunk
/// i / chunkFrames, so the packets are the serial encoder's in number, timing and priming,
/// and the jump in the audio between two chunks of one worker lies in dropped packets.
/// Measured (tools/check/encode-joins.py, docs/containers.md): without the pre-roll a join is
/// audible; with 4 codec frames or more, no decoder's block near a join is worse than the
/// serial encode's.
///
/// The render runs at most one chunk ahead of the encoders; `mux` receives each chunk's
/// packets in order, on the caller's thread (which owns the muxer); the packets are freed
/// after it returns.
final class ChunkedEncoder {
    /// One chunk's work and, when done, its packets or its error.
    final class Job: @unchecked Sendable {
        /// Global frame of `audio`'s first frame (a multiple of the codec frame): a whole
        /// chunk before the pre-roll, for a worker whose encoder is fresh to settle on.
        let firstFrame: Int64
        /// Where an encoder that is already settled starts: the pre-roll's first frame.
        let prerollFrame: Int64
        /// Planar audio from `firstFrame` (the pre-roll, the chunk, the post-roll): channel c's
        /// `count` frames at `audio + c * count`. Owned by the job.
        let audio: UnsafeMutablePointer<Float>
        let count: Int
        /// The codec frames whose packets are kept: [keepFrom, keepTo), or to the end when
        /// `keepTo` is nil (the last chunk, whose encoder is flushed at the stream's end).
        let keepFrom: Int64
        let keepTo: Int64?
        var packets: [UnsafeMutablePointer<AVPacket>] = []
        var error: MixdownError?
        let done = DispatchSemaphore(value: 0)

        init(firstFrame: Int64, prerollFrame: Int64, channels: Int, count: Int, keepFrom: Int64, keepTo: Int64?) {
            self.firstFrame = firstFrame
            self.prerollFrame = prerollFrame
            self.count = count
            audio = .allocate(capacity: max(1, channels * count))
            self.keepFrom = keepFrom
            self.keepTo = keepTo
        }

        deinit {
            audio.deallocate()
            ChunkedEncoder.freePackets(packets)
        }
    }

    /// Frees packets this encoder owns.
    fileprivate static func freePackets(_ packets: [UnsafeMutablePointer<AVPacket>]) {
        for p in packets {
            var owned: UnsafeMutablePointer<AVPacket>? = p
            av_packet_free(&owned)
        }
    }

    /// Opens a fresh encoder, configured as the stream's.
    typealias Opener = () throws(MixdownError) -> UnsafeMutablePointer<AVCodecContext>

    private let channels: Int
    private let frameSize: Int
    private let chunkFrames: Int
    private let preroll: Int
    private let postroll: Int
    private let workerCount: Int

    /// Audio received and not yet handed to a chunk, from global frame `pendingStart`.
    private var pending: [[Float]]
    private var pendingStart: Int64 = 0
    /// Frames received in all.
    private(set) var received: Int64 = 0
    private var nextChunk = 0
    /// Submitted chunks not yet muxed, in order.
    private var inFlight: [Job] = []

    /// One worker's chunks, in order.
    private final class JobQueue: Sendable {
        let jobs = Mutex<[Job]>([])
    }

    /// What the worker threads share, held by them (never the encoder itself, which its
    /// owner may release while a thread has not yet started).
    private final class Workers: @unchecked Sendable {
        /// Chunk k goes to worker k % count, each with its own queue: which encoder (with
        /// its settled rate control) codes which chunk is fixed, so the packets are the
        /// same run after run. A shared queue let the threads' timing decide, and the
        /// quality moved by tenths of a dB between runs (and failed a join check by chance).
        let queues: [JobQueue]
        let available: [DispatchSemaphore]
        let stopping = Atomic<Bool>(false)
        let exited = DispatchSemaphore(value: 0)
        let open: Opener
        let codec: AudioCodec
        let channels: Int
        let frameSize: Int
        let destination: String

        init(count: Int, open: @escaping Opener, codec: AudioCodec, channels: Int, frameSize: Int, destination: String) {
            queues = (0..<count).map { _ in JobQueue() }
            available = (0..<count).map { _ in DispatchSemaphore(value: 0) }
            self.open = open
            self.codec = codec
            self.channels = channels
            self.frameSize = frameSize
            self.destination = destination
        }

        func run(_ w: Int) {
            // This worker's encoder, kept from chunk to chunk: its rate control (FFmpeg's
            // AAC lambda, the psychoacoustic model's bit reservoir) stays settled, where a
            // fresh encoder takes seconds to settle and spends its first ones at another
            // quality. A failed encode is replaced by a fresh one for the next chunk.
            var encoder: ChunkEncoder?
            while true {
                available[w].wait()
                if stopping.load(ordering: .acquiring) { break }
                guard let job = queues[w].jobs.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) else { continue }
                do throws(MixdownError) {
                    // An encoder that stopped before this chunk's pre-roll jumps to it; one that
                    // stopped inside this chunk's audio (it did the chunk before) goes on from
                    // there; its timestamps cannot go back, so otherwise a fresh encoder, which
                    // settles on the chunk before the pre-roll first (at the worker's first
                    // chunk, or after a failed one).
                    var from = job.firstFrame
                    if let e = encoder {
                        if e.fedUntil <= job.prerollFrame {
                            from = job.prerollFrame
                        } else if e.fedUntil <= job.firstFrame + Int64(job.count) {
                            from = e.fedUntil
                        } else {
                            encoder = nil
                        }
                    }
                    if encoder == nil {
                        encoder = try ChunkEncoder(context: open(), codec: codec, channels: channels, frameSize: frameSize,
                                                   destination: destination)
                        from = job.firstFrame
                    }
                    job.packets = try encoder!.encode(job, from: from)
                } catch {
                    job.error = error
                    encoder = nil
                }
                job.done.signal()
            }
            exited.signal()
        }
    }

    private let workers: Workers

    init(workers: Int, chunkFrames: Int, preroll: Int, postroll: Int, codec: AudioCodec, channels: Int, frameSize: Int,
         destination: String, open: @escaping Opener) {
        precondition(workers >= 1 && chunkFrames > preroll && preroll >= 0 && postroll >= 0)
        self.channels = channels
        self.frameSize = frameSize
        self.chunkFrames = chunkFrames
        self.preroll = preroll
        self.postroll = postroll
        self.workerCount = workers
        pending = Array(repeating: [], count: channels)
        for c in 0..<channels { pending[c].reserveCapacity((chunkFrames + preroll + postroll + 1) * frameSize) }
        let shared = Workers(count: workers, open: open, codec: codec, channels: channels, frameSize: frameSize, destination: destination)
        self.workers = shared
        for w in 0..<workers {
            let thread = Thread { [shared] in shared.run(w) }
            thread.name = "mixdown.encoder.\(w)"
            thread.start()
        }
    }

    /// Stops the workers (a chunk being encoded is finished first) and waits for them.
    deinit {
        workers.stopping.store(true, ordering: .releasing)
        for w in 0..<workerCount { workers.available[w].signal() }
        for _ in 0..<workerCount { workers.exited.wait() }
    }

    /// Takes `frames` frames of `channel(c)` (planar), submits every chunk they complete and
    /// muxes the chunks that are done, in order, through `mux`.
    func append(frames: Int, channel: (Int) -> UnsafePointer<Float>?,
                mux: (UnsafeMutablePointer<AVPacket>) throws(MixdownError) -> Void) throws(MixdownError) {
        for c in 0..<channels {
            if let p = channel(c) {
                pending[c].append(contentsOf: UnsafeBufferPointer(start: p, count: frames))
            } else {
                pending[c].append(contentsOf: repeatElement(0, count: frames))
            }
        }
        received += Int64(frames)
        let chunk = Int64(chunkFrames * frameSize)
        // Chunk k is due when its post-roll has arrived.
        while received >= Int64(nextChunk + 1) * chunk + Int64(postroll * frameSize) {
            let k = nextChunk
            try submit(k, to: Int64(k + 1) * chunk + Int64(postroll * frameSize), keepTo: Int64((k + 1) * chunkFrames), mux: mux)
            // What the next chunk's warm-up needs is all that is kept.
            drop(before: start(of: k + 1, lead: chunkFrames + preroll))
        }
    }

    /// The frame `lead` codec frames before chunk `k` (or the stream's start).
    private func start(of k: Int, lead: Int) -> Int64 {
        Int64(max(0, k * chunkFrames - lead)) * Int64(frameSize)
    }

    /// Submits the rest as the last chunk (its encoder flushed: the packets of the encoder's
    /// delay come from it even when no frame of its own is left), then muxes every chunk in order.
    func finish(mux: (UnsafeMutablePointer<AVPacket>) throws(MixdownError) -> Void) throws(MixdownError) {
        try submit(nextChunk, to: received, keepTo: nil, mux: mux)
        while !inFlight.isEmpty { try muxOldest(mux) }
    }

    /// Hands chunk `k` (its audio to `to`, its packets up to codec frame `keepTo`) to the
    /// workers, with a chunk of warm-up and the pre-roll before it.
    private func submit(_ k: Int, to: Int64, keepTo: Int64?,
                        mux: (UnsafeMutablePointer<AVPacket>) throws(MixdownError) -> Void) throws(MixdownError) {
        // The render runs at most one chunk ahead of the encoders.
        while inFlight.count > workerCount { try muxOldest(mux) }
        let from = start(of: k, lead: chunkFrames + preroll)
        let a = Int(from - pendingStart), n = Int(to - from)
        let job = Job(firstFrame: from, prerollFrame: start(of: k, lead: preroll), channels: channels, count: n,
                      keepFrom: Int64(k * chunkFrames), keepTo: keepTo)
        for c in 0..<channels {
            pending[c].withUnsafeBufferPointer { (job.audio + c * n).update(from: $0.baseAddress! + a, count: n) }
        }
        let worker = k % workerCount
        nextChunk += 1
        inFlight.append(job)
        workers.queues[worker].jobs.withLock { $0.append(job) }
        workers.available[worker].signal()
    }

    private func drop(before frame: Int64) {
        let n = Int(frame - pendingStart)
        guard n > 0 else { return }
        for c in 0..<channels { pending[c].removeFirst(n) }
        pendingStart = frame
    }

    private func muxOldest(_ mux: (UnsafeMutablePointer<AVPacket>) throws(MixdownError) -> Void) throws(MixdownError) {
        let job = inFlight.removeFirst()
        job.done.wait()
        if let error = job.error { throw error }
        for p in job.packets { try mux(p) }
    }

    /// One worker's encoder, fed chunk after chunk (each after its own pre-roll, so the
    /// jump in the audio between two chunks lies in packets that are dropped).
    fileprivate final class ChunkEncoder {
        private var ctx: UnsafeMutablePointer<AVCodecContext>?
        private var frame: UnsafeMutablePointer<AVFrame>?
        private var packet: UnsafeMutablePointer<AVPacket>?
        private let planes: UnsafeMutablePointer<UnsafePointer<Float>?>
        private let codec: AudioCodec
        private let channels: Int
        private let frameSize: Int
        private let destination: String
        private let delay: Int64
        /// The frame after the last one fed.
        private(set) var fedUntil: Int64 = 0
        /// Packets this encoder made past its last chunk (its post-roll's), with the codec
        /// frame each carries: the next chunk's first packets when the encoder goes on with it.
        private var ahead: [(index: Int64, packet: UnsafeMutablePointer<AVPacket>)] = []

        init(context: UnsafeMutablePointer<AVCodecContext>, codec: AudioCodec, channels: Int, frameSize: Int,
             destination: String) throws(MixdownError) {
            ctx = context
            self.codec = codec
            self.channels = channels
            self.frameSize = frameSize
            self.destination = destination
            delay = Int64(context.pointee.initial_padding)
            planes = .allocate(capacity: channels)
            frame = av_frame_alloc()
            packet = av_packet_alloc()
            guard let frame, packet != nil else { throw .writeFailed(path: destination, reason: "out of memory") }
            frame.pointee.format = context.pointee.sample_fmt.rawValue
            frame.pointee.sample_rate = context.pointee.sample_rate
            av_channel_layout_copy(&frame.pointee.ch_layout, &context.pointee.ch_layout)
            frame.pointee.nb_samples = Int32(frameSize)
            let buffered = av_frame_get_buffer(frame, 0)
            guard buffered >= 0 else { throw fail(buffered) }
        }

        deinit {
            ChunkedEncoder.freePackets(ahead.map(\.packet))
            avcodec_free_context(&ctx)
            av_frame_free(&frame)
            av_packet_free(&packet)
            planes.deallocate()
        }

        private func fail(_ code: Int32) -> MixdownError {
            .writeFailed(path: destination, reason: "the \(codec.rawValue) encoder: \(FFmpegDecoder.message(code))")
        }

        /// Encodes `job`'s audio from frame `first` and returns the packets of its own codec
        /// frames. The last chunk flushes the encoder; any other leaves its post-roll's
        /// packets ahead, for the next chunk if the encoder goes on with it (`first` is then
        /// `fedUntil`), else dropped.
        func encode(_ job: Job, from first: Int64) throws(MixdownError) -> [UnsafeMutablePointer<AVPacket>] {
            guard let ctx, let frame, let packet else { throw .writeFailed(path: destination, reason: "out of memory") }
            func owned(_ index: Int64) -> Bool { index >= job.keepFrom && (job.keepTo == nil || index < job.keepTo!) }
            var kept: [UnsafeMutablePointer<AVPacket>] = []
            let carried = ahead
            ahead = []
            for (index, p) in carried {
                if first == fedUntil && owned(index) { kept.append(p) } else { ChunkedEncoder.freePackets([p]) }
            }
            func receive() throws(MixdownError) {
                while true {
                    let r = avcodec_receive_packet(ctx, packet)
                    if r == mx_averror_eagain() || r == mx_averror_eof() { return }
                    guard r >= 0 else { throw fail(r) }
                    // The codec frame this packet carries.
                    let index = (packet.pointee.pts + delay) / Int64(frameSize)
                    if owned(index) || (job.keepTo != nil && index >= job.keepTo!) {
                        guard let copy = av_packet_clone(packet) else { throw .writeFailed(path: destination, reason: "out of memory") }
                        if owned(index) { kept.append(copy) } else { ahead.append((index, copy)) }
                    }
                    av_packet_unref(packet)
                }
            }
            let total = job.count
            let k = mx_kernels_active().pointee
            var at = Int(first - job.firstFrame)
            while at < total {
                let n = min(frameSize, total - at)
                let writable = av_frame_make_writable(frame)
                guard writable >= 0 else { throw fail(writable) }
                frame.pointee.nb_samples = Int32(n)
                frame.pointee.pts = job.firstFrame + Int64(at)
                let data = frame.pointee.extended_data!
                switch codec {
                case .aac:
                    for c in 0..<channels {
                        UnsafeMutableRawPointer(data[c]!).assumingMemoryBound(to: Float.self).update(from: job.audio + c * total + at, count: n)
                    }
                case .opus:
                    for c in 0..<channels { planes[c] = UnsafePointer(job.audio + c * total + at) }
                    k.interleave(UnsafeMutableRawPointer(data[0]!).assumingMemoryBound(to: Float.self), planes, channels, n)
                case .alac:
                    throw .writeFailed(path: destination, reason: "ALAC is encoded serially")
                }
                let sent = avcodec_send_frame(ctx, frame)
                guard sent >= 0 else { throw fail(sent) }
                try receive()
                at += n
            }
            fedUntil = job.firstFrame + Int64(total)
            if job.keepTo == nil {
                let flushed = avcodec_send_frame(ctx, nil)
                guard flushed >= 0 else { throw fail(flushed) }
                try receive()
            }
            return kept
        }
    }
}
#endif
