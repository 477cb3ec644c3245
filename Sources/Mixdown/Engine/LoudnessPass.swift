/// Renders a graph into a `LoudnessMeter` instead of a file: the measuring pass of a
/// normalised job, and `mixdown loudness` over a file.
public enum LoudnessPass {
    /// Prepares, prerolls and pulls `source` to its end (exactly `expectedFrames` frames
    /// when given: a stream that ends short of it or runs past it is an error) in blocks of
    /// `blockFrames`, measuring each: `Renderer`'s loop, with the meter for the file.
    /// `progress` receives the fraction done (0...1) after each block; `cancellation` is
    /// checked before each block. `threads` 2 measures the peaks on a second core; `finePeak`
    /// adds the 8x reading.
    public static func measure(_ source: AudioNode, expectedFrames: Int64?, blockFrames: Int = 65_536, threads: Int = 1,
                               finePeak: Bool = false, progress: ((Double) -> Void)? = nil,
                               cancellation: CancellationToken? = nil) throws(MixdownError) -> LoudnessMeasurement {
        try meter(source, expectedFrames: expectedFrames, blockFrames: blockFrames, threads: threads, finePeak: finePeak,
                  timeline: false, progress: progress, cancellation: cancellation).measurement
    }

    /// `measure`, with the measurement over time (`LoudnessTimeline`).
    public static func measureOverTime(_ source: AudioNode, expectedFrames: Int64?, blockFrames: Int = 65_536, threads: Int = 1,
                                       finePeak: Bool = false, progress: ((Double) -> Void)? = nil,
                                       cancellation: CancellationToken? = nil) throws(MixdownError) -> (LoudnessMeasurement, LoudnessTimeline) {
        let meter = try meter(source, expectedFrames: expectedFrames, blockFrames: blockFrames, threads: threads, finePeak: finePeak,
                              timeline: true, progress: progress, cancellation: cancellation)
        return (meter.measurement, meter.timeline()!)
    }

    private static func meter(_ source: AudioNode, expectedFrames: Int64?, blockFrames: Int, threads: Int, finePeak: Bool, timeline: Bool,
                              progress: ((Double) -> Void)?, cancellation: CancellationToken?) throws(MixdownError) -> LoudnessMeter {
        let meter = try LoudnessMeter(sampleRate: source.format.sampleRate, channelCount: source.format.channelCount,
                                      maximumFrames: blockFrames, threads: threads, finePeak: finePeak, timeline: timeline)
        try Renderer.pull(source, blockSizes: [blockFrames], expectedFrames: expectedFrames, progress: progress,
                          cancellation: cancellation,
                          failure: { reason in .readFailed(path: "render", reason: reason) }) { (buffer, frames) throws(MixdownError) in
            meter.add(buffer, frames: frames)
        }
        return meter
    }
}
