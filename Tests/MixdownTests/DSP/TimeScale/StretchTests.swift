import Foundation
import Testing
@testable import Mixdown
@testable import MixdownTools

/// Pulls `node` to its end and keeps channel 0 inside `windows` (output frame ranges).
func collect(_ node: AudioNode, blockSizes: [Int] = [16_384], windows: [Range<Int64>]) throws -> (frames: Int64, windows: [[Float]]) {
    let maxBlock = blockSizes.max()!
    try node.prepare(maximumFrames: maxBlock)
    let buffer = AudioBuffer(format: node.format, capacity: maxBlock)
    var out = windows.map { _ in [Float]() }
    var position: Int64 = 0, i = 0
    while true {
        let status = try node.render(into: buffer, frames: blockSizes[i % blockSizes.count])
        i += 1
        let block = position..<(position + Int64(status.frames))
        for (w, range) in windows.enumerated() where range.overlaps(block) {
            let lo = max(range.lowerBound, block.lowerBound), hi = min(range.upperBound, block.upperBound)
            out[w] += UnsafeBufferPointer(start: buffer[channel: 0] + Int(lo - position), count: Int(hi - lo))
        }
        position += Int64(status.frames)
        if status.ended { return (position, out) }
    }
}

/// Where each marker of `signal` landed in `makeStretch(signal)`'s output, minus where it
/// should be (input frame × R), in frames, found by cross-correlating the output with the
/// input's burst and interpolating the peak.
func markerErrors(signal: () -> TestSignal, ratio: StretchRatio, search: Int,
                  makeStretch: (TestSignal) throws -> AudioNode) throws -> [Double] {
    let reference = signal()
    let markers = reference.markerFrames
    let len = Int(reference.markerLength)
    let r = ratio.doubleValue
    let windows = markers.map { m -> Range<Int64> in
        let c = Int64((Double(m) * r).rounded())
        return (c - Int64(search))..<(c + Int64(search + len + 1))
    }
    let (_, got) = try collect(try makeStretch(signal()), windows: windows)
    return zip(markers, got).map { m, window in
        let template = (0..<len).map { Double(reference.sample(frame: m + Int64($0), channel: 0)) }
        let corr = CrossCorrelation.plain(template, window.map(Double.init), lags: 2 * search + 1)
        let found = Double(Int64((Double(m) * r).rounded()) - Int64(search)) + CrossCorrelation.parabolicPeak(corr, clampingEdges: true)!.index
        return found - Double(m) * r
    }
}

@Suite struct StretchRatioTests {
    @Test func parsesExactlyAndRefusesBadValues() throws {
        #expect(try StretchRatio(parsing: "1.0001309") == StretchRatio(10_001_309, 10_000_000))
        #expect(try StretchRatio(parsing: "10001309/10000000") == StretchRatio(10_001_309, 10_000_000))
        #expect(try StretchRatio(parsing: "2") == StretchRatio(2, 1))
        for bad in ["nan", "NaN", "inf", "0", "0.0", "-1.5", "5", "4.000001", "0.2499", "abc", "", "1/0", "1e-3", "1.", ".5"] {
            #expect(throws: MixdownError.self, "\(bad)") { try StretchRatio(parsing: bad) }
        }
        #expect {
            try StretchRatio(parsing: "5")
        } throws: { error in
            (error as? MixdownError) == .invalidParameter(name: "--ratio", value: "5", reason: "must lie between 0.25 and 4")
        }
    }

    @Test func exactBinaryValueOfADouble() {
        let r = StretchRatio(exactly: 1.25)
        #expect(r == StretchRatio(5, 4))
        let d = StretchRatio(exactly: 1.0001309)
        #expect(Double(d.numerator) / Double(d.denominator) == 1.0001309)
    }

    @Test func outputLengthAndPositionsAreExact() {
        let r = StretchRatio(10_001_309, 10_000_000)
        // 3 hours at 48 kHz: 518,400,000 × 1.0001309 = 518,467,858.56 → 518,467,859.
        #expect(r.outputFrames(forInput: 518_400_000) == 518_467_859)
        let p = r.inputPosition(ofOutput: 518_467_858)
        #expect(p.frame == 518_399_999 && p.remainder == 518_467_858 * 10_000_000 - 518_399_999 * 10_001_309)
        #expect(StretchRatio(1, 2).outputFrames(forInput: 3) == 2)   // 1.5 rounds half away from zero
    }
}

