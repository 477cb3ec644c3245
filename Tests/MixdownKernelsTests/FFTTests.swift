import Foundation
import MixdownKernels
import Testing

/// mx_fft against the definition of the DFT, and its inverse against the input.
@Suite struct FFTTests {
    /// Transforms in place with a table of `table` ≥ n.
    static func fft(_ re: inout [Double], _ im: inout [Double], inverse: Bool, table: Int? = nil) {
        let t = table ?? re.count
        var wr = [Double](repeating: 0, count: max(1, t / 2)), wi = wr
        mx_fft_twiddles(&wr, &wi, t)
        mx_fft(&re, &im, re.count, inverse ? 1 : 0, wr, wi, t)
    }

    static func data(_ n: Int, seed: UInt64) -> [Double] {
        var s = seed
        return (0..<n).map { _ in
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return Double(Int64(bitPattern: s >> 11) % 2000) / 1000 - 1
        }
    }

    @Test(arguments: [1, 2, 4, 8, 16, 64, 256, 1024])
    func equalsTheDirectDFT(n: Int) {
        let re0 = Self.data(n, seed: 1), im0 = Self.data(n, seed: 2)
        var re = re0, im = im0
        // A table twice the size serves as well as its own.
        Self.fft(&re, &im, inverse: false, table: n % 2 == 0 ? 2 * n : n)
        for k in 0..<n {
            var sr = 0.0, si = 0.0
            for j in 0..<n {
                let a = -2 * Double.pi * Double(j * k % n) / Double(n)
                sr += re0[j] * cos(a) - im0[j] * sin(a)
                si += re0[j] * sin(a) + im0[j] * cos(a)
            }
            #expect(abs(re[k] - sr) < 1e-9 * Double(n) && abs(im[k] - si) < 1e-9 * Double(n), "n \(n) bin \(k)")
        }
    }

    @Test func theInverseUndoesTheTransformAtAMillionPoints() {
        let n = 1 << 20
        let re0 = Self.data(n, seed: 3)
        var re = re0, im = [Double](repeating: 0, count: n)
        Self.fft(&re, &im, inverse: false)
        Self.fft(&re, &im, inverse: true)
        var worst = 0.0
        for i in 0..<n { worst = max(worst, abs(re[i] / Double(n) - re0[i]), abs(im[i] / Double(n))) }
        #expect(worst < 1e-12)
    }

    @Test func anImpulseAtJHasUnitMagnitudeAndLinearPhase() {
        let n = 512, j = 37
        var re = [Double](repeating: 0, count: n), im = re
        re[j] = 1
        Self.fft(&re, &im, inverse: false)
        for k in 0..<n {
            let a = -2 * Double.pi * Double(j * k) / Double(n)
            #expect(abs(re[k] - cos(a)) < 1e-12 && abs(im[k] - sin(a)) < 1e-12)
        }
    }
}

/// The spectral stretch's float real FFT against a double DFT, and back.
@Suite struct RealFFTTests {
    @Test(arguments: [4, 8, 16, 64, 512, 2048])
    func forwardMatchesTheDFTAndInverseGivesTheInputBack(n: Int) throws {
        var seed: UInt64 = 12345
        let x: [Float] = (0..<n).map { _ in
            seed = seed &* 6364136223846793005 &+ 1442695040888963407
            return Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
        }
        let plan = try #require(mx_rfft_create(n))
        defer { mx_rfft_destroy(plan) }
        var re = [Float](repeating: 0, count: n / 2 + 1), im = re
        mx_rfft_forward(plan, &re, &im, x)
        var worst = 0.0
        for k in 0...(n / 2) {
            var dr = 0.0, di = 0.0
            for j in 0..<n {
                let a = -2 * Double.pi * Double(j * k) / Double(n)
                dr += Double(x[j]) * cos(a); di += Double(x[j]) * sin(a)
            }
            worst = max(worst, abs(Double(re[k]) - dr), abs(Double(im[k]) - di))
        }
        #expect(worst < 1e-5 * Double(n), "n \(n): \(worst)")
        #expect(im[0] == 0 && im[n / 2] == 0)
        var back = [Float](repeating: 0, count: n)
        mx_rfft_inverse(plan, &back, re, im)
        let error = zip(back, x).map { abs(Double($0) - Double($1)) }.max()!
        #expect(error < 1e-5, "n \(n): \(error)")
    }

    @Test func aBadSizeHasNoPlan() {
        #expect(mx_rfft_create(0) == nil && mx_rfft_create(6) == nil && mx_rfft_create(2) == nil)
        #expect(mx_rfft_create_with(1024, nil) == nil)
    }

    static let simdPaths: [mx_isa] = [MX_ISA_SSE2, MX_ISA_AVX2, MX_ISA_AVX512, MX_ISA_NEON].filter { mx_kernels_for_isa($0) != nil }

    typealias Forward = (OpaquePointer?, UnsafeMutablePointer<Float>?, UnsafeMutablePointer<Float>?, UnsafePointer<Float>?) -> Void
    typealias Inverse = (OpaquePointer?, UnsafeMutablePointer<Float>?, UnsafePointer<Float>?, UnsafePointer<Float>?) -> Void

