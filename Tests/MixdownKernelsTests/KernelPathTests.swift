import Foundation
import MixdownKernels
import Testing

/// Every SIMD path must equal the scalar reference bit for bit (the documented tolerance
/// is 0), for lengths 0...67 and at misaligned offsets, including the special values
/// that conversions must clip or zero.
@Suite struct KernelPathTests {
    static let simdPaths: [mx_isa] = [MX_ISA_SSE2, MX_ISA_AVX2, MX_ISA_AVX512, MX_ISA_NEON].filter { mx_kernels_for_isa($0) != nil }
    static let lengths = Array(0...67)
    static let offsets = [0, 1, 2, 3, 5]

    /// Deterministic test data with specials sprinkled in.
    static func data(_ n: Int, seed: UInt64, specials: Bool = false) -> [Float] {
        var s = seed
        var out = [Float](repeating: 0, count: n)
        let special: [Float] = [.nan, .infinity, -.infinity, 1, -1, 1.5, -2, 0.5 / 32768, 1.5 / 32768,
                                -0.5 / 32768, 32767.5 / 32768, 0.5 / 8_388_608, -0.0, 8_388_607.5 / 8_388_608]
        for i in 0..<n {
            s = s &* 6364136223846793005 &+ 1442695040888963407
            out[i] = Float(Int64(bitPattern: s >> 11) % 2_000_001 - 1_000_000) / 900_000
            if specials && i % 7 == 3 { out[i] = special[(i / 7) % special.count] }
        }
        return out
    }