@Suite struct StretchTests {
    static let ratios = [StretchRatio(10_001_309, 10_000_000), StretchRatio(9_998_691_805, 10_000_000_000),
                         StretchRatio(101, 100), StretchRatio(4, 5), StretchRatio(5, 4), StretchRatio(2, 1)]

    enum Algorithm: String, CaseIterable { case polyphase, libsamplerate, wsola, spectral, splice, rubberbandR2, rubberbandR3 }

    static func node(_ a: Algorithm, _ make: @escaping () -> AudioNode, _ ratio: StretchRatio, threads: Int = 1) throws -> AudioNode {
        switch a {
        case .polyphase: return try Resampler(input: make(), ratio: ratio, threads: threads)
        case .libsamplerate: return try LibsamplerateResampler(input: make(), ratio: ratio, quality: .fastest)
        case .wsola: return try WSOLAStretch(input: make(), ratio: ratio)
        case .spectral: return try SpectralStretch(input: make(), ratio: ratio, threads: threads)
        case .splice: return try SpliceStretch(input: make(), ratio: ratio)
        case .rubberbandR2, .rubberbandR3:
            #if RubberBand
            return try RubberBandStretch(makeInput: { () throws(MixdownError) in make() }, ratio: ratio,
                                         engine: a == .rubberbandR2 ? .faster : .finer)
            #else
            throw MixdownError.invalidParameter(name: "--algorithm", value: "rubberband", reason: "not built")
            #endif
        }
    }

    static var algorithms: [Algorithm] {
        TimeScaleAlgorithm.rubberband.isAvailable ? Algorithm.allCases : [.polyphase, .libsamplerate, .wsola, .spectral, .splice]
    }

    /// Exactly round(N · R) frames for every ratio and algorithm, with the energy of the input.
    @Test(arguments: algorithms)
    func exactLength(algorithm: Algorithm) throws {
        let n = 48_000
        let format = AudioFormat(sampleRate: 48_000, channelCount: 2)
        for ratio in Self.ratios {
            let make = { TestSignal(format: format, length: Int64(n)) as AudioNode }
            let out = try renderAll(try Self.node(algorithm, make, ratio), blockSizes: [4096])
            let expected = ratio.outputFrames(forInput: Int64(n))
            #expect(Int64(out[0].count) == expected && Int64(out[1].count) == expected, "\(algorithm) at \(ratio)")
            // Same loudness as the input, away from the edges (pitch and tempo aside).
            let inRMS = rms(try renderAll(make(), blockSizes: [4096])[0][4800..<(n - 4800)])
            let outRMS = rms(out[0][4800..<(Int(expected) - 4800)])
            #expect(abs(20 * log10(outRMS / inRMS)) < 1.5, "\(algorithm) at \(ratio): \(20 * log10(outRMS / inRMS)) dB")
        }
    }

    func rms(_ x: ArraySlice<Float>) -> Double { (x.reduce(0.0) { $0 + Double($1) * Double($1) } / Double(x.count)).squareRoot() }

