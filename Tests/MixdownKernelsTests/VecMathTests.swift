import Foundation
import MixdownKernels
import Testing

/// The elementary functions by the array (vecmath.c): the vectorised loops against their
/// scalar references bit for bit, for lengths 0...67 with the output and the inputs at
/// misaligned offsets of their own, nothing written past `count`; and both against double
/// precision within the bounds the header states.
@Suite struct VecMathTests {
    static let sentinel = Float(12345.5)

    /// n floats from `seed`, uniform in [lo, hi), with `specials` placed first.
    static func uniform(_ n: Int, seed: UInt64, _ lo: Float, _ hi: Float, specials: [Float] = []) -> [Float] {
        var s = seed &+ 0x9e37_79b9_7f4a_7c15
        return (0..<n).map { i in
            if i < specials.count { return specials[i] }
            s = s &* 6364136223846793005 &+ 1442695040888963407
            return lo + (hi - lo) * Float(s >> 40) / Float(1 << 24)
        }
    }

    /// Runs `body(dst, a, b, count)` with dst, a and b at their own offsets into arrays
    /// padded by a sentinel, and returns dst's count values; the sentinel past them must stay.
    static func run(_ a: [Float], _ b: [Float], offsets: (Int, Int, Int),
                    _ body: (UnsafeMutablePointer<Float>, UnsafePointer<Float>, UnsafePointer<Float>, Int) -> Void) -> [Float] {
        let n = a.count
        var dst = [Float](repeating: sentinel, count: n + offsets.0 + 1)
        let pa = [Float](repeating: 0, count: offsets.1) + a, pb = [Float](repeating: 0, count: offsets.2) + b
        dst.withUnsafeMutableBufferPointer { d in
            pa.withUnsafeBufferPointer { x in
                pb.withUnsafeBufferPointer { y in body(d.baseAddress! + offsets.0, x.baseAddress! + offsets.1, y.baseAddress! + offsets.2, n) }
            }
        }
        #expect(dst[n + offsets.0] == sentinel, "written past count \(n)")
        return Array(dst[offsets.0..<(offsets.0 + n)])
    }

    /// Sines and cosines of x through `body(sin, cos, x, count)`, at the offsets `run` takes
    /// for the sines and the inputs, and the cosines `cosOffset` past their buffer's start.
    static func sinCos(_ x: [Float], offsets: (Int, Int, Int), cosOffset: Int,
                       _ body: (UnsafeMutablePointer<Float>, UnsafeMutablePointer<Float>, UnsafePointer<Float>, Int) -> Void) -> (sin: [Float], cos: [Float]) {
        var cosines: [Float] = []
        let sines = run(x, x, offsets: offsets) { s, a, _, c in
            var cs = [Float](repeating: 0, count: c + cosOffset)
            cs.withUnsafeMutableBufferPointer { body(s, $0.baseAddress! + cosOffset, a, c) }
            cosines = Array(cs[cosOffset...])
        }
        return (sines, cosines)
    }

    static let offsetTriples = [(0, 0, 0), (1, 0, 3), (3, 5, 1), (2, 1, 2), (5, 3, 0)]

    @Test func atan2MatchesItsReferenceAndDoublePrecision() {
        let pi = Float(Double.pi)   // rounded to nearest (Float.pi is rounded down)
        for n in 0...67 {
            for (i, o) in Self.offsetTriples.enumerated() {
                let y = Self.uniform(n, seed: UInt64(n * 31 + i), -2, 2, specials: [0, -0.0, 1, -1, 0, 1e-20, 3])
                let x = Self.uniform(n, seed: UInt64(n * 37 + i + 500), -2, 2, specials: [0, -1, 0, 0, -0.0, -5, 1e-20])
                let got = Self.run(y, x, offsets: o) { d, a, b, c in mx_atan2_array(d, a, b, c) }
                let ref = Self.run(y, x, offsets: o) { d, a, b, c in mx_atan2_array_scalar(d, a, b, c) }
                #expect(got.map(\.bitPattern) == ref.map(\.bitPattern), "n=\(n) offsets \(o)")
                for k in 0..<n {
                    // A y of -0 is taken as +0: atan2(-0, -1) is pi.
                    let exact = y[k] == 0 && x[k] == 0 ? 0 : atan2(y[k] == 0 ? 0 : Double(y[k]), Double(x[k]))
                    #expect(abs(Double(got[k]) - exact) <= 4e-7, "atan2(\(y[k]), \(x[k])) = \(got[k]), not \(exact)")
                    #expect(got[k] >= -pi && got[k] <= pi, "atan2(\(y[k]), \(x[k])) = \(got[k]) (\(got[k].bitPattern))")
                }
            }
        }
    }

