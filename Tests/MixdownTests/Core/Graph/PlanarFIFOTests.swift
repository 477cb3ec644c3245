import Testing
@testable import Mixdown

/// `PlanarFIFO` directly: frames come out in the order they went in, per channel, across
/// writes (through its pointers or a view aimed at its free frames), silence, discards and
/// pops of any size, wherever the queue sits in its storage.
@Suite struct PlanarFIFOTests {
    @Test func framesLeaveInOrder() {
        let fifo = PlanarFIFO(channelCount: 2, capacity: 64)
        var model: [[Float]] = [[], []]
        var next: Float = 1
        let out = AudioBuffer(channelCount: 2, capacity: 64)
        var rng: UInt64 = 7
        func random(_ n: Int) -> Int { rng = rng &* 6364136223846793005 &+ 1442695040888963407; return Int(rng >> 33) % n }
        let view = AudioBuffer(viewWithChannelCount: 2, capacity: 0)
        for _ in 0..<2_000 {
            switch random(5) {
            case 4:
                let n = random(fifo.space + 1)
                let aimed = n == 0 ? view : AudioBuffer(viewWithChannelCount: 2, capacity: n)
                fifo.aimWrite(aimed, room: n)
                for i in 0..<n { aimed[channel: 0][i] = next; aimed[channel: 1][i] = -next; model[0].append(next); model[1].append(-next); next += 1 }
                fifo.didWrite(n)
            case 0:
                let n = random(fifo.space + 1)
                let p = fifo.prepareWrite()
                for i in 0..<n { p[0]![i] = next; p[1]![i] = -next; model[0].append(next); model[1].append(-next); next += 1 }
                fifo.didWrite(n)
            case 1:
                let n = random(fifo.space + 1)
                fifo.appendSilence(n)
                for c in 0..<2 { model[c] += [Float](repeating: 0, count: n) }
            case 2:
                let n = random(fifo.count + 1)
                fifo.discard(n)
                for c in 0..<2 { model[c].removeFirst(n) }
            default:
                let n = random(fifo.count + 1), offset = random(64 - n + 1)
                fifo.pop(into: out, offset: offset, frames: n)
                for c in 0..<2 {
                    #expect(out.samples(channel: c, frames: offset + n).suffix(n) == model[c].prefix(n))
                    model[c].removeFirst(n)
                }
            }
            #expect(fifo.count == model[0].count && fifo.space == 64 - fifo.count)
        }
    }
}
