/// How hard a resampler works: pass band and stop-band attenuation against speed.
public enum ResamplerQuality: String, Sendable, CaseIterable, Codable {
    /// Pass band to 0.9 × the lower Nyquist, stop band 110 dB down. libsamplerate: SRC_SINC_BEST_QUALITY.
    case best
    /// Pass band to 0.85, 90 dB. libsamplerate: SRC_SINC_MEDIUM_QUALITY.
    case medium
    /// Pass band to 0.8, 70 dB. libsamplerate: SRC_SINC_FASTEST.
    case fastest

    /// Pass-band edge (fraction of the lower Nyquist) and stop-band attenuation (dB).
    var design: (pass: Double, attenuation: Double) {
        switch self {
        case .best: (0.9, 110)
        case .medium: (0.85, 90)
        case .fastest: (0.8, 70)
        }
    }
}
