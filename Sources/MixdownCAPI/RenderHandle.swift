import CMixdownHeader
import Glibc
import Mixdown
import MixdownKernels
import Synchronization

/// What a `mixdown_render *` points at: a `RenderStream` and the handle's last error.
final class RenderHandle {
    let stream: RenderStream
    private var error: UnsafeMutablePointer<CChar>?

    /// Planar frames on their way to an interleaved pull: allocated by the first such pull,
    /// then reused (a pull of any length goes through it in chunks of its capacity).
    private var planar: AudioBuffer?
    private static let interleavedChunk = 8192

    init(stream: RenderStream) { self.stream = stream }
    deinit { free(error) }

    /// Pulls up to `frames` frames into `interleaved` (frames x channels floats, frame f's
    /// channel c at f * channels + c): the planar pull, then the kernel's interleave.
    func pullInterleaved(into interleaved: UnsafeMutablePointer<Float>, frames: Int) throws(MixdownError) -> RenderStatus {
        let buffer = planar ?? AudioBuffer(format: stream.format, capacity: Self.interleavedChunk)
        planar = buffer
        let channels = stream.format.channelCount
        let k = mx_kernels_active().pointee
        var done = 0
        var ended = false
        while done < frames && !ended {
            let status = try stream.pull(into: buffer.channelPointers, frames: min(frames - done, Self.interleavedChunk))
            k.interleave(interleaved + done * channels, UnsafePointer(OpaquePointer(buffer.channelPointers)), channels, status.frames)
            done += status.frames
            ended = status.ended
        }
        return RenderStatus(frames: done, ended: ended)
    }

    func setError(_ message: String) {
        free(error)
        error = strdup(message)
    }

    func clearError() {
        free(error)
        error = nil
    }

    var errorMessage: UnsafePointer<CChar>? { error.map { UnsafePointer($0) } }

    // The live handles, by address. A call with any other pointer (a freed handle, a
    // stray pointer) is refused before it is dereferenced.
    private static let live = Mutex<Set<UInt>>([])

    /// A new handle for C: retained until `release`.
    static func open(_ stream: RenderStream) -> OpaquePointer {
        let pointer = Unmanaged.passRetained(RenderHandle(stream: stream)).toOpaque()
        _ = live.withLock { $0.insert(UInt(bitPattern: pointer)) }
        return OpaquePointer(pointer)
    }

    /// The handle at `pointer`, when it is live.
    static func find(_ pointer: OpaquePointer?) -> RenderHandle? {
        guard let pointer else { return nil }
        let raw = UnsafeMutableRawPointer(pointer)
        guard live.withLock({ $0.contains(UInt(bitPattern: raw)) }) else { return nil }
        return Unmanaged<RenderHandle>.fromOpaque(raw).takeUnretainedValue()
    }

    /// The live handle at `pointer`, or a refusal.
    static func required(_ pointer: OpaquePointer?) throws(CallBoundary.Refusal) -> RenderHandle {
        guard let pointer else { throw CallBoundary.Refusal(status: MIXDOWN_ERROR_NULL_POINTER, message: "handle is NULL") }
        guard let handle = find(pointer) else {
            throw CallBoundary.Refusal(status: MIXDOWN_ERROR_INVALID_HANDLE, message: "handle \(pointer) is not a live mixdown_render (freed already?)")
        }
        return handle
    }

    /// Ends the handle at `pointer`; false when it was not live.
    static func release(_ pointer: OpaquePointer) -> Bool {
        let raw = UnsafeMutableRawPointer(pointer)
        guard live.withLock({ $0.remove(UInt(bitPattern: raw)) != nil }) else { return false }
        Unmanaged<RenderHandle>.fromOpaque(raw).release()
        return true
    }
}
