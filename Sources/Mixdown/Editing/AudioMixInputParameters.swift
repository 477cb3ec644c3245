/// A track's mix settings (AVAudioMixInputParameters): its volume automation.
public struct AudioMixInputParameters: Sendable, Equatable {
    public let trackID: Int32
    public var volume = VolumeAutomation()

    public init(trackID: Int32) { self.trackID = trackID }

    /// Holds `volume` from `time` until the next event.
    public mutating func setVolume(_ volume: Float, at time: MediaTime) throws(MixdownError) {
        try self.volume.setVolume(volume, at: time)
    }

    /// Ramps linearly across `timeRange`; the end volume holds after it.
    public mutating func setVolumeRamp(from start: Float, to end: Float, timeRange: MediaTimeRange) throws(MixdownError) {
        try volume.setVolumeRamp(from: start, to: end, timeRange: timeRange)
    }
}
