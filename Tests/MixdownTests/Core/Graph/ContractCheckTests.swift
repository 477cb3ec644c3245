import Foundation
import Testing
@testable import Mixdown

/// A node that breaks the contract in one chosen way, after `good` frames of silence.
final class BrokenNode: AudioNode {
    enum Fault { case none, moreThanAsked, shortWithoutEnd, framesAfterEnd, pastItsLength, endsEarly }
    let format = AudioFormat(sampleRate: 48_000, channelCount: 1)
    let length: Int64?
    let fault: Fault
    private var produced: Int64 = 0
    private var ended = false
    init(_ fault: Fault, length: Int64 = 1_000) { self.fault = fault; self.length = length }
    func prepare(maximumFrames: Int) throws(MixdownError) {}
    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        if ended { return fault == .framesAfterEnd ? RenderStatus(frames: 1, ended: true) : RenderStatus(frames: 0, ended: true) }
        let total = length! + (fault == .pastItsLength ? 10 : 0) - (fault == .endsEarly ? 10 : 0)
        var n = Int(min(Int64(frames), total - produced))
        if fault == .moreThanAsked && produced > 0 { n = frames + 1 }
        if fault == .shortWithoutEnd && produced > 0 && n == frames { n -= 1 }
        produced += Int64(n)
        ended = produced >= total
        return RenderStatus(frames: n, ended: ended)
    }
}

@Suite struct ContractCheckTests {
    static let faults: [(BrokenNode.Fault, String)] = [
        (.moreThanAsked, "gave 65 frames for 64 asked"),
        (.shortWithoutEnd, "gave 63 of 64 frames without ending its stream"),
        (.framesAfterEnd, "gave 1 frames (ended: true) after the end of its stream"),
        (.pastItsLength, "more than its length 1000"),
        (.endsEarly, "ended after 990 frames; its length is 1000"),
    ]

    /// Each broken promise is a thrown error naming the node and the call, not a crash.
    @Test(arguments: 0..<faults.count)
    func aBrokenPromiseIsAnErrorThatNamesIt(case i: Int) {
        let (fault, words) = Self.faults[i]
        do {
            _ = try renderAll(BrokenNode(fault), blockSizes: [64])
            Issue.record("accepted \(fault)")
        } catch let error as MixdownError {
            guard case .nodeContractViolated(let node, let reason) = error else { Issue.record("\(error)"); return }
            #expect(node == "BrokenNode")
            #expect(reason.contains(words), "\(reason)")
        } catch { Issue.record("\(error)") }
    }

    @Test func aNodeThatKeepsItsPromisesPassesUntouched() throws {
        let out = try renderAll(BrokenNode(.none), blockSizes: BlockSizes.irregular)
        #expect(out[0].count == 1_000)
    }

    @Test func wrappingIsOffUnlessAskedFor() {
        let node = BrokenNode(.none)
        let was = ContractCheck.isEnabled
        defer { ContractCheck.isEnabled = was }
        ContractCheck.isEnabled = false
        #expect(ContractCheck.wrap(node) === node)
        ContractCheck.isEnabled = true
        let wrapped = ContractCheck.wrap(node)
        #expect((wrapped as? ContractCheck)?.inner === node)
        #expect(ContractCheck.wrap(wrapped) === wrapped, "never wrapped twice")
    }

    /// The renderer promised a length: a stream that runs past it is an error (it used to
    /// be cut at the length without a word), and nothing is written.
    @Test func aStreamRunningPastTheExpectedLengthFailsTheRender() throws {
        let dir = TempDir()
        let path = dir.file("o.wav")
        let encoding = try OutputEncoding.resolve(path: path, type: .wav, sampleFormat: .s16, frames: 500, channels: 1)
        let writer = try AudioFileWriter(destination: path, encoding: encoding, format: BrokenNode(.none).format,
                                         maximumFrames: 64, overwrite: false)
        #expect(throws: MixdownError.writeFailed(path: path, reason: "the render runs past the 500 frames expected")) {
            try Renderer.render(BrokenNode(.none), to: writer, blockSizes: [64], expectedFrames: 500)
        }
        #expect(dir.contents.isEmpty)
        // Exactly the promised length passes.
        let ok = try AudioFileWriter(destination: path, encoding: encoding, format: BrokenNode(.none).format,
                                     maximumFrames: 64, overwrite: false)
        #expect(try Renderer.render(BrokenNode(.none, length: 500), to: ok, blockSizes: [64, 7], expectedFrames: 500) == 500)
    }
}
