import Foundation
import Testing
@testable import Mixdown

@Suite struct AudioFileProbeTests {
    /// The reader is chosen by content: MP4 boxes and the EBML magic go to FFmpeg, the
    /// formats libsndfile knows to libsndfile, whatever the file is called.
    @Test func picksTheReaderFromTheFirstBytes() {
        func head(_ s: String) -> [UInt8] { Array(s.utf8) }
        #expect(AudioFileProbe.reader(forHead: [0, 0, 0, 0x20] + head("ftypM4A ")) == .ffmpeg)
        #expect(AudioFileProbe.reader(forHead: [0, 0, 0, 0x08] + head("wide")) == .ffmpeg)
        #expect(AudioFileProbe.reader(forHead: [0x1A, 0x45, 0xDF, 0xA3, 0x9F]) == .ffmpeg)
        #expect(AudioFileProbe.reader(forHead: head("RIFF\u{0}\u{0}\u{0}\u{0}WAVE")) == .sndfile)
        #expect(AudioFileProbe.reader(forHead: head("fLaC")) == .sndfile)
        #expect(AudioFileProbe.reader(forHead: head("OggS")) == .sndfile)
        #expect(AudioFileProbe.reader(forHead: [0xFF, 0xF1, 0x50, 0x80]) == nil)
    }

    /// An M4A named .wav is still read as what it is (or refused naming the trait).
    @Test func aContainerWithTheWrongNameIsStillRecognised() throws {
        let dir = TempDir()
        let path = dir.file("really-an-m4a.wav")
        #if FFmpeg
        let m4a = dir.file("x.m4a")
        try writeFile(m4a, [sine(440, frames: 12_345)], type: .m4a, format: nil)
        try FileManager.default.copyItem(atPath: m4a, toPath: path)
        let info = try AudioFileInfo.read(path: path)
        #expect(info.type == "m4a" && info.frames == 12_345)
        #else
        try Data([0, 0, 0, 0x20] + Array("ftypM4A ".utf8) + [UInt8](repeating: 0, count: 64)).write(to: URL(fileURLWithPath: path))
        #expect(throws: MixdownError.unreadableFile(path: path, reason: "an MP4/MOV/M4A/MKV/WebM file, which this Mixdown cannot read: it was built without the FFmpeg trait")) {
            try AudioFileInfo.read(path: path)
        }
        #expect(throws: MixdownError.unsupportedOutput(path: "out.m4a", reason: "m4a is written through FFmpeg's libraries, and this Mixdown was built without the FFmpeg trait")) {
            try OutputEncoding.resolve(path: "out.m4a", type: .m4a, sampleFormat: nil, frames: 10, channels: 1)
        }
        #endif
    }

    /// AIFF and CAF store the rate as a float; 0, NaN and infinity are refused, where
    /// libsndfile alone would give 1 Hz or 67 MHz. The bytes are patched in a file the
    /// library wrote, and a good file of each type still reads at its rate.
    @Test(arguments: [AudioFileType.aiff, .caf])
    func aHeaderRateThatIsNoRateIsRefused(type: AudioFileType) throws {
        let dir = TempDir()
        let good = dir.file("good.\(type.rawValue)")
        try writeFile(good, [sine(440, frames: 4_800)], sampleRate: 48_000, type: type, format: .s16)
        #expect(try AudioFileInfo.read(path: good).sampleRate == 48_000)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: good)))
        let chunk = type == .aiff ? Array("COMM".utf8) : Array("desc".utf8)
        let at = try #require((0..<(bytes.count - 4)).first { Array(bytes[$0..<($0 + 4)]) == chunk })
        let rateAt = type == .aiff ? at + 16 : at + 12
        let patches: [(String, [UInt8])] = type == .aiff
            ? [("nan", [0x7F, 0xFF, 0xC0, 0, 0, 0, 0, 0, 0, 0]), ("inf", [0x7F, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0]), ("0.0", [UInt8](repeating: 0, count: 10))]
            : [("nan", withUnsafeBytes(of: Double.nan.bitPattern.bigEndian) { Array($0) }),
               ("inf", withUnsafeBytes(of: Double.infinity.bitPattern.bigEndian) { Array($0) }),
               ("0.0", [UInt8](repeating: 0, count: 8))]
        for (word, patch) in patches {
            var b = bytes
            b.replaceSubrange(rateAt..<(rateAt + patch.count), with: patch)
            let path = dir.file("\(word).\(type.rawValue)")
            try Data(b).write(to: URL(fileURLWithPath: path))
            #expect(throws: MixdownError.unreadableFile(path: path, reason: "the header's sample rate is \(word) Hz, which is not a sample rate")) {
                try AudioFileInfo.read(path: path)
            }
        }
        bytes = []
    }
}
