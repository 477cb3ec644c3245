import Foundation
import Synchronization

/// Exports a composition or a single file to a new file (AVAssetExportSession).
///
/// Set the properties, then `await export()`. While it runs, `status` goes from
/// `unknown` to `waiting` (when more exports run at once than the machine has cores) to
/// `exporting`, then `completed`, `failed` (see `error`) or `cancelled`. `progress` runs
/// from 0 to 1 and never goes backwards. `cancel()` works at any time: a waiting export
/// stops at once, a running one within one block. The output is atomic and an existing
/// file is never replaced unless `overwrite` is set. Configure before `export()`; the
/// properties are not meant to change while it runs.
public final class ExportSession: @unchecked Sendable {
    /// What to export.
    public enum Asset: Sendable {
        case composition(Composition)
        /// A file, played whole.
        case file(AudioAsset)
    }

    public enum Status: String, Sendable, Codable {
        case unknown, waiting, exporting, completed, failed, cancelled
    }

    public let asset: Asset
    public let preset: ExportPreset
    /// Where the file goes (required).
    public var outputPath: String?
    /// `outputPath` as a file URL, AVFoundation's spelling.
    public var outputURL: URL? {
        get { outputPath.map { URL(fileURLWithPath: $0) } }
        set { outputPath = newValue?.path }
    }
    /// Nil: the preset's type, else the output's extension.
    public var outputFileType: AudioFileType?
    /// Nil: the whole asset.
    public var timeRange: MediaTimeRange?
    public var audioMix: AudioMix?
    public var audioTimePitchAlgorithm = TimeScaleAlgorithm.pitchKeeping
    /// Bytes the file may not exceed (PCM types); the export stops at a frame boundary.
    public var fileLengthLimit: Int64?
    public var metadata = AudioMetadata()
    /// Nil: the preset's, else the composition's default (highest rate; stereo if any file is).
    public var outputFormat: AudioFormat?
    public var overwrite = false
    /// MP4/MOV outputs: copy this file's video stream beside the audio (no re-encode).
    public var videoFrom: String?
    /// Block sizes the render cycles through.
    public var blockSizes = [4096]

    private struct Progress {
        var status = Status.unknown
        var progress = 0.0
        var error: MixdownError?
        var report: CompositionRender.Report?
    }
    private let state = Mutex(Progress())
    /// Called on the render thread after each block's progress is recorded (for tests that
    /// must act at a known point of a render).
    var progressObserver: (@Sendable (Double) -> Void)?
    private let token = CancellationToken()
    private let scheduler: ExportScheduler

    /// A session for `asset` with `preset`. Passthrough needs a file asset whose type
    /// Mixdown writes.
    public convenience init(asset: Asset, preset: ExportPreset = .wav16) throws(MixdownError) {
        try self.init(asset: asset, preset: preset, scheduler: .shared)
    }

    init(asset: Asset, preset: ExportPreset, scheduler: ExportScheduler) throws(MixdownError) {
        guard Self.exportPresets(compatibleWith: asset).contains(preset) else {
            throw .invalidParameter(name: "preset", value: preset.name, reason: "needs a single file of a type Mixdown writes")
        }
        self.asset = asset
        self.preset = preset
        self.scheduler = scheduler
    }

    /// The presets that can export `asset`: all but passthrough for a composition, and
    /// none of the M4A ones in a build without the FFmpeg trait.
    public static func exportPresets(compatibleWith asset: Asset) -> [ExportPreset] {
        let built = ExportPreset.all.filter { $0.type.map { !$0.isFFmpegContainer || AudioFileProbe.readsContainers } ?? true }
        switch asset {
        case .composition: return built.filter { $0 != .passthrough }
        case .file(let a): return built.filter { $0 != .passthrough || Self.passthroughType(of: a.info) != nil }
        }
    }

    static func passthroughType(of info: AudioFileInfo) -> AudioFileType? {
        switch (info.type, info.sampleFormat) {
        case ("ogg", "opus"): return .opus
        case ("ogg", _): return .ogg
        case ("mpeg", _): return .mp3
        case ("matroska", _): return .mkv
        default: return AudioFileType(rawValue: info.type)
        }
    }

    public var status: Status { state.withLock { $0.status } }
    /// 0 to 1, never decreasing.
    public var progress: Double { state.withLock { $0.progress } }
    /// Why the export failed (nil unless `status == .failed`).
    public var error: MixdownError? { state.withLock { $0.error } }
    /// What the export did (nil until it completed).
    public var report: CompositionRender.Report? { state.withLock { $0.report } }

    /// The types libsndfile can write for this asset's output format.
    public var supportedFileTypes: [AudioFileType] {
        guard let format = try? render(output: "supported").plan().format else { return [] }
        return AudioFileType.allCases.filter { AudioFileWriter.canWrite($0, format: format) }
    }

    /// The exact size of the output for PCM types (nil for compressed types).
    public func estimatedOutputFileLength() throws(MixdownError) -> Int64? {
        try render(output: outputPath ?? "estimate.wav").plan().estimatedFileLength
    }

