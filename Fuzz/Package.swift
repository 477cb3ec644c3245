// swift-tools-version:6.1
// libFuzzer targets for Mixdown's parsers: built only by tools/testing/fuzz, with
// `swift build -Xswiftc -sanitize=fuzzer`; neither this manifest nor the main one sets
// compiler flags of its own, so packages that depend on Mixdown can still build it.
import PackageDescription

let package = Package(
    name: "MixdownFuzz",
    dependencies: [.package(name: "Mixdown", path: "..")],
    targets: [
        .target(name: "FuzzSupport"),
        .executableTarget(name: "FuzzTime", dependencies: ["FuzzSupport", .product(name: "Mixdown", package: "Mixdown")]),
        .executableTarget(name: "FuzzDocument", dependencies: ["FuzzSupport", .product(name: "Mixdown", package: "Mixdown")]),
        .executableTarget(name: "FuzzProbe", dependencies: ["FuzzSupport", .product(name: "Mixdown", package: "Mixdown")]),
    ]
)
