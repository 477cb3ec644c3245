import Foundation
import MixdownKernels
import Testing

/// The frame engine's analysis and synthesis come from the kernel table it was made with
/// (mx_pvoc_create_with): every SIMD path must give the scalar table's samples bit for bit,
/// on a stereo input whose channels differ, stretching and compressing (input hops between
/// frames, onsets cut from frames), with a band split and the band below made (`low`).
@Suite struct PhaseVocoderPathTests {
    static let simdPaths: [mx_isa] = [MX_ISA_SSE2, MX_ISA_AVX2, MX_ISA_AVX512, MX_ISA_NEON].filter { mx_kernels_for_isa($0) != nil }

    /// 0.4 s at 48 kHz, two channels: a chord (its notes a little apart in each channel), a
    /// click at 0.2 s in the left only, quiet noise in the right, and silence for the last
    /// 50 ms (the tolerance floor's noise bins).
    static func input(frames: Int) -> [[Float]] {
        var seed: UInt64 = 12345
        return (0..<2).map { c in
            (0..<frames).map { i in
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                if i >= frames - 2400 { return 0 }
                let t: Double = Double(i) / 48000, turn: Double = 2 * Double.pi * t
                let low: Double = 0.2 * sin(turn * (220 + Double(c))), middle: Double = 0.1 * sin(turn * 331 + Double(c))
                var v: Double = low + middle + 0.05 * sin(turn * 2950)
                if c == 0 && i == 9600 { v += 0.9 }
                if c == 1 { v += 0.01 * Double(Int64(bitPattern: seed >> 11) % 2001 - 1000) / 1000 }
                return Float(v)
            }
        }
    }

    /// The engine's output for `ratio` (output hop over input hop) with the table for `isa`:
    /// both channels' overlap-add, and with `above` the band below it (low) after them.
    func render(isa: mx_isa, n: Int, ratio: Double, above: Bool) -> [Float] {
        let hop = n / 8, channels = 2, length = 19200
        let signal = Self.input(frames: length)
        // Padded by a frame either side: a frame centred on input frame i reads i - n/2 ..< i + n/2.
        let padded = signal.map { [Float](repeating: 0, count: n) + $0 + [Float](repeating: 0, count: 2 * n) }
        let frames = Int(Double(length) * ratio) / hop
        let engine = mx_pvoc_create_with(n, hop, channels, mx_kernels_for_isa(isa))!
        defer { mx_pvoc_destroy(engine) }
        if above { #expect(mx_pvoc_set_band(engine, 1, 800.0 / 48000, 200.0 / 48000, 0) == 0) }
        let span = frames * hop + n
        // Owned here: the engine writes through pointers into each (out, low: a channel each).
        let buffers = (0..<5).map { _ in UnsafeMutablePointer<Float>.allocate(capacity: span) }
        defer { buffers.forEach { $0.deallocate() } }
        buffers.forEach { $0.initialize(repeating: 0, count: span) }
        let deficit = buffers[4]
        func analyse(_ j: Int) {
            let position = Double(j * hop) / ratio
            let first = Int((position + 0.5).rounded(.down)) - n / 2 + n
            padded[0].withUnsafeBufferPointer { l in padded[1].withUnsafeBufferPointer { r in
                let pointers: [UnsafePointer<Float>?] = [l.baseAddress! + first, r.baseAddress! + first]
                pointers.withUnsafeBufferPointer { mx_pvoc_analyse(engine, $0.baseAddress, position) }
            } }
        }
        analyse(0)
        for s in 0..<frames {
            analyse(s + 1)
            let out: [UnsafeMutablePointer<Float>?] = [buffers[0] + s * hop, buffers[1] + s * hop]
            let low: [UnsafeMutablePointer<Float>?] = [buffers[2] + s * hop, buffers[3] + s * hop]
            mx_pvoc_set_deficit(engine, deficit + s * hop)
            out.withUnsafeBufferPointer { o in
                if above {
                    low.withUnsafeBufferPointer { mx_pvoc_synthesise_low(engine, o.baseAddress, $0.baseAddress, 0) }
                } else {
                    mx_pvoc_synthesise(engine, o.baseAddress, 0)
                }
            }
        }
        return (above ? buffers : [buffers[0], buffers[1], deficit]).flatMap { Array(UnsafeBufferPointer(start: $0, count: span)) }
    }

    @Test(arguments: simdPaths)
    func everyPathGivesTheScalarSamples(isa: mx_isa) {
        let name = mx_isa_name(isa).map { String(cString: $0) } ?? "?"
        for (n, ratio, above) in [(1024, 1.25, false), (1024, 0.8, false), (512, 1.05, true), (256, 2.0, true), (1024, 1.0, false)] {
            let reference = render(isa: MX_ISA_SCALAR, n: n, ratio: ratio, above: above)
            let path = render(isa: isa, n: n, ratio: ratio, above: above)
            // The render sounds (a frame engine that made silence would match trivially).
            #expect(reference.map { abs($0) }.max()! > 0.1, "\(name) n \(n) ratio \(ratio)")
            let differing = zip(reference, path).filter { $0.0.bitPattern != $0.1.bitPattern }.count
            #expect(reference.count == path.count && differing == 0,
                    "\(name) n \(n) ratio \(ratio) band \(above): \(differing) of \(reference.count) samples differ")
        }
    }

    /// A table that cannot be run is refused, as a bad size is.
    @Test func aMissingTableMakesNoEngine() {
        #expect(mx_pvoc_create_with(1024, 128, 2, nil) == nil)
        #expect(mx_pvoc_create_with(1024, 1024, 2, mx_kernels_for_isa(MX_ISA_SCALAR)) == nil)
    }
}
