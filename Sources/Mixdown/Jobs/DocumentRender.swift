import Foundation

extension CompositionDocument {
    /// A render of this document to `output`, with the document's settings. (Here, in
    /// Jobs, so that the editing layer never reaches up to the jobs that render it.)
    public func render(to output: String) -> CompositionRender {
        var job = CompositionRender(composition: composition, output: output, audioMix: audioMix, outputFormat: outputFormat,
                                    timeRange: timeRange, timePitchAlgorithm: timePitchAlgorithm, resampler: resampler,
                                    quality: resamplerQuality, fileLengthLimit: fileLengthLimit, settings: outputSettings)
        job.outputRateIsDefault = !outputRateGiven
        job.document = .init(path: path, bitrate: bitrate, fileLengthLimit: fileLengthLimit)
        return job
    }
}

extension CompositionDocument {
    /// Writes this document as an OpenTimelineIO timeline (`OTIOTimeline.json(for:relativeTo:)`)
    /// to `path`, atomically: the whole file, or nothing. File paths inside the timeline's
    /// directory are written relative to it. Reading the timeline back renders the same frames.
    public func writeOTIO(to path: String, overwrite: Bool, editRate: MediaTime? = nil) throws(MixdownError) {
        let directory = ((path as NSString).standardizingPath as NSString).deletingLastPathComponent
        let text = try OTIOTimeline.json(for: self, relativeTo: directory, editRate: editRate)
        try TextFile.write(text, to: path, overwrite: overwrite)
    }
}
