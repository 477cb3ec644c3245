import Foundation
import Synchronization

/// Checks the node contract around another node: never more frames than asked, a short
/// block only with `ended`, and zero frames with `ended` after the end. A broken promise
/// throws `nodeContractViolated` naming the node and the call, so a test that meets it
/// fails alone instead of stopping the whole run.
///
/// Nodes wrap their inputs with ``ContractCheck/wrap(_:)``, which adds the check when
/// ``ContractCheck/isEnabled`` (on in debug builds, and wherever the environment has
/// `MIXDOWN_CHECK_NODES=1`, as `tools/test` sets it for the tests and the CLI they run) and
/// otherwise returns the node itself, so release renders pay nothing.
public final class ContractCheck: AudioNode {
    private static let enabled = Atomic<Bool>(_isDebugAssertConfiguration() || getenv("MIXDOWN_CHECK_NODES").map { String(cString: $0) == "1" } == true)

    /// Whether nodes made from now on check their inputs.
    public static var isEnabled: Bool {
        get { enabled.load(ordering: .relaxed) }
        set { enabled.store(newValue, ordering: .relaxed) }
    }

    /// `node` wrapped in a check when checking is on; `node` itself otherwise.
    public static func wrap(_ node: AudioNode) -> AudioNode {
        isEnabled && !(node is ContractCheck) ? ContractCheck(node) : node
    }

    public let inner: AudioNode
    public var format: AudioFormat { inner.format }
    public var length: Int64? { inner.length }
    private var maximumFrames = -1
    private var produced: Int64 = 0
    private var ended = false
    private var calls = 0

    public init(_ inner: AudioNode) { self.inner = inner }

    private var name: String { String(describing: type(of: inner)) }

    private func fail(_ reason: String) -> MixdownError {
        .nodeContractViolated(node: name, reason: "call \(calls) (after \(produced) frames): \(reason)")
    }

    public func preroll(_ preroll: Preroll) throws(MixdownError) {
        guard maximumFrames >= 0 else { throw fail("preroll before prepare") }
        guard calls == 0 else { throw fail("preroll after render") }
        try inner.preroll(preroll)
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        guard self.maximumFrames < 0 else { throw fail("prepared twice") }
        self.maximumFrames = maximumFrames
        try inner.prepare(maximumFrames: maximumFrames)
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        calls += 1
        guard maximumFrames >= 0 else { throw fail("render before prepare") }
        guard frames >= 0, frames <= maximumFrames else { throw fail("asked for \(frames) frames, more than the prepared \(maximumFrames)") }
        let status = try inner.render(into: buffer, frames: frames)
        if ended {
            guard status == RenderStatus(frames: 0, ended: true) else {
                throw fail("gave \(status.frames) frames (ended: \(status.ended)) after the end of its stream")
            }
            return status
        }
        guard status.frames >= 0, status.frames <= frames else { throw fail("gave \(status.frames) frames for \(frames) asked") }
        guard status.frames == frames || status.ended else {
            throw fail("gave \(status.frames) of \(frames) frames without ending its stream")
        }
        produced += Int64(status.frames)
        if let length = inner.length, produced > length {
            throw fail("gave \(produced) frames, more than its length \(length)")
        }
        if status.ended {
            if let length = inner.length, produced != length { throw fail("ended after \(produced) frames; its length is \(length)") }
            ended = true
        }
        return status
    }
}
