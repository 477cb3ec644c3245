/// Measures the loudness of one file's audio stream (EBU R128): `mixdown loudness`.
/// Reads every type Mixdown reads; decoding runs ahead on its own thread.
public struct FileLoudness: Sendable {
    public var input: String
    /// The input's audio stream (the container's index); nil: its first audio stream.
    public var stream: Int?
    /// Cores the meter may use besides the decoder's (1 or 2).
    public var threads = 2
    /// Adds the 8x true-peak reading (`LoudnessMeasurement.truePeakFine`).
    public var finePeak = false
    /// Adds the measurement over time (`Report.timeline`), for a report's page.
    public var overTime = false

    public init(input: String, stream: Int? = nil) {
        self.input = input
        self.stream = stream
    }

    public struct Report: Sendable, Encodable {
        public let input: String
        public let loudness: LoudnessMeasurement
        /// With `overTime`: the measurement along the file.
        public let timeline: LoudnessTimeline?
        /// Wall time, in seconds.
        public let seconds: Double
    }

    public func run(progress: ((Double) -> Void)? = nil, cancellation: CancellationToken? = nil) throws(MixdownError) -> Report {
        let clock = Stopwatch()
        let reader = try AudioFileProbe.open(path: input, stream: stream)
        guard LoudnessMeter.measurableRates.contains(reader.info.sampleRate) else {
            throw .unsupportedInput(path: input, reason: "its sample rate, \(reader.info.sampleRate) Hz, is outside the \(LoudnessMeter.measurableRates.lowerBound) to \(LoudnessMeter.measurableRates.upperBound) Hz a loudness meter measures")
        }
        let source = ReadAhead(input: try FileSource(decoder: reader, range: nil))
        if overTime {
            let (m, timeline) = try LoudnessPass.measureOverTime(source, expectedFrames: reader.info.frames, threads: threads,
                                                                 finePeak: finePeak, progress: progress, cancellation: cancellation)
            return Report(input: input, loudness: m, timeline: timeline, seconds: clock.seconds)
        }
        let m = try LoudnessPass.measure(source, expectedFrames: reader.info.frames, threads: threads, finePeak: finePeak,
                                         progress: progress, cancellation: cancellation)
        return Report(input: input, loudness: m, timeline: nil, seconds: clock.seconds)
    }
}
