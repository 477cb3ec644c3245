extension CompositionDocument {
    /// A render of this document to `output`, with the document's settings. (Here, in
    /// Jobs, so that the editing layer never reaches up to the jobs that render it.)
    public func render(to output: String) -> CompositionRender {
        CompositionRender(composition: composition, output: output, audioMix: audioMix, outputFormat: outputFormat,
                          timeRange: timeRange, timePitchAlgorithm: timePitchAlgorithm, resampler: resampler,
                          quality: resamplerQuality, fileLengthLimit: fileLengthLimit, settings: outputSettings)
    }
}
