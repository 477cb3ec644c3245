import Foundation
import Testing
@testable import Mixdown

@Suite struct OutputEncodingTests {
    static let hour: Int64 = 3600 * 48_000

    @Test func wavPastFourGiBBecomesRF64() throws {
        // 6 h of 48 kHz stereo s16 is 4.15e9 bytes: still WAV. 7 h is 4.84e9: RF64.
        let six = try OutputEncoding.resolve(path: "x.wav", type: .wav, sampleFormat: .s16, frames: 6 * Self.hour, channels: 2)
        #expect(six.type == .wav && six.dataBytes == 6 * Self.hour * 4)
        let seven = try OutputEncoding.resolve(path: "x.wav", type: .wav, sampleFormat: .s16, frames: 7 * Self.hour, channels: 2)
        #expect(seven.type == .rf64 && seven.sampleFormat == .s16)
        // Right at the edge: the header allowance counts.
        let edgeFrames = (Int64(UInt32.max) - OutputEncoding.headerAllowance) / 4
        #expect(try OutputEncoding.resolve(path: "x.wav", type: .wav, sampleFormat: .s16, frames: edgeFrames, channels: 2).type == .wav)
        #expect(try OutputEncoding.resolve(path: "x.wav", type: .wav, sampleFormat: .s16, frames: edgeFrames + 1, channels: 2).type == .rf64)
        #expect(try OutputEncoding.resolve(path: "x.w64", type: .w64, sampleFormat: .f32, frames: 24 * Self.hour, channels: 8).type == .w64)
    }

    @Test func refusalsNameTheFileAndReason() {
        #expect {
            _ = try OutputEncoding.resolve(path: "big.aiff", type: .aiff, sampleFormat: .s24, frames: 10 * Self.hour, channels: 2)
        } throws: { error in
            guard case MixdownError.outputTooLarge(let p, _, let r) = error else { return false }
            return p == "big.aiff" && r.contains("AIFF")
        }
        #expect(throws: MixdownError.unsupportedOutput(path: "a.flac", reason: "flac does not store f32 samples (it stores s16, s24)")) {
            try OutputEncoding.resolve(path: "a.flac", type: .flac, sampleFormat: .f32, frames: 10, channels: 1)
        }
        #expect(throws: MixdownError.self) {
            try OutputEncoding.resolve(path: "a.ogg", type: .ogg, sampleFormat: .s16, frames: 10, channels: 1)
        }
    }
}

@Suite struct AudioFileWriterTests {
    func writer(_ path: String, overwrite: Bool = false) throws -> AudioFileWriter {
        let enc = try OutputEncoding.resolve(path: path, type: .wav, sampleFormat: .s16, frames: 100, channels: 1)
        return try AudioFileWriter(destination: path, encoding: enc, format: AudioFormat(sampleRate: 48_000, channelCount: 1),
                                   maximumFrames: 64, overwrite: overwrite)
    }

    @Test func nothingAppearsUntilCommit() throws {
        let dir = TempDir()
        let w = try writer(dir.file("out.wav"))
        try w.write(AudioBuffer(channelCount: 1, capacity: 64), frames: 64)
        #expect(dir.contents.count == 1 && dir.contents[0].hasPrefix(".out.wav.mixdown-"))
        #expect(!FileManager.default.fileExists(atPath: dir.file("out.wav")))
        try w.commit()
        #expect(dir.contents == ["out.wav"])
        #expect(try AudioFileInfo.read(path: dir.file("out.wav")).frames == 64)
    }

    /// The ledger an exit at once closes: afterwards nothing is created and nothing moved
    /// into place, so a thread still rendering until `_exit` leaves no temporary file (CI
    /// once found one after a Ctrl-C that exited at once while the job opened its output).
    @Test func aClosedLedgerCreatesAndMovesNothing() throws {
        let dir = TempDir()
        var ledger = AudioFileWriter.Ledger()
        let finished = dir.file(".a.wav.mixdown-1-1.tmp"), unfinished = dir.file(".b.wav.mixdown-1-2.tmp")
        for path in [finished, unfinished] { Glibc.close(try ledger.create(path, destination: "x")) }
        #expect(throws: MixdownError.outputNotWritable(path: "x", reason: "File exists")) { try ledger.create(finished, destination: "x") }
        try ledger.move(finished, to: dir.file("a.wav"), overwrite: false)
        let closed = ledger.close()
        #expect(closed.removed == [unfinished] && closed.completeCount == 1 && closed.lastComplete == [dir.file("a.wav")])
        #expect(dir.contents == ["a.wav"])
        #expect(throws: MixdownError.cancelled) { try ledger.create(dir.file(".c.wav.mixdown-1-3.tmp"), destination: "c.wav") }
        FileManager.default.createFile(atPath: finished, contents: Data([1]))
        #expect(throws: MixdownError.cancelled) { try ledger.move(finished, to: dir.file("d.wav"), overwrite: true) }
        #expect(dir.contents == ["a.wav"])
        #expect(ledger.close().completeCount == 1)
    }

