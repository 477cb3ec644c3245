/// The pull loop: asks a node for blocks and hands them to a file writer.
public enum Renderer {
    /// Renders `source` to `writer` until the stream ends, in blocks whose sizes cycle
    /// through `blockSizes` (one size is the usual case; tests use irregular sequences).
    ///
    /// The graph is prepared, then prerolled (`AudioNode.preroll`: study passes, late
    /// starts; cancellable, and counted into the progress), then pulled.
    /// `expectedFrames` is the exact length the caller promised (nil when unknown); a
    /// stream that ends short of it, or would run past it, is an error, never a cropped
    /// or padded file. `progress` receives the fraction done (0...1, never decreasing)
    /// after each block. `cancellation` is checked before each block.
    /// Encoding and writing run on a background thread (`BackgroundWriter`), overlapping
    /// with the render of the next block; `meter`, when given, measures each block there as
    /// it is handed to the encoder. Allocates only before the loop.
    @discardableResult
    public static func run(source: AudioNode, writer: AudioFileWriter, blockSizes: [Int] = [4096],
                           expectedFrames: Int64?, meter: LoudnessMeter? = nil, progress: ((Double) -> Void)? = nil,
                           cancellation: CancellationToken? = nil) throws(MixdownError) -> Int64 {
        let background = BackgroundWriter(writer: writer, maximumFrames: blockSizes.max() ?? 1, meter: meter)
        var finished = false
        defer { if !finished { try? background.finish() } }
        let done = try pull(source, blockSizes: blockSizes, expectedFrames: expectedFrames, progress: progress,
                            cancellation: cancellation,
                            failure: { reason in .writeFailed(path: writer.destination, reason: reason) },
                            into: { () throws(MixdownError) in try background.nextBuffer() }) { (_, frames) throws(MixdownError) in
            background.publish(frames: frames)
        }
        finished = true
        try background.finish()
        return done
    }

    /// The loop itself, for any consumer of the blocks (a file writer, a loudness meter):
    /// prepares and prerolls `source`, then pulls it in blocks cycling through
    /// `blockSizes` and hands each to `consume` (its first `frames` frames, valid during
    /// the call). Each block is rendered into the buffer `into` gives (a writer's free
    /// slot, of at least the largest block size), or into one buffer of the loop's own.
    /// With `expectedFrames`, a stream that ends short of it or would run past it throws
    /// `failure(reason)`. Returns the frames pulled.
    @discardableResult
    static func pull(_ source: AudioNode, blockSizes: [Int], expectedFrames: Int64?, progress: ((Double) -> Void)?,
                     cancellation: CancellationToken?, failure: (String) -> MixdownError,
                     into target: (() throws(MixdownError) -> AudioBuffer)? = nil,
                     consume: (AudioBuffer, Int) throws(MixdownError) -> Void) throws(MixdownError) -> Int64 {
        precondition(!blockSizes.isEmpty && blockSizes.allSatisfy { $0 > 0 }, "block sizes must be positive")
        let source = ContractCheck.wrap(source)
        let maxBlock = blockSizes.max()!
        try source.prepare(maximumFrames: maxBlock)
        // Study passes and late starts, counted into the progress as frames of work.
        let preroll = Preroll(renderFrames: expectedFrames ?? 0, progress: expectedFrames == nil ? nil : progress,
                              cancellation: cancellation)
        try source.preroll(preroll)
        // With a target, the loop's own buffer only takes the one frame asked past the end.
        let buffer = AudioBuffer(format: source.format, capacity: target == nil ? maxBlock : 1)
        var done: Int64 = 0
        var next = 0
        var ended = false
        while true {
            if cancellation?.isCancelled == true { throw .cancelled }
            var want = blockSizes[next]
            next = next + 1 == blockSizes.count ? 0 : next + 1
            if let total = expectedFrames { want = Int(min(Int64(want), total - done)) }
            if want == 0 { break }
            let block = try target?() ?? buffer
            let status = try source.render(into: block, frames: want)
            try consume(block, status.frames)
            done += Int64(status.frames)
            if expectedFrames != nil { progress?(preroll.fraction(rendered: done)) }
            ended = status.ended
            if status.ended || status.frames < want { break }
        }
        // The promised length is reached: the stream must end here, not run on (asking
        // for one more frame is safe, the contract gives zero frames after the end).
        if let total = expectedFrames, done == total, !ended {
            let after = try source.render(into: buffer, frames: 1)
            if after.frames > 0 { throw failure("the render runs past the \(total) frames expected") }
        }
        if let total = expectedFrames, done != total {
            throw failure("the render produced \(done) frames, \(total) were expected")
        }
        return done
    }

    /// `run`, then `writer.commit()`: the file appears complete at its destination, or, on
    /// any error or cancellation, the writer is aborted and nothing is left behind.
    @discardableResult
    public static func render(_ source: AudioNode, to writer: AudioFileWriter, blockSizes: [Int] = [4096],
                              expectedFrames: Int64?, meter: LoudnessMeter? = nil, progress: ((Double) -> Void)? = nil,
                              cancellation: CancellationToken? = nil) throws(MixdownError) -> Int64 {
        do {
            let frames = try run(source: source, writer: writer, blockSizes: blockSizes, expectedFrames: expectedFrames,
                                 meter: meter, progress: progress, cancellation: cancellation)
            try writer.commit(cancellation: cancellation)
            return frames
        } catch {
            writer.abort()
            throw error
        }
    }
}
