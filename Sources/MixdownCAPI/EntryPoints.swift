import CMixdownHeader
import Glibc
import Mixdown

// The functions of include/mixdown.h. Each translates its arguments, calls the Swift
// library, and translates back; `CallBoundary.run` turns every error into a status.

// MARK: Library

@_cdecl("mixdown_version")
public func cVersion() -> UnsafePointer<CChar> { StaticStrings.pointer(MixdownVersion.string) }

@_cdecl("mixdown_version_number")
public func cVersionNumber() -> Int32 { Int32(MixdownVersion.number) }

@_cdecl("mixdown_strerror")
public func cStrerror(_ status: Int32) -> UnsafePointer<CChar> {
    let text: String = switch mixdown_status(rawValue: UInt32(bitPattern: status)) {
    case MIXDOWN_OK: "no error"
    case MIXDOWN_ERROR_NULL_POINTER: "a required pointer is NULL"
    case MIXDOWN_ERROR_INVALID_ARGUMENT: "invalid argument"
    case MIXDOWN_ERROR_INVALID_HANDLE: "invalid handle"
    case MIXDOWN_ERROR_FILE_NOT_FOUND: "file not found"
    case MIXDOWN_ERROR_UNREADABLE: "cannot read or decode the input"
    case MIXDOWN_ERROR_INVALID_DOCUMENT: "invalid composition document"
    case MIXDOWN_ERROR_UNSUPPORTED: "unsupported output"
    case MIXDOWN_ERROR_OUTPUT_EXISTS: "the output exists"
    case MIXDOWN_ERROR_WRITE: "cannot write the output"
    case MIXDOWN_ERROR_CANCELLED: "cancelled"
    case MIXDOWN_ERROR_NO_ALIGNMENT: "no trustworthy alignment"
    case MIXDOWN_ERROR_INTERNAL: "internal error"
    case MIXDOWN_ERROR_LOUDNESS: "loudness target or true-peak ceiling not met"
    case MIXDOWN_ERROR_BATCH: "a batch job failed or was not run"
    default: "unknown status \(status)"
    }
    return StaticStrings.pointer(text)
}

@_cdecl("mixdown_last_error")
public func cLastError() -> UnsafePointer<CChar> { LastError.current }

// MARK: File information

@_cdecl("mixdown_file_info_read")
public func cFileInfoRead(_ path: UnsafePointer<CChar>?, _ stream: Int32, _ info: UnsafeMutablePointer<mixdown_file_info>?) -> Int32 {
    CallBoundary.run {
        let path = try CallBoundary.string(path, "path")
        let out = try CallBoundary.required(info, "info")
        let i = try AudioFileInfo.read(path: path, stream: try Options.stream(stream))
        let d = i.duration.reduced
        var c = mixdown_file_info()
        c.frames = i.frames
        c.sample_rate = Int32(i.sampleRate)
        c.channels = Int32(i.channelCount)
        c.stream = Int32(i.stream)
        c.stream_count = Int32(i.streams.count)
        c.duration_num = d.value
        c.duration_den = Int64(d.timescale)
        c.duration_seconds = d.approximateSeconds
        Options.copy(i.type, into: &c.container)
        Options.copy(i.sampleFormat, into: &c.sample_format)
        out.pointee = c
    }
}

// MARK: Loudness

@_cdecl("mixdown_loudness_measure")
public func cLoudnessMeasure(_ path: UnsafePointer<CChar>?, _ stream: Int32, _ progress: mixdown_progress_fn?,
                             _ user: UnsafeMutableRawPointer?, _ loudness: UnsafeMutablePointer<mixdown_loudness>?) -> Int32 {
    CallBoundary.run {
        var job = FileLoudness(input: try CallBoundary.string(path, "path"), stream: try Options.stream(stream))
        job.finePeak = true
        let out = try CallBoundary.required(loudness, "loudness")
        try Options.run(progress, user, nil) { p, token throws(MixdownError) in
            let m = try job.run(progress: p, cancellation: token).loudness
            out.pointee = mixdown_loudness(integrated_lufs: m.integrated, range_lu: m.range, true_peak_dbtp: m.truePeak,
                                           true_peak_fine_dbtp: m.truePeakFine ?? m.truePeak, sample_peak_dbfs: m.samplePeak,
                                           max_momentary_lufs: m.momentaryMaximum, max_short_term_lufs: m.shortTermMaximum,
                                           frames: m.frames, sample_rate: Int32(m.sampleRate), channels: Int32(m.channelCount))
            return mixdown_result()
        }
    }
}

