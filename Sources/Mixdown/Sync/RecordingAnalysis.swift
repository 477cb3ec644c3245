import Foundation

/// The analysis grid every recording of one estimate shares; the reference's rate decides it.
struct AnalysisGrid: Sendable {
    /// The reference's sample rate; every other recording is resampled to it for analysis.
    let sampleRate: Int
    /// Samples of `sampleRate` averaged into one analysis sample (about 8 kHz remain).
    let decimation: Int
    /// Analysis samples per envelope value (about 100 per second).
    let envelopeStep: Int
    /// Analysis samples per window.
    let windowLength: Int
    /// Seconds of a recording's own clock between window centres.
    let spacing: Double

    static let analysisTarget = 8000
    static let windowSeconds = 1.0

    /// The first window's centre (seconds), when not half the spacing: a short clip's
    /// windows start at its first sample.
    let firstCentre: Double?
    /// The corner of a high-pass both files are analysed through (Hz), nil for none: the
    /// match above the band where a filter on one side turned the phase (a drone through a
    /// recorder's minimum-phase high-pass).
    var highPassHz: Double? = nil

    init(sampleRate: Int, spacing: Double, firstCentre: Double? = nil) {
        self.firstCentre = firstCentre
        self.sampleRate = sampleRate
        decimation = AnalysisStream.factor(sampleRate, decimation: sampleRate / Self.analysisTarget)
        let rate = Double(sampleRate) / Double(decimation)
        envelopeStep = max(1, Int((rate / 100).rounded()))
        windowLength = Int(rate * Self.windowSeconds)
        self.spacing = spacing
    }

    /// Analysis samples per second.
    var rate: Double { Double(sampleRate) / Double(decimation) }
    /// Envelope values per second.
    var envelopeRate: Double { rate / Double(envelopeStep) }

    /// Window centres (seconds of the recording's clock) for a recording this long.
    func centres(duration: Double) -> [Double] {
        if let firstCentre {
            return stride(from: firstCentre, through: duration - Self.windowSeconds / 2, by: spacing).map { $0 }
        }
        return stride(from: spacing / 2, to: duration - Self.windowSeconds / 2, by: spacing).map { $0 }
    }
}

/// One recording's first pass, read once whatever role it plays: its 100 Hz energy
/// envelope (as a reference) and its one-second analysis windows (as a recording to place).
/// Memory: the envelope (400 bytes a second) and the windows (32 KB each), never the file.
final class RecordingAnalysis: @unchecked Sendable {
    let path: String
    let info: AudioFileInfo
    /// Duration on the recording's own clock, seconds.
    let duration: Double
    let envelope: [Float]
    /// First analysis sample of each window, and the exact centre of each (seconds).
    let windowStarts: [Int64]
    let times: [Double]
    /// The windows' samples, `windowLength` each, one after another; owned, freed on deinit.
    let windows: UnsafeMutablePointer<Float>
    let windowLength: Int

    /// Reads `path` once; without `keepingWindows` (a file that is only ever the
    /// reference) it keeps the envelope alone. `progress` gets 0...1 of this file.
    init(path: String, grid: AnalysisGrid, keepingWindows: Bool = true, cancellation: CancellationToken?,
         progress: (Double) -> Void) throws(MixdownError) {
        self.path = path
        info = try AudioFileInfo.read(path: path)
        duration = info.duration.approximateSeconds
        let centres = keepingWindows ? grid.centres(duration: duration) : []
        windowLength = grid.windowLength
        windowStarts = centres.map { Int64(($0 * grid.rate).rounded()) - Int64(grid.windowLength / 2) }
        // A window's time is its exact centre on the analysis grid.
        times = windowStarts.map { (Double($0) + Double(grid.windowLength) / 2) / grid.rate }
        windows = .allocate(capacity: max(1, centres.count * grid.windowLength))
        windows.initialize(repeating: 0, count: max(1, centres.count * grid.windowLength))
        do {
            let stream = try AnalysisStream(path: path, rate: grid.sampleRate, decimation: grid.decimation, highPass: grid.highPassHz)
            envelope = try stream.envelope(step: grid.envelopeStep, cancellation: cancellation,
                                           windows: (windowStarts, grid.windowLength, windows), progress: progress)
        } catch {
            windows.deallocate()
            throw error
        }
    }

    deinit { windows.deallocate() }

    func window(_ k: Int) -> UnsafePointer<Float> { UnsafePointer(windows + k * windowLength) }

    /// Whether window k holds no signal.
    func isSilent(_ k: Int) -> Bool {
        let p = windows + k * windowLength
        var e = 0.0
        for i in 0..<windowLength { e += Double(p[i]) * Double(p[i]) }
        return e < 1e-9 * Double(windowLength)
    }

    /// First passes of several recordings, `parallel` at a time; results in the order given.
    /// The first is the reference: it keeps no windows (nothing is ever placed against it).
    static func run(paths: [String], grid: AnalysisGrid, parallel: Int, cancellation: CancellationToken?,
                    progress: ((Double) -> Void)?) throws(MixdownError) -> [RecordingAnalysis] {
        let fractions = ProgressShares(count: paths.count, report: progress)
        let results = ParallelMap.run(count: paths.count, parallel: parallel) { i throws(MixdownError) in
            try RecordingAnalysis(path: paths[i], grid: grid, keepingWindows: i > 0, cancellation: cancellation) { fractions.set(i, $0) }
        }
        return try results.map { r throws(MixdownError) in try r.get() }
    }
}
