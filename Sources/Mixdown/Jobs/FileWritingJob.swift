/// A job that writes one file: the output settings every such job shares.
public protocol FileWritingJob {
    /// Output container; nil takes it from the output's extension (or the job's default).
    var type: AudioFileType? { get set }
    /// Nil: the job's natural precision.
    var sampleFormat: SampleFormat? { get set }
    /// Replace an existing file.
    var overwrite: Bool { get set }
    /// Also fsync the file and its directory.
    var durable: Bool { get set }
    /// Codec and bitrate for compressed outputs.
    var encoder: EncoderSettings { get set }
    /// MP4/MOV only: copy this file's video stream beside the audio (no re-encode).
    var videoFrom: String? { get set }
}

extension FileExport: FileWritingJob {}
extension FileStretch: FileWritingJob {}
extension FileAlign: FileWritingJob {}
extension CompositionRender: FileWritingJob {}