    /// Runs `body` with two buffers placed `offset` floats past an allocation's start.
    func withBuffers(_ n: Int, _ offset: Int, _ body: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>) -> Void) {
        let a = UnsafeMutablePointer<Float>.allocate(capacity: n + 8), b = UnsafeMutablePointer<Float>.allocate(capacity: n + 8)
        defer { a.deallocate(); b.deallocate() }
        body(a + offset, b + offset)
    }

    func bits(_ p: UnsafePointer<Float>, _ n: Int) -> [UInt32] { (0..<n).map { p[$0].bitPattern } }

    @Test(arguments: simdPaths)
    func mixAndApplyMatchScalar(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        for n in Self.lengths {
            for off in Self.offsets {
                let src = Self.data(n, seed: UInt64(n * 31 + off)), base = Self.data(n, seed: UInt64(n * 17 + off + 1))
                for (g0, step, first) in [(0.25, 1.0 / 480_000, Int64(0)), (1.0, -0.001, Int64(12345)), (0.7, 0.0, Int64(3))] {
                    withBuffers(n, off) { ref, got in
                        ref.update(from: base, count: n); got.update(from: base, count: n)
                        src.withUnsafeBufferPointer { s in
                            mx_mix_ramp_scalar(ref, s.baseAddress, n, g0, step, first)
                            k.mix_ramp(got, s.baseAddress, n, g0, step, first)
                        }
                        #expect(bits(ref, n) == bits(got, n), "mix_ramp \(mx_isa_name(isa).map { String(cString: $0) } ?? "") n=\(n) off=\(off)")

                        ref.update(from: base, count: n); got.update(from: base, count: n)
                        mx_apply_ramp_scalar(ref, n, g0, step, first)
                        k.apply_ramp(got, n, g0, step, first)
                        #expect(bits(ref, n) == bits(got, n), "apply_ramp n=\(n) off=\(off)")

                        ref.update(from: base, count: n); got.update(from: base, count: n)
                        src.withUnsafeBufferPointer { s in
                            mx_mix_gain_scalar(ref, s.baseAddress, n, Float(g0))
                            k.mix_gain(got, s.baseAddress, n, Float(g0))
                        }
                        #expect(bits(ref, n) == bits(got, n), "mix_gain n=\(n) off=\(off)")

                        ref.update(from: base, count: n); got.update(from: base, count: n)
                        mx_apply_gain_scalar(ref, n, Float(g0))
                        k.apply_gain(got, n, Float(g0))
                        #expect(bits(ref, n) == bits(got, n), "apply_gain n=\(n) off=\(off)")
                    }
                }
            }
        }
    }

    @Test(arguments: simdPaths)
    func conversionsMatchScalar(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        for n in Self.lengths {
            for off in Self.offsets {
                let src = Self.data(n, seed: UInt64(n * 7 + off), specials: true)
                let s = UnsafeMutablePointer<Float>.allocate(capacity: n + 8)
                defer { s.deallocate() }
                (s + off).update(from: src, count: n)
                var r16 = [Int16](repeating: 0, count: n + 8), g16 = r16
                mx_f32_to_s16_scalar(&r16[off], s + off, n)
                k.f32_to_s16(&g16[off], s + off, n)
                #expect(r16 == g16, "f32_to_s16 n=\(n) off=\(off)")
                var r24 = [Int32](repeating: 0, count: n + 8), g24 = r24
                mx_f32_to_s24_scalar(&r24[off], s + off, n)
                k.f32_to_s24(&g24[off], s + off, n)
                #expect(r24 == g24, "f32_to_s24 n=\(n) off=\(off)")
            }
        }
    }

    @Test(arguments: simdPaths)
    func interleavingMatchesScalar(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        for channels in 1...3 {
            for n in Self.lengths {
                let off = n % 4
                let planes = (0..<channels).map { Self.data(n + 8, seed: UInt64(100 * $0 + n)) }
                var refI = [Float](repeating: 0, count: channels * n + 8), gotI = refI
                planes.withPlanePointers(offset: off) { ptrs in
                    mx_interleave_scalar(&refI[off], ptrs, channels, n)
                    k.interleave(&gotI[off], ptrs, channels, n)
                }
                #expect(refI.map(\.bitPattern) == gotI.map(\.bitPattern), "interleave ch=\(channels) n=\(n)")
                var refP = [[Float]](repeating: [Float](repeating: 0, count: n + 8), count: channels), gotP = refP
                refI.withUnsafeBufferPointer { inter in
                    refP.withMutablePlanePointers(offset: off) { mx_deinterleave_scalar($0, inter.baseAddress! + off, channels, n) }
                    gotP.withMutablePlanePointers(offset: off) { k.deinterleave($0, inter.baseAddress! + off, channels, n) }
                }
                #expect(refP == gotP, "deinterleave ch=\(channels) n=\(n)")
                // 16-bit decoding: every int16, the extremes included, at misaligned offsets.
                let ints: [Int16] = (0..<(channels * n + 8)).map { i in
                    i % 17 == 0 ? .min : i % 13 == 0 ? .max : Int16(truncatingIfNeeded: i &* 40_503 &+ n &* 977)
                }
                var refS = [[Float]](repeating: [Float](repeating: 0, count: n + 8), count: channels), gotS = refS
                ints.withUnsafeBufferPointer { p in
                    refS.withMutablePlanePointers(offset: off) { mx_s16_deinterleave_scalar($0, p.baseAddress! + off, channels, n) }
                    gotS.withMutablePlanePointers(offset: off) { k.s16_deinterleave($0, p.baseAddress! + off, channels, n) }
                }
                #expect(refS.map { $0.map(\.bitPattern) } == gotS.map { $0.map(\.bitPattern) }, "s16_deinterleave ch=\(channels) n=\(n)")
                for c in 0..<channels {
                    for f in 0..<n { #expect(refS[c][off + f] == Float(ints[off + f * channels + c]) / 32768) }
                }
                // And the round trip gives back the planes.
                for c in 0..<channels { #expect(Array(refP[c][off..<off + n]) == Array(planes[c][off..<off + n])) }
            }
        }
    }
}

/// The scalar reference itself, against values worked out by hand.
@Suite struct ScalarReferenceTests {
    @Test func int16ConversionRoundsClipsAndZeroesNaN() {
        let input: [Float] = [0, 1, -1, 2, -2, .nan, .infinity, -.infinity, 0.5 / 32768, 1.5 / 32768, 2.5 / 32768, -0.5 / 32768, 16384.0 / 32768]
        var out = [Int16](repeating: 99, count: input.count)
        mx_f32_to_s16_scalar(&out, input, input.count)
        #expect(out == [0, 32767, -32768, 32767, -32768, 0, 32767, -32768, 0, 2, 2, 0, 16384])
    }

    @Test func int24ConversionIsLeftJustified() {
        let input: [Float] = [0, 1, -1, 0.5, 1.0 / 8_388_608, .nan]
        var out = [Int32](repeating: 99, count: input.count)
        mx_f32_to_s24_scalar(&out, input, input.count)
        #expect(out == [0, 8_388_607 << 8, -8_388_608 << 8, 4_194_304 << 8, 1 << 8, 0])
    }

    @Test func rampGainDependsOnlyOnTheFrameIndex() {
        // One call over 100 frames equals two calls split at 37, bit for bit.
        let src = [Float](repeating: 0.8, count: 100)
        var whole = [Float](repeating: 0.1, count: 100), split = whole
        mx_mix_ramp_scalar(&whole, src, 100, 0.2, 0.0071, 5)
        mx_mix_ramp_scalar(&split, src, 37, 0.2, 0.0071, 5)
        split.withUnsafeMutableBufferPointer { p in
            src.withUnsafeBufferPointer { s in mx_mix_ramp_scalar(p.baseAddress! + 37, s.baseAddress! + 37, 63, 0.2, 0.0071, 42) }
        }
        #expect(whole == split)
        #expect(whole[0] == 0.1 + 0.8 * Float(0.2 + 5 * 0.0071))
    }

    /// The dispatcher picks the best path this CPU runs, judged independently from the
    /// kernel's own flags (/proc/cpuinfo, not cpuid), unless MIXDOWN_ISA forces one.
    @Test func activePathIsTheBestAvailable() throws {
        let active = mx_kernels_active_isa()
        #expect(mx_kernels_for_isa(active) != nil)
        #expect(mx_kernels_active() == mx_kernels_for_isa(active))
        #expect(mx_kernels_for_isa(MX_ISA_SCALAR) != nil)
        #if arch(x86_64)
        #expect(mx_kernels_for_isa(MX_ISA_SSE2) != nil)
        #expect(mx_kernels_for_isa(MX_ISA_NEON) == nil)
        #if os(Linux)
        guard ProcessInfo.processInfo.environment["MIXDOWN_ISA"] == nil else { return }
        let cpuinfo = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
        let line = try #require(cpuinfo.split(separator: "\n").first { $0.hasPrefix("flags") })
        let flags = Set(line.split(separator: " ").map(String.init))
        let avx2 = flags.contains("avx2") && flags.contains("fma"), avx512 = avx2 && flags.contains("avx512f")
        #expect(active == (avx512 ? MX_ISA_AVX512 : avx2 ? MX_ISA_AVX2 : MX_ISA_SSE2), "\(String(cString: mx_isa_name(active)))")
        #expect((mx_kernels_for_isa(MX_ISA_AVX2) != nil) == avx2)
        #expect((mx_kernels_for_isa(MX_ISA_AVX512) != nil) == avx512)
        // A CPU with AVX-512 runs the AVX2 table's kernels but resample_lerp (see mx_isa).
        if avx512, let wide = mx_kernels_for_isa(MX_ISA_AVX512)?.pointee, let avx2 = mx_kernels_for_isa(MX_ISA_AVX2)?.pointee {
            #expect(unsafeBitCast(wide.peak_interp, to: UnsafeRawPointer?.self) == unsafeBitCast(avx2.peak_interp, to: UnsafeRawPointer?.self))
            #expect(unsafeBitCast(wide.resample_positions, to: UnsafeRawPointer?.self) == unsafeBitCast(avx2.resample_positions, to: UnsafeRawPointer?.self))
            #expect(unsafeBitCast(wide.resample_lerp, to: UnsafeRawPointer?.self) != unsafeBitCast(avx2.resample_lerp, to: UnsafeRawPointer?.self))
        }
        #endif
        #endif
    }
}

extension Array where Element == [Float] {
    func withPlanePointers<R>(offset: Int, _ body: (UnsafePointer<UnsafePointer<Float>?>) -> R) -> R {
        let ptrs = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: count)
        let copies = map { plane -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: plane.count)
            p.initialize(from: plane, count: plane.count)
            return p
        }
        defer { copies.forEach { $0.deallocate() }; ptrs.deallocate() }
        for (i, p) in copies.enumerated() { ptrs[i] = UnsafePointer(p + offset) }
        return body(ptrs)
    }

    mutating func withMutablePlanePointers(offset: Int, _ body: (UnsafePointer<UnsafeMutablePointer<Float>?>) -> Void) {
        let ptrs = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: count)
        let copies = map { plane -> UnsafeMutablePointer<Float> in
            let p = UnsafeMutablePointer<Float>.allocate(capacity: plane.count)
            p.initialize(from: plane, count: plane.count)
            return p
        }
        defer { copies.forEach { $0.deallocate() }; ptrs.deallocate() }
        for (i, p) in copies.enumerated() { ptrs[i] = p + offset }
        body(UnsafePointer(ptrs))
        for (i, p) in copies.enumerated() { self[i] = [Float](UnsafeBufferPointer(start: p, count: self[i].count)) }
    }
}