    @Test func logMatchesItsReferenceAndDoublePrecision() {
        for n in 0...67 {
            for (i, o) in Self.offsetTriples.enumerated() {
                // Normal positive values over many octaves: 2^-100 to 2^100, and the ends of m's range.
                let e = Self.uniform(n, seed: UInt64(n * 41 + i), -100, 100)
                let x = e.enumerated().map { k, v in k == 0 ? Float(0.70710677) : k == 1 ? Float(1.4142135) : k == 2 ? Float.leastNormalMagnitude : k == 3 ? 1 : Float(pow(2, Double(v))) }
                let got = Self.run(x, x, offsets: o) { d, a, _, c in mx_log_array(d, a, c) }
                let ref = Self.run(x, x, offsets: o) { d, a, _, c in mx_log_array_scalar(d, a, c) }
                #expect(got.map(\.bitPattern) == ref.map(\.bitPattern), "n=\(n) offsets \(o)")
                for k in 0..<n {
                    let exact = log(Double(x[k]))
                    #expect(abs(Double(got[k]) - exact) <= 2e-7 + 1.1e-7 * abs(exact), "log(\(x[k])) = \(got[k])")
                }
            }
        }
    }

    @Test func sinCosMatchItsReferenceAndDoublePrecision() {
        for n in 0...67 {
            for (i, o) in Self.offsetTriples.enumerated() {
                let x = Self.uniform(n, seed: UInt64(n * 43 + i), -.pi, .pi, specials: [.pi, -.pi, 0, .pi / 2, -.pi / 2, -0.0])
                let (got, gotCos) = Self.sinCos(x, offsets: o, cosOffset: 7) { mx_sincos_array($0, $1, $2, $3) }
                let (ref, refCos) = Self.sinCos(x, offsets: o, cosOffset: 7) { mx_sincos_array_scalar($0, $1, $2, $3) }
                #expect(got.map(\.bitPattern) == ref.map(\.bitPattern), "sin n=\(n) offsets \(o)")
                #expect(gotCos.map(\.bitPattern) == refCos.map(\.bitPattern), "cos n=\(n) offsets \(o)")
                for k in 0..<n {
                    #expect(abs(Double(got[k]) - sin(Double(x[k]))) <= 3e-7, "sin(\(x[k])) = \(got[k])")
                    #expect(abs(Double(gotCos[k]) - cos(Double(x[k]))) <= 3e-7, "cos(\(x[k])) = \(gotCos[k])")
                }
            }
        }
    }

    /// The AVX2 copy's loops (the frame engine's AVX2 path calls them) give the scalar
    /// references' bits, for lengths 0...67 at misaligned offsets, on a CPU that has AVX2.
    @Test(.enabled(if: mx_kernels_for_isa(MX_ISA_AVX2) != nil))
    func theAVX2CopyGivesTheReferenceBits() {
        #if arch(x86_64)
        for n in 0...67 {
            for (i, o) in Self.offsetTriples.enumerated() {
                let y = Self.uniform(n, seed: UInt64(n * 53 + i), -2, 2, specials: [0, -0.0, 1e-20])
                let x = Self.uniform(n, seed: UInt64(n * 59 + i), -2, 2, specials: [0, -1, -0.0])
                let atan2Got = Self.run(y, x, offsets: o) { d, a, b, c in mx_atan2_array_avx2(d, a, b, c) }
                let atan2Ref = Self.run(y, x, offsets: o) { d, a, b, c in mx_atan2_array_scalar(d, a, b, c) }
                #expect(atan2Got.map(\.bitPattern) == atan2Ref.map(\.bitPattern), "atan2 n=\(n) offsets \(o)")
                let positive = x.map { abs($0) + 1e-3 }
                let logGot = Self.run(positive, positive, offsets: o) { d, a, _, c in mx_log_array_avx2(d, a, c) }
                let logRef = Self.run(positive, positive, offsets: o) { d, a, _, c in mx_log_array_scalar(d, a, c) }
                #expect(logGot.map(\.bitPattern) == logRef.map(\.bitPattern), "log n=\(n) offsets \(o)")
                let angles = y.map { $0 * 1.5 }
                let (sinGot, cosGot) = Self.sinCos(angles, offsets: o, cosOffset: 5) { mx_sincos_array_avx2($0, $1, $2, $3) }
                let (sinRef, cosRef) = Self.sinCos(angles, offsets: o, cosOffset: 5) { mx_sincos_array_scalar($0, $1, $2, $3) }
                #expect(sinGot.map(\.bitPattern) == sinRef.map(\.bitPattern) && cosGot.map(\.bitPattern) == cosRef.map(\.bitPattern),
                        "sincos n=\(n) offsets \(o)")
            }
        }
        #endif
    }
}
