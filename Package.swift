// swift-tools-version:6.1
// Mixdown: an offline audio render engine for Linux.
import PackageDescription

let package = Package(
    name: "Mixdown",
    products: [
        .library(name: "Mixdown", targets: ["Mixdown"]),
        .executable(name: "mixdown", targets: ["MixdownCLI"]),
        // Test signals, fixtures and measuring tools: for the CLI, tests and benchmarks;
        // an embedder need not build it.
        .library(name: "MixdownTools", targets: ["MixdownTools"]),
        .library(name: "MixdownKernels", targets: ["MixdownKernels"]),
        // The C API (include/mixdown.h) as a shared library. SwiftPM names its file
        // lib<product>.so and the name mixdown is the command's: the file is liblibmixdown.so,
        // installed as libmixdown.so (tools/install, tools/packaging/build-static).
        .library(name: "libmixdown", type: .dynamic, targets: ["MixdownCAPI"]),
    ],
    traits: [
        // Rubber Band is GPL-2.0-or-later: an embedder can build without it
        // (`--disable-default-traits`, or `traits: []` on the dependency).
        .trait(name: "RubberBand", description: "Link librubberband (GPL-2.0-or-later) for the spectral time-scale node."),
        // FFmpeg's libraries (LGPL-2.1-or-later as Debian builds them, GPL with some options)
        // read and write MP4, MOV, M4A, MKV and WebM.
        .trait(name: "FFmpeg", description: "Load libavformat, libavcodec and libavutil (at the first job that needs them) to read and write MP4, MOV, M4A, MKV and WebM."),
        .default(enabledTraits: ["RubberBand", "FFmpeg"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    ],
    targets: [
        // Hot loops in C: scalar references always compiled, SIMD paths chosen at run time.
        .target(name: "MixdownKernels", path: "kernels", publicHeadersPath: "include"),
        .systemLibrary(name: "CSndFile", pkgConfig: "sndfile",
                       providers: [.apt(["libsndfile1-dev"])]),
        .systemLibrary(name: "CSampleRate", pkgConfig: "samplerate",
                       providers: [.apt(["libsamplerate0-dev"])]),
        .systemLibrary(name: "CRubberBand", pkgConfig: "rubberband",
                       providers: [.apt(["librubberband-dev"])]),
        // FFmpeg's headers only (libavformat-dev, libavcodec-dev, libavutil-dev, in the
        // system's include path): nothing links the libraries. FFmpegLoader defines the
        // functions Mixdown calls and loads the libraries at the first job that needs them.
        .systemLibrary(name: "CFFmpeg"),
        .target(name: "FFmpegLoader", path: "Sources/FFmpegLoader"),
        .target(
            name: "Mixdown",
            dependencies: [
                "MixdownKernels", "CSndFile", "CSampleRate",
                .target(name: "CRubberBand", condition: .when(traits: ["RubberBand"])),
                .target(name: "CFFmpeg", condition: .when(traits: ["FFmpeg"])),
                .target(name: "FFmpegLoader", condition: .when(traits: ["FFmpeg"])),
            ]
        ),
        .target(name: "MixdownTools", dependencies: ["Mixdown"]),
        // include/mixdown.h as a module, so that the C API's Swift side uses its structs.
        .systemLibrary(name: "CMixdownHeader"),
        // The C API: @_cdecl functions that translate to the Swift library, nothing more.
        // (A batch manifest's lines are command lines: the C API parses them with the commands.)
        .target(name: "MixdownCAPI", dependencies: ["Mixdown", "MixdownCommands", "MixdownKernels", "CMixdownHeader"]),
        // The commands' grammar: parsing and printing only, each command a library call.
        .target(
            name: "MixdownCommands",
            dependencies: ["Mixdown", "MixdownTools", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // The `mixdown` executable: its entry point, exit codes and suggestions.
        .executableTarget(
            name: "MixdownCLI",
            dependencies: ["Mixdown", "MixdownCommands", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        // libebur128, the loudness meter most tools use: the reference the meter's tests
        // compare against (tests only; the library does not link it).
        .systemLibrary(name: "CEbur128", path: "Tests/CEbur128", pkgConfig: "libebur128",
                       providers: [.apt(["libebur128-dev"])]),
        .testTarget(name: "MixdownKernelsTests", dependencies: ["MixdownKernels"]),
        .testTarget(name: "MixdownTests", dependencies: ["Mixdown", "MixdownTools", "MixdownKernels", "CSndFile", "CEbur128"]),
        .testTarget(name: "MixdownCLITests", dependencies: ["MixdownCLI", "Mixdown", "MixdownCommands"]),
    ]
)
