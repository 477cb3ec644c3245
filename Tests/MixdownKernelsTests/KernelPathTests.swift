import MixdownKernels
import Testing

/// Every SIMD path must equal the scalar reference bit for bit (the documented tolerance
/// is 0), for lengths 0...67 and at misaligned offsets, including the special values
/// that conversions must clip or zero.
@Suite struct KernelPathTests {
    static let simdPaths: [mx_isa] = [MX_ISA_SSE2, MX_ISA_AVX2, MX_ISA_NEON].filter { mx_kernels_for_isa($0) != nil }
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

    @Test func activePathIsTheBestAvailable() {
        let active = mx_kernels_active_isa()
        #expect(mx_kernels_for_isa(active) != nil)
        #expect(mx_kernels_for_isa(MX_ISA_SCALAR) != nil)
        #if arch(x86_64)
        #expect(mx_kernels_for_isa(MX_ISA_SSE2) != nil)
        #expect(mx_kernels_for_isa(MX_ISA_NEON) == nil)
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
