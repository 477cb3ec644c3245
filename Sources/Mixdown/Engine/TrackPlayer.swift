/// Plays one composition track on the output timeline: between a segment's first and
/// last output frame, the frames of that segment's node chain; silence elsewhere.
///
/// An item's chain is made and prepared when the playhead reaches the item's first frame
/// (the first item's at `preroll`, when there is one),
/// and released (its file closed) after its last one: a track holds at most one chain
/// open, so a document of 100,000 cuts needs one file descriptor per track, and memory
/// that does not grow with the cuts' audio. (A composition's files were checked when its
/// assets were read; a file that goes missing since is an error mid-render, and the
/// writer then leaves nothing.) Opening a chain allocates: the steady state inside a
/// segment does not. A chain that ends before its item's frames are done is padded with
/// silence; a chain is never asked for more than its item's frames, so every segment
/// covers exactly the frames its target range gives.
public final class TrackPlayer: AudioNode {
    /// A segment as the player sees it.
    public struct Item {
        /// Output frames the segment covers, counted from the start of the render.
        public let frames: Range<Int64>
        /// Frames of the chain's output to drop before `frames.lowerBound` (a render that
        /// starts inside the segment, when its source cannot be cut exactly).
        public let skip: Int64
        /// Makes the node chain (called once, when the playhead reaches the item).
        public let make: () throws(MixdownError) -> AudioNode

        public init(frames: Range<Int64>, skip: Int64 = 0, make: @escaping () throws(MixdownError) -> AudioNode) {
            self.frames = frames
            self.skip = skip
            self.make = make
        }
    }

    public let format: AudioFormat
    public var length: Int64? { total }
    /// A label for messages ("track 2 'voice'").
    public let label: String
    private let items: [Item]
    private let total: Int64
    /// The current item's chain, while it plays.
    private var chain: AudioNode?
    private var maximumFrames = 0
    private var scratch: AudioBuffer?
    private var view: AudioBuffer?
    private var position: Int64 = 0
    private var current = 0
    /// True once the current item's chain has ended (the rest of the item is silence).
    private var chainEnded = false

    /// `items` in timeline order, not overlapping, inside 0..<length.
    public init(format: AudioFormat, length: Int64, items: [Item], label: String) {
        for (a, b) in zip(items, items.dropFirst()) { precondition(a.frames.upperBound <= b.frames.lowerBound, "items overlap") }
        precondition(items.allSatisfy { $0.frames.lowerBound >= 0 && $0.frames.upperBound <= length })
        self.format = format
        total = length
        self.items = items.filter { !$0.frames.isEmpty }
        self.label = label
    }

    public func prepare(maximumFrames: Int) throws(MixdownError) {
        precondition(view == nil, "prepare is called once")
        self.maximumFrames = maximumFrames
        view = AudioBuffer(viewWithChannelCount: format.channelCount, capacity: maximumFrames)
    }

    /// Opens the first item's chain ahead of the render: its own preroll (a study pass)
    /// and the frames it drops before the render are reported as preroll work. Later
    /// items open when the playhead reaches them.
    public func preroll(_ preroll: Preroll) throws(MixdownError) {
        guard let first = items.first, chain == nil, position == 0 else { return }
        chain = try open(first, preroll: preroll)
    }

    /// Makes and prepares `item`'s chain, and drops the frames it plays before the render.
    private func open(_ item: Item, preroll: Preroll? = nil) throws(MixdownError) -> AudioNode {
        let chain = ContractCheck.wrap(try item.make())
        precondition(chain.format == format, "\(label): chain gives \(chain.format), the track plays \(format)")
        try chain.prepare(maximumFrames: maximumFrames)
        if let preroll {
            try chain.preroll(preroll)
            preroll.begin(work: item.skip)
        }
        var left = item.skip
        while left > 0 {
            if scratch == nil { scratch = AudioBuffer(format: format, capacity: maximumFrames) }
            let n = Int(min(Int64(maximumFrames), left))
            let status = try chain.render(into: scratch!, frames: n)
            left -= Int64(status.frames)
            try preroll?.advance(by: Int64(status.frames))
            if status.ended { break }
        }
        return chain
    }

    public func render(into buffer: AudioBuffer, frames: Int) throws(MixdownError) -> RenderStatus {
        let want = Int(min(Int64(frames), total - position))
        var done = 0
        while done < want {
            let p = position + Int64(done)
            guard current < items.count else {
                buffer.clear(done..<want)
                done = want
                break
            }
            let item = items[current]
            if p < item.frames.lowerBound {
                let n = Int(min(Int64(want - done), item.frames.lowerBound - p))
                buffer.clear(done..<(done + n))
                done += n
                continue
            }
            let n = Int(min(Int64(want - done), item.frames.upperBound - p))
            if chainEnded {
                buffer.clear(done..<(done + n))
            } else {
                if chain == nil { chain = try open(item) }
                view!.aim(into: buffer, offset: done)
                let got = try chain!.render(into: view!, frames: n)
                if got.frames < n {
                    buffer.clear((done + got.frames)..<(done + n))
                    chainEnded = true
                }
            }
            done += n
            if p + Int64(n) == item.frames.upperBound {
                current += 1
                chainEnded = false
                chain = nil
            }
        }
        position += Int64(want)
        return RenderStatus(frames: want, ended: position == total)
    }
}