// MARK: File jobs

@_cdecl("mixdown_output_options_init")
public func cOutputOptionsInit(_ options: UnsafeMutablePointer<mixdown_output_options>?) {
    options?.pointee = mixdown_output_options(type: nil, sample_format: nil, overwrite: 0, threads: 0,
                                              loudness: 0, true_peak: -1, limit: 0, sample_rate: 0)
}

@_cdecl("mixdown_stretch_options_init")
public func cStretchOptionsInit(_ options: UnsafeMutablePointer<mixdown_stretch_options>?) {
    options?.pointee = mixdown_stretch_options(ratio_num: 1, ratio_den: 1, target_frames: 0, match_path: nil,
                                               algorithm: MIXDOWN_ALGORITHM_AUTO, quality: MIXDOWN_QUALITY_BEST, stream: -1)
}

@_cdecl("mixdown_export_options_init")
public func cExportOptionsInit(_ options: UnsafeMutablePointer<mixdown_export_options>?) {
    options?.pointee = mixdown_export_options(start_num: 0, start_den: 1, duration_num: 0, duration_den: 1,
                                              fade_in_num: 0, fade_in_den: 1, fade_out_num: 0, fade_out_den: 1, stream: -1)
}

@_cdecl("mixdown_stretch")
public func cStretch(_ input: UnsafePointer<CChar>?, _ output: UnsafePointer<CChar>?,
                     _ options: UnsafePointer<mixdown_stretch_options>?, _ outputOptions: UnsafePointer<mixdown_output_options>?,
                     _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                     _ result: UnsafeMutablePointer<mixdown_result>?) -> Int32 {
    CallBoundary.run {
        var job = try Options.stretch(input: CallBoundary.string(input, "input"), output: CallBoundary.string(output, "output"), options)
        try Options.apply(outputOptions, to: &job.settings)
        try Options.run(progress, user, result) { p, token throws(MixdownError) in
            let r = try job.run(progress: p, cancellation: token)
            return Options.result(frames: r.outputFrames, sampleRate: r.sampleRate, channels: r.channels,
                                  seconds: r.seconds, realtimeFactor: r.realtimeFactor, loudness: r.loudness)
        }
    }
}

@_cdecl("mixdown_stretch_plan_read")
public func cStretchPlanRead(_ input: UnsafePointer<CChar>?, _ options: UnsafePointer<mixdown_stretch_options>?,
                             _ plan: UnsafeMutablePointer<mixdown_stretch_plan>?) -> Int32 {
    CallBoundary.run {
        let out = try CallBoundary.required(plan, "plan")
        let job = try Options.stretch(input: CallBoundary.string(input, "input"), output: "", options)
        let p = try job.plan()
        var c = mixdown_stretch_plan()
        c.ratio_num = p.ratio.numerator
        c.ratio_den = p.ratio.denominator
        c.output_frames = p.outputFrames
        c.algorithm = Options.algorithm(p.algorithm)
        c.estimated_seconds = p.estimatedSeconds
        Options.copy(p.notice ?? "", into: &c.notice)
        out.pointee = c
    }
}

@_cdecl("mixdown_export")
public func cExport(_ input: UnsafePointer<CChar>?, _ output: UnsafePointer<CChar>?,
                    _ options: UnsafePointer<mixdown_export_options>?, _ outputOptions: UnsafePointer<mixdown_output_options>?,
                    _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                    _ result: UnsafeMutablePointer<mixdown_result>?) -> Int32 {
    CallBoundary.run {
        var job = FileExport(input: try CallBoundary.string(input, "input"), output: try CallBoundary.string(output, "output"))
        let o = try CallBoundary.required(options, "options").pointee
        // A zero time is "not set" (the whole file, no fade); a set one must be exact and valid.
        func time(_ n: Int64, _ d: Int64, _ name: String) throws -> MediaTime? {
            n == 0 && d != 0 ? nil : try MediaTime(numerator: n, denominator: d, parameter: name)
        }
        job.start = try time(o.start_num, o.start_den, "start")
        job.duration = try time(o.duration_num, o.duration_den, "duration")
        job.fadeIn = try time(o.fade_in_num, o.fade_in_den, "fade_in")
        job.fadeOut = try time(o.fade_out_num, o.fade_out_den, "fade_out")
        job.stream = try Options.stream(o.stream)
        try Options.apply(outputOptions, to: &job.settings)
        try Options.run(progress, user, result) { p, token throws(MixdownError) in
            let r = try job.run(progress: p, cancellation: token)
            return Options.result(frames: r.frames, sampleRate: r.sampleRate, channels: r.channels,
                                  seconds: r.seconds, realtimeFactor: r.realtimeFactor, loudness: r.loudness)
        }
    }
}

