import Foundation
import Testing
@testable import Mixdown

/// `NonFinite.firstIndex` against a plain scan, at every length 0-67 and misaligned
/// starts, with the bad sample at each place; and the writer refusing one.
@Suite struct NonFiniteTests {
    @Test func findsTheFirstBadSampleAtEveryLengthAndOffset() {
        let bads: [Float] = [.nan, .infinity, -.infinity, Float(bitPattern: 0x7FC0_0001), -Float.nan]
        var storage = [Float](repeating: 0.25, count: 2200)
        storage.withUnsafeMutableBufferPointer { all in
            for offset in 0..<4 {
                for length in Array(0...67) + [1023, 1024, 1025, 2100] {
                    let p = all.baseAddress! + offset
                    for i in 0..<length { p[i] = Float(i % 7) * 0.1 - 0.3 }
                    #expect(NonFinite.firstIndex(in: p, count: length) == nil)
                    for place in Set([0, length / 2, length - 1]) where length > 0 {
                        let bad = bads[(place + length + offset) % bads.count]
                        p[place] = bad
                        if place + 1 < length { p[length - 1] = .nan }   // a later one does not count
                        #expect(NonFinite.firstIndex(in: p, count: length) == place, "length \(length), offset \(offset), at \(place)")
                        p[place] = 0
                        if place + 1 < length { p[length - 1] = 0 }
                    }
                    // Largest finite values and subnormals are finite.
                    if length > 1 { p[0] = .greatestFiniteMagnitude; p[length - 1] = -.leastNonzeroMagnitude }
                    #expect(NonFinite.firstIndex(in: p, count: length) == nil)
                }
            }
        }
    }

    /// A NaN that reached the writer (a node's bug) stops the file: nothing is written.
    @Test func theWriterRefusesANonFiniteSampleAndLeavesNothing() throws {
        let dir = NSTemporaryDirectory() + "mixdown-nonfinite-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let format = AudioFormat(sampleRate: 48000, channelCount: 2)
        let writer = try AudioFileWriter(destination: dir + "/o.wav", encoding: OutputEncoding(type: .wav, sampleFormat: .f32, dataBytes: nil),
                                         format: format, maximumFrames: 64, overwrite: false)
        let buffer = AudioBuffer(format: format, capacity: 64)
        for c in 0..<2 { for i in 0..<64 { buffer[channel: c][i] = 0.1 } }
        try writer.write(buffer, frames: 64)
        buffer[channel: 1][10] = .infinity
        let result = Result { () throws(MixdownError) in try writer.write(buffer, frames: 64) }
        guard case .failure(let error) = result, case .writeFailed(let path, let reason) = error else {
            Issue.record("the writer took an infinity: \(result)")
            return
        }
        #expect(path == dir + "/o.wav")
        #expect(reason.contains("+inf at frame 74, channel 2"), "\(reason)")
        writer.abort()
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir).isEmpty)
    }
}
