import CMixdownHeader
import Glibc
import Mixdown
import Synchronization

/// What crosses the C boundary on the way out: a status code and a message. Every entry
/// point runs its body through `CallBoundary.run`, so no Swift error escapes to C.
enum CallBoundary {
    /// A failure of the call itself (a NULL pointer, a dead handle), before the library runs.
    struct Refusal: Error {
        let status: mixdown_status
        let message: String
    }

    /// Runs `body`; a thrown error becomes its status, and its message is kept as this
    /// thread's last error (and the handle's, through `also`).
    static func run(also handle: RenderHandle? = nil, _ body: () throws -> Void) -> Int32 {
        do {
            try body()
            return Int32(MIXDOWN_OK.rawValue)
        } catch let refusal as Refusal {
            return fail(refusal.status, refusal.message, handle)
        } catch let error as MixdownError {
            return fail(status(of: error), error.description, handle)
        } catch {
            return fail(MIXDOWN_ERROR_INTERNAL, "\(error)", handle)
        }
    }

    private static func fail(_ status: mixdown_status, _ message: String, _ handle: RenderHandle?) -> Int32 {
        LastError.set(message)
        handle?.setError(message)
        return Int32(status.rawValue)
    }

    /// The status code of a library error.
    static func status(of error: MixdownError) -> mixdown_status {
        switch error {
        case .fileNotFound, .notAFile: MIXDOWN_ERROR_FILE_NOT_FOUND
        case .emptyFile, .unreadableFile, .truncatedAudio, .readFailed, .corruptAudio, .noAudioStream, .silentAudio: MIXDOWN_ERROR_UNREADABLE
        case .invalidParameter, .invalidTime, .rangeOutsideSource, .overlappingAutomation, .invalidEvent: MIXDOWN_ERROR_INVALID_ARGUMENT
        case .invalidEdit, .overlappingSegments, .invalidDocument, .invalidManifest: MIXDOWN_ERROR_INVALID_DOCUMENT
        case .unsupportedOutput, .unsupportedInput, .unsupportedChannelMapping: MIXDOWN_ERROR_UNSUPPORTED
        case .loudnessMissed: MIXDOWN_ERROR_LOUDNESS
        case .outputExists: MIXDOWN_ERROR_OUTPUT_EXISTS
        case .outputNotWritable, .writeFailed, .outputTooLarge, .notEnoughSpace: MIXDOWN_ERROR_WRITE
        case .lowConfidence, .unplaced, .ambiguousAlignment, .misaligned, .notOneLine: MIXDOWN_ERROR_NO_ALIGNMENT
        case .cancelled: MIXDOWN_ERROR_CANCELLED
        case .nodeContractViolated: MIXDOWN_ERROR_INTERNAL
        }
    }

    /// The string at `pointer`, or a refusal naming `parameter` when it is NULL.
    static func string(_ pointer: UnsafePointer<CChar>?, _ parameter: String) throws(Refusal) -> String {
        guard let pointer else { throw Refusal(status: MIXDOWN_ERROR_NULL_POINTER, message: "\(parameter) is NULL") }
        return String(cString: pointer)
    }

    /// `pointer`, or a refusal naming `parameter` when it is NULL.
    static func required<T>(_ pointer: T?, _ parameter: String) throws(Refusal) -> T {
        guard let pointer else { throw Refusal(status: MIXDOWN_ERROR_NULL_POINTER, message: "\(parameter) is NULL") }
        return pointer
    }

    static func invalid(_ message: String) -> Refusal { Refusal(status: MIXDOWN_ERROR_INVALID_ARGUMENT, message: message) }
}

/// A C string per thread, owned by the library: freed when the thread ends or the next
/// `set` on that thread replaces it.
final class ThreadText: Sendable {
    private let key: pthread_key_t
    nonisolated(unsafe) private let empty = UnsafePointer<CChar>(strdup("")!)

    init() {
        var key = pthread_key_t()
        pthread_key_create(&key) { free($0) }
        self.key = key
    }

    func set(_ text: String) {
        free(pthread_getspecific(key))
        pthread_setspecific(key, strdup(text))
    }

    var current: UnsafePointer<CChar> {
        guard let p = pthread_getspecific(key) else { return empty }
        return UnsafePointer(p.assumingMemoryBound(to: CChar.self))
    }
}

/// The calling thread's last error message.
enum LastError {
    private static let text = ThreadText()
    static func set(_ message: String) { text.set(message) }
    static var current: UnsafePointer<CChar> { text.current }
}

/// Static C strings for the life of the process (the names of status codes).
enum StaticStrings {
    private static let table = Mutex<[String: UnsafePointer<CChar>]>([:])

    static func pointer(_ text: String) -> UnsafePointer<CChar> {
        table.withLock { t in
            if let p = t[text] { return p }
            let p = UnsafePointer<CChar>(strdup(text)!)
            t[text] = p
            return p
        }
    }
}