    /// The longest output the file length limit allows (the whole asset without a limit).
    public func maxDuration() throws(MixdownError) -> MediaTime {
        let plan = try render(output: outputPath ?? "estimate.wav").plan()
        return MediaTime(frames: Int64(plan.frames.count), sampleRate: plan.format.sampleRate)
    }

    /// The render job these settings describe.
    public func render(output: String) throws(MixdownError) -> CompositionRender {
        var composition: Composition
        var passthrough: (AudioFileType, SampleFormat?, AudioFormat, AudioCodec?)?
        switch asset {
        case .composition(let c): composition = c
        case .file(let a):
            composition = Composition()
            let id = composition.addTrack(name: (a.path as NSString).lastPathComponent)
            try composition[trackID: id].addSegment(MediaTimeRange(start: .zero, duration: a.duration), of: a, at: .zero)
            if preset == .passthrough, let t = Self.passthroughType(of: a.info) {
                let codec = t.isFFmpegContainer ? AudioCodec(rawValue: a.info.sampleFormat) : nil
                passthrough = (t, a.info.naturalSampleFormat(for: t, codec: codec), a.info.format, codec)
            }
        }
        var format = outputFormat ?? passthrough?.2
        if format == nil, preset.sampleRate != nil || preset.channels != nil, let d = composition.defaultOutputFormat {
            format = AudioFormat(sampleRate: preset.sampleRate ?? d.sampleRate, channelCount: preset.channels ?? d.channelCount)
        }
        var settings = OutputSettings(preset: preset, type: outputFileType ?? passthrough?.0, sampleFormat: passthrough?.1,
                                      codec: passthrough?.3, blockSizes: blockSizes)
        settings.videoFrom = videoFrom
        settings.metadata = metadata
        settings.overwrite = overwrite
        return CompositionRender(composition: composition, output: output, audioMix: audioMix ?? AudioMix(), outputFormat: format,
                                 timeRange: timeRange, timePitchAlgorithm: audioTimePitchAlgorithm,
                                 fileLengthLimit: fileLengthLimit, settings: settings)
    }

    /// Runs the export. Returns its report, or throws what `error` then holds
    /// (`.cancelled` after `cancel()`). Call once.
    @discardableResult
    public func export() async throws(MixdownError) -> CompositionRender.Report {
        let job: CompositionRender
        if token.isCancelled { throw .cancelled }
        do throws(MixdownError) {
            precondition(status == .unknown, "export() is called once")
            guard let out = outputPath else {
                throw .invalidParameter(name: "outputPath", value: "nil", reason: "must be set before export()")
            }
            job = try render(output: out)
            _ = try job.plan()
        } catch {
            finish(.failed, error: error)
            throw error
        }
        if !scheduler.hasFreeSlot { state.withLock { if $0.status == .unknown { $0.status = .waiting } } }
        let admitted = await withTaskCancellationHandler {
            await scheduler.acquire(token)
        } onCancel: { [token, scheduler] in
            token.cancel()
            scheduler.withdraw(token)
        }
        guard admitted else {
            finish(.cancelled, error: .cancelled)
            throw .cancelled
        }
        defer { scheduler.release() }
        state.withLock { $0.status = .exporting }
        let result: Result<CompositionRender.Report, MixdownError> = await withTaskCancellationHandler {
            await withCheckedContinuation { c in
                // A thread of its own: a render blocks for its whole length, which the
                // cooperative pool's threads must not.
                let thread = Thread { [self] in
                    do throws(MixdownError) {
                        let observer = progressObserver
                        let report = try job.run(progress: { [self] p in
                            state.withLock { $0.progress = max($0.progress, min(p, 1)) }
                            observer?(p)
                        }, cancellation: token)
                        c.resume(returning: .success(report))
                    } catch {
                        c.resume(returning: .failure(error))
                    }
                }
                thread.name = "mixdown.export"
                thread.start()
            }
        } onCancel: { [token] in
            token.cancel()
        }
        switch result {
        case .success(let report):
            state.withLock {
                $0.report = report
                $0.progress = 1
                $0.status = .completed
            }
            return report
        case .failure(let error):
            finish(error == .cancelled ? .cancelled : .failed, error: error)
            throw error
        }
    }

    /// AVFoundation's older spelling: runs `export()` and calls `handler` when it ends;
    /// `status` and `error` then say how.
    public func exportAsynchronously(completionHandler handler: @escaping @Sendable () -> Void) {
        Task {
            _ = try? await export()
            handler()
        }
    }

    /// Stops the export: at once while it waits, within one block while it renders.
    /// Nothing is written.
    public func cancel() {
        token.cancel()
        scheduler.withdraw(token)
        state.withLock { if $0.status == .unknown { $0.status = .cancelled; $0.error = .cancelled } }
    }

    private func finish(_ status: Status, error: MixdownError) {
        state.withLock {
            $0.status = status
            $0.error = error
        }
    }
}
