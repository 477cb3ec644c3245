import Foundation

/// Where a value of a document came from, for its errors: a path in Mixdown's JSON
/// document, below which a key is named (`tracks[0].segments[2].source`), or an object of
/// an OpenTimelineIO timeline, named as it is (the clip or its `source_range`: the key a
/// check concerns is Mixdown's, not the timeline's).
struct DocumentOrigin {
    let file: String
    let path: String
    /// Whether a key below `path` is named in messages.
    let namesKeys: Bool

    init(_ c: JSONCursor, namesKeys: Bool = true) {
        file = c.file
        path = c.path
        self.namesKeys = namesKeys
    }

    func fail(_ reason: String, at key: String? = nil) -> MixdownError {
        let location = path.isEmpty ? (namesKeys ? key : nil) ?? "(top level)" : namesKeys && key != nil ? "\(path).\(key!)" : path
        return .invalidDocument(file: file, location: location, reason: reason)
    }
}

/// A composition as both document readers give it, Mixdown's JSON and an OTIO timeline:
/// typed, in exact time, each value with its origin. `CompositionDocument.assemble` checks
/// it and builds the composition and its mix; the checks and their messages are one code
/// for both formats.
struct CompositionDraft {
    /// A segment of a track: a part of a file placed on the timeline, or an empty edit.
    struct Segment {
        enum Content {
            /// `source` of `asset`, played from `at` for `duration` (nil: the source's own
            /// length; else the segment alone is scaled to it).
            case media(AudioAsset, source: MediaTimeRange, at: MediaTime, duration: MediaTime?)
            /// Silence over the range.
            case empty(MediaTimeRange)
        }
        var content: Content
        let origin: DocumentOrigin
        /// The one channel of the file the segment plays, and where (nil: the whole file).
        var route: ChannelRoute? = nil
    }

    /// A volume event of a track's automation (linear gains).
    struct VolumeEvent {
        enum Kind {
            case set(Float, at: MediaTime)
            case ramp(from: Float, to: Float, MediaTimeRange)
        }
        let kind: Kind
        let origin: DocumentOrigin
    }

    /// A scale of a time range to a new duration (AVFoundation's `scaleTimeRange`).
    struct Scale {
        let range: MediaTimeRange
        let duration: MediaTime
        let origin: DocumentOrigin
    }

    struct Track {
        let name: String
        var segments: [Segment] = []
        var scales: [Scale] = []
        var volume: [VolumeEvent] = []
        /// Where the track's automation was given (its events overlapping is named there).
        var volumeOrigin: DocumentOrigin?
        /// The track's loudness (LUFS) for a loudness-matched mix.
        var loudness: Double?
    }

    var tracks: [Track] = []
    /// Scales of every track, after each track's own.
    var scales: [Scale] = []
}

