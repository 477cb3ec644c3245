/// Which channel of its file a segment plays, and where that channel lands in the output:
/// what an editor's track that holds one channel of a multi-channel source plays (an Avid
/// or EDL track `A2`, a Final Cut 7 mono track, a Resolve mono track).
///
/// Channels count from 0 here (the Swift API); documents and timelines count from 1, as
/// editors do. A segment without a route plays its whole file by `ChannelMapper`'s rule.
///
/// Where the channel lands (`ChannelPlacer`):
/// - `outputChannel` given (an export's own routing: Final Cut 7's `outputchannelindex`):
///   that output channel;
/// - nil: the channel's own place in its file (channel 2 of a stereo file plays on the
///   right), so the tracks that split a file play it back exactly as the file sounds whole;
///   a mono file's one channel plays on every output channel, as a mono file always does;
/// - an output channel the output does not have (channel 5 of a 6-channel source into
///   stereo): odd channels (counted from 1) left, even right, as Avid pans tracks by default;
/// - into a mono output: the channel at 1/N of its level (N: the file's channel count), so
///   the split parts sum to the file's own downmix (its channels' mean).
public struct ChannelRoute: Sendable, Equatable, Hashable, Codable {
    /// The file's channel, from 0.
    public let sourceChannel: Int
    /// The output channel it lands on, from 0; nil: its own place in the file.
    public let outputChannel: Int?

    public init(sourceChannel: Int, outputChannel: Int? = nil) {
        self.sourceChannel = sourceChannel
        self.outputChannel = outputChannel
    }

    /// "channel 2 of the file" (+ " on output channel 1"), counted from 1 as editors do.
    public var description: String {
        "channel \(sourceChannel + 1) of the file" + (outputChannel.map { " on output channel \($0 + 1)" } ?? "")
    }

    /// The source channel actually read from a file of `fileChannels`: a mono file's one
    /// channel whatever was asked (it cannot be split); nil when the file has two or more
    /// channels but not the one asked for.
    public func channel(inFileOf fileChannels: Int) -> Int? {
        if fileChannels == 1 { return 0 }
        return sourceChannel < fileChannels ? sourceChannel : nil
    }

    /// Where the channel lands among `outputChannels`, and at what gain (the rule above);
    /// `to` nil: every output channel.
    public func placement(fileChannels: Int, outputChannels: Int) -> (to: Int?, gain: Float) {
        let wanted = outputChannel ?? (fileChannels == 1 ? nil : channel(inFileOf: fileChannels))
        guard let wanted else { return (nil, 1) }
        if outputChannels == 1 { return (0, outputChannel == nil ? 1 / Float(fileChannels) : 1) }
        return (wanted < outputChannels ? wanted : wanted % 2, 1)
    }
}