/// The resampler and cross-correlation kernels against their scalar references.
@Suite struct ResamplingKernelTests {
    /// Filter shapes the resampler designs (taps a multiple of 16; the 48-tap, 5-phase one
    /// is the reference shape of the tests below that take one).
    static let shapes: [(taps: Int, phases: Int)] = [(16, 3), (32, 4), (48, 5), (64, 6), (128, 2)]
    static let taps = 48, phases = 5
    /// A bank of `phases` + 1 rows (the dense layout needs one more than it uses).
    static func bank(taps: Int, phases: Int) -> [Float] {
        (0..<((phases + 1) * taps)).map { Float(sin(Double($0) * 0.37)) / 16 }
    }
    static let bank = bank(taps: taps, phases: phases)

    /// Bases that advance by 0, 1, 2 or 3 frames, as the steps of real ratios do.
    static func bases(_ n: Int, seed: Int) -> [Int32] {
        var b = [Int32](repeating: 0, count: n)
        var cur = Int32(seed % 5)
        for i in 0..<n {
            b[i] = cur
            cur += Int32((i * 7 + seed) % 4)
        }
        return b
    }

    /// Runs `f` (dst, src, base, phase, frac, count) on `n` outputs with every buffer
    /// `offset` floats past its allocation's start.
    static func run(_ f: (UnsafeMutablePointer<Float>, UnsafePointer<Float>, UnsafePointer<Int32>, UnsafePointer<Int32>, UnsafePointer<Float>, Int) -> Void,
                    n: Int, offset: Int, seed: Int, taps: Int = taps, phases: Int = phases) -> [Float] {
        let src = [Float](repeating: 0, count: offset) + KernelPathTests.data(3 * n + taps + 40, seed: UInt64(seed))
        let base = bases(n, seed: seed)
        let phase = (0..<n).map { Int32((($0 * 3 + seed) / 4) % phases) }   // runs of equal phases, as near R = 1
        let frac = [Float](repeating: 0, count: offset) + (0..<n).map { Float(($0 * 37 + seed) % 100) / 100 }
        let dst = UnsafeMutablePointer<Float>.allocate(capacity: n + 8)
        defer { dst.deallocate() }
        src.withUnsafeBufferPointer { s in base.withUnsafeBufferPointer { b in phase.withUnsafeBufferPointer { p in
            frac.withUnsafeBufferPointer { fr in
                f(dst + offset, s.baseAddress! + offset, b.baseAddress!, p.baseAddress!, fr.baseAddress! + offset, n)
            }
        } } }
        return Array(UnsafeBufferPointer(start: dst + offset, count: n))
    }

