// Every C kernel, on every path this CPU runs, on 4096-frame blocks.
// Throughput is in blocks per second: multiply by 4096 for frames per second.
// The scalar reference is compiled with auto-vectorisation disabled.
import Benchmark
import MixdownKernels

let blockFrames = 4096

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.throughput, .wallClock, .mallocCountTotal],
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000_000,
        thresholds: [.mallocCountTotal: .init(absolute: [.p100: 0])]
    )
    let paths: [mx_isa] = [MX_ISA_SCALAR, MX_ISA_SSE2, MX_ISA_AVX2, MX_ISA_NEON].filter { mx_kernels_for_isa($0) != nil }
    for isa in paths {
        let k = mx_kernels_for_isa(isa)!.pointee
        let name = String(cString: mx_isa_name(isa))
        let src = UnsafeMutablePointer<Float>.allocate(capacity: 2 * blockFrames)
        let dst = UnsafeMutablePointer<Float>.allocate(capacity: 2 * blockFrames)
        for i in 0..<(2 * blockFrames) { src[i] = Float(i % 200) / 400 - 0.25; dst[i] = 0 }
        let s16 = UnsafeMutablePointer<Int16>.allocate(capacity: 2 * blockFrames)
        let s24 = UnsafeMutablePointer<Int32>.allocate(capacity: 2 * blockFrames)
        let planes = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: 2)
        planes[0] = dst
        planes[1] = dst + blockFrames
        let constPlanes = UnsafeMutablePointer<UnsafePointer<Float>?>.allocate(capacity: 2)
        constPlanes[0] = UnsafePointer(src)
        constPlanes[1] = UnsafePointer(src + blockFrames)

        Benchmark("mix_ramp \(name)") { b in
            for _ in b.scaledIterations { k.mix_ramp(dst, src, blockFrames, 0.1, 1e-6, 1000); blackHole(dst[7]) }
        }
        Benchmark("mix_gain \(name)") { b in
            for _ in b.scaledIterations { k.mix_gain(dst, src, blockFrames, 0.5); blackHole(dst[7]) }
        }
        Benchmark("apply_ramp \(name)") { b in
            for _ in b.scaledIterations { k.apply_ramp(dst, blockFrames, 0.9999, -1e-9, 10); blackHole(dst[7]) }
        }
        Benchmark("f32_to_s16 stereo \(name)") { b in
            for _ in b.scaledIterations { k.f32_to_s16(s16, src, 2 * blockFrames); blackHole(s16[7]) }
        }
        Benchmark("f32_to_s24 stereo \(name)") { b in
            for _ in b.scaledIterations { k.f32_to_s24(s24, src, 2 * blockFrames); blackHole(s24[7]) }
        }
        Benchmark("interleave stereo \(name)") { b in
            for _ in b.scaledIterations { k.interleave(dst, constPlanes, 2, blockFrames); blackHole(dst[7]) }
        }
        Benchmark("deinterleave stereo \(name)") { b in
            for _ in b.scaledIterations { k.deinterleave(planes, src, 2, blockFrames); blackHole(dst[7]) }
        }
    }
}
