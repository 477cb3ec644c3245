import CEbur128
import Foundation
import Synchronization
import MixdownTools
import Testing
@testable import Mixdown

/// Jobs that deliver at a loudness target: the written file measured by an independent
/// meter (libebur128) lands on the target ±0.2 LU with its true peak at or under the
/// ceiling +0.2 dB; the true-peak ceiling lowers the gain or, with --limit, is held by the
/// limiter; bad targets and silent inputs are refused with nothing written.
@Suite(.serialized) struct LoudnessNormalisationTests {
    /// libebur128's integrated loudness and true peak (dBTP) of planar samples.
    static func libebur128(_ planes: [[Float]], rate: Int) -> (integrated: Double, truePeak: Double) {
        let channels = planes.count
        let st = ebur128_init(UInt32(channels), UInt(rate), Int32(EBUR128_MODE_I.rawValue | EBUR128_MODE_TRUE_PEAK.rawValue))!
        var handle: UnsafeMutablePointer<ebur128_state>? = st
        defer { ebur128_destroy(&handle) }
        let n = planes[0].count
        var block = [Float](repeating: 0, count: 4800 * channels)
        var done = 0
        while done < n {
            let count = min(4800, n - done)
            for f in 0..<count { for c in 0..<channels { block[f * channels + c] = planes[c][done + f] } }
            _ = ebur128_add_frames_float(st, block, count)
            done += count
        }
        var integrated = 0.0, peak = 0.0
        ebur128_loudness_global(st, &integrated)
        for c in 0..<channels {
            var v = 0.0
            ebur128_true_peak(st, UInt32(c), &v)
            peak = max(peak, v)
        }
        return (integrated, 20 * log10(peak))
    }