    /// resample_lerp's table for `bank(taps:phases:)`: each row, then its slope to the next.
    static func table(taps: Int, phases: Int) -> [Float] {
        var table = [Float](repeating: 0, count: phases * 2 * taps)
        mx_resample_lerp_table(&table, bank(taps: taps, phases: phases), phases, Int32(taps))
        return table
    }

    typealias LerpKernel = (UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?, UnsafePointer<Float>?, UnsafePointer<Float>?,
                            UnsafePointer<Int32>?, UnsafePointer<Int32>?, UnsafePointer<Float>?, Int, UnsafePointer<Float>?, Int32) -> Void

    /// Runs a resample_lerp kernel on outputs `from..<to` of `n` (positions as `run`'s, or
    /// with `rowRun`, rows held for `rowRun` outputs each, as at R = 1.0001 where a row
    /// serves about 7.6 outputs), one channel per seed in `channels` (one or two), every
    /// buffer `offset` floats past its allocation's start; returns each channel's `n`
    /// outputs (0 outside `from..<to`).
    static func runLerp(_ kernel: LerpKernel, channels: [UInt64], n: Int, offset: Int, seed: Int, from: Int = 0, to: Int? = nil,
                        taps: Int = taps, phases: Int = phases, rowRun: Int? = nil) -> [[Float]] {
        let to = to ?? n
        let table = table(taps: taps, phases: phases)
        let src = channels.map { [Float](repeating: 0, count: offset) + KernelPathTests.data(3 * n + taps + 40, seed: $0) }
        let base = bases(n, seed: seed)
        let phase = (0..<n).map { i in Int32((rowRun.map { (i + seed) / $0 } ?? (i * 3 + seed) / 4) % phases) }
        let frac = [Float](repeating: 0, count: offset) + (0..<n).map { Float(($0 * 37 + seed) % 100) / 100 }
        let dst = channels.map { _ in UnsafeMutablePointer<Float>.allocate(capacity: n + 8) }
        defer { dst.forEach { $0.deallocate() } }
        for d in dst { d.initialize(repeating: 0, count: n + 8) }
        let pair = channels.count == 2
        src[0].withUnsafeBufferPointer { s0 in src[pair ? 1 : 0].withUnsafeBufferPointer { s1 in
            base.withUnsafeBufferPointer { b in phase.withUnsafeBufferPointer { p in frac.withUnsafeBufferPointer { fr in
                kernel(dst[0] + offset + from, pair ? dst[1] + offset + from : nil, s0.baseAddress! + offset,
                       pair ? s1.baseAddress! + offset : nil, b.baseAddress! + from, p.baseAddress! + from,
                       fr.baseAddress! + offset + from, to - from, table, Int32(taps))
            } } }
        } }
        return dst.map { Array(UnsafeBufferPointer(start: $0 + offset, count: n)) }
    }

