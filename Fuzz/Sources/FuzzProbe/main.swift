import Foundation
import FuzzSupport
import Mixdown

/// The file probe and the decoders behind it (libsndfile; FFmpeg's demuxers and decoders
/// with the FFmpeg trait) on any bytes: an error, or a file whose frames can be read to
/// the end or until a typed error. Never a trap, never a hang.
let scratch = "/tmp/mixdown-fuzz-probe-\(getpid())"

func fuzzProbe(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: count))
    guard FileManager.default.createFile(atPath: scratch, contents: bytes) else { return 0 }
    defer { unlink(scratch) }
    guard let info = try? AudioFileInfo.read(path: scratch) else { return 0 }
    precondition(info.frames > 0 && info.sampleRate > 0 && info.channelCount > 0, "accepted \(info)")
    // Read at most a few seconds from the start and from a seek near the end.
    let limit = Int64(info.sampleRate) * 4
    for range in [0..<min(info.frames, limit), max(0, info.frames - 4_096)..<info.frames] {
        guard let source = try? FileSource(path: scratch, range: range) else { continue }
        guard (try? source.prepare(maximumFrames: 4_096)) != nil else { continue }
        let buffer = AudioBuffer(format: source.format, capacity: 4_096)
        var read: Int64 = 0
        while let status = try? source.render(into: buffer, frames: 4_096) {
            read += Int64(status.frames)
            precondition(read <= Int64(range.count), "read past the range")
            if status.ended { break }
        }
    }
    return 0
}

runFuzzer(fuzzProbe)