    /// Two minutes of speech-like stereo at 48 kHz, around -24 LUFS with peaks near -7 dBTP.
    static func speech(in dir: TempDir, seconds: Int = 120) throws -> String {
        let node = SpeechLikeSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 2), length: Int64(seconds * 48_000))
        let path = dir.file("speech.wav")
        try writeFile(path, try renderAll(node, blockSizes: [4096]), sampleRate: 48_000, format: .s24)
        return path
    }

    static func export(_ input: String, _ output: String, _ target: LoudnessTarget) throws(MixdownError) -> FileExport.Report {
        var job = FileExport(input: input, output: output)
        job.settings.loudness = target
        return try job.run()
    }

    @Test func aLinearGainLandsOnTheTargetByAnIndependentMeter() throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir)
        let report = try Self.export(input, dir.file("out.wav"), LoudnessTarget(integrated: -23, truePeak: -1))
        let r = try #require(report.loudness)
        #expect(r.measuredOn == "render" && !r.limitedByTruePeak && !r.limiter)
        #expect(abs(r.output.integrated - -23) <= 0.05, "\(r.output.integrated)")
        let written = try readFile(dir.file("out.wav"))
        let independent = Self.libebur128(written.planes, rate: 48_000)
        #expect(abs(independent.integrated - -23) <= 0.2, "libebur128: \(independent.integrated)")
        #expect(independent.truePeak <= -1 + 0.2)
        // One gain for the whole file: every sample is the input's times it.
        let original = try readFile(input).planes
        let g = Float(pow(10, r.gainDb / 20))
        var worst: Float = 0
        for c in 0..<2 { for i in stride(from: 0, to: original[c].count, by: 97) { worst = max(worst, abs(written.planes[c][i] - original[c][i] * g)) } }
        #expect(worst < 2e-6, "not one gain: \(worst)")
        #expect(written.planes[0].count == original[0].count)
    }

    @Test func aGainThatWouldPassTheCeilingIsLoweredToIt() throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir)
        let report = try Self.export(input, dir.file("out.wav"), LoudnessTarget(integrated: -10, truePeak: -2))
        let r = try #require(report.loudness)
        #expect(r.limitedByTruePeak && !r.limiter)
        // The fine reading is held the allowance under the ceiling.
        let inputFine = try #require(r.input.truePeakFine)
        #expect(abs(r.gainDb - (-2 - TruePeakInterpolator.fineAllowance - inputFine)) < 1e-9)
        #expect(abs(try #require(r.output.truePeakFine) - (-2 - TruePeakInterpolator.fineAllowance)) < 0.01, "\(r.output)")
        #expect(abs(r.output.integrated - (r.input.integrated + r.gainDb)) < 0.01)
        #expect(r.output.integrated < -10.5)
        let independent = Self.libebur128(try readFile(dir.file("out.wav")).planes, rate: 48_000)
        #expect(independent.truePeak <= -2 + 0.2, "\(independent.truePeak)")
    }

    @Test func theLimiterReachesTheTargetUnderTheCeiling() throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir)
        let report = try Self.export(input, dir.file("out.wav"), LoudnessTarget(integrated: -12, truePeak: -1, limit: true))
        let r = try #require(report.loudness)
        #expect(r.limiter && !r.limitedByTruePeak && r.passes >= 2)
        let written = try readFile(dir.file("out.wav")).planes
        let independent = Self.libebur128(written, rate: 48_000)
        #expect(abs(independent.integrated - -12) <= 0.2, "libebur128: \(independent.integrated)")
        #expect(independent.truePeak <= -1 + 0.2, "libebur128: \(independent.truePeak)")
        #expect(try #require(r.output.truePeakFine) <= -1 - TruePeakInterpolator.fineAllowance + 0.01, "\(r.output)")
        #expect(written[0].count == 120 * 48_000)
    }

    /// Peaky material: 20 s of speech-like stereo (about -26 LUFS) with one kind of peak a
    /// few times a second: "noise" (full-band bursts of 5-50 ms up to +2 dBFS), "clicks"
    /// (1- and 3-sample clicks near full scale), "square" (20-60 ms of a 1 kHz square wave at
    /// -3 dBFS) or "plosives" (decaying 20-80 Hz thumps).
    static func peaky(_ kind: String, in dir: TempDir) throws -> String {
        let rate = 48_000, n = 20 * rate
        var planes = try renderAll(SpeechLikeSignal(format: AudioFormat(sampleRate: rate, channelCount: 2), length: Int64(n)),
                                   blockSizes: [4096])
        var rng = MediaTimePropertyTests.SplitMix64(state: 41)
        func uniform(_ a: Double, _ b: Double) -> Double { a + (b - a) * Double(rng.next() >> 11) / Double(1 << 53) }
        var at = Int(uniform(0.05, 0.4) * Double(rate))
        while at < n {
            let length: Int
            switch kind {
            case "noise": length = Int(uniform(0.005, 0.05) * Double(rate))
            case "clicks": length = Bool.random(using: &rng) ? 1 : 3
            case "square": length = Int(uniform(0.02, 0.06) * Double(rate))
            default: length = Int(uniform(0.04, 0.12) * Double(rate))
            }
            let level = uniform(0.5, 1), sign: Double = Bool.random(using: &rng) ? 1 : -1
            let frequency = uniform(20, 80)
            for i in 0..<min(length, n - at) {
                for c in 0..<2 {
                    let t = Double(i) / Double(rate)
                    let v: Double
                    switch kind {
                    case "noise": v = (uniform(-1, 1) + uniform(-1, 1) + uniform(-1, 1)) * 0.4 * level
                    case "clicks": v = sign * (0.8 + 0.2 * level)
                    case "square": v = (sin(2 * .pi * 1000 * t + 0.1) >= 0 ? 1 : -1) * 0.7
                    default: v = sin(2 * .pi * frequency * t) * exp(-t / 0.03) * 0.95 * level * (c == 0 ? 1 : 0.8)
                    }
                    planes[c][at + i] += Float(v)
                }
            }
            at += length + Int(uniform(0.15, 0.6) * Double(rate))
        }
        let path = dir.file("\(kind).wav")
        try writeFile(path, planes, sampleRate: rate, format: .f32)
        return path
    }

    /// The target a refusal suggests: "ask for X LUFS".
    static func suggestion(in reason: String) -> Double? {
        guard let r = reason.range(of: "ask for ") else { return nil }
        return Double(reason[r.upperBound...].prefix { $0 != " " })
    }

    /// On each peaky material, every target from -23 to -9 LUFS under -1 dBTP with the
    /// limiter either lands (libebur128 reads the file within 0.2 LU of the target, and its
    /// true peak and Mixdown's 8x reading at or under the ceiling) or is refused as out of
    /// the limiter's reach with nothing written; never a silent file or a wild gain.
    /// A lossless output's first pass through the limiter is the write: where it lands, it
    /// is the output (one pass fewer, counted as none), sample for sample the render of the
    /// input at the report's gain through the limiter; where it does not, the search goes on
    /// and the file is written again at the gain found, still landing. Speech (about -24
    /// LUFS, peaks near -7 dBTP) at -19.5 LUFS under -3 dBTP lands on its first pass (the
    /// limiter touches a few peaks); at -16 it takes too much for the first gain.
    @Test(arguments: [(-19.5, true), (-16.0, false)])
    func aLimitedLosslessWriteIsItsOwnFirstPass(target: Double, landsFirst: Bool) throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir, seconds: 60)
        var job = FileExport(input: input, output: dir.file("out.wav"))
        job.settings.loudness = LoudnessTarget(integrated: target, truePeak: -3, limit: true)
        job.settings.sampleFormat = .f32
        let seen = Mutex<[Double]>([])
        let r = try #require(try job.run(progress: { p in seen.withLock { $0.append(p) } }).loudness)
        #expect(r.limiter)
        #expect(landsFirst ? r.passes == 1 : r.passes >= 2, "\(r.passes) passes")
        // Progress never goes back, and ends at 1 whichever pass was the output.
        let fractions = seen.withLock { $0 }
        #expect(zip(fractions, fractions.dropFirst()).allSatisfy { $0 <= $1 } && fractions.last == 1, "\(fractions.suffix(5))")
        #expect(abs(r.output.integrated - target) <= 0.05, "\(r.output.integrated)")
        let written = try readFile(dir.file("out.wav")).planes
        let reference = try renderAll(try OutputJob.normalised(try FileSource(path: input), gain: r.gainDb, ceiling: -3, limit: true),
                                      blockSizes: [4096])
        #expect(written.count == 2 && written[0].count == 60 * 48_000)
        #expect(written.map { $0.map(\.bitPattern) } == reference.map { $0.map(\.bitPattern) })
        #expect(Self.libebur128(written, rate: 48_000).truePeak <= -3 + 0.2)
    }

    @Test(arguments: ["noise", "clicks", "square", "plosives"])
    func peakyMaterialLandsOrIsRefusedAtEveryTarget(kind: String) throws {
        let dir = TempDir()
        let input = try Self.peaky(kind, in: dir)
        var landed: [Double] = [], refused: [Double] = [], suggestions: [Double] = []
        for target in stride(from: -23.0, through: -9, by: 1) {
            let out = dir.file("out\(Int(-target)).wav")
            let result = Result { () throws -> FileExport.Report in
                try Self.export(input, out, LoudnessTarget(integrated: target, truePeak: -1, limit: true))
            }
            switch result {
            case .success(let report):
                let r = try #require(report.loudness)
                let independent = Self.libebur128(try readFile(out).planes, rate: 48_000)
                #expect(abs(independent.integrated - target) <= 0.2, "\(kind) at \(target): libebur128 \(independent.integrated)")
                #expect(independent.truePeak <= -1, "\(kind) at \(target): libebur128 true peak \(independent.truePeak)")
                #expect(try #require(r.output.truePeakFine) <= -1 - TruePeakInterpolator.fineAllowance + 0.01)
                // At most the limiting allowed past the gain that brings the peaks to the ceiling.
                #expect(r.gainDb <= -1 - TruePeakInterpolator.fineAllowance - (r.input.truePeakFine ?? r.input.truePeak) + LimiterGainSearch.maximumLimiting + 1e-9,
                        "\(kind) at \(target): \(r.gainDb) dB")
                landed.append(target)
            case .failure(let error):
                let reason: String? = if case .loudnessMissed(out, let reason)? = error as? MixdownError { reason } else { nil }
                #expect(reason?.contains("at its deepest drive") == true, "\(kind) at \(target): \(error)")
                #expect(!FileManager.default.fileExists(atPath: out))
                refused.append(target)
                // A suggestion is a promise: asked for, it lands (libebur128 agrees).
                let suggested = try #require(Self.suggestion(in: reason ?? ""), "\(kind) at \(target): no suggestion in \(error)")
                #expect(suggested < target)
                let again = dir.file("again\(Int(-target)).wav")
                let r = try #require(try Self.export(input, again, LoudnessTarget(integrated: suggested, truePeak: -1, limit: true)).loudness)
                let independent = Self.libebur128(try readFile(again).planes, rate: 48_000)
                #expect(abs(independent.integrated - suggested) <= 0.2, "\(kind): suggested \(suggested), libebur128 \(independent.integrated)")
                #expect(abs(r.output.integrated - suggested) <= 0.2)
                suggestions.append(suggested)
            }
        }
        // One suggestion however far past it the target was: the limiter's deepest drive is a gain.
        #expect(Set(suggestions).count <= 1, "\(kind): suggestions \(suggestions)")
        // Quiet targets need no more than a gain; a refusal is for the loudest ones only.
        #expect(landed.contains(-23) && landed.contains(-17), "\(kind): landed \(landed)")
        #expect(refused.allSatisfy { r in landed.allSatisfy { $0 < r } }, "\(kind): landed \(landed), refused \(refused)")
    }

    /// To a lossy type the suggestion is tried through the codec (its overshoot lowers the
    /// limiter's ceiling): an Opus output of clicks at -2 dBTP, asked for a target past its
    /// reach, suggests one that lands when asked for, decoded; no trial file is left.
    @Test func anOpusRefusalsSuggestionLandsThroughTheCodec() throws {
        let dir = TempDir()
        let input = try Self.peaky("clicks", in: dir)
        let out = dir.file("out.opus")
        let before = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        let error = #expect(throws: MixdownError.self) {
            try Self.export(input, out, LoudnessTarget(integrated: -5, truePeak: -2, limit: true))
        }
        let reason: String? = if case .loudnessMissed(out, let reason)? = error { reason } else { nil }
        let suggested = try #require(reason.flatMap(Self.suggestion(in:)), "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: out))
        let after = Set((try? FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory())) ?? [])
        #expect(after.subtracting(before).filter { $0.hasPrefix("mixdown-trial-") }.isEmpty)
        let r = try #require(try Self.export(input, out, LoudnessTarget(integrated: suggested, truePeak: -2, limit: true)).loudness)
        #expect(r.outputMeasuredOn == "decoded file")
        let independent = Self.libebur128(try readFile(out).planes, rate: 48_000)
        #expect(abs(independent.integrated - suggested) <= 0.2, "suggested \(suggested): libebur128 \(independent.integrated)")
    }

    #if FFmpeg
    /// AAC lifts full-band noise bursts by 2-5 dB after the limiter: the decoded file is
    /// checked, the limiter's ceiling lowered and the gain searched again (at most two more
    /// encodes). The M4A lands under the ceiling by libebur128, or is refused with nothing left.
    @Test func aLimitedM4AOfNoiseBurstsMeetsTheCeilingDecoded() throws {
        let dir = TempDir()
        let input = try Self.peaky("noise", in: dir)
        let out = dir.file("out.m4a")
        let result = Result { () throws -> FileExport.Report in
            try Self.export(input, out, LoudnessTarget(integrated: -18, truePeak: -1, limit: true))
        }
        switch result {
        case .success(let report):
            let r = try #require(report.loudness)
            #expect(r.outputMeasuredOn == "decoded file" && r.limiter)
            let decoded = try readFile(out)
            let independent = Self.libebur128(decoded.planes, rate: 48_000)
            #expect(abs(independent.integrated - -18) <= 0.2, "libebur128 on the decoded AAC: \(independent.integrated)")
            #expect(independent.truePeak <= -1, "libebur128's true peak of the decoded AAC: \(independent.truePeak)")
            #expect(try #require(r.output.truePeakFine) <= -1 - TruePeakInterpolator.fineAllowance + 0.01)
            #expect(r.encodes >= 1 && r.encodes <= 3)
            if r.encodes > 1 { #expect(try #require(r.limiterCeiling) < -1) }
        case .failure(let error):
            let missed: Bool = if case .loudnessMissed? = error as? MixdownError { true } else { false }
            #expect(missed, "\(error)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
    }

    @Test func anM4AMeasuredDecodedLandsOnTheTarget() throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir, seconds: 60)
        let report = try Self.export(input, dir.file("out.m4a"), LoudnessTarget(integrated: -20, truePeak: -1))
        let r = try #require(report.loudness)
        #expect(r.outputMeasuredOn == "decoded file" && !r.limitedByTruePeak)
        let decoded = try readFile(dir.file("out.m4a"))
        #expect(decoded.info.frames == 60 * 48_000)
        let independent = Self.libebur128(decoded.planes, rate: 48_000)
        #expect(abs(independent.integrated - -20) <= 0.2, "libebur128 on the decoded AAC: \(independent.integrated)")
        #expect(independent.truePeak <= -1 + 0.2, "\(independent.truePeak)")
    }
    #endif

    /// A varispeed of 300 ppm keeps the loudness: measuring the input instead of a pass over
    /// the stretch misses the output's loudness by under 0.05 LU (0.034 here: the signal's
    /// unfiltered noise reaches 24 kHz, and the resampler's low-pass trims its top). WSOLA
    /// measures its render, and lands within 0.01 LU.
    @Test func aSmallVarispeedIsMeasuredOnItsInputAndKeepsItsLoudness() throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir, seconds: 60)
        var job = FileStretch(input: input, output: dir.file("v.wav"), target: .ratio(StretchRatio(1_000_300, 1_000_000)))
        job.algorithm = .varispeed
        job.settings.loudness = LoudnessTarget(integrated: -20)
        let r = try #require(try job.run().loudness)
        #expect(r.measuredOn == "input")
        #expect(abs(r.output.integrated - -20) <= 0.05, "\(r.output.integrated)")
        var wsola = FileStretch(input: input, output: dir.file("w.wav"), target: .ratio(StretchRatio(1_000_300, 1_000_000)))
        wsola.algorithm = .wsola
        wsola.settings.loudness = LoudnessTarget(integrated: -20)
        let w = try #require(try wsola.run().loudness)
        #expect(w.measuredOn == "render")
        #expect(abs(w.output.integrated - -20) <= 0.01)
    }

    @Test func badTargetsAndSilenceAreRefusedAndNothingIsWritten() throws {
        let dir = TempDir()
        let input = try Self.speech(in: dir, seconds: 5)
        #expect(throws: MixdownError.invalidParameter(name: "--loudness", value: "3.0",
                                                      reason: "must be a loudness from -60 to 0 LUFS (-16 for podcasts, -23 for EBU R128 broadcast)")) {
            _ = try Self.export(input, dir.file("a.wav"), LoudnessTarget(integrated: 3))
        }
        #expect(throws: MixdownError.invalidParameter(name: "--true-peak", value: "0.5", reason: "must be a ceiling from -30 to 0 dBTP")) {
            _ = try Self.export(input, dir.file("b.wav"), LoudnessTarget(integrated: -16, truePeak: 0.5))
        }
        let silent = dir.file("silent.wav")
        try writeFile(silent, [[Float](repeating: 0, count: 48_000 * 3)])
        // The input is named (what the user must change), then the output.
        #expect(throws: MixdownError.silentAudio(what: "'\(silent)' (rendered for '\(dir.file("c.wav"))')", target: "-16.0 LUFS")) {
            _ = try Self.export(silent, dir.file("c.wav"), LoudnessTarget(integrated: -16))
        }
        for name in ["a.wav", "b.wav", "c.wav"] { #expect(!FileManager.default.fileExists(atPath: dir.file(name)), "\(name)") }
        // A file length limit needs an exact size: not with a compressed output.
        var render = CompositionRender(composition: Composition(), output: dir.file("d.m4a"), fileLengthLimit: 1_000_000)
        render.settings.loudness = LoudnessTarget(integrated: -16)
        #expect(throws: MixdownError.self) { _ = try render.run() }
        #expect(!FileManager.default.fileExists(atPath: dir.file("d.m4a")))
    }
}