    static let fmaPaths: [mx_isa] = [MX_ISA_AVX2, MX_ISA_AVX512, MX_ISA_NEON].filter { mx_kernels_for_isa($0) != nil }

    /// SSE2 equals the unfused scalar reference bit for bit; the FMA paths equal the fused
    /// one bit for bit; the two families agree within 1e-6 of full scale. Every filter
    /// shape, lengths 0...67, misaligned buffers, any input step.
    @Test(arguments: KernelPathTests.simdPaths, Self.shapes.indices)
    func resampleMatchesScalar(isa: mx_isa, shape: Int) {
        let k = mx_kernels_for_isa(isa)!.pointee
        let fused = Self.fmaPaths.contains(isa)
        let (taps, phases) = Self.shapes[shape]
        let t = Int32(taps), bank = Self.bank(taps: taps, phases: phases)
        func run(_ f: (UnsafeMutablePointer<Float>, UnsafePointer<Float>, UnsafePointer<Int32>, UnsafePointer<Int32>, UnsafePointer<Float>, Int) -> Void,
                 n: Int, offset: Int, seed: Int) -> [Float] {
            Self.run(f, n: n, offset: offset, seed: seed, taps: taps, phases: phases)
        }
        for n in KernelPathTests.lengths {
            for off in [0, 1, 3] {
                let exact = run({ d, s, b, p, _, c in
                    fused ? mx_resample_fma_scalar(d, s, b, p, c, bank, t) : mx_resample_scalar(d, s, b, p, c, bank, t)
                }, n: n, offset: off, seed: n)
                let got = run({ d, s, b, p, _, c in k.resample(d, s, b, p, c, bank, t) }, n: n, offset: off, seed: n)
                #expect(exact.map(\.bitPattern) == got.map(\.bitPattern), "resample \(taps)x\(phases) n=\(n) offset \(off)")
                // Rows changing every output or two, and held for 3, 4 and 7 outputs (the AVX-512
                // path takes four outputs at a time where they share a row).
                for channels: [UInt64] in [[UInt64(n)], [UInt64(n), UInt64(n) + 1000]] {
                    for rowRun in [nil, 3, 4, 7] {
                        func lerp(_ kernel: LerpKernel) -> [[Float]] {
                            Self.runLerp(kernel, channels: channels, n: n, offset: off, seed: n, taps: taps, phases: phases, rowRun: rowRun)
                        }
                        let lerpRef = lerp(fused ? mx_resample_lerp_fma_scalar : mx_resample_lerp_scalar)
                        let got = lerp(k.resample_lerp)
                        #expect(lerpRef.map { $0.map(\.bitPattern) } == got.map { $0.map(\.bitPattern) },
                                "resample_lerp \(taps)x\(phases) \(channels.count) channels n=\(n) offset \(off) rows held \(rowRun ?? 0)")
                        let unfused = lerp(mx_resample_lerp_scalar)
                        let worst = zip(unfused.joined(), got.joined()).map { abs($0 - $1) }.max() ?? 0
                        #expect(worst <= 1e-6, "n=\(n) worst \(worst)")
                    }
                }
            }
        }
    }

    /// The lane order is what the header says: checked against a sum written out here.
    @Test func laneOrderIsTheDocumentedOne() {
        let x = KernelPathTests.data(64, seed: 5), row = KernelPathTests.data(32, seed: 6)
        var s = [Float](repeating: 0, count: 16)
        for k in stride(from: 0, to: 32, by: 16) { for l in 0..<16 { s[l] = s[l] + row[k + l] * x[3 + k + l] } }
        let h = (0..<8).map { s[$0] + s[$0 + 8] }
        let expected = ((h[0] + h[1]) + (h[2] + h[3])) + ((h[4] + h[5]) + (h[6] + h[7]))
        var out: Float = 0
        let base: [Int32] = [3], phase: [Int32] = [0]
        mx_resample_scalar(&out, x, base, phase, 1, row, 32)
        #expect(out.bitPattern == expected.bitPattern)
    }

    /// An output has the same value whatever group or tail it fell in, and a channel the
    /// same alone as in a pair.
    @Test(arguments: [MX_ISA_SCALAR] + KernelPathTests.simdPaths)
    func resampleOutputDoesNotDependOnItsGroup(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        let n = 67
        for rowRun in [nil, 7] {
            let whole = Self.runLerp(k.resample_lerp, channels: [1, 2], n: n, offset: 0, seed: 1, rowRun: rowRun)
            for split in [1, 5, 8, 13, 16, 31] {
                let first = Self.runLerp(k.resample_lerp, channels: [1, 2], n: n, offset: 0, seed: 1, to: split, rowRun: rowRun)
                let second = Self.runLerp(k.resample_lerp, channels: [1, 2], n: n, offset: 0, seed: 1, from: split, rowRun: rowRun)
                #expect(whole[0] == Array(first[0][..<split] + second[0][split...]), "left, split at \(split)")
                #expect(whole[1] == Array(first[1][..<split] + second[1][split...]), "right, split at \(split)")
            }
            #expect(whole[0].map(\.bitPattern) == Self.runLerp(k.resample_lerp, channels: [1], n: n, offset: 0, seed: 1, rowRun: rowRun)[0].map(\.bitPattern))
            #expect(whole[1].map(\.bitPattern) == Self.runLerp(k.resample_lerp, channels: [2], n: n, offset: 0, seed: 1, rowRun: rowRun)[0].map(\.bitPattern))
        }
    }

    /// The table's slope interpolates the rows: output i is y0 + f (y1 − y0) of the sums
    /// with rows phase[i] and phase[i] + 1 (computed here in Double from the bank), within
    /// float rounding. A slope taken from the wrong row, or with the wrong sign, is off by
    /// the rows' difference (about 0.1 here).
    @Test func theTableInterpolatesBetweenRows() {
        let n = 67, taps = Self.taps, phases = Self.phases, seed = 4
        let got = Self.runLerp(mx_resample_lerp_scalar, channels: [9], n: n, offset: 0, seed: seed)[0]
        let x = KernelPathTests.data(3 * n + taps + 40, seed: 9)
        let base = Self.bases(n, seed: seed)
        var worst = 0.0, spread = 0.0
        for i in 0..<n {
            let q = ((i * 3 + seed) / 4) % phases, f = Double(Float((i * 37 + seed) % 100) / 100)
            let sums = [q, q + 1].map { r in (0..<taps).reduce(0.0) { $0 + Double(Self.bank[r * taps + $1]) * Double(x[Int(base[i]) + $1]) } }
            worst = max(worst, abs(Double(got[i]) - (sums[0] + f * (sums[1] - sums[0]))))
            spread = max(spread, abs(sums[1] - sums[0]))
        }
        #expect(worst < 2e-6, "worst \(worst)")
        #expect(spread > 0.05, "the rows differ by \(spread): the test could not tell them apart")
    }

    @Test(arguments: KernelPathTests.simdPaths)
    func xcorrIsBitIdentical(isa: mx_isa) {
        let k = mx_kernels_for_isa(isa)!.pointee
        for lags in KernelPathTests.lengths {
            let len = 37 + lags % 5
            let a = KernelPathTests.data(len, seed: 9), x = KernelPathTests.data(len + lags + 4, seed: UInt64(lags))
            var ref = [Float](repeating: 0, count: lags + 1), got = ref
            mx_xcorr_scalar(&ref, a, x, len, lags)
            k.xcorr(&got, a, x, len, lags)
            #expect(ref.map(\.bitPattern) == got.map(\.bitPattern), "lags=\(lags)")
        }
    }
}
