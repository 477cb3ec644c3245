import CMixdownHeader
import Foundation
import Mixdown
import MixdownCommands

// The C API's entry points for what `mixdown sync`, `render --media/--relink` and `batch`
// do: each reads its C options into the library's job and runs it, nothing more.

/// The strings of a NULL-ended C array (NULL: none).
private func strings(_ list: UnsafePointer<UnsafePointer<CChar>?>?, limit: Int = 1 << 20) -> [String] {
    guard let list else { return [] }
    var out: [String] = []
    var i = 0
    while i < limit, let p = list[i] {
        out.append(String(cString: p))
        i += 1
    }
    return out
}

private func optionalString(_ p: UnsafePointer<CChar>?) -> String? { p.map { String(cString: $0) } }

private func relinking(_ media: UnsafePointer<mixdown_media_options>?) throws(MixdownError) -> MediaRelinking {
    guard let m = media?.pointee else { return MediaRelinking() }
    return try MediaRelinking(directories: strings(m.directories), rules: strings(m.relink))
}

// MARK: Timelines with moved media

@_cdecl("mixdown_render_timeline")
public func cRenderTimeline(_ path: UnsafePointer<CChar>?, _ media: UnsafePointer<mixdown_media_options>?,
                            _ output: UnsafePointer<CChar>?, _ outputOptions: UnsafePointer<mixdown_output_options>?,
                            _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                            _ result: UnsafeMutablePointer<mixdown_result>?) -> Int32 {
    CallBoundary.run {
        let document = try CompositionDocument(contentsOf: CallBoundary.string(path, "path"), relinking: relinking(media))
        try Options.render(document, to: CallBoundary.string(output, "output"), outputOptions, progress, user, result)
    }
}

@_cdecl("mixdown_render_open_timeline")
public func cRenderOpenTimeline(_ handle: UnsafeMutablePointer<OpaquePointer?>?, _ path: UnsafePointer<CChar>?,
                                _ media: UnsafePointer<mixdown_media_options>?) -> Int32 {
    handle?.pointee = nil
    return CallBoundary.run {
        let out = try CallBoundary.required(handle, "handle")
        let document = try CompositionDocument(contentsOf: CallBoundary.string(path, "path"), relinking: relinking(media))
        out.pointee = RenderHandle.open(try RenderStream(render: document.render(to: "")))
    }
}

// MARK: Sync of many recordings

@_cdecl("mixdown_sync_options_init")
public func cSyncOptionsInit(_ options: UnsafeMutablePointer<mixdown_sync_options>?) {
    let defaults = SyncTuning()
    var o = mixdown_sync_options()
    o.max_offset_num = 0
    o.max_offset_den = 1
    o.max_drift_ppm = defaults.maxDriftPPM
    o.window_spacing = defaults.windowSpacing
    o.min_confidence = defaults.minimumConfidence
    options?.pointee = o
}

/// The calling thread's last sync report (`mixdown_sync`'s `report_json`).
private let syncReport = ThreadText()

