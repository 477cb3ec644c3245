import CMixdownHeader
import Foundation
import Mixdown

/// The C option structs, read into the library's job types. Translation only: every
/// check of a value is the library's (its errors name the parameter).
enum Options {
    static func algorithm(_ value: mixdown_algorithm) throws(CallBoundary.Refusal) -> TimeScaleAlgorithm {
        switch value {
        case MIXDOWN_ALGORITHM_AUTO: .auto
        case MIXDOWN_ALGORITHM_VARISPEED: .varispeed
        case MIXDOWN_ALGORITHM_WSOLA: .wsola
        case MIXDOWN_ALGORITHM_RUBBERBAND: .rubberband
        case MIXDOWN_ALGORITHM_SPECTRAL: .spectral
        case MIXDOWN_ALGORITHM_SPLICE: .splice
        default: throw CallBoundary.invalid("algorithm \(value.rawValue): not a mixdown_algorithm")
        }
    }

    static func algorithm(_ value: TimeScaleAlgorithm) -> mixdown_algorithm {
        switch value {
        case .auto: MIXDOWN_ALGORITHM_AUTO
        case .varispeed: MIXDOWN_ALGORITHM_VARISPEED
        case .wsola: MIXDOWN_ALGORITHM_WSOLA
        case .rubberband: MIXDOWN_ALGORITHM_RUBBERBAND
        case .spectral: MIXDOWN_ALGORITHM_SPECTRAL
        case .splice: MIXDOWN_ALGORITHM_SPLICE
        }
    }

    /// Copies `text` into a fixed C char array, NUL-terminated, cut at a whole UTF-8
    /// character when it does not fit.
    static func copy<T>(_ text: String, into array: inout T) {
        withUnsafeMutableBytes(of: &array) { raw in
            guard raw.count > 0 else { return }
            var bytes = Array(text.utf8.prefix(raw.count - 1))
            // Never end inside a character: drop continuation bytes and their lead.
            if bytes.count < text.utf8.count {
                while let last = bytes.last, last & 0xC0 == 0x80 { bytes.removeLast() }
                if let last = bytes.last, last >= 0xC0 { bytes.removeLast() }
            }
            raw.copyBytes(from: bytes)
            raw[bytes.count] = 0
        }
    }

    static func quality(_ value: mixdown_quality) throws(CallBoundary.Refusal) -> ResamplerQuality {
        switch value {
        case MIXDOWN_QUALITY_BEST: .best
        case MIXDOWN_QUALITY_MEDIUM: .medium
        case MIXDOWN_QUALITY_FASTEST: .fastest
        default: throw CallBoundary.invalid("quality \(value.rawValue): not a mixdown_quality")
        }
    }

    /// A C `stream` argument: -1 for the first audio stream, else the container's index; any
    /// other negative value is refused (it was read as -1).
    static func stream(_ value: Int32) throws -> Int? {
        guard value >= -1 else { throw CallBoundary.invalid("stream \(value): a container's stream index (0 or more), or -1 for the first audio stream") }
        return value < 0 ? nil : Int(value)
    }