/// `OutputSettings.loudnessReport`: the page is one of the job's outputs, complete with it
/// or neither stays.
@Suite struct LoudnessReportPageTests {
    /// The page's directory is removed while the output renders (after the checks that come
    /// first): the page cannot be written, so the output is removed too and the job fails.
    @Test func anOutputWhosePageCannotBeWrittenIsRemoved() throws {
        let dir = TempDir()
        let input = try LoudnessNormalisationTests.speech(in: dir, seconds: 5)
        try FileManager.default.createDirectory(atPath: dir.file("pages"), withIntermediateDirectories: true)
        var job = FileExport(input: input, output: dir.file("out.wav"))
        job.settings.loudness = LoudnessTarget(integrated: -20, limit: true)
        job.loudnessReport = dir.file("pages/out.html")
        #expect(job.outputs == [dir.file("out.wav"), dir.file("pages/out.html")])
        let pages = dir.file("pages")
        #expect {
            _ = try job.run(progress: { _ in try? FileManager.default.removeItem(atPath: pages) })
        } throws: { error in
            "\(error)".contains("pages/out.html")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.wav")))
        #expect(dir.contents == ["speech.wav"], "\(dir.contents)")
        // With its directory there, both are written, and the page says what the job did.
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        let report = try job.run()
        let page = try String(contentsOfFile: dir.file("pages/out.html"), encoding: .utf8)
        #expect(page.contains("\"gain_db\":\(try #require(report.loudness).gainDb)"))
        #expect(try AudioFileInfo.read(path: dir.file("out.wav")).frames == 5 * 48_000)
    }
}

