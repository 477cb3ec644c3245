import CSndFile

/// How samples are stored in an output file.
public enum SampleFormat: String, Sendable, CaseIterable, Codable {
    /// Signed 16-bit integer; float x becomes round(x * 32768), clipped.
    case s16
    /// Signed 24-bit integer; float x becomes round(x * 8388608), clipped.
    case s24
    /// 32-bit IEEE float, written as is (no clipping).
    case f32

    public var bytesPerSample: Int {
        switch self { case .s16: return 2; case .s24: return 3; case .f32: return 4 }
    }

    var sndfileSubtype: Int32 {
        switch self {
        case .s16: return Int32(SF_FORMAT_PCM_16)
        case .s24: return Int32(SF_FORMAT_PCM_24)
        case .f32: return Int32(SF_FORMAT_FLOAT)
        }
    }
}