    /// A file written only to be measured is never moved into place: its size is the file's
    /// as a commit would leave it, and nothing is left beside it (before, the header probe
    /// was moved into the temporary directory, where an exit at once could leave it).
    @Test func aMeasuredFileIsNeverInPlace() throws {
        let dir = TempDir()
        let w = try writer(dir.file("probe.wav"))
        try w.write(AudioBuffer(channelCount: 1, capacity: 64), frames: 64)
        let size = try w.finishedSize()
        #expect(dir.contents.isEmpty)
        let committed = try writer(dir.file("kept.wav"))
        try committed.write(AudioBuffer(channelCount: 1, capacity: 64), frames: 64)
        try committed.commit()
        #expect(size == (try FileManager.default.attributesOfItem(atPath: dir.file("kept.wav"))[.size] as! NSNumber).int64Value)
        // The header probe: the bytes besides the 128 of samples, and nothing left in the
        // temporary directory.
        let before = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(".mixdown-size-\(getpid())") }
        #expect(try OutputEncoding.overheadBytes(path: "x.wav", type: .wav, sampleFormat: .s16,
                                                 format: AudioFormat(sampleRate: 48_000, channelCount: 1), metadata: AudioMetadata()) == size - 128)
        let after = try FileManager.default.contentsOfDirectory(atPath: NSTemporaryDirectory()).filter { $0.hasPrefix(".mixdown-size-\(getpid())") }
        #expect(before.isEmpty && after.isEmpty, "\(after)")
    }

    @Test func abortAndDeinitLeaveNothing() throws {
        let dir = TempDir()
        let w = try writer(dir.file("a.wav"))
        try w.write(AudioBuffer(channelCount: 1, capacity: 64), frames: 10)
        w.abort()
        #expect(dir.contents.isEmpty)
        do { _ = try writer(dir.file("b.wav")) }
        #expect(dir.contents.isEmpty)
    }

    @Test func existingFileIsNeverReplacedUnlessAsked() throws {
        let dir = TempDir()
        let path = dir.file("keep.wav")
        FileManager.default.createFile(atPath: path, contents: Data("original".utf8))
        #expect(throws: MixdownError.outputExists(path: path)) { try writer(path) }
        // A file that appears while the render runs is not replaced either.
        let racing = dir.file("race.wav")
        let w = try writer(racing)
        FileManager.default.createFile(atPath: racing, contents: Data("first".utf8))
        #expect(throws: MixdownError.outputExists(path: racing)) { try w.commit() }
        #expect(try String(contentsOfFile: racing, encoding: .utf8) == "first")
        #expect(dir.contents == ["keep.wav", "race.wav"])
        // Asked to overwrite: replaced, in one step.
        let o = try writer(path, overwrite: true)
        try o.write(AudioBuffer(channelCount: 1, capacity: 64), frames: 5)
        try o.commit()
        #expect(try AudioFileInfo.read(path: path).frames == 5)
    }

    @Test func unwritableDestinationsAreNamed() throws {
        let dir = TempDir()
        #expect {
            _ = try writer(dir.file("no/such/dir/out.wav"))
        } throws: { error in
            guard case MixdownError.outputNotWritable(let p, let r) = error else { return false }
            return p.hasSuffix("no/such/dir/out.wav") && r.contains("does not exist")
        }
        try FileManager.default.createDirectory(atPath: dir.file("dir.wav"), withIntermediateDirectories: false)
        #expect(throws: MixdownError.outputNotWritable(path: dir.file("dir.wav"), reason: "it is a directory")) {
            try writer(dir.file("dir.wav"), overwrite: true)
        }
        #expect(throws: MixdownError.self) { try writer("/proc/mixdown-cannot-write.wav") }
    }

    /// Names up to the 255-byte limit write: the temporary name is cut to fit, never the output's.
    @Test(arguments: [241, 250, 255])
    func longOutputNamesWrite(bytes: Int) throws {
        let dir = TempDir()
        // Two-byte characters too, so the cut must fall on a character boundary.
        let stem = String(repeating: "é", count: (bytes - 4) / 2) + String(repeating: "a", count: (bytes - 4) % 2)
        let name = stem + ".wav"
        #expect(name.utf8.count == bytes)
        try writeFile(dir.file(name), [sine(440, frames: 1000)], format: .s16)
        #expect(dir.contents == [name])
        #expect(try AudioFileInfo.read(path: dir.file(name)).frames == 1000)
        let temporary = AudioFileWriter.temporaryName(for: name)
        #expect(temporary.utf8.count <= 255 && AudioFileWriter.isTemporaryName(temporary))
    }

    /// A temporary file a killed render left is refused by every reader, by name.
    @Test func readersRefuseTemporaryFiles() throws {
        let dir = TempDir()
        let good = dir.file("take.wav")
        try writeFile(good, [sine(440, frames: 1000)], format: .s16)
        let stale = dir.file(".take.wav.mixdown-4242-123456.tmp")
        try FileManager.default.copyItem(atPath: good, toPath: stale)
        let reason = "is an unfinished Mixdown output (a temporary file a killed render left behind), not a complete audio file"
        #expect(throws: MixdownError.unreadableFile(path: stale, reason: reason)) { try AudioFileInfo.read(path: stale) }
        #expect(throws: MixdownError.unreadableFile(path: stale, reason: reason)) { try FileSource(path: stale) }
        #expect(!AudioFileWriter.isTemporaryName(".take.wav.mixdown-12x-3.tmp"))
        #expect(!AudioFileWriter.isTemporaryName("take.mixdown-1-2.tmp"))
    }
}
