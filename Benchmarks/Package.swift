// swift-tools-version:6.1
// Mixdown's benchmark suite: a separate package, so that people who embed the library
// never build the benchmark dependencies. Run: `swift package benchmark` in this folder.
import PackageDescription

let package = Package(
    name: "MixdownBenchmarks",
    dependencies: [
        .package(name: "Mixdown", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.0", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "Kernels",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MixdownKernels", package: "Mixdown"),
            ],
            path: "Benchmarks/Kernels",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Nodes",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Mixdown", package: "Mixdown"),
                .product(name: "MixdownTools", package: "Mixdown"),
            ],
            path: "Benchmarks/Nodes",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        .executableTarget(
            name: "Renders",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Mixdown", package: "Mixdown"),
                .product(name: "MixdownTools", package: "Mixdown"),
            ],
            path: "Benchmarks/Renders",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
