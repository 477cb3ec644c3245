#if FFmpeg
import CFFmpeg
import Foundation
import Synchronization

/// An output file for FFmpeg's muxers whose writes happen on a thread of their own: the
/// muxing thread copies each buffer into a ring of large slots and goes on, and the
/// writer thread makes the system calls (with `--video-from`, gigabytes of them, which
/// would otherwise stall the audio's encoder on the same thread).
///
/// Seeks (the MP4 muxer patches sizes at the end, Matroska its cues) wait for every
/// queued write to land, then move the file's offset: the bytes on disk are the ones a
/// plain `avio_open` file gets. A write error is reported by the next write, seek or
/// `close`, as FFmpeg's AVERROR; nothing is retried.
final class WriteBehindFile: @unchecked Sendable {
    /// The context to set as the muxer's `pb`; freed by `close()`.
    private(set) var context: UnsafeMutablePointer<AVIOContext>?
    /// The name errors give (the user's destination).
    let destination: String

    /// The writer thread's side, which it holds strongly.
    private final class Shared: @unchecked Sendable {
        let fd: Int32
        /// Each slot's tag: the bytes it holds; -1 tells the writer to stop.
        let ring: SlotRing<UnsafeMutableRawPointer, Int>
        let capacity: Int
        let exited = DispatchSemaphore(value: 0)
        /// The first failed write's errno (0: none).
        let failure = Atomic<Int32>(0)

        init(fd: Int32, slots: Int, capacity: Int) {
            self.fd = fd
            self.capacity = capacity
            ring = SlotRing(slots: (0..<slots).map { _ in UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 4096) },
                            empty: 0)
        }

        deinit { for s in ring.slots { s.deallocate() } }

        func run() {
            while true {
                let (slot, size) = ring.nextFilledSlot()
                if size < 0 { ring.release(); break }
                var done = 0
                while done < size && failure.load(ordering: .relaxed) == 0 {
                    let n = Foundation.write(fd, slot + done, size - done)
                    if n >= 0 { done += n } else if errno != EINTR { failure.store(errno, ordering: .releasing) }
                }
                ring.release()
            }
            exited.signal()
        }
    }

    private let shared: Shared
    /// The slot being filled (nil: none taken), and its bytes so far.
    private var current: UnsafeMutableRawPointer?
    private var fill = 0
    private var closed = false

    /// Creates (or truncates) `path` and writes to it as `init(fd:destination:)` does.
    convenience init(path: String, destination: String, slots: Int = 4, slotBytes: Int = 4 << 20) throws(MixdownError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        guard fd >= 0 else { throw .outputNotWritable(path: destination, reason: String(cString: strerror(errno))) }
        try self.init(fd: fd, destination: destination, slots: slots, slotBytes: slotBytes)
    }

    /// Writes to the open file `fd` from its start, which it owns from now on (closed by
    /// `close()`, deinit, or a failure here), and starts the writer thread; errors name
    /// `destination`. `slots` of `slotBytes` bound the bytes written behind (4 of 4 MiB).
    /// An open descriptor, not a path: an output's temporary file is created once, where
    /// an interrupt can see it, and never created again by name after that.
    init(fd: Int32, destination: String, slots: Int = 4, slotBytes: Int = 4 << 20) throws(MixdownError) {
        precondition(slots >= 1 && slotBytes > 0)
        self.destination = destination
        shared = Shared(fd: fd, slots: slots, capacity: slotBytes)
        let thread = Thread { [shared] in shared.run() }
        thread.name = "mixdown.file-writer"
        thread.start()
        // FFmpeg's own buffer: the muxer's small writes gather there first.
        let bufferSize = 1 << 18
        guard let buffer = av_malloc(bufferSize) else { _ = close(); throw .writeFailed(path: destination, reason: "out of memory") }
        let opaque = Unmanaged.passUnretained(self).toOpaque()
        context = avio_alloc_context(buffer.assumingMemoryBound(to: UInt8.self), Int32(bufferSize), 1, opaque, nil,
                                     { opaque, buffer, size in
                                         Unmanaged<WriteBehindFile>.fromOpaque(opaque!).takeUnretainedValue().write(buffer!, Int(size))
                                     },
                                     { opaque, offset, whence in
                                         Unmanaged<WriteBehindFile>.fromOpaque(opaque!).takeUnretainedValue().seek(offset, whence)
                                     })
        guard context != nil else { av_free(buffer); _ = close(); throw .writeFailed(path: destination, reason: "out of memory") }
    }

    deinit {
        if !closed { _ = close() }
    }

    private var failureCode: Int32 {
        let e = shared.failure.load(ordering: .acquiring)
        return e == 0 ? 0 : -e   // AVERROR(e)
    }

    /// FFmpeg's write callback: copies into the ring, waiting only for a free slot.
    private func write(_ buffer: UnsafePointer<UInt8>, _ size: Int) -> Int32 {
        if failureCode != 0 { return failureCode }
        var done = 0
        while done < size {
            let slot = current ?? shared.ring.nextFreeSlot()
            current = slot
            let n = min(size - done, shared.capacity - fill)
            (slot + fill).copyMemory(from: buffer + done, byteCount: n)
            fill += n
            done += n
            if fill == shared.capacity { publish() }
        }
        return Int32(size)
    }

    /// Hands the slot being filled to the writer.
    private func publish() {
        guard current != nil else { return }
        shared.ring.publish(fill)
        current = nil
        fill = 0
    }

    /// Waits until every byte handed over is written.
    private func drain() {
        publish()
        shared.ring.waitUntilDrained()
    }

    /// FFmpeg's seek callback: lands every queued write, then moves the offset (or, for
    /// AVSEEK_SIZE, reports the file's size).
    private func seek(_ offset: Int64, _ whence: Int32) -> Int64 {
        drain()
        if failureCode != 0 { return Int64(failureCode) }
        if whence & AVSEEK_SIZE != 0 {
            var st = stat()
            return fstat(shared.fd, &st) == 0 ? Int64(st.st_size) : Int64(-errno)
        }
        let r = lseek(shared.fd, off_t(offset), whence & ~AVSEEK_FORCE)
        return r < 0 ? Int64(-errno) : Int64(r)
    }

    /// Flushes FFmpeg's buffer and every queued write, stops the thread, closes the file
    /// and frees the context. Returns 0 or the first error as an AVERROR. Call once.
    func close() -> Int32 {
        guard !closed else { return 0 }
        closed = true
        if let context { avio_flush(context) }
        stop()
        let writeError = failureCode
        let closeError = Foundation.close(shared.fd) == 0 ? 0 : -errno
        if context != nil {
            av_freep(&context!.pointee.buffer)
            avio_context_free(&context)
        }
        return writeError != 0 ? writeError : closeError
    }

    /// Writes what is left and ends the writer thread.
    private func stop() {
        publish()
        _ = shared.ring.nextFreeSlot()
        shared.ring.publish(-1)
        shared.exited.wait()
    }
}
#endif
