import Foundation
import Testing
@testable import Mixdown

/// Outputs keep their place on the recorder's clock: an export of a BWF from 1 s starts at
/// the input's timecode plus 1 s, a stretch at the input's own; a given one wins.
@Suite struct StartTimecodeTests {
    @Test func exportsAndStretchesKeepTheirStartTimecode() throws {
        let dir = TempDir()
        let input = dir.file("bwf.wav")
        try writeFile(input, [sine(440, frames: 48_000 * 4)])
        let reference: Int64 = 36_000 * 48_000
        try OTIOTimelineTests.addBext(input, timeReference: reference)

        var export = FileExport(input: input, output: dir.file("part.wav"))
        export.start = MediaTime(value: 1, timescale: 1)
        _ = try export.run()
        #expect(try AudioFileInfo.read(path: dir.file("part.wav")).timeReference == reference + 48_000)

        let stretch = FileStretch(input: input, output: dir.file("s.rf64"), target: .ratio(StretchRatio(1_000_200, 1_000_000)))
        _ = try stretch.run()
        #expect(try AudioFileInfo.read(path: dir.file("s.rf64")).timeReference == reference)

        var given = FileExport(input: input, output: dir.file("given.wav"))
        given.metadata.timeReference = 7
        _ = try given.run()
        #expect(try AudioFileInfo.read(path: dir.file("given.wav")).timeReference == 7)

        // A type without a bext chunk takes none, and the job still succeeds.
        for name in ["p.flac", "p.w64"] {
            _ = try FileExport(input: input, output: dir.file(name)).run()
            #expect(try AudioFileInfo.read(path: dir.file(name)).timeReference == nil, "\(name)")
        }
    }
}