@_cdecl("mixdown_render_document")
public func cRenderDocument(_ json: UnsafePointer<CChar>?, _ baseDirectory: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?,
                            _ output: UnsafePointer<CChar>?, _ outputOptions: UnsafePointer<mixdown_output_options>?,
                            _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                            _ result: UnsafeMutablePointer<mixdown_result>?) -> Int32 {
    CallBoundary.run {
        let output = try CallBoundary.string(output, "output")
        let document = try Options.document(json: json, baseDirectory: baseDirectory, path: path)
        try Options.render(document, to: output, outputOptions, progress, user, result)
    }
}

// MARK: Drift estimation

@_cdecl("mixdown_drift_options_init")
public func cDriftOptionsInit(_ options: UnsafeMutablePointer<mixdown_drift_options>?) {
    let defaults = SyncTuning()
    options?.pointee = mixdown_drift_options(max_offset_seconds: defaults.pairSearch.approximateSeconds,
                                             max_drift_ppm: defaults.maxDriftPPM, window_spacing: defaults.windowSpacing,
                                             min_confidence: defaults.minimumConfidence)
}

@_cdecl("mixdown_estimate_drift")
public func cEstimateDrift(_ reference: UnsafePointer<CChar>?, _ recording: UnsafePointer<CChar>?,
                           _ options: UnsafePointer<mixdown_drift_options>?, _ drift: UnsafeMutablePointer<mixdown_drift>?) -> Int32 {
    CallBoundary.run {
        var estimator = DriftEstimator(reference: try CallBoundary.string(reference, "reference"),
                                       recording: try CallBoundary.string(recording, "recording"))
        let out = try CallBoundary.required(drift, "drift")
        if let o = options?.pointee {
            estimator.tuning.maxOffset = try MediaTime(microsecondsOf: o.max_offset_seconds, parameter: "max_offset_seconds")
            estimator.tuning.maxDriftPPM = o.max_drift_ppm
            estimator.tuning.windowSpacing = o.window_spacing
            estimator.tuning.minimumConfidence = o.min_confidence
        }
        let e = try estimator.run()
        try e.requireConfidence(estimator.tuning.minimumConfidence)
        // The result holds one line: a clock that is not one is refused, not approximated.
        try e.requireOneLine()
        let offset = try MediaTime(microsecondsOf: e.offsetSeconds, parameter: "offset").reduced
        out.pointee = mixdown_drift(offset_num: offset.value, offset_den: Int64(offset.timescale), offset_seconds: e.offsetSeconds,
                                    ratio: e.ratio, ppm: e.ppm, confidence: e.confidence,
                                    windows_used: Int32(e.windowsUsed), windows_rejected: Int32(e.windowsRejected),
                                    residual_rms_ms: e.residualRMSMilliseconds, residual_max_ms: e.residualMaxMilliseconds,
                                    seconds: e.seconds)
    }
}

// MARK: Pull rendering

@_cdecl("mixdown_render_open_document")
public func cRenderOpenDocument(_ handle: UnsafeMutablePointer<OpaquePointer?>?, _ json: UnsafePointer<CChar>?,
                                _ baseDirectory: UnsafePointer<CChar>?, _ path: UnsafePointer<CChar>?) -> Int32 {
    handle?.pointee = nil
    return CallBoundary.run {
        let out = try CallBoundary.required(handle, "handle")
        let document = try Options.document(json: json, baseDirectory: baseDirectory, path: path)
        out.pointee = RenderHandle.open(try RenderStream(render: document.render(to: "")))
    }
}

@_cdecl("mixdown_render_open_stretch")
public func cRenderOpenStretch(_ handle: UnsafeMutablePointer<OpaquePointer?>?, _ input: UnsafePointer<CChar>?,
                               _ options: UnsafePointer<mixdown_stretch_options>?) -> Int32 {
    handle?.pointee = nil
    return CallBoundary.run {
        let out = try CallBoundary.required(handle, "handle")
        let job = try Options.stretch(input: CallBoundary.string(input, "input"), output: "", options)
        out.pointee = RenderHandle.open(try RenderStream(stretch: job))
    }
}

