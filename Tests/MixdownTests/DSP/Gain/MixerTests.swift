import Foundation
import Testing
@testable import Mixdown

/// `Mixer` directly, at 44.1, 48 and 96 kHz and every block size: physics checks (a sine
/// cancels its inverted twin) and the envelope's gain on each frame.
@Suite struct MixerTests {
    static let rates = [44_100, 48_000, 96_000]
    static let silent = GainEnvelope(segments: [.init(start: 0, end: .max, startGain: 0, step: 0)])

    /// A sine and its inverted twin cancel to exact zeros; a loud input held at gain 0
    /// adds nothing; one or two threads.
    @Test(arguments: rates, BlockSizes.all)
    func aSineCancelsItsInvertedTwin(rate: Int, blockSizes: [Int]) throws {
        let n = rate / 10
        let s = sine(997, rate: rate, frames: n)
        for threads in [1, 2] {
            let mixer = Mixer(format: AudioFormat(sampleRate: rate, channelCount: 1), inputs: [
                .init(node: ArraySource(sampleRate: rate, planes: [s]), envelope: .unity),
                .init(node: ArraySource(sampleRate: rate, planes: [s.map { -$0 }]), envelope: .unity),
                .init(node: ArraySource(sampleRate: rate, planes: [[Float](repeating: 0.9, count: n)]), envelope: Self.silent),
            ], length: Int64(n), threads: threads)
            let out = try renderAll(mixer, blockSizes: blockSizes)[0]
            #expect(out.count == n)
            #expect(out.allSatisfy { $0 == 0 }, "\(rate) Hz, \(threads) threads")
        }
    }

    /// On an input of 1.0, frame p of a render that starts at timeline frame s gets exactly
    /// Float(envelope.gain(atFrame: s + p)): held, ramping down and held at 0. A second input
    /// that ends early adds its 0.25 up to its end and silence after it.
    @Test(arguments: rates)
    func eachFrameGetsItsEnvelopeGain(rate: Int) throws {
        let n = rate / 5, s = Int64(rate / 20)
        let rampStart = Int64(rate / 10), rampEnd = Int64(rate / 5)
        let envelope = GainEnvelope(segments: [
            .init(start: 0, end: rampStart, startGain: 1, step: 0),
            .init(start: rampStart, end: rampEnd, startGain: 1, step: -1 / Double(rampEnd - rampStart)),
            .init(start: rampEnd, end: .max, startGain: 0, step: 0),
        ])
        let shortFrames = rate / 20
        let expected = (0..<n).map { p in
            Float(envelope.gain(atFrame: s + Int64(p))) + (p < shortFrames ? 0.25 : 0)
        }
        #expect(expected[n - 1] == 0 && expected[Int(rampStart - s)] == 1 && expected[Int(rampStart - s) + 1] < 1)
        for threads in [1, 2] {
            for sizes in BlockSizes.all {
                let mixer = Mixer(format: AudioFormat(sampleRate: rate, channelCount: 1), inputs: [
                    .init(node: ArraySource(sampleRate: rate, planes: [[Float](repeating: 1, count: n)]), envelope: envelope),
                    .init(node: ArraySource(sampleRate: rate, planes: [[Float](repeating: 0.25, count: shortFrames)]), envelope: .unity),
                ], length: Int64(n), startFrame: s, threads: threads)
                let out = try renderAll(mixer, blockSizes: sizes)[0]
                #expect(out == expected, "\(rate) Hz, blocks \(sizes), \(threads) threads")
            }
        }
    }
}
