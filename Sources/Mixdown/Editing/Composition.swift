/// A multi-track audio composition (AVMutableComposition): tracks of edits on one timeline.
///
/// A value type: copy it, edit the copy. Tracks are addressed by `trackID`
/// (`composition[trackID: id]`), as AVFoundation's persistent track IDs.
public struct Composition: Sendable, Equatable {
    public private(set) var tracks: [CompositionTrack] = []
    private var nextID: Int32 = 1

    public init() {}

    /// Adds an empty track and returns its ID. The name defaults to "track N".
    @discardableResult
    public mutating func addTrack(name: String? = nil) -> Int32 {
        let id = nextID
        nextID += 1
        tracks.append(CompositionTrack(trackID: id, name: name ?? "track \(id)"))
        return id
    }

    /// The track with `id`, for reading and editing in place.
    public subscript(trackID id: Int32) -> CompositionTrack {
        get {
            guard let t = tracks.first(where: { $0.trackID == id }) else { preconditionFailure("no track \(id)") }
            return t
        }
        // In place, so an edit through the subscript does not copy the track's segments.
        _modify {
            guard let i = tracks.firstIndex(where: { $0.trackID == id }) else { preconditionFailure("no track \(id)") }
            yield &tracks[i]
            precondition(tracks[i].trackID == id, "a track keeps its ID")
        }
    }

    public func track(withID id: Int32) -> CompositionTrack? { tracks.first { $0.trackID == id } }
    public func track(named name: String) -> CompositionTrack? { tracks.first { $0.name == name } }

    /// The end of the longest track.
    public var duration: MediaTime { tracks.map(\.duration).max() ?? .zero }

    /// Inserts silence into every track at `range.start` (AVMutableComposition.insertEmptyTimeRange).
    public mutating func insertEmptyTimeRange(_ range: MediaTimeRange) throws(MixdownError) {
        for i in tracks.indices { try tracks[i].insertEmptyTimeRange(range) }
    }

    /// Removes `range` from every track; later content moves earlier.
    public mutating func removeTimeRange(_ range: MediaTimeRange) throws(MixdownError) {
        for i in tracks.indices { try tracks[i].removeTimeRange(range) }
    }

    /// Scales `range` of every track to `duration`; the export's time-pitch algorithm
    /// stretches what plays in it.
    public mutating func scaleTimeRange(_ range: MediaTimeRange, toDuration duration: MediaTime) throws(MixdownError) {
        for i in tracks.indices { try tracks[i].scaleTimeRange(range, toDuration: duration) }
    }

    /// Every asset the composition plays, once each, in first-use order.
    public var assets: [AudioAsset] {
        var seen: [AudioAsset] = []
        var keys = Set<AssetKey>()
        for t in tracks {
            for s in t.placedSegments {
                if let a = s.source?.asset, keys.insert(AssetKey(path: a.path, stream: a.stream)).inserted { seen.append(a) }
            }
        }
        return seen
    }

    private struct AssetKey: Hashable { let path: String; let stream: Int }

    /// The output format an export uses when none is given: the highest sample rate among
    /// the files, stereo if any file has two or more channels, else mono.
    public var defaultOutputFormat: AudioFormat? { defaultFormat(of: assets) }

    func defaultFormat(of assets: [AudioAsset]) -> AudioFormat? {
        let infos = assets.map(\.info)
        guard let rate = infos.map(\.sampleRate).max() else { return nil }
        return AudioFormat(sampleRate: rate, channelCount: infos.contains { $0.channelCount >= 2 } ? 2 : 1)
    }
}