@_cdecl("mixdown_render_format")
public func cRenderFormat(_ handle: OpaquePointer?, _ sampleRate: UnsafeMutablePointer<Int32>?,
                          _ channels: UnsafeMutablePointer<Int32>?, _ frames: UnsafeMutablePointer<Int64>?) -> Int32 {
    let h = RenderHandle.find(handle)
    return CallBoundary.run(also: h) {
        let stream = try RenderHandle.required(handle).stream
        sampleRate?.pointee = Int32(stream.format.sampleRate)
        channels?.pointee = Int32(stream.format.channelCount)
        frames?.pointee = stream.frames
    }
}

/// The part the two pulls share: the handle checked and its error cleared, `frames`
/// checked, `*written` and `*ended` set from what `pull` did (0 frames on a failure).
private func pullCall(_ handle: OpaquePointer?, _ frames: Int64, _ written: UnsafeMutablePointer<Int64>?,
                      _ ended: UnsafeMutablePointer<Int32>?,
                      _ pull: (RenderHandle, Int) throws -> RenderStatus) -> Int32 {
    written?.pointee = 0
    let h = RenderHandle.find(handle)
    return CallBoundary.run(also: h) {
        let handle = try RenderHandle.required(handle)
        handle.clearError()
        guard frames > 0, frames <= Int64(Int32.max) else {
            throw CallBoundary.invalid("frames \(frames): must be more than 0 (and at most \(Int32.max))")
        }
        let status = try pull(handle, Int(frames))
        written?.pointee = Int64(status.frames)
        ended?.pointee = status.ended ? 1 : 0
    }
}

@_cdecl("mixdown_render_pull")
public func cRenderPull(_ handle: OpaquePointer?, _ planar: UnsafePointer<UnsafeMutablePointer<Float>?>?, _ frames: Int64,
                        _ written: UnsafeMutablePointer<Int64>?, _ ended: UnsafeMutablePointer<Int32>?) -> Int32 {
    pullCall(handle, frames, written, ended) { handle, frames in
        let planar = try CallBoundary.required(planar, "planar")
        let channels = handle.stream.format.channelCount
        for c in 0..<channels where planar[c] == nil { throw CallBoundary.Refusal(status: MIXDOWN_ERROR_NULL_POINTER, message: "planar[\(c)] is NULL") }
        // A channel pointer array with no NULL in its first `channels` entries.
        return try planar.withMemoryRebound(to: UnsafeMutablePointer<Float>.self, capacity: channels) { p throws(MixdownError) in
            try handle.stream.pull(into: p, frames: frames)
        }
    }
}

@_cdecl("mixdown_render_pull_interleaved")
public func cRenderPullInterleaved(_ handle: OpaquePointer?, _ interleaved: UnsafeMutablePointer<Float>?, _ frames: Int64,
                                   _ written: UnsafeMutablePointer<Int64>?, _ ended: UnsafeMutablePointer<Int32>?) -> Int32 {
    pullCall(handle, frames, written, ended) { handle, frames in
        try handle.pullInterleaved(into: try CallBoundary.required(interleaved, "interleaved"), frames: frames)
    }
}

@_cdecl("mixdown_render_seek")
public func cRenderSeek(_ handle: OpaquePointer?, _ frame: Int64) -> Int32 {
    let h = RenderHandle.find(handle)
    return CallBoundary.run(also: h) {
        let handle = try RenderHandle.required(handle)
        handle.clearError()
        try handle.stream.seek(toFrame: frame)
    }
}

@_cdecl("mixdown_render_position")
public func cRenderPosition(_ handle: OpaquePointer?, _ frame: UnsafeMutablePointer<Int64>?) -> Int32 {
    let h = RenderHandle.find(handle)
    return CallBoundary.run(also: h) {
        let handle = try RenderHandle.required(handle)
        try CallBoundary.required(frame, "frame").pointee = handle.stream.position
    }
}

@_cdecl("mixdown_render_error")
public func cRenderError(_ handle: OpaquePointer?) -> UnsafePointer<CChar> {
    RenderHandle.find(handle)?.errorMessage ?? StaticStrings.pointer("")
}

@_cdecl("mixdown_render_free")
public func cRenderFree(_ handle: OpaquePointer?) {
    guard let handle else { return }
    if !RenderHandle.release(handle) {
        LastError.set("mixdown_render_free: handle \(handle) is not a live mixdown_render (freed twice?)")
    }
}