@_cdecl("mixdown_sync")
public func cSync(_ reference: UnsafePointer<CChar>?, _ recordings: UnsafePointer<UnsafePointer<CChar>?>?, _ count: Int32,
                  _ options: UnsafePointer<mixdown_sync_options>?, _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                  _ result: UnsafeMutablePointer<mixdown_sync_result>?, _ reportJSON: UnsafeMutablePointer<UnsafePointer<CChar>?>?) -> Int32 {
    reportJSON?.pointee = nil
    return CallBoundary.run {
        let ref = try CallBoundary.string(reference, "reference")
        guard count >= 0 else { throw CallBoundary.invalid("count \(count): must be 0 or more") }
        if count > 0 { _ = try CallBoundary.required(recordings, "recordings") }
        var paths: [String] = []
        for i in 0..<Int(count) { paths.append(try CallBoundary.string(recordings![i], "recordings[\(i)]")) }
        var job = SyncJob(reference: ref, recordings: paths)
        if let o = options?.pointee {
            if o.max_offset_num != 0 || o.max_offset_den == 0 {
                job.tuning.maxOffset = try MediaTime(numerator: o.max_offset_num, denominator: o.max_offset_den, parameter: "max_offset")
            }
            job.tuning.maxDriftPPM = o.max_drift_ppm
            job.tuning.windowSpacing = o.window_spacing
            job.tuning.minimumConfidence = o.min_confidence
            job.piecewise = o.piecewise != 0
            job.devices = try strings(o.devices).map { text throws(MixdownError) in try SyncDevice(parsing: text) }
            job.plot = optionalString(o.plot_path)
            job.document = optionalString(o.document_path)
            job.otio = optionalString(o.otio_path)
            if o.otio_rate != nil && o.otio_path == nil { throw CallBoundary.invalid("otio_rate: only with otio_path") }
            if let rate = optionalString(o.otio_rate) {
                guard let r = OTIOTimeline.editRate(parsing: rate) else {
                    throw CallBoundary.invalid("otio_rate '\(rate)': an edit rate is a whole number of frames per second (24, 25), n/d (30000/1001) or an NTSC rate (29.97)")
                }
                job.otioEditRate = r
            }
            job.stems = optionalString(o.stems_dir)
            if let type = optionalString(o.stems_type) {
                guard let t = AudioFileType(rawValue: type.lowercased()) else {
                    throw CallBoundary.invalid("stems_type '\(type)': not one of \(AudioFileType.allCases.map(\.rawValue).joined(separator: ", "))")
                }
                job.stemSettings.type = t
            }
            if o.keep_polarity != 0 && o.stems_dir == nil { throw CallBoundary.invalid("keep_polarity: only with stems_dir") }
            job.keepPolarity = o.keep_polarity != 0
            job.keepGoing = o.keep_going != 0
            job.overwrite = o.overwrite != 0
        }
        let oneLine = options.map { $0.pointee.require_one_line != 0 } ?? false
        // The check comes after the analysis, when the outputs (which follow a wandering
        // clock) would already be written: refused together, never written and then failed.
        if oneLine && (job.stems != nil || job.document != nil || job.otio != nil) {
            throw CallBoundary.invalid("require_one_line: not with stems_dir, document_path or otio_path (they follow a clock that is not one line)")
        }
        let token = CancellationToken()
        let callback: ((Double) -> Void)? = progress.map { progress in { fraction in if progress(fraction, user) != 0 { token.cancel() } } }
        let clock = Stopwatch()
        let outcome = try job.run(progress: callback, cancellation: token)
        let seconds = clock.seconds
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let report: Data
        if let estimate = outcome.estimate {
            report = try encoder.encode([estimate])
        } else {
            report = try encoder.encode(outcome.placements)
        }
        syncReport.set(String(decoding: report, as: UTF8.self))
        reportJSON?.pointee = syncReport.current
        let placed = outcome.estimate != nil ? (outcome.failure == nil ? 1 : 0) : outcome.placements.filter(\.isPlaced).count
        result?.pointee = mixdown_sync_result(recordings: Int32(outcome.estimate != nil ? 1 : outcome.placements.count), placed: Int32(placed),
                                              stem_frames: outcome.stemFrames,
                                              seconds: seconds)
        if let failure = outcome.failure { throw failure }
        if oneLine {
            for estimate in [outcome.estimate].compactMap({ $0 }) + outcome.placements.compactMap(\.estimate) {
                try estimate.requireOneLine()
            }
        }
    }
}

// MARK: Batches

@_cdecl("mixdown_batch_options_init")
public func cBatchOptionsInit(_ options: UnsafeMutablePointer<mixdown_batch_options>?) {
    options?.pointee = mixdown_batch_options(jobs: 0, shard_index: 0, shard_count: 0, results_path: nil, keep_going: 0)
}

@_cdecl("mixdown_batch_run")
public func cBatchRun(_ manifest: UnsafePointer<CChar>?, _ options: UnsafePointer<mixdown_batch_options>?,
                      _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                      _ result: UnsafeMutablePointer<mixdown_batch_result>?) -> Int32 {
    CallBoundary.run {
        let lines = try BatchManifest(contentsOf: CallBoundary.string(manifest, "manifest"))
        var batch = BatchRun(manifest: lines)
        if let o = options?.pointee {
            if o.jobs != 0 { batch.jobs = Int(o.jobs) }
            if o.shard_count != 0 || o.shard_index != 0 { batch.shard = try BatchShard(parsing: "\(o.shard_index)/\(o.shard_count)") }
            batch.resultsPath = optionalString(o.results_path)
            batch.keepGoing = o.keep_going != 0
        }
        let token = CancellationToken()
        let report: (@Sendable (BatchRun.Progress) -> Void)? = progress.map { progress in
            let user = UncheckedPointer(user)
            return { p in
                let fraction = p.total > 0 ? (Double(p.finished) + p.running) / Double(p.total) : 1
                if progress(min(fraction, 1), user.pointer) != 0 { token.cancel() }
            }
        }
        let summary = try batch.run(makeTask: { try CommandTasks.batchTask(for: $0, in: lines) }, progress: report, cancellation: token)
        result?.pointee = mixdown_batch_result(total: Int32(summary.total), done: Int32(summary.done), skipped: Int32(summary.skipped),
                                               failed: Int32(summary.failed), not_run: Int32(summary.notRun), frames: summary.frames,
                                               seconds: summary.seconds)
        if token.isCancelled { throw MixdownError.cancelled }
        if let first = summary.failures.first {
            throw CallBoundary.Refusal(status: MIXDOWN_ERROR_BATCH, message: "batch '\(summary.manifest)': \(summary.failed) of \(summary.total) jobs failed; the first, '\(first.id)' (line \(first.line)): \(first.error)")
        }
        if summary.notRun > 0 {
            throw CallBoundary.Refusal(status: MIXDOWN_ERROR_BATCH, message: "batch '\(summary.manifest)': \(summary.notRun) of \(summary.total) jobs were not run")
        }
    }
}

/// The progress callback's user pointer, carried to the batch's worker threads (the C
/// caller promised a callback that may be called from any thread, one call at a time).
private struct UncheckedPointer: @unchecked Sendable {
    let pointer: UnsafeMutableRawPointer?
    init(_ pointer: UnsafeMutableRawPointer?) { self.pointer = pointer }
}
