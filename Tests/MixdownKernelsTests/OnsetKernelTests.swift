import Foundation
import MixdownKernels
import Testing

/// The onset test shared by the frame engine and SpectralStretch (kernels/onsets.c):
/// block energies of the channels' sum, and the 30 dB jump over the eight blocks before.
@Suite struct OnsetKernelTests {
    static let block = Int(MX_ONSET_BLOCK)

    static func data(_ n: Int, seed: UInt64) -> [Float] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: s >> 11) % 2000) / 1000 - 1
        }
    }

    /// Each block's energy is that of the channels' sum (not the sum of the channels'
    /// energies: a channel and its inverse sum to silence), against a Double reference.
    @Test(arguments: [1, 2, 3, 8])
    func blockEnergyIsTheEnergyOfTheChannelsSum(channels: Int) {
        let blocks = 5
        let x = (0..<channels).map { Self.data(blocks * Self.block, seed: UInt64(7 + $0)) }
        var energy = [Float](repeating: -1, count: blocks + 1)
        x.withPointers { mx_block_energy(&energy, $0, channels, blocks) }
        for q in 0..<blocks {
            var reference = 0.0
            for i in q * Self.block..<(q + 1) * Self.block {
                let sum = x.reduce(0.0) { $0 + Double($1[i]) }
                reference += sum * sum
            }
            #expect(abs(Double(energy[q]) - reference) <= 1e-5 * reference, "block \(q)")
        }
        #expect(energy[blocks] == -1, "nothing written past the last block")

        let cancelled = [x[0], x[0].map { -$0 }]
        var silent = [Float](repeating: -1, count: blocks)
        cancelled.withPointers { mx_block_energy(&silent, $0, 2, blocks) }
        #expect(silent == [Float](repeating: 0, count: blocks))
    }

    /// Eight blocks are summed at once, each in its own order: every block's energy is, bit
    /// for bit, the block-by-block sum (the channels summed in order, then the squares in
    /// order, in Float), for every count of blocks from 0 to 21 (two eights and a tail),
    /// one channel or several.
    @Test(arguments: [1, 2, 3])
    func eightBlocksAtOnceGiveTheBlockByBlockSums(channels: Int) {
        let most = 21
        let x = (0..<channels).map { Self.data(most * Self.block, seed: UInt64(31 + $0)) }
        func reference(_ q: Int) -> Float {
            var acc: Float = 0
            for i in q * Self.block..<(q + 1) * Self.block {
                var sum = x[0][i]
                for c in 1..<channels { sum += x[c][i] }
                acc += sum * sum
            }
            return acc
        }
        let expected = (0..<most).map(reference)
        for blocks in 0...most {
            var energy = [Float](repeating: -1, count: most + 1)
            x.withPointers { mx_block_energy(&energy, $0, channels, blocks) }
            #expect(Array(energy[0..<blocks]).map(\.bitPattern) == Array(expected[0..<blocks]).map(\.bitPattern), "\(blocks) blocks")
            #expect(energy[blocks...].allSatisfy { $0 == -1 }, "nothing written past block \(blocks)")
        }
    }

    /// Over 1000 times the mean of the eight blocks before, and over -120 dB a frame.
    @Test func onsetIsAThirtyDecibelJumpOverTheFloor() {
        let before: Float = 8 * 1e-6   // a mean of 1e-6 a block
        #expect(mx_onset_block(1.001e-3, before) == 1)
        #expect(mx_onset_block(0.999e-3, before) == 0)
        // Out of digital silence, anything over the floor of rounding.
        #expect(mx_onset_block(1e-10, 0) == 1)
        #expect(mx_onset_block(1e-12 * Float(Self.block), 0) == 0)
        // NaN compares false: no onset.
        #expect(mx_onset_block(.nan, 0) == 0)
    }

    /// The first onset at or after a frame's centre, as the stretch's engine finds it
    /// (mx_onset_ahead_of, which the long frame at a lower rate takes from the full rate):
    /// the start of the block where noise begins after silence, on the channels' sum; none
    /// (n) for a sound that began before the centre, for silence, or for two channels that
    /// cancel; a sound that begins at the centre begins there.
    @Test func theFirstOnsetAheadOfAFrameCentreIsTheBlockWhereTheSoundBegins() {
        let n = 2048
        func frame(_ begin: Int, _ channels: Int = 1, cancel: Bool = false) -> [[Float]] {
            let noise = Self.data(n, seed: 3)
            return (0..<channels).map { c in
                (0..<n).map { i in i < begin ? 0 : (cancel && c == 1 ? -noise[i] : noise[i]) }
            }
        }
        func onset(_ x: [[Float]]) -> Int {
            var scratch = [Float](repeating: 0, count: n / Self.block)
            return x.withPointers { mx_onset_ahead_of(&scratch, $0, x.count, n) }
        }
        #expect(onset(frame(1500)) == 1472)   // block 46 holds frames 1472 to 1503
        #expect(onset(frame(1024)) == 1024)
        #expect(onset(frame(1500, 2)) == 1472)
        #expect(onset(frame(1500, 2, cancel: true)) == n)
        #expect(onset(frame(500)) == n)
        #expect(onset(frame(n)) == n)
    }
}

private extension Array where Element == [Float] {
    /// The channels as the kernels take them (`const float *const *`), valid inside `body`.
    func withPointers<R>(_ body: (UnsafePointer<UnsafePointer<Float>?>) -> R) -> R {
        var pointers: [UnsafePointer<Float>?] = []
        func nest(_ c: Int) -> R {
            if c == count { return pointers.withUnsafeBufferPointer { body($0.baseAddress!) } }
            return self[c].withUnsafeBufferPointer {
                pointers.append($0.baseAddress)
                return nest(c + 1)
            }
        }
        return nest(0)
    }
}
