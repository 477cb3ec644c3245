/// The streams of any file Mixdown reads, audio or not: what `mixdown info` lists for a
/// video-only file, and where `stretch --match` takes a reference's exact duration.
public enum MediaFileStreams {
    /// Every stream of `path` (one audio stream for libsndfile's formats).
    public static func read(path: String) throws(MixdownError) -> [MediaStreamInfo] {
        do { return try AudioFileInfo.read(path: path).streams } catch {
            guard case .noAudioStream = error else { throw error }
            #if FFmpeg
            return try FFmpegDecoder.probeStreams(path: path)
            #else
            throw error
            #endif
        }
    }

    /// A reference's exact duration, as rational time: its first audio stream's (valid
    /// frames over its rate) if it has one, else its first video stream's (the container's
    /// duration in the stream's time base). `source` says which, for reports.
    public static func referenceDuration(path: String) throws(MixdownError) -> (duration: MediaTime, source: String) {
        do {
            let info = try AudioFileInfo.read(path: path)
            return (info.duration, "audio stream \(info.stream) (\(info.sampleFormat), \(info.frames) frames at \(info.sampleRate) Hz)")
        } catch {
            guard case .noAudioStream = error else { throw error }
            #if FFmpeg
            let streams = try FFmpegDecoder.probeStreams(path: path)
            guard let video = streams.first(where: { $0.kind == .video }) else {
                throw .noAudioStream(path: path, reason: "has neither an audio nor a video stream to take a duration from")
            }
            guard let d = video.duration, d > .zero else {
                throw .noAudioStream(path: path, reason: "has no audio stream, and its video stream \(video.index) declares no exact duration")
            }
            return (d, "video stream \(video.index) (\(video.codec)\(video.frameRate.map { ", \($0) fps" } ?? ""))")
            #else
            throw error
            #endif
        }
    }
}