    /// Varispeed: every marker of a 10-minute recording within 1 sample of input × R.
    @Test(arguments: [StretchRatio(10_001_309, 10_000_000), StretchRatio(9_998_691_805, 10_000_000_000)])
    func varispeedKeepsSyncWithinOneSample(ratio: StretchRatio) throws {
        let signal = { TestSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 2), length: 600 * 48_000, markerInterval: 60 * 48_000) }
        for algorithm in [Algorithm.polyphase, .libsamplerate] {
            let errors = try markerErrors(signal: signal, ratio: ratio, search: 200) { s in try Self.node(algorithm, { s.fresh() }, ratio, threads: 2) }
            #expect(errors.count == 9)
            #expect(errors.allSatisfy { abs($0) <= 1 }, "\(algorithm): \(errors)")
        }
    }

    /// WSOLA: every marker within its stated bound (about 1.5 ms), the last no worse than the first.
    @Test func wsolaKeepsSyncWithinItsBound() throws {
        let ratio = StretchRatio(10_001_309, 10_000_000)
        let signal = { TestSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 2), length: 600 * 48_000, markerInterval: 60 * 48_000) }
        let bound = try WSOLAStretch(input: signal(), ratio: ratio).syncBound
        #expect(Double(bound) <= 0.002 * 48_000)
        let errors = try markerErrors(signal: signal, ratio: ratio, search: 300) { try WSOLAStretch(input: $0, ratio: ratio) }
        #expect(errors.allSatisfy { abs($0) <= Double(bound) }, "\(errors)")
        #expect(abs(errors.last!) <= abs(errors.first!) + 1, "\(errors)")
    }

    /// The spectral stretch: every marker of a 10-minute recording within 1 ms of input × R
    /// (its frames sit on exact positions; the error does not grow along the file).
    @Test func spectralKeepsSyncWithinAMillisecond() throws {
        let ratio = StretchRatio(10_001_309, 10_000_000)
        let signal = { TestSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 2), length: 600 * 48_000, markerInterval: 60 * 48_000) }
        let errors = try markerErrors(signal: signal, ratio: ratio, search: 300) { try SpectralStretch(input: $0, ratio: ratio) }
        #expect(errors.count == 9)
        #expect(errors.allSatisfy { abs($0) <= 0.001 * 48_000 }, "\(errors)")
        #expect(abs(errors.last!) <= abs(errors.first!) + 2, "\(errors)")
    }

    #if RubberBand
    /// Rubber Band: within 2 ms at every marker, the last no worse than the first.
    @Test(arguments: [RubberBandStretch.Engine.faster, .finer])
    func rubberBandKeepsSync(engine: RubberBandStretch.Engine) throws {
        let ratio = StretchRatio(10_001_309, 10_000_000)
        // R3 is slow: a shorter recording with markers every 20 s.
        let minutes: Int64 = engine == .faster ? 10 : 2, interval: Int64 = engine == .faster ? 60 : 20
        let signal = { TestSignal(format: AudioFormat(sampleRate: 16_000, channelCount: 1), length: minutes * 60 * 16_000,
                                  markerInterval: interval * 16_000) }
        let errors = try markerErrors(signal: signal, ratio: ratio, search: 200) { s in
            try RubberBandStretch(makeInput: { () throws(MixdownError) in s.fresh() }, ratio: ratio, engine: engine)
        }
        print("RB \(engine): \(errors.map { ($0 * 10).rounded() / 10 })")
        #expect(errors.allSatisfy { abs($0) <= 0.002 * 16_000 }, "\(engine): \(errors)")
        #expect(abs(errors.last!) <= abs(errors.first!) + 0.002 * 16_000 / 2, "\(engine): \(errors)")
    }
    #endif

    /// Varispeed, WSOLA, splicing and the spectral stretch give the same samples at every block size,
    /// and varispeed and the spectral stretch at one or two threads.
    @Test(arguments: [Algorithm.polyphase, .wsola, .spectral, .splice])
    func blockSizesAndThreadsDoNotChangeTheOutput(algorithm: Algorithm) throws {
        let make = { TestSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 2), length: 150_000, markerInterval: 50_000) as AudioNode }
        var reference: [[Float]]?
        for sizes in BlockSizes.all + [[5000, 2048, 16_384, 3]] {
            for threads in algorithm == .wsola || algorithm == .splice ? [1] : [1, 2] {
                let out = try renderAll(try Self.node(algorithm, make, StretchRatio(10_001_309, 10_000_000), threads: threads), blockSizes: sizes)
                if let reference { #expect(reference == out, "\(sizes), \(threads) threads") } else { reference = out }
            }
        }
    }
}

extension TestSignal {
    /// A new signal with the same parameters, from frame 0.
    func fresh() -> TestSignal {
        TestSignal(format: format, length: length!, tones: tones, markerInterval: markerInterval, markerAmplitude: markerAmplitude)
    }
}
