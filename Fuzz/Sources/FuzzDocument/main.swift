import Foundation
import FuzzSupport
import Mixdown

/// Makes the files the seed documents name, in the working directory: `fuzz-a.wav` (1 s,
/// 48 kHz stereo 16-bit) and `fuzz-b.wav` (0.5 s, 44.1 kHz mono), written by hand.
func makeFiles() {
    func wav(_ name: String, rate: UInt32, channels: UInt16, frames: Int) {
        var d = Data()
        func u32(_ v: UInt32) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func u16(_ v: UInt16) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        let bytes = UInt32(frames) * UInt32(channels) * 2
        d.append(contentsOf: Array("RIFF".utf8)); u32(36 + bytes); d.append(contentsOf: Array("WAVE".utf8))
        d.append(contentsOf: Array("fmt ".utf8)); u32(16); u16(1); u16(channels); u32(rate); u32(rate * UInt32(channels) * 2)
        u16(channels * 2); u16(16)
        d.append(contentsOf: Array("data".utf8)); u32(bytes)
        for i in 0..<(frames * Int(channels)) { u16(UInt16(bitPattern: Int16(truncatingIfNeeded: (i * 37) % 2000 - 1000))) }
        _ = FileManager.default.createFile(atPath: name, contents: d)
    }
    wav("fuzz-a.wav", rate: 48_000, channels: 2, frames: 48_000)
    wav("fuzz-b.wav", rate: 44_100, channels: 1, frames: 22_050)
}

/// The composition document reader on any bytes (Mixdown's JSON, or an OpenTimelineIO
/// timeline when they hold "OTIO_SCHEMA"; seeds of both): an error or a document, never a
/// trap. A document that loads is planned too, its explanation made, and it is written as
/// OTIO and read back, which must give the same segments.
func fuzzDocument(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Data(UnsafeBufferPointer(start: data, count: count))
    let dir = FileManager.default.currentDirectoryPath
    guard let doc = try? CompositionDocument(data: bytes, path: dir + "/fuzz.json") else { return 0 }
    if let plan = try? doc.render(to: dir + "/fuzz-out.wav").plan() {
        _ = plan.explanation
    }
    // Tracks that play something (a timeline without a clip is refused, and a track of empty
    // edits alone becomes no lane: neither changes a render).
    func played(_ d: CompositionDocument) -> [[MediaTimeRange]] {
        d.composition.tracks.map { $0.placedSegments.filter { $0.source != nil }.map(\.target) }.filter { !$0.isEmpty }
    }
    if !played(doc).isEmpty, let text = try? OTIOTimeline.json(for: doc, relativeTo: dir) {
        do {
            let back = try CompositionDocument(data: Data(text.utf8), path: dir + "/fuzz.otio")
            let a = played(doc), b = played(back)
            precondition(a == b, "a document written as OTIO read back to other segments")
        } catch {
            preconditionFailure("a document written as OTIO does not read back: \(error)")
        }
    }
    return 0
}

makeFiles()
runFuzzer(fuzzDocument)
