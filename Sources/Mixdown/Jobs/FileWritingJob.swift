/// A job that writes one file. Its output settings live in `settings`; the properties
/// below reach into them, so a caller sets `job.overwrite = true` on any job.
public protocol FileWritingJob {
    var settings: OutputSettings { get set }
    /// The audio file the job writes.
    var output: String { get }
}

extension FileWritingJob {
    /// Every file the job writes: its output, and its loudness report's page when asked for.
    public var outputs: [String] { [output] + [settings.loudnessReport].compactMap { $0 } }
    /// With `loudness`: also write this HTML page of how the output reached it.
    public var loudnessReport: String? { get { settings.loudnessReport } set { settings.loudnessReport = newValue } }
    /// Output container; nil takes it from the output's extension (or the job's default).
    public var type: AudioFileType? { get { settings.type } set { settings.type = newValue } }
    /// Nil: the job's natural precision.
    public var sampleFormat: SampleFormat? { get { settings.sampleFormat } set { settings.sampleFormat = newValue } }
    /// Replace an existing file.
    public var overwrite: Bool { get { settings.overwrite } set { settings.overwrite = newValue } }
    /// Also fsync the file and its directory.
    public var durable: Bool { get { settings.durable } set { settings.durable = newValue } }
    /// Codec and bitrate for compressed outputs.
    public var encoder: EncoderSettings { get { settings.encoder } set { settings.encoder = newValue } }
    /// MP4/MOV only: copy this file's video stream beside the audio (no re-encode).
    public var videoFrom: String? { get { settings.videoFrom } set { settings.videoFrom = newValue } }
    public var metadata: AudioMetadata { get { settings.metadata } set { settings.metadata = newValue } }
    /// Block sizes the render cycles through.
    public var blockSizes: [Int] { get { settings.blockSizes } set { settings.blockSizes = newValue } }
    /// Cores a render may use (1 or 2).
    public var threads: Int { get { settings.threads } set { settings.threads = newValue } }
    /// AAC and Opus outputs: encoders at once (nil: one per core; 1 when `threads` is 1).
    public var encoders: Int? { get { settings.encoders } set { settings.encoders = newValue } }
}

extension FileExport: FileWritingJob {}
extension FileStretch: FileWritingJob {}
extension FileAlign: FileWritingJob {}
extension CompositionRender: FileWritingJob {}

extension OutputSettings {
    /// Refuses a `loudnessReport` without `loudness`, one that would be `output` or one of
    /// `inputs` (the files the job reads) or `videoFrom`, and one that would replace a file without
    /// `overwrite` or whose directory does not exist: before anything is read or written.
    public func checkLoudnessReport(output: String, inputs: [String]) throws(MixdownError) {
        guard let page = loudnessReport else { return }
        guard loudness != nil else {
            throw .invalidParameter(name: "--report", value: page, reason: "the page shows how the output reached its --loudness target: give --loudness too, or measure the output with `mixdown loudness \(output) --report \(page)`")
        }
        if FileIdentity(page) == FileIdentity(output) {
            throw .invalidParameter(name: "--report", value: page, reason: "is the output: write the page elsewhere")
        }
        try LoudnessReportPage.checkDestination(page, overwrite: overwrite, inputs: inputs + [videoFrom].compactMap { $0 })
    }
}
