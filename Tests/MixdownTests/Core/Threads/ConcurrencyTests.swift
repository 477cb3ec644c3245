import Foundation
import Synchronization
import Testing
@testable import Mixdown

/// Small, fast runs of every piece that hands data between threads, for ThreadSanitizer
/// (`tools/testing/sanitizers`, which `tools/test` runs on this suite): each checks its result
/// too, so it also runs in the ordinary release tests.
@Suite struct ConcurrencyTests {
    /// A producer and a consumer on two threads: every tag arrives, in order.
    @Test func aSlotRingHandsEveryTagOverInOrder() {
        let ring = SlotRing<Int, Int>(slots: [0, 1, 2, 3], empty: -1)
        let n = 20_000
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            for i in 0..<n {
                _ = ring.nextFreeSlot()
                ring.publish(i)
            }
            done.signal()
        }
        var received: [Int] = []
        received.reserveCapacity(n)
        for _ in 0..<n {
            received.append(ring.nextFilledSlot().tag)
            ring.release()
        }
        done.wait()
        #expect(received == Array(0..<n))
    }

    /// A read-ahead thread feeding irregular pulls: the frames are the input's.
    @Test(arguments: [[64], [1000, 7, 333]])
    func aReadAheadGivesItsInputsFrames(blockSizes: [Int]) throws {
        let n = 30_011
        let planes = [(0..<n).map { Float($0) }, (0..<n).map { -Float($0) }]
        #expect(try renderAll(ReadAhead(input: ArraySource(planes: planes)), blockSizes: blockSizes) == planes)
    }

    /// The meter with its peaks on a second thread measures what one thread does.
    @Test func aMeterOnTwoThreadsMeasuresWhatOneDoes() throws {
        var state: UInt64 = 7
        let noise = (0..<48_000).map { _ -> Float in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: state >> 11) % 65536) / 131072
        }
        func measure(threads: Int) throws -> LoudnessMeasurement {
            let meter = try LoudnessMeter(sampleRate: 48_000, channelCount: 2, maximumFrames: 4096, threads: threads, finePeak: true)
            let source = ArraySource(planes: [noise, noise.reversed()])
            let buffer = AudioBuffer(format: source.format, capacity: 4096)
            while true {
                let s = try source.render(into: buffer, frames: 4096)
                meter.add(buffer, frames: s.frames)
                if s.ended { break }
            }
            return meter.measurement
        }
        let one = try measure(threads: 1), two = try measure(threads: 2)
        #expect(one.integrated == two.integrated && one.truePeak == two.truePeak && one.truePeakFine == two.truePeakFine)
    }

    /// Deterministic noise, `n` frames of it.
    static func noise(_ n: Int, seed: UInt64) -> [Float] {
        var state = seed
        return (0..<n).map { _ -> Float in
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: state >> 11) % 65536) / 131072
        }
    }

    /// The spectral stretch with its analysis on a helper thread (and the FFTs run there)
    /// gives what it gives on one thread, bit for bit, at irregular pulls.
    @Test(arguments: [StretchRatio(5, 4), StretchRatio(10_003, 10_000)])
    func aSpectralStretchOnTwoThreadsGivesWhatOneDoes(ratio: StretchRatio) throws {
        let planes = [Self.noise(24_000, seed: 3), Self.noise(24_000, seed: 4)]
        func run(_ threads: Int) throws -> [[Float]] {
            try renderAll(try SpectralStretch.guarded(input: ArraySource(planes: planes), ratio: ratio, threads: threads),
                          blockSizes: [1000, 7, 4096, 333])
        }
        let one = try run(1), two = try run(2)
        #expect(one[0].count == Int(ratio.outputFrames(forInput: 24_000)))
        #expect(one == two)
    }

    /// The resampler splitting each block between two threads: bit for bit one thread's.
    @Test func aResamplerOnTwoThreadsGivesWhatOneDoes() throws {
        let planes = [Self.noise(30_000, seed: 5), Self.noise(30_000, seed: 6)]
        func run(_ threads: Int) throws -> [[Float]] {
            try renderAll(try Resampler(input: ArraySource(planes: planes), ratio: StretchRatio(441, 480), outputRate: 44_100,
                                        threads: threads), blockSizes: [64, 4096, 7])
        }
        let one = try run(1), two = try run(2)
        #expect(one[0].count == Int(StretchRatio(441, 480).outputFrames(forInput: 30_000)) && one == two, "\(one[0].count)")
    }

    /// The mixer pulling its inputs on two threads: bit for bit one thread's.
    @Test func aMixerOnTwoThreadsGivesWhatOneDoes() throws {
        let n = 20_000
        func run(_ threads: Int) throws -> [[Float]] {
            var inputs: [Mixer.Input] = []
            for i in 0..<5 {
                let left = Self.noise(n, seed: UInt64(10 + i)), right = Self.noise(n, seed: UInt64(20 + i))
                let envelope: GainEnvelope = i % 2 == 0 ? .unity : .inverted
                inputs.append(Mixer.Input(node: ArraySource(planes: [left, right]), envelope: envelope))
            }
            return try renderAll(Mixer(format: AudioFormat(sampleRate: 48_000, channelCount: 2), inputs: inputs, length: Int64(n), threads: threads),
                                 blockSizes: [512, 1, 4096])
        }
        let one = try run(1), two = try run(2)
        #expect(one[0].count == n && one == two)
    }

    /// Files opened and read on four threads at once (libsndfile's header log is read as
    /// each opens): every one reads whole.
    @Test func filesOpenedOnFourThreadsAtOnceReadWhole() throws {
        let dir = TempDir()
        for i in 0..<4 {
            try writeFile(dir.file("f\(i).wav"), [sine(220 * Double(i + 1), frames: 24_000)])
        }
        let results = Mutex<[Int: Int]>([:])
        let base = dir.path
        DispatchQueue.concurrentPerform(iterations: 16) { k in
            let path = base + "/f\(k % 4).wav"
            guard let source = try? FileSource(path: path), let planes = try? renderAll(source, blockSizes: [4096]) else { return }
            results.withLock { $0[k] = planes[0].count }
        }
        #expect(results.withLock { $0.count } == 16)
        #expect(results.withLock { $0.values.allSatisfy { $0 == 24_000 } })
    }

    /// A batch of eight jobs two at a time: each runs once, every record is written.
    @Test func aBatchRunsItsJobsOnTwoThreads() throws {
        let dir = TempDir()
        let text = (0..<8).map { "{\"args\": [\"export\", \"in\($0).wav\", \"out\($0).wav\"]}" }.joined(separator: "\n")
        let manifest = try BatchManifest(data: Data(text.utf8), path: dir.file("m.jsonl"))
        let ran = Mutex<[Int]>([])
        var run = BatchRun(manifest: manifest)
        run.jobs = 2
        let summary = try run.run(makeTask: { line in
            BatchTask(inputs: [], outputs: [manifest.resolve(line.args[2])]) { progress, _ throws(MixdownError) in
                progress(0.5)
                ran.withLock { $0.append(line.index) }
                return Int64(line.index)
            }
        }, progress: { _ in })
        #expect(summary.done == 8 && summary.frames == 28)
        #expect(ran.withLock { $0.sorted() } == Array(0..<8))
        #expect(try String(contentsOfFile: summary.results, encoding: .utf8).split(separator: "\n").count == 8)
    }
}
