/* Scalar references: the ground truth for every SIMD path. */
#include "internal.h"
#include <string.h>

void mx_mix_ramp_scalar(float *restrict dst, const float *restrict src, size_t frames,
                        double g0, double step, int64_t offset) {
    MX_NO_VECTORIZE
    for (size_t i = 0; i < frames; i++)
        dst[i] = dst[i] + src[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

void mx_mix_gain_scalar(float *restrict dst, const float *restrict src, size_t frames, float gain) {
    MX_NO_VECTORIZE
    for (size_t i = 0; i < frames; i++)
        dst[i] = dst[i] + src[i] * gain;
}

void mx_apply_ramp_scalar(float *restrict buf, size_t frames, double g0, double step, int64_t offset) {
    MX_NO_VECTORIZE
    for (size_t i = 0; i < frames; i++)
        buf[i] = buf[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

void mx_apply_gain_scalar(float *restrict buf, size_t frames, float gain) {
    MX_NO_VECTORIZE
    for (size_t i = 0; i < frames; i++)
        buf[i] = buf[i] * gain;
}

void mx_interleave_scalar(float *restrict dst, const float *const *restrict src,
                          size_t channels, size_t frames) {
    if (channels == 1) {
        if (frames) memcpy(dst, src[0], frames * sizeof(float));
        return;
    }
    for (size_t c = 0; c < channels; c++) {
        const float *s = src[c];
        MX_NO_VECTORIZE
        for (size_t f = 0; f < frames; f++)
            dst[f * channels + c] = s[f];
    }
}

void mx_deinterleave_scalar(float *const *restrict dst, const float *restrict src,
                            size_t channels, size_t frames) {
    if (channels == 1) {
        if (frames) memcpy(dst[0], src, frames * sizeof(float));
        return;
    }
    for (size_t c = 0; c < channels; c++) {
        float *d = dst[c];
        MX_NO_VECTORIZE
        for (size_t f = 0; f < frames; f++)
            d[f] = src[f * channels + c];
    }
}

void mx_s16_deinterleave_scalar(float *const *restrict dst, const int16_t *restrict src,
                                size_t channels, size_t frames) {
    const float scale = 1.0f / 32768.0f;
    for (size_t c = 0; c < channels; c++) {
        float *d = dst[c];
        MX_NO_VECTORIZE
        for (size_t f = 0; f < frames; f++)
            d[f] = (float)src[f * channels + c] * scale;
    }
}

void mx_f32_to_s16_scalar(int16_t *restrict dst, const float *restrict src, size_t n) {
    MX_NO_VECTORIZE
    for (size_t i = 0; i < n; i++)
        dst[i] = mx_s16_one(src[i]);
}

void mx_f32_to_s24_scalar(int32_t *restrict dst, const float *restrict src, size_t n) {
    MX_NO_VECTORIZE
    for (size_t i = 0; i < n; i++)
        dst[i] = mx_s24_one(src[i]);
}

void mx_resample_scalar(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                        const int32_t *restrict phase, size_t count, const float *restrict bank, int taps) {
    for (size_t i = 0; i < count; i++)
        dst[i] = mx_dot_lanes(bank + (size_t)phase[i] * (size_t)taps, src + base[i], taps);
}

void mx_resample_lerp_scalar(float *restrict dst0, float *restrict dst1, const float *restrict src0,
                             const float *restrict src1, const int32_t *restrict base,
                             const int32_t *restrict phase, const float *restrict frac, size_t count,
                             const float *restrict table, int taps) {
    const size_t row = 2 * (size_t)taps;
    for (size_t i = 0; i < count; i++)
        mx_dot_lerp_lanes(dst0 + i, src1 ? dst1 + i : NULL, table + (size_t)phase[i] * row, frac[i], src0 + base[i],
                          src1 ? src1 + base[i] : NULL, taps);
}

void mx_resample_fma_scalar(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                            const int32_t *restrict phase, size_t count, const float *restrict bank, int taps) {
    for (size_t i = 0; i < count; i++)
        dst[i] = mx_dot_lanes_fused(bank + (size_t)phase[i] * (size_t)taps, src + base[i], taps);
}

void mx_resample_lerp_fma_scalar(float *restrict dst0, float *restrict dst1, const float *restrict src0,
                                 const float *restrict src1, const int32_t *restrict base,
                                 const int32_t *restrict phase, const float *restrict frac, size_t count,
                                 const float *restrict table, int taps) {
    const size_t row = 2 * (size_t)taps;
    for (size_t i = 0; i < count; i++)
        mx_dot_lerp_lanes_fused(dst0 + i, src1 ? dst1 + i : NULL, table + (size_t)phase[i] * row, frac[i],
                                src0 + base[i], src1 ? src1 + base[i] : NULL, taps);
}

void mx_resample_lerp_table(float *restrict table, const float *restrict bank, size_t rows, int taps) {
    const size_t t = (size_t)taps;
    for (size_t r = 0; r < rows; r++) {
        const float *a = bank + r * t, *b = a + t;
        float *out = table + r * 2 * t;
        for (size_t k = 0; k < t; k++) {
            out[k] = a[k];
            out[t + k] = b[k] - a[k];
        }
    }
}

void mx_xcorr_scalar(float *restrict dst, const float *restrict a, const float *restrict x, size_t len, size_t lags) {
    for (size_t l = 0; l < lags; l++) dst[l] = mx_xcorr_one(a, x + l, len);
}

void mx_kweight_scalar(double *restrict energy, double *restrict state, const float *const *restrict src,
                       size_t channels, size_t frames, const double *restrict coef) {
    for (size_t c = 0; c < channels; c++) {
        double *s = state + 4 * c;
        const float *x = src[c];
        double e = energy[c];
        MX_NO_VECTORIZE
        for (size_t i = 0; i < frames; i++) {
            double z = mx_kweight_one((double)x[i], s, coef);
            e = e + z * z;
        }
        energy[c] = e;
        mx_kweight_flush(s);
    }
}

float mx_peak_scalar(const float *restrict x, size_t n) {
    float m = 0.0f;
    MX_NO_VECTORIZE
    for (size_t i = 0; i < n; i++) m = mx_peak_one(m, x[i]);
    return m;
}

float mx_peak_interp_scalar(const float *restrict x, size_t frames, const float *restrict bank,
                            size_t pairs, size_t taps) {
    float m = 0.0f;
    for (size_t i = 0; i < frames; i++)
        for (size_t p = 0; p < pairs; p++) m = mx_interp_pair_peak(m, bank + p * taps, x + i, taps);
    return m;
}

/* The reference radix-4 Stockham pass (mx_kernels.cfft_pass4), one butterfly at a time. */
void mx_cfft_pass4_scalar(float *restrict yr, float *restrict yi, const float *restrict xr,
                          const float *restrict xi, const float *restrict tw, size_t n1, size_t s) {
    size_t quarter = s * n1;
    for (size_t p = 0; p < n1; p++) {
        float w1r = tw[p], w1i = tw[n1 + p], w2r = tw[2 * n1 + p], w2i = tw[3 * n1 + p];
        float w3r = tw[4 * n1 + p], w3i = tw[5 * n1 + p];
        const float *ar = xr + s * p, *ai = xi + s * p;
        float *or_ = yr + 4 * s * p, *oi = yi + 4 * s * p;
        MX_NO_VECTORIZE
        for (size_t q = 0; q < s; q++) {
            float a_r = ar[q], a_i = ai[q], b_r = ar[quarter + q], b_i = ai[quarter + q];
            float c_r = ar[2 * quarter + q], c_i = ai[2 * quarter + q];
            float d_r = ar[3 * quarter + q], d_i = ai[3 * quarter + q];
            MX_RADIX4(float, a_r, a_i, b_r, b_i, c_r, c_i, d_r, d_i, w1r, w1i, w2r, w2i, w3r, w3i)
            or_[q] = o0r; oi[q] = o0i;
            or_[s + q] = o1r; oi[s + q] = o1i;
            or_[2 * s + q] = o2r; oi[2 * s + q] = o2i;
            or_[3 * s + q] = o3r; oi[3 * s + q] = o3i;
        }
    }
}

void mx_rfft_unpack_scalar(float *restrict re, float *restrict im, const float *restrict zr, const float *restrict zi,
                           const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_UNPACK(MX_NO_VECTORIZE)
}

void mx_rfft_pack_scalar(float *restrict zr, float *restrict zi, const float *restrict re, const float *restrict im,
                         const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_PACK(MX_NO_VECTORIZE)
}

const mx_kernels mx_kernels_scalar = {
    mx_mix_ramp_scalar, mx_mix_gain_scalar, mx_apply_ramp_scalar, mx_apply_gain_scalar,
    mx_interleave_scalar, mx_deinterleave_scalar, mx_f32_to_s16_scalar, mx_f32_to_s24_scalar,
    mx_xcorr_scalar, mx_s16_deinterleave_scalar,
    mx_resample_scalar, mx_resample_lerp_scalar,
    mx_kweight_scalar, mx_peak_scalar, mx_peak_interp_scalar,
    mx_resample_positions_scalar, mx_cfft_pass4_scalar, mx_rfft_unpack_scalar, mx_rfft_pack_scalar,
    mx_pvoc_analyse_base, mx_pvoc_synthesise_base,
};
