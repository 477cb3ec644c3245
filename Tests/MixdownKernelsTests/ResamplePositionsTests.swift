import MixdownKernels
import Testing

/// `resample_positions` steps positions several outputs at a time; on every path, every
/// output's base, row and fraction must equal the exact position computed on its own in
/// 128 bits, whatever the count and start, and the position it hands back must be the
/// next output's.
@Suite struct ResamplePositionsTests {
    static let paths: [mx_isa] = [MX_ISA_SCALAR, MX_ISA_SSE2, MX_ISA_AVX2, MX_ISA_AVX512, MX_ISA_NEON]
        .filter { mx_kernels_for_isa($0) != nil }

    /// Output j of ratio num/den sits at input j · den / num = n + r / num; with `rows`
    /// rows, r · rows = q · num + e.
    static func exact(_ j: Int64, num: Int64, den: Int64, rows: Int64) -> (n: Int64, q: Int64, e: Int64) {
        let x = Int128(j) * Int128(den)
        let n = x / Int128(num), r = x % Int128(num)
        let scaled = r * Int128(rows)
        return (Int64(n), Int64(scaled / Int128(num)), Int64(scaled % Int128(num)))
    }

    // (numerator, denominator, rows): drift both ways (dense rows), a rate change with exact
    // rows (rows = numerator), a numerator past 2^52 (the vector path's limit) and one far
    // past it, a ratio above 2 (whole frames per step).
    @Test(arguments: [(Int64(10_001_309), Int64(10_000_000), Int64(1024)), (9_998_000, 10_000_000, 1024),
                      (160, 147, 160), (147, 160, 147), (4_503_599_627_370_497, 4_503_599_627_370_496, 1024),
                      (4_611_686_018_427_387_847, 4_611_686_018_427_387_903, 1024), (10_000_000, 23_456_789, 512)])
    func everyOutputIsItsExactPosition(ratio: (Int64, Int64, Int64)) throws {
        let (num, den, rows) = ratio
        let dense = rows != num
        let stepRemainder = Int128(den % num) * Int128(rows)
        var step = mx_resample_step(frames: den / num, rows: Int64(stepRemainder / Int128(num)), row_count: rows,
                                    excess: UInt64(stepRemainder % Int128(num)), numerator: UInt64(num))
        for isa in Self.paths {
            let k = try #require(mx_kernels_for_isa(isa)).pointee
            for first in [Int64(0), 1, 7_777_777] {
                for count in Array(0...67) + [1023] {
                    // Outputs written at a misaligned place in each array.
                    let shift = count % 4
                    let start = Self.exact(first, num: num, den: den, rows: rows)
                    var position = mx_resample_position(frame: start.n, row: start.q, excess: UInt64(start.e))
                    var base = [Int32](repeating: -1, count: count + shift), phase = base
                    var frac = [Float](repeating: -1, count: count + shift)
                    let offset: Int64 = start.n - 40
                    base.withUnsafeMutableBufferPointer { b in
                        phase.withUnsafeMutableBufferPointer { p in
                            frac.withUnsafeMutableBufferPointer { f in
                                k.resample_positions(b.baseAddress! + shift, p.baseAddress! + shift, dense ? f.baseAddress! + shift : nil,
                                                     count, &position, offset, &step)
                            }
                        }
                    }
                    for i in 0..<count {
                        let p = Self.exact(first + Int64(i), num: num, den: den, rows: rows)
                        let at = "output \(first + Int64(i)) on \(String(cString: mx_isa_name(isa)))"
                        #expect(Int64(base[shift + i]) == p.n - offset, "base of \(at)")
                        #expect(Int64(phase[shift + i]) == p.q, "row of \(at)")
                        #expect(frac[shift + i] == (dense ? Float(Double(p.e) * (1 / Double(num))) : -1), "fraction of \(at)")
                    }
                    #expect(base[..<shift].allSatisfy { $0 == -1 } && frac[..<shift].allSatisfy { $0 == -1 }, "nothing before the outputs")
                    let next = Self.exact(first + Int64(count), num: num, den: den, rows: rows)
                    #expect(position.frame == next.n && position.row == next.q && Int64(position.excess) == next.e,
                            "the position after \(count) outputs from \(first)")
                }
            }
        }
    }
}
