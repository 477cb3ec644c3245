import Mixdown

/// Writes a `TestSignal` to a file (atomic, like every output).
public struct SignalFile: Sendable {
    public var output: String
    public var sampleRate = 48_000
    public var channelCount = 2
    public var duration: MediaTime
    /// Time between markers (nil: none); at least one frame.
    public var markerInterval: MediaTime? = MediaTime(seconds: 60)
    /// How the file is written: 16-bit WAV unless set otherwise.
    public var settings: OutputSettings = {
        var s = OutputSettings(blockSizes: [4096])
        s.type = .wav
        s.sampleFormat = .s16
        return s
    }()
    /// The sines (default: 440, 1000 and 5000 Hz, quiet).
    public var tones = TestSignal.defaultTones

    public init(output: String, duration: MediaTime) {
        self.output = output
        self.duration = duration
    }

    /// Renders the signal and returns the frames written and the marker frames.
    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> (frames: Int64, markers: [Int64]) {
        guard duration.isNumeric, duration > .zero else {
            throw .invalidParameter(name: "--duration", value: duration.clockDescription, reason: "must be longer than 0")
        }
        if let m = markerInterval, !(m.isNumeric && m > .zero && m.frames(atRate: sampleRate) > 0) {
            throw .invalidParameter(name: "--marker-interval", value: m.clockDescription, reason: "must be at least one frame long (0: no markers)")
        }
        let job = try OutputJob(path: output, settings: settings)
        let frames = duration.frames(atRate: sampleRate)
        let format = AudioFormat(sampleRate: sampleRate, channelCount: channelCount)
        let signal = TestSignal(format: format, length: frames, tones: tones, markerInterval: markerInterval?.frames(atRate: sampleRate))
        let encoding = try job.encoding(frames: frames, channels: channelCount, natural: nil)
        _ = try job.write(signal, frames: frames, encoding: encoding, progress: progress, cancellation: cancellation)
        return (frames, signal.markerFrames)
    }
}

extension SignalFile: FileWritingJob {}