/// The limiter node: the true peak held at the ceiling, the length exact, the same output
/// at every block size.
@Suite struct TruePeakLimiterTests {
    /// A 1 kHz tone at -20 dBFS with bursts of 9 kHz at +3 dBFS... over any ceiling.
    static func signal() -> [[Float]] {
        let n = 48_000 * 3
        let plane = (0..<n).map { i -> Float in
            let t = Double(i) / 48_000
            var v = 0.1 * sin(2 * .pi * 1000 * t)
            if (i / 12_000) % 3 == 1 { v += 1.4 * sin(2 * .pi * 9000 * t + 0.7) }
            return Float(v)
        }
        return [plane, plane.map { -$0 * 0.5 }]
    }

    static func limited(_ planes: [[Float]], ceiling: Double, blocks: [Int]) throws -> [[Float]] {
        let node = try TruePeakLimiter(input: ArraySource(sampleRate: 48_000, planes: planes), ceiling: ceiling)
        return try renderAll(node, blockSizes: blocks)
    }

    @Test func peaksAreHeldAndQuietPartsUntouched() throws {
        let planes = Self.signal()
        let out = try Self.limited(planes, ceiling: -1, blocks: [4096])
        #expect(out[0].count == planes[0].count && out[1].count == planes[1].count)
        let meter = try LoudnessMeter(sampleRate: 48_000, channelCount: 2, finePeak: true)
        try out.withPlanes { meter.add($0, frames: out[0].count) }
        let held = -1 - TruePeakInterpolator.fineAllowance
        #expect(try #require(meter.measurement.truePeakFine) <= held + 0.01, "\(meter.measurement)")
        #expect(meter.measurement.truePeak <= held + 0.01)
        // 100 ms into the quiet first part, well before the look-ahead: unity gain.
        for i in 4800..<6000 { #expect(out[0][i] == planes[0][i]) }
        // Inside a burst the limiter holds the level near the ceiling, not far under it.
        let burst = out[0][14_400..<21_600].map { abs($0) }.max()!
        #expect(burst > Float(pow(10, (held - 0.6) / 20)), "over-limited: \(burst)")
    }

    @Test func blockSizesDoNotChangeTheOutput() throws {
        let planes = Self.signal()
        let reference = try Self.limited(planes, ceiling: -3, blocks: [4096])
        for blocks in [[1], [64], [512], [1000, 7, 4096, 333]] {
            #expect(try Self.limited(planes, ceiling: -3, blocks: blocks) == reference, "\(blocks)")
        }
    }
}

extension Array where Element == [Float] {
    /// Runs `body` with planar pointers to copies of the planes.
    func withPlanes(_ body: (UnsafePointer<UnsafeMutablePointer<Float>>) throws -> Void) throws {
        let copies = map { p -> UnsafeMutablePointer<Float> in
            let b = UnsafeMutablePointer<Float>.allocate(capacity: Swift.max(1, p.count))
            b.initialize(from: p, count: p.count)
            return b
        }
        defer { copies.forEach { $0.deallocate() } }
        try copies.withUnsafeBufferPointer { try body($0.baseAddress!) }
    }
}

/// `output.loudness` in a composition document.
@Suite struct DocumentLoudnessTests {
    @Test func aDocumentTakesATargetAndRefusesABadOne() throws {
        let dir = TempDir()
        let input = try LoudnessNormalisationTests.speech(in: dir, seconds: 10)
        func document(_ loudness: String) throws -> String {
            let path = dir.file("doc.json")
            try """
            {"version": 1, "output": {"loudness": \(loudness)},
             "tracks": [{"segments": [{"file": "\(input)", "at": "0"}]}]}
            """.write(toFile: path, atomically: true, encoding: .utf8)
            return path
        }
        let doc = try CompositionDocument(contentsOf: try document(#"{"integrated": -20, "true_peak": -2, "limit": true}"#))
        #expect(doc.loudness == LoudnessTarget(integrated: -20, truePeak: -2, limit: true))
        let report = try doc.render(to: dir.file("out.wav")).run()
        let r = try #require(report.loudness)
        #expect(abs(r.output.integrated - -20) <= 0.05 && r.output.truePeak <= -2 + 0.01, "\(r.output)")
        for (bad, message) in [(#"{"integrated": 1}"#, "--loudness 1.0: must be a loudness from -60 to 0 LUFS"),
                               (#"{"true_peak": -1}"#, #"needs "integrated""#),
                               (#"{"integrated": -16, "limit": 1}"#, "must be true or false"),
                               (#"{"integrated": -16, "gain": 1}"#, "gain")] {
            do {
                _ = try CompositionDocument(contentsOf: try document(bad))
                Issue.record("accepted \(bad)")
            } catch {
                #expect("\(error)".contains("output.loudness") && "\(error)".contains(message), "\(bad): \(error)")
            }
        }
    }
}

/// A track's own `"loudness"`: each voice levelled alone, before its volume events, then mixed.
@Suite struct TrackLoudnessTests {
    /// Speech-like `seconds` at `amplitude`, written to `name` (mono, 48 kHz).
    static func voice(_ dir: TempDir, _ name: String, amplitude: Float, seed: UInt64) throws -> String {
        let node = SpeechLikeSignal(format: AudioFormat(sampleRate: 48_000, channelCount: 1), length: 48_000 * 20,
                                    seed: seed, amplitude: amplitude)
        let path = dir.file(name)
        try writeFile(path, try renderAll(node, blockSizes: [4096]), sampleRate: 48_000, format: .f32)
        return path
    }

    static func document(_ dir: TempDir, _ tracks: [(file: String, loudness: Double?, volume: Double?)]) throws -> CompositionDocument {
        let list = tracks.enumerated().map { i, t in
            var o = #"{"name": "v\#(i)", "segments": [{"file": "\#(t.file)", "at": "0"}]"#
            if let l = t.loudness { o += #", "loudness": \#(l)"# }
            if let v = t.volume { o += #", "volume": [{"volume": \#(v), "at": "0"}]"# }
            return o + "}"
        }
        let path = dir.file("doc.json")
        try #"{"version": 1, "output": {"sample_format": "f32"}, "tracks": [\#(list.joined(separator: ", "))]}"#
            .write(toFile: path, atomically: true, encoding: .utf8)
        return try CompositionDocument(contentsOf: path)
    }

    static func loudness(_ path: String) throws -> Double { try FileLoudness(input: path).run().loudness.integrated }

    @Test func eachVoiceIsLevelledAloneBeforeItsVolume() throws {
        let dir = TempDir()
        let quiet = try Self.voice(dir, "quiet.wav", amplitude: 0.03, seed: 1)
        let loud = try Self.voice(dir, "loud.wav", amplitude: 0.4, seed: 2)
        // Each track alone, levelled to -26 LUFS: the file says so.
        for file in [quiet, loud] {
            let alone = file + ".alone.wav"
            let report = try Self.document(dir, [(file, -26, nil)]).render(to: alone).run()
            let measured = try Self.loudness(alone)
            #expect(abs(measured - -26) <= 0.02, "\(measured)")
            let t = try #require(report.trackLoudness.first)
            #expect(abs(t.measured - (try Self.loudness(file))) < 1e-6, "the track alone is its file")
            // Not -26 - measured: blocks of a quiet voice cross the -70 LUFS gate when lifted.
            #expect(abs(t.gainDb - (-26 - t.measured)) < 0.1)
        }
        // A volume event of 0.5 comes after the levelling: the gain is the same, the track 6 dB under.
        let halved = try Self.document(dir, [(quiet, -26, 0.5)]).render(to: dir.file("halved.wav")).run()
        #expect(abs(try Self.loudness(dir.file("halved.wav")) - (-26 + 20 * log10(0.5))) <= 0.05)
        let plain = try Self.document(dir, [(quiet, -26, nil)]).render(to: dir.file("plain.wav")).run()
        #expect(halved.trackLoudness == plain.trackLoudness)
        // Both voices in one mix: each got its own gain, 22 dB apart.
        let both = try Self.document(dir, [(quiet, -26, nil), (loud, -26, nil)]).render(to: dir.file("mix.wav")).run()
        #expect(both.trackLoudness.count == 2)
        let g = both.trackLoudness.map(\.gainDb)
        #expect(abs((g[0] - g[1]) - 20 * log10(0.4 / 0.03)) < 0.3, "\(g)")
    }

    /// The pull API levels the same way: its frames are the file render's, bit for bit.
    @Test func thePullStreamIsLevelledLikeTheFile() throws {
        let dir = TempDir()
        let doc = try Self.document(dir, [(try Self.voice(dir, "a.wav", amplitude: 0.05, seed: 3), -23, nil),
                                          (try Self.voice(dir, "b.wav", amplitude: 0.3, seed: 4), -23, 0.5)])
        let job = doc.render(to: dir.file("mix.wav"))
        _ = try job.run()
        let file = try readFile(dir.file("mix.wav")).planes
        let stream = try RenderStream(render: job)
        var pulled = [[Float]](repeating: [], count: stream.format.channelCount)
        let block = AudioBuffer(format: stream.format, capacity: 1000)
        while true {
            let status = try stream.pull(into: UnsafePointer(block.channelPointers), frames: 1000)
            for c in pulled.indices { pulled[c] += block.samples(channel: c, frames: status.frames) }
            if status.ended { break }
        }
        #expect(pulled == file)
    }

    @Test func aSilentTrackIsRefusedAndABadValueNamed() throws {
        let dir = TempDir()
        let silent = dir.file("silent.wav")
        try writeFile(silent, [[Float](repeating: 0, count: 48_000 * 5)])
        let doc = try Self.document(dir, [(silent, -20, nil)])
        #expect(throws: MixdownError.silentAudio(what: "track 1 'v0' over the rendered frames 0..<240000", target: "-20.0 LUFS")) {
            _ = try doc.render(to: dir.file("out.wav")).run()
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.wav")))
        do {
            _ = try Self.document(dir, [(silent, 3, nil)])
            Issue.record("a loudness of 3 LUFS was accepted")
        } catch {
            #expect("\(error)".contains("tracks[0].loudness: must be a loudness from -60 to 0 LUFS, not 3.0"), "\(error)")
        }
    }
}
