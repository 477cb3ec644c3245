/// Renders a graph into a `LoudnessMeter` instead of a file: the measuring pass of a
/// normalised job, and `mixdown loudness` over a file.
public enum LoudnessPass {
    /// Prepares, prerolls and pulls `source` to its end (exactly `expectedFrames` frames
    /// when given: a stream that ends short of it is an error) in blocks of `blockFrames`,
    /// measuring each. `progress` receives the fraction done (0...1) after each block;
    /// `cancellation` is checked before each block. `threads` 2 measures the peaks on a
    /// second core.
    public static func measure(_ source: AudioNode, expectedFrames: Int64?, blockFrames: Int = 65_536, threads: Int = 1,
                               progress: ((Double) -> Void)? = nil,
                               cancellation: CancellationToken? = nil) throws(MixdownError) -> LoudnessMeasurement {
        let source = ContractCheck.wrap(source)
        try source.prepare(maximumFrames: blockFrames)
        let preroll = Preroll(renderFrames: expectedFrames ?? 0, progress: expectedFrames == nil ? nil : progress,
                              cancellation: cancellation)
        try source.preroll(preroll)
        let meter = try LoudnessMeter(sampleRate: source.format.sampleRate, channelCount: source.format.channelCount,
                                      maximumFrames: blockFrames, threads: threads)
        let buffer = AudioBuffer(format: source.format, capacity: blockFrames)
        var done: Int64 = 0
        while true {
            if cancellation?.isCancelled == true { throw .cancelled }
            var want = blockFrames
            if let total = expectedFrames { want = Int(min(Int64(want), total - done)) }
            if want == 0 { break }
            let status = try source.render(into: buffer, frames: want)
            meter.add(buffer, frames: status.frames)
            done += Int64(status.frames)
            if expectedFrames != nil { progress?(preroll.fraction(rendered: done)) }
            if status.ended || status.frames < want { break }
        }
        if let total = expectedFrames, done != total {
            throw .readFailed(path: "render", reason: "the render ended at frame \(done), \(total) were expected")
        }
        return meter.measurement
    }
}