extension CompositionDocument {
    /// Builds the composition and its mix from `draft`, at the output rate already settled:
    /// each track's segments (checked, placed in timeline order, an overlap naming both),
    /// its own scales, the composition's, then the volume automation. Returns the tracks'
    /// IDs in the draft's order.
    mutating func assemble(_ draft: CompositionDraft) throws(MixdownError) -> [Int32] {
        let rate = outputFormat?.sampleRate
        var composition = Composition()
        let ids = draft.tracks.map { composition.addTrack(name: $0.name) }
        for (ti, track) in draft.tracks.enumerated() {
            if let l = track.loudness { composition[trackID: ids[ti]].loudness = l }
            // Checked in document order, then placed in timeline order (sorting keeps loading
            // O(n log n)); an overlap names both segments' origins.
            var placed: [Placed] = []
            placed.reserveCapacity(track.segments.count)
            for (index, seg) in track.segments.enumerated() {
                let s = seg.origin
                switch seg.content {
                case .media(let asset, let source, let at, let given):
                    guard source.start >= .zero, source.duration > .zero else {
                        throw s.fail("must start at or after 0 and last longer than 0", at: "source")
                    }
                    guard source.end <= asset.duration else {
                        throw s.fail("\(CompositionTrack.describe(source)) lies outside '\(asset.path)', which is \(asset.duration.clockDescription) long (\(asset.info.frames) frames)", at: "source")
                    }
                    guard at >= .zero else { throw s.fail("must not be negative", at: "at") }
                    // A length on the timeline other than the source's: the segment alone is scaled to it.
                    var duration = source.duration
                    if let given {
                        guard given > .zero else { throw s.fail("must be longer than 0", at: "duration") }
                        guard StretchRatio.isSupportedScale(from: source.duration, to: given) else {
                            let factor = given.approximateSeconds / source.duration.approximateSeconds
                            throw s.fail("scales \(CompositionTrack.describe(source)) by \(factor): a scale must lie between 0.25 and 4", at: "duration")
                        }
                        duration = given
                    }
                    placed.append(Placed(range: MediaTimeRange(start: at, duration: duration), index: index, source: source, asset: asset, route: seg.route))
                case .empty(let range):
                    guard range.start >= .zero, range.duration > .zero else { throw s.fail("must start at or after 0 and last longer than 0", at: "empty") }
                    placed.append(Placed(range: range, index: index, source: nil, asset: nil, route: nil))
                }
            }
            placed.sort { ($0.range.start, $0.index) < ($1.range.start, $1.index) }
            for (a, b) in zip(placed, placed.dropFirst()) where a.range.end > b.range.start {
                // Name the later one in the document as at fault, as a reader would find it.
                let (late, early) = a.index > b.index ? (a, b) : (b, a)
                throw track.segments[late.index].origin.fail("\(CompositionTrack.describe(late.range)) overlaps \(track.segments[early.index].origin.path) (\(CompositionTrack.describe(early.range)))")
            }
            for p in placed {
                do {
                    if let asset = p.asset, let source = p.source {
                        // Exactly the place given: a scaled segment's own duration is not
                        // rounded through scaleTimeRange's arithmetic.
                        try composition[trackID: ids[ti]].addSegment(source, of: asset, at: p.range.start, duration: p.range.duration, route: p.route)
                    } else {
                        try composition[trackID: ids[ti]].addEmptySegment(p.range)
                    }
                } catch { throw track.segments[p.index].origin.fail("\(error)") }
            }
        }

        // A track's own scale entries first (AVMutableCompositionTrack.scaleTimeRange: a
        // device's drift), then the composition's (every track).
        for (ti, track) in draft.tracks.enumerated() {
            for s in track.scales {
                do { try composition[trackID: ids[ti]].scaleTimeRange(s.range, toDuration: s.duration) } catch { throw s.origin.fail("\(error)") }
            }
        }
        for s in draft.scales {
            do { try composition.scaleTimeRange(s.range, toDuration: s.duration) } catch { throw s.origin.fail("\(error)") }
        }

        var mix = AudioMix()
        for (ti, track) in draft.tracks.enumerated() where !track.volume.isEmpty {
            var params = AudioMixInputParameters(trackID: ids[ti])
            for e in track.volume {
                do {
                    switch e.kind {
                    case .set(let v, let at): try params.setVolume(v, at: at)
                    case .ramp(let from, let to, let range): try params.setVolumeRamp(from: from, to: to, timeRange: range)
                    }
                } catch { throw e.origin.fail("\(error)") }
            }
            // Overlapping events are found when the events become frames; name the track's automation.
            do { _ = try params.volume.envelope(sampleRate: rate ?? 48_000) } catch {
                throw (track.volumeOrigin ?? track.volume[0].origin).fail("\(error)")
            }
            mix[trackID: ids[ti]] = params
        }
        self.composition = composition
        self.audioMix = mix
        return ids
    }

    /// A segment checked, before it is placed.
    private struct Placed {
        let range: MediaTimeRange
        /// Its index in the track's segments.
        let index: Int
        let source: MediaTimeRange?
        let asset: AudioAsset?
        let route: ChannelRoute?
    }
}