    /// `settings` with the C output options applied (NULL: unchanged).
    static func apply(_ options: UnsafePointer<mixdown_output_options>?, to settings: inout OutputSettings) throws -> Void {
        guard let o = options?.pointee else { return }
        if let t = o.type {
            let name = String(cString: t)
            guard let type = AudioFileType(rawValue: name.lowercased()) else {
                throw CallBoundary.invalid("type '\(name)': not one of \(AudioFileType.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            settings.type = type
        }
        if let f = o.sample_format {
            let name = String(cString: f)
            guard let format = SampleFormat(rawValue: name.lowercased()) else {
                throw CallBoundary.invalid("sample_format '\(name)': not one of \(SampleFormat.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            settings.sampleFormat = format
        }
        settings.overwrite = o.overwrite != 0
        if o.threads != 0 {
            guard (1...2).contains(o.threads) else { throw CallBoundary.invalid("threads \(o.threads): must be 1 or 2 (0: the default)") }
            settings.threads = Int(o.threads)
        }
        // 0 LUFS is "not set" (a target is below 0); a set one is checked by the job.
        if o.loudness != 0 {
            settings.loudness = LoudnessTarget(integrated: o.loudness, truePeak: o.true_peak, limit: o.limit != 0)
        } else if o.limit != 0 {
            throw CallBoundary.invalid("limit: only with a loudness target")
        }
        if o.sample_rate != 0 { settings.sampleRate = Int(o.sample_rate) }
    }

    /// A job's result; the loudness fields NAN without a target.
    static func result(frames: Int64, sampleRate: Int, channels: Int, seconds: Double, realtimeFactor: Double,
                       loudness: OutputJob.LoudnessReport?) -> mixdown_result {
        mixdown_result(frames: frames, sample_rate: Int32(sampleRate), channels: Int32(channels), seconds: seconds,
                       realtime_factor: realtimeFactor, loudness_lufs: loudness?.output.integrated ?? .nan,
                       true_peak_dbtp: loudness.map { $0.output.truePeakFine ?? $0.output.truePeak } ?? .nan,
                       gain_db: loudness?.gainDb ?? .nan)
    }

    /// The stretch the options describe (output: `output`, which a pull render ignores).
    static func stretch(input: String, output: String, _ options: UnsafePointer<mixdown_stretch_options>?) throws -> FileStretch {
        let o = try CallBoundary.required(options, "options").pointee
        let target: FileStretch.Target
        let ratioSet = !(o.ratio_num == 1 && o.ratio_den == 1)
        switch (o.match_path, o.target_frames) {
        case (let path?, 0) where !ratioSet:
            target = .match(path: String(cString: path))
        case (nil, let frames) where frames != 0 && !ratioSet:
            guard frames > 0 else { throw CallBoundary.invalid("target_frames \(frames): must be more than 0 (0: not set)") }
            target = .frames(frames)
        case (nil, 0):
            target = .ratio(try StretchRatio(checkedNumerator: o.ratio_num, denominator: o.ratio_den, parameter: "ratio"))
        default:
            throw CallBoundary.invalid("options set more than one target (ratio \(o.ratio_num)/\(o.ratio_den), target_frames, match_path): set one")
        }
        var job = FileStretch(input: input, output: output, target: target)
        job.algorithm = try algorithm(o.algorithm)
        job.quality = try quality(o.quality)
        job.stream = try stream(o.stream)
        return job
    }

    /// The document in `json` (relative paths from `baseDirectory`, else the working
    /// directory) or, when `json` is NULL, in the file `path`.
    static func document(json: UnsafePointer<CChar>?, baseDirectory: UnsafePointer<CChar>?,
                         path: UnsafePointer<CChar>?) throws -> CompositionDocument {
        if let json {
            guard path == nil else { throw CallBoundary.invalid("both json and path are set: give one") }
            let base = baseDirectory.map { String(cString: $0) } ?? FileManager.default.currentDirectoryPath
            // The name in messages; its directory anchors the document's relative paths.
            let name = (base as NSString).appendingPathComponent("(json)")
            let bytes = UnsafeBufferPointer(start: UnsafeRawPointer(json).assumingMemoryBound(to: UInt8.self), count: strlen(json))
            return try CompositionDocument(data: Data(buffer: bytes), path: name)
        }
        guard let path else { throw CallBoundary.Refusal(status: MIXDOWN_ERROR_NULL_POINTER, message: "json and path are both NULL: give one") }
        return try CompositionDocument(contentsOf: String(cString: path))
    }

    /// Runs a file job with the C progress callback (a nonzero return cancels it) and
    /// fills `result` (when not NULL) with what it returns.
    /// Renders `document` to `output` with the C output options (a document sets its own rate).
    static func render(_ document: CompositionDocument, to output: String, _ outputOptions: UnsafePointer<mixdown_output_options>?,
                       _ progress: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?,
                       _ result: UnsafeMutablePointer<mixdown_result>?) throws {
        var job = document.render(to: output)
        try apply(outputOptions, to: &job.settings)
        if job.settings.sampleRate != nil {
            throw CallBoundary.invalid("sample_rate: a document sets its own rate (\"output\": {\"sample_rate\": ...})")
        }
        try run(progress, user, result) { p, token throws(MixdownError) in
            let r = try job.run(progress: p, cancellation: token)
            return Options.result(frames: r.frames, sampleRate: r.sampleRate, channels: r.channels,
                                  seconds: r.seconds, realtimeFactor: r.realtimeFactor, loudness: r.loudness)
        }
    }

    static func run(_ callback: mixdown_progress_fn?, _ user: UnsafeMutableRawPointer?, _ result: UnsafeMutablePointer<mixdown_result>?,
                    _ job: (((Double) -> Void)?, CancellationToken) throws(MixdownError) -> mixdown_result) throws(MixdownError) {
        let token = CancellationToken()
        let progress: ((Double) -> Void)? = callback.map { callback in
            { fraction in if callback(fraction, user) != 0 { token.cancel() } }
        }
        let r = try job(progress, token)
        result?.pointee = r
    }

}
