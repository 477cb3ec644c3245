import Foundation
@testable import Mixdown

/// The block-size sequences every graph test runs at (Tracktion-style).
enum BlockSizes {
    static let irregular = [1, 7, 64, 3, 513, 4096, 2, 1000, 31]
    static let all: [[Int]] = [[1], [64], [512], [4096], irregular]
}

/// A unique directory under the system's temporary folder, removed on deinit.
final class TempDir {
    let path: String
    init() {
        path = NSTemporaryDirectory() + "mixdown-test-" + UUID().uuidString
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }
    deinit { try? FileManager.default.removeItem(atPath: path) }
    func file(_ name: String) -> String { path + "/" + name }
    /// Every name in the directory, hidden ones included (temporary files are hidden).
    var contents: [String] { ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted() }
}

/// Plays planar arrays: a node whose output is known sample for sample.
final class ArraySource: AudioNode {
    let format: AudioFormat
    let planes: [[Float]]
    var length: Int64? { Int64(planes[0].count) }
    private var position = 0
    init(sampleRate: Int = 48_000, planes: [[Float]]) {
        format = AudioFormat(sampleRate: sampleRate, channelCount: planes.count)
        self.planes = planes
    }
    func prepare(maximumFrames: Int) throws(MixdownError) {}
    func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let n = min(frames, planes[0].count - position)
        for c in 0..<planes.count {
            planes[c].withUnsafeBufferPointer { buffer[channel: c].update(from: $0.baseAddress! + position, count: n) }
        }
        position += n
        return RenderStatus(frames: n, ended: position == planes[0].count)
    }
}

/// Pulls `node` to its end with block sizes cycling through `blockSizes`, checking the
/// node contract on the way (`ContractCheck`: never more than asked, short blocks only at
/// the end, zero frames after it); a broken promise throws, failing this test alone.
func renderAll(_ node: AudioNode, blockSizes: [Int]) throws -> [[Float]] {
    let node = ContractCheck(node)
    let maxBlock = blockSizes.max()!
    try node.prepare(maximumFrames: maxBlock)
    let buffer = AudioBuffer(format: node.format, capacity: maxBlock)
    var out = [[Float]](repeating: [], count: node.format.channelCount)
    var i = 0
    while true {
        let want = blockSizes[i % blockSizes.count]
        i += 1
        let status = try node.render(into: buffer, frames: want)
        for c in 0..<out.count { out[c] += buffer.samples(channel: c, frames: status.frames) }
        if status.ended {
            _ = try node.render(into: buffer, frames: want)   // checked: zero frames after the end
            return out
        }
    }
}

/// Writes planar samples to `path` through the library's own writer.
func writeFile(_ path: String, _ planes: [[Float]], sampleRate: Int = 48_000, type: AudioFileType = .wav,
               format: SampleFormat? = .f32) throws {
    var settings = OutputSettings(blockSizes: [4096])
    settings.type = type
    settings.sampleFormat = format
    settings.overwrite = true
    let job = try OutputJob(path: path, settings: settings)
    let frames = Int64(planes[0].count)
    _ = try job.write(ArraySource(sampleRate: sampleRate, planes: planes), frames: frames,
                      encoding: job.encoding(frames: frames, channels: planes.count, natural: nil))
}

/// Reads a whole file as planar Float32.
func readFile(_ path: String) throws -> (info: AudioFileInfo, planes: [[Float]]) {
    let source = try FileSource(path: path)
    return (source.info, try renderAll(source, blockSizes: [4096]))
}

/// A sine of `hz` at `rate`, `n` frames, amplitude `a`.
func sine(_ hz: Double, rate: Int = 48_000, frames n: Int, amplitude a: Float = 0.5) -> [Float] {
    (0..<n).map { a * Float(sin(2 * Double.pi * hz * Double($0) / Double(rate))) }
}

/// Runs `executable` with `arguments`; its exit status and what it printed (stdout and
/// stderr together).
func runProcess(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
    let p = Process(), out = Pipe()
    p.executableURL = URL(fileURLWithPath: executable)
    p.arguments = arguments
    p.standardOutput = out
    p.standardError = out
    try p.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    p.waitUntilExit()
    return (p.terminationStatus, String(decoding: data, as: UTF8.self))
}

/// The lag in -maxLag...maxLag at which `a` (from `start`, `length` frames) best matches `b`.
func bestLag(_ a: [Float], _ b: [Float], start: Int, length: Int, maxLag: Int) -> Int {
    var best = 0, bestValue = -Double.infinity
    for lag in -maxLag...maxLag {
        var s = 0.0
        for i in stride(from: start, to: start + length, by: 1) { s += Double(a[i]) * Double(b[i + lag]) }
        if s > bestValue { bestValue = s; best = lag }
    }
    return best
}
