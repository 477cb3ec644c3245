import Foundation

/// The K-weighting filter of ITU-R BS.1770-4 at any sample rate: a high shelf (+4 dB
/// above about 1.7 kHz, the head's acoustic effect) then a high pass (the RLB curve, about
/// 38 Hz). Both are designed from their analog prototypes with the bilinear transform, as
/// the recommendation's 48 kHz coefficients are; at 48 kHz they equal the published ones
/// to 1e-8.
enum KWeighting {
    /// {shelf b0, b1, b2, a1, a2, high pass b0, b1, b2, a1, a2}, the layout of
    /// `mx_kernels.kweight`; a0 = 1 for both.
    static func coefficients(sampleRate: Int) -> [Double] {
        let fs = Double(sampleRate)
        // The shelf: centre 1681.97 Hz, gain 4.0 dB, Q 0.7072 (BS.1770's prototype).
        var f0 = 1681.974450955533, q = 0.7071752369554196
        let gain = 3.999843853973347
        var k = tan(Double.pi * f0 / fs)
        let vh = pow(10, gain / 20), vb = pow(vh, 0.4996667741545416)
        var a0 = 1 + k / q + k * k
        let shelf = [(vh + vb * k / q + k * k) / a0, 2 * (k * k - vh) / a0, (vh - vb * k / q + k * k) / a0,
                     2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0]
        // The high pass: 38.135 Hz, Q 0.5003, numerator 1, -2, 1 as the recommendation gives it.
        f0 = 38.13547087602444
        q = 0.5003270373238773
        k = tan(Double.pi * f0 / fs)
        a0 = 1 + k / q + k * k
        let highPass = [1, -2, 1, 2 * (k * k - 1) / a0, (1 - k / q + k * k) / a0]
        return shelf + highPass
    }

    /// BS.1770's channel weights by position, for a file that says only how many channels
    /// it has (libebur128's default map): 1, 2 or 3 channels weigh 1 (L, R, C); 4 are L R Ls
    /// Rs; 5 are L R C Ls Rs; 6 or more are L R C LFE Ls Rs (the LFE and any channel past the
    /// sixth weigh 0). Surrounds weigh 1.41 (+1.5 dB).
    static func channelWeights(channelCount: Int) -> [Double] {
        switch channelCount {
        case 1...3: return Array(repeating: 1, count: channelCount)
        case 4: return [1, 1, 1.41, 1.41]
        case 5: return [1, 1, 1, 1.41, 1.41]
        default: return [1, 1, 1, 0, 1.41, 1.41] + Array(repeating: 0, count: channelCount - 6)
        }
    }
}