    /// `isa`'s plan through `forward` and `inverse` against the scalar table's plan through
    /// the baseline's transforms, bit for bit, forward and back, at every size from 4 to
    /// 65536 (the signal's seed n times `seedScale`).
    func expectTheScalarSamples(isa: mx_isa, seedScale: UInt64, label: String, forward: Forward, inverse: Inverse) throws {
        for log2n in 2...16 {
            let n = 1 << log2n
            var seed = UInt64(n) * seedScale
            let x: [Float] = (0..<n).map { _ in
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                return Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
            }
            let reference = try #require(mx_rfft_create_with(n, mx_kernels_for_isa(MX_ISA_SCALAR)))
            let path = try #require(mx_rfft_create_with(n, mx_kernels_for_isa(isa)))
            defer { mx_rfft_destroy(reference); mx_rfft_destroy(path) }
            var re0 = [Float](repeating: 0, count: n / 2 + 1), im0 = re0, re1 = re0, im1 = re0
            mx_rfft_forward(reference, &re0, &im0, x)
            forward(path, &re1, &im1, x)
            #expect(re0.map(\.bitPattern) == re1.map(\.bitPattern) && im0.map(\.bitPattern) == im1.map(\.bitPattern), "\(label) forward n \(n)")
            var back0 = [Float](repeating: 0, count: n), back1 = back0
            mx_rfft_inverse(reference, &back0, re0, im0)
            inverse(path, &back1, re0, im0)
            #expect(back0.map(\.bitPattern) == back1.map(\.bitPattern), "\(label) inverse n \(n)")
        }
    }

    /// Every SIMD path's plan gives the scalar table's samples bit for bit, forward and back,
    /// at every size the stretch could use and the small ones whose passes take the tails.
    @Test(arguments: simdPaths)
    func everyPathGivesTheScalarSamples(isa: mx_isa) throws {
        try expectTheScalarSamples(isa: isa, seedScale: 1, label: String(cString: mx_isa_name(isa)),
                                   forward: { mx_rfft_forward($0, $1, $2, $3) }, inverse: { mx_rfft_inverse($0, $1, $2, $3) })
    }

    /// The AVX2 copy of the transforms (the frame engine's AVX2 path calls them) on the AVX2
    /// table's plan gives the scalar table's samples through the baseline's transforms, bit
    /// for bit, forward and back, at every size from 4 to 65536.
    @Test(.enabled(if: mx_kernels_for_isa(MX_ISA_AVX2) != nil))
    func theAVX2TransformsGiveTheScalarSamples() throws {
        #if arch(x86_64)
        try expectTheScalarSamples(isa: MX_ISA_AVX2, seedScale: 3, label: "avx2 copy",
                                   forward: { mx_rfft_forward_avx2($0, $1, $2, $3) }, inverse: { mx_rfft_inverse_avx2($0, $1, $2, $3) })
        #endif
    }

    /// One radix-4 pass on its own, every path against the scalar reference, with the buffers
    /// a float past an aligned start (correctness may not depend on alignment).
    @Test(arguments: simdPaths)
    func aPassEqualsTheScalarPassAtMisalignedOffsets(isa: mx_isa) {
        let kernels = mx_kernels_for_isa(isa)!.pointee, scalar = mx_kernels_for_isa(MX_ISA_SCALAR)!.pointee
        for (n1, s) in [(1, 1), (2, 1), (4, 1), (8, 1), (16, 1), (32, 1), (64, 1), (1, 4), (2, 4), (4, 4), (8, 4), (32, 4), (1, 16), (4, 16), (2, 64), (1, 256)] {
            for offset in [0, 1, 3] {
                let count = 4 * n1 * s
                var seed = UInt64(count * 7 + offset)
                func values(_ m: Int) -> [Float] {
                    (0..<m).map { _ in
                        seed = seed &* 6364136223846793005 &+ 1442695040888963407
                        return Float(Int64(bitPattern: seed >> 11) % 2000) / 1000 - 1
                    }
                }
                let xr = values(count + offset), xi = values(count + offset), tw = values(6 * n1 + offset)
                var y0r = [Float](repeating: 0, count: count + offset), y0i = y0r, y1r = y0r, y1i = y0r
                xr.withUnsafeBufferPointer { xr in xi.withUnsafeBufferPointer { xi in tw.withUnsafeBufferPointer { tw in
                    y0r.withUnsafeMutableBufferPointer { y0r in y0i.withUnsafeMutableBufferPointer { y0i in
                        scalar.cfft_pass4(y0r.baseAddress! + offset, y0i.baseAddress! + offset, xr.baseAddress! + offset,
                                          xi.baseAddress! + offset, tw.baseAddress! + offset, n1, s)
                    } }
                    y1r.withUnsafeMutableBufferPointer { y1r in y1i.withUnsafeMutableBufferPointer { y1i in
                        kernels.cfft_pass4(y1r.baseAddress! + offset, y1i.baseAddress! + offset, xr.baseAddress! + offset,
                                           xi.baseAddress! + offset, tw.baseAddress! + offset, n1, s)
                    } }
                } } }
                #expect(y0r.map(\.bitPattern) == y1r.map(\.bitPattern) && y0i.map(\.bitPattern) == y1i.map(\.bitPattern),
                        "\(String(cString: mx_isa_name(isa))) n1 \(n1) s \(s) offset \(offset)")
            }
        }
    }
}
