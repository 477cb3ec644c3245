/* SSE2 paths (baseline on x86_64). Unaligned loads and stores only: correctness never
 * depends on alignment. Tails use the scalar per-frame helpers. */
#include "internal.h"
#if defined(MX_HAVE_X86)
#include <emmintrin.h>

static void mix_ramp_sse2(float *restrict dst, const float *restrict src, size_t frames,
                          double g0, double step, int64_t offset) {
    size_t i = 0;
    const __m128d g0v = _mm_set1_pd(g0), stepv = _mm_set1_pd(step), four = _mm_set1_pd(4.0);
    __m128d idx0 = _mm_set_pd((double)(offset + 1), (double)offset);
    __m128d idx1 = _mm_set_pd((double)(offset + 3), (double)(offset + 2));
    for (; i + 4 <= frames; i += 4) {
        __m128 g = _mm_movelh_ps(_mm_cvtpd_ps(_mm_add_pd(g0v, _mm_mul_pd(idx0, stepv))),
                                 _mm_cvtpd_ps(_mm_add_pd(g0v, _mm_mul_pd(idx1, stepv))));
        __m128 d = _mm_loadu_ps(dst + i), s = _mm_loadu_ps(src + i);
        _mm_storeu_ps(dst + i, _mm_add_ps(d, _mm_mul_ps(s, g)));
        idx0 = _mm_add_pd(idx0, four);
        idx1 = _mm_add_pd(idx1, four);
    }
    for (; i < frames; i++)
        dst[i] = dst[i] + src[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

static void mix_gain_sse2(float *restrict dst, const float *restrict src, size_t frames, float gain) {
    size_t i = 0;
    const __m128 g = _mm_set1_ps(gain);
    for (; i + 4 <= frames; i += 4)
        _mm_storeu_ps(dst + i, _mm_add_ps(_mm_loadu_ps(dst + i), _mm_mul_ps(_mm_loadu_ps(src + i), g)));
    for (; i < frames; i++)
        dst[i] = dst[i] + src[i] * gain;
}

static void apply_ramp_sse2(float *restrict buf, size_t frames, double g0, double step, int64_t offset) {
    size_t i = 0;
    const __m128d g0v = _mm_set1_pd(g0), stepv = _mm_set1_pd(step), four = _mm_set1_pd(4.0);
    __m128d idx0 = _mm_set_pd((double)(offset + 1), (double)offset);
    __m128d idx1 = _mm_set_pd((double)(offset + 3), (double)(offset + 2));
    for (; i + 4 <= frames; i += 4) {
        __m128 g = _mm_movelh_ps(_mm_cvtpd_ps(_mm_add_pd(g0v, _mm_mul_pd(idx0, stepv))),
                                 _mm_cvtpd_ps(_mm_add_pd(g0v, _mm_mul_pd(idx1, stepv))));
        _mm_storeu_ps(buf + i, _mm_mul_ps(_mm_loadu_ps(buf + i), g));
        idx0 = _mm_add_pd(idx0, four);
        idx1 = _mm_add_pd(idx1, four);
    }
    for (; i < frames; i++)
        buf[i] = buf[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

static void apply_gain_sse2(float *restrict buf, size_t frames, float gain) {
    size_t i = 0;
    const __m128 g = _mm_set1_ps(gain);
    for (; i + 4 <= frames; i += 4)
        _mm_storeu_ps(buf + i, _mm_mul_ps(_mm_loadu_ps(buf + i), g));
    for (; i < frames; i++)
        buf[i] = buf[i] * gain;
}

static void interleave_sse2(float *restrict dst, const float *const *restrict src,
                            size_t channels, size_t frames) {
    if (channels != 2) { mx_interleave_scalar(dst, src, channels, frames); return; }
    const float *l = src[0], *r = src[1];
    size_t f = 0;
    for (; f + 4 <= frames; f += 4) {
        __m128 a = _mm_loadu_ps(l + f), b = _mm_loadu_ps(r + f);
        _mm_storeu_ps(dst + 2 * f, _mm_unpacklo_ps(a, b));
        _mm_storeu_ps(dst + 2 * f + 4, _mm_unpackhi_ps(a, b));
    }
    for (; f < frames; f++) { dst[2 * f] = l[f]; dst[2 * f + 1] = r[f]; }
}

static void deinterleave_sse2(float *const *restrict dst, const float *restrict src,
                              size_t channels, size_t frames) {
    if (channels != 2) { mx_deinterleave_scalar(dst, src, channels, frames); return; }
    float *l = dst[0], *r = dst[1];
    size_t f = 0;
    for (; f + 4 <= frames; f += 4) {
        __m128 a = _mm_loadu_ps(src + 2 * f), b = _mm_loadu_ps(src + 2 * f + 4);
        _mm_storeu_ps(l + f, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm_storeu_ps(r + f, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    }
    for (; f < frames; f++) { l[f] = src[2 * f]; r[f] = src[2 * f + 1]; }
}

/* Scale, zero NaN, clip: the same steps as mx_s16_one / mx_s24_one. */
static inline __m128 scale_clip_sse2(__m128 x, __m128 scale, __m128 lo, __m128 hi) {
    __m128 v = _mm_mul_ps(x, scale);
    v = _mm_and_ps(v, _mm_cmpord_ps(v, v));
    return _mm_max_ps(_mm_min_ps(v, hi), lo);
}

/* 8 int16 to 4 + 4 floats scaled by 2^-15: sign-extend by unpacking onto the high half
 * and shifting back. */
static inline void s16x8_to_f32_sse2(__m128i x, __m128 scale, __m128 *lo, __m128 *hi) {
    *lo = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpacklo_epi16(x, x), 16)), scale);
    *hi = _mm_mul_ps(_mm_cvtepi32_ps(_mm_srai_epi32(_mm_unpackhi_epi16(x, x), 16)), scale);
}

static void s16_deinterleave_sse2(float *const *restrict dst, const int16_t *restrict src,
                                  size_t channels, size_t frames) {
    if (channels > 2) { mx_s16_deinterleave_scalar(dst, src, channels, frames); return; }
    const __m128 scale = _mm_set1_ps(1.0f / 32768.0f);
    size_t f = 0;
    if (channels == 1) {
        float *d = dst[0];
        for (; f + 8 <= frames; f += 8) {
            __m128 lo, hi;
            s16x8_to_f32_sse2(_mm_loadu_si128((const __m128i *)(const void *)(src + f)), scale, &lo, &hi);
            _mm_storeu_ps(d + f, lo);
            _mm_storeu_ps(d + f + 4, hi);
        }
        for (; f < frames; f++) d[f] = (float)src[f] * (1.0f / 32768.0f);
        return;
    }
    float *l = dst[0], *r = dst[1];
    for (; f + 4 <= frames; f += 4) {
        __m128 a, b;   /* a = L0 R0 L1 R1, b = L2 R2 L3 R3 */
        s16x8_to_f32_sse2(_mm_loadu_si128((const __m128i *)(const void *)(src + 2 * f)), scale, &a, &b);
        _mm_storeu_ps(l + f, _mm_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)));
        _mm_storeu_ps(r + f, _mm_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    }
    for (; f < frames; f++) {
        l[f] = (float)src[2 * f] * (1.0f / 32768.0f);
        r[f] = (float)src[2 * f + 1] * (1.0f / 32768.0f);
    }
}

static void f32_to_s16_sse2(int16_t *restrict dst, const float *restrict src, size_t n) {
    const __m128 scale = _mm_set1_ps(32768.0f), lo = _mm_set1_ps(-32768.0f), hi = _mm_set1_ps(32767.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i a = _mm_cvtps_epi32(scale_clip_sse2(_mm_loadu_ps(src + i), scale, lo, hi));
        __m128i b = _mm_cvtps_epi32(scale_clip_sse2(_mm_loadu_ps(src + i + 4), scale, lo, hi));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm_packs_epi32(a, b));
    }
    for (; i < n; i++) dst[i] = mx_s16_one(src[i]);
}

static void f32_to_s24_sse2(int32_t *restrict dst, const float *restrict src, size_t n) {
    const __m128 scale = _mm_set1_ps(8388608.0f), lo = _mm_set1_ps(-8388608.0f), hi = _mm_set1_ps(8388607.0f);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        __m128i a = _mm_cvtps_epi32(scale_clip_sse2(_mm_loadu_ps(src + i), scale, lo, hi));
        _mm_storeu_si128((__m128i *)(void *)(dst + i), _mm_slli_epi32(a, 8));
    }
    for (; i < n; i++) dst[i] = mx_s24_one(src[i]);
}

/* One output's sixteen lanes, held four by four, in mx_lane_fold's order. */
static inline float lane_fold_sse2(__m128 a, __m128 b, __m128 c, __m128 d) {
    float s[16];
    _mm_storeu_ps(s, a);
    _mm_storeu_ps(s + 4, b);
    _mm_storeu_ps(s + 8, c);
    _mm_storeu_ps(s + 12, d);
    return mx_lane_fold(s);
}

/* One row against one window, multiply then add (no FMA on SSE2): four add chains. */
static inline float dot_sse2(const float *row, const float *x, size_t taps) {
    __m128 a = _mm_setzero_ps(), b = a, c = a, d = a;
    for (size_t k = 0; k < taps; k += 16) {
        a = _mm_add_ps(a, _mm_mul_ps(_mm_loadu_ps(row + k), _mm_loadu_ps(x + k)));
        b = _mm_add_ps(b, _mm_mul_ps(_mm_loadu_ps(row + k + 4), _mm_loadu_ps(x + k + 4)));
        c = _mm_add_ps(c, _mm_mul_ps(_mm_loadu_ps(row + k + 8), _mm_loadu_ps(x + k + 8)));
        d = _mm_add_ps(d, _mm_mul_ps(_mm_loadu_ps(row + k + 12), _mm_loadu_ps(x + k + 12)));
    }
    return lane_fold_sse2(a, b, c, d);
}

static void resample_sse2(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                          const int32_t *restrict phase, size_t count, const float *restrict bank, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) dst[i] = dot_sse2(bank + (size_t)phase[i] * t, src + base[i], t);
}

/* Lanes k..k+3 of an output's coefficients, row + f slope (a multiply, then an add). */
static inline __m128 lerp_coef_sse2(const float *row, size_t t, size_t k, __m128 f) {
    return _mm_add_ps(_mm_loadu_ps(row + k), _mm_mul_ps(f, _mm_loadu_ps(row + t + k)));
}

/* One output at a time; with two channels its coefficients serve both. */
static void resample_lerp_sse2(float *restrict dst0, float *restrict dst1, const float *restrict src0,
                               const float *restrict src1, const int32_t *restrict base,
                               const int32_t *restrict phase, const float *restrict frac, size_t count,
                               const float *restrict table, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) {
        const float *row = table + (size_t)phase[i] * 2 * t, *x = src0 + base[i];
        const __m128 f = _mm_set1_ps(frac[i]);
        __m128 a = _mm_setzero_ps(), b = a, c = a, d = a;
        if (src1) {
            const float *y = src1 + base[i];
            __m128 e = _mm_setzero_ps(), g = e, h = e, j = e;
            for (size_t k = 0; k < t; k += 16) {
                const __m128 ca = lerp_coef_sse2(row, t, k, f), cb = lerp_coef_sse2(row, t, k + 4, f);
                const __m128 cc = lerp_coef_sse2(row, t, k + 8, f), cd = lerp_coef_sse2(row, t, k + 12, f);
                a = _mm_add_ps(a, _mm_mul_ps(ca, _mm_loadu_ps(x + k)));
                b = _mm_add_ps(b, _mm_mul_ps(cb, _mm_loadu_ps(x + k + 4)));
                c = _mm_add_ps(c, _mm_mul_ps(cc, _mm_loadu_ps(x + k + 8)));
                d = _mm_add_ps(d, _mm_mul_ps(cd, _mm_loadu_ps(x + k + 12)));
                e = _mm_add_ps(e, _mm_mul_ps(ca, _mm_loadu_ps(y + k)));
                g = _mm_add_ps(g, _mm_mul_ps(cb, _mm_loadu_ps(y + k + 4)));
                h = _mm_add_ps(h, _mm_mul_ps(cc, _mm_loadu_ps(y + k + 8)));
                j = _mm_add_ps(j, _mm_mul_ps(cd, _mm_loadu_ps(y + k + 12)));
            }
            dst1[i] = lane_fold_sse2(e, g, h, j);
        } else {
            for (size_t k = 0; k < t; k += 16) {
                a = _mm_add_ps(a, _mm_mul_ps(lerp_coef_sse2(row, t, k, f), _mm_loadu_ps(x + k)));
                b = _mm_add_ps(b, _mm_mul_ps(lerp_coef_sse2(row, t, k + 4, f), _mm_loadu_ps(x + k + 4)));
                c = _mm_add_ps(c, _mm_mul_ps(lerp_coef_sse2(row, t, k + 8, f), _mm_loadu_ps(x + k + 8)));
                d = _mm_add_ps(d, _mm_mul_ps(lerp_coef_sse2(row, t, k + 12, f), _mm_loadu_ps(x + k + 12)));
            }
        }
        dst0[i] = lane_fold_sse2(a, b, c, d);
    }
}

static void xcorr_sse2(float *restrict dst, const float *restrict a, const float *restrict x, size_t len, size_t lags) {
    size_t l = 0;
    for (; l + 4 <= lags; l += 4) {
        __m128 acc = _mm_setzero_ps();
        for (size_t i = 0; i < len; i++) acc = _mm_add_ps(acc, _mm_mul_ps(_mm_set1_ps(a[i]), _mm_loadu_ps(x + l + i)));
        _mm_storeu_ps(dst + l, acc);
    }
    for (; l < lags; l++) dst[l] = mx_xcorr_one(a, x + l, len);
}

/* K-weighting, two channels side by side in the lanes of a __m128d (lane 0: channel c).
 * Shared with the AVX2 table, which runs a pair left over from its quads with it. */
void mx_kweight_pair_sse2(double *restrict energy, double *restrict state, const float *restrict x0,
                              const float *restrict x1, size_t frames, const double *restrict c) {
    double *sa = state, *sb = state + 4;
    __m128d s0 = _mm_set_pd(sb[0], sa[0]), s1 = _mm_set_pd(sb[1], sa[1]);
    __m128d s2 = _mm_set_pd(sb[2], sa[2]), s3 = _mm_set_pd(sb[3], sa[3]);
    __m128d e = _mm_set_pd(energy[1], energy[0]);
    const __m128d c0 = _mm_set1_pd(c[0]), c1 = _mm_set1_pd(c[1]), c2 = _mm_set1_pd(c[2]), c3 = _mm_set1_pd(c[3]),
                  c4 = _mm_set1_pd(c[4]), c5 = _mm_set1_pd(c[5]), c6 = _mm_set1_pd(c[6]), c7 = _mm_set1_pd(c[7]),
                  c8 = _mm_set1_pd(c[8]), c9 = _mm_set1_pd(c[9]);
    for (size_t i = 0; i < frames; i++) {
        const __m128d x = _mm_set_pd((double)x1[i], (double)x0[i]);
        const __m128d y = _mm_add_pd(_mm_mul_pd(c0, x), s0);
        s0 = _mm_sub_pd(_mm_add_pd(_mm_mul_pd(c1, x), s1), _mm_mul_pd(c3, y));
        s1 = _mm_sub_pd(_mm_mul_pd(c2, x), _mm_mul_pd(c4, y));
        const __m128d z = _mm_add_pd(_mm_mul_pd(c5, y), s2);
        s2 = _mm_sub_pd(_mm_add_pd(_mm_mul_pd(c6, y), s3), _mm_mul_pd(c8, z));
        s3 = _mm_sub_pd(_mm_mul_pd(c7, y), _mm_mul_pd(c9, z));
        e = _mm_add_pd(e, _mm_mul_pd(z, z));
    }
    double t[2];
    _mm_storeu_pd(t, s0); sa[0] = t[0]; sb[0] = t[1];
    _mm_storeu_pd(t, s1); sa[1] = t[0]; sb[1] = t[1];
    _mm_storeu_pd(t, s2); sa[2] = t[0]; sb[2] = t[1];
    _mm_storeu_pd(t, s3); sa[3] = t[0]; sb[3] = t[1];
    _mm_storeu_pd(energy, e);
    mx_kweight_flush(sa);
    mx_kweight_flush(sb);
}

static void kweight_sse2(double *restrict energy, double *restrict state, const float *const *restrict src,
                         size_t channels, size_t frames, const double *restrict coef) {
    size_t c = 0;
    for (; c + 2 <= channels; c += 2)
        mx_kweight_pair_sse2(energy + c, state + 4 * c, src[c], src[c + 1], frames, coef);
    if (c < channels) mx_kweight_scalar(energy + c, state + 4 * c, src + c, 1, frames, coef);
}

/* The larger of each lane of m and |v|, passing over NaN: MAXPS returns its second
 * operand when the comparison fails, as mx_peak_one does. */
static inline __m128 peak_lanes_sse2(__m128 m, __m128 v) {
    const __m128 magnitude = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    return _mm_max_ps(_mm_and_ps(v, magnitude), m);
}
static inline float peak_fold_sse2(__m128 m, float r) {
    float t[4];
    _mm_storeu_ps(t, m);
    for (int l = 0; l < 4; l++) r = mx_peak_one(r, t[l]);
    return r;
}

static float peak_sse2(const float *restrict x, size_t n) {
    size_t i = 0;
    __m128 m = _mm_setzero_ps();
    for (; i + 4 <= n; i += 4) m = peak_lanes_sse2(m, _mm_loadu_ps(x + i));
    float r = peak_fold_sse2(m, 0.0f);
    for (; i < n; i++) r = mx_peak_one(r, x[i]);
    return r;
}

/* Four windows per step. Inlined with a constant `pairs`, so that the accumulators stay
 * in registers. */
static inline __attribute__((always_inline)) float peak_interp_sse2_n(const float *restrict x, size_t frames,
                                                                      const float *restrict bank, size_t taps,
                                                                      const size_t pairs) {
    const size_t h = taps / 2;
    size_t i = 0;
    __m128 m = _mm_setzero_ps();
    for (; i + 4 <= frames; i += 4) {
        __m128 u[4], v[4];
        for (size_t p = 0; p < pairs; p++) u[p] = v[p] = _mm_setzero_ps();
        for (size_t k = 0; k < h; k++) {
            const __m128 lo = _mm_loadu_ps(x + i + k), hi = _mm_loadu_ps(x + i + taps - 1 - k);
            const __m128 s = _mm_add_ps(lo, hi), d = _mm_sub_ps(lo, hi);
            for (size_t p = 0; p < pairs; p++) {
                u[p] = _mm_add_ps(u[p], _mm_mul_ps(_mm_set1_ps(bank[p * taps + k]), s));
                v[p] = _mm_add_ps(v[p], _mm_mul_ps(_mm_set1_ps(bank[p * taps + h + k]), d));
            }
        }
        for (size_t p = 0; p < pairs; p++)
            m = peak_lanes_sse2(peak_lanes_sse2(m, _mm_add_ps(u[p], v[p])), _mm_sub_ps(u[p], v[p]));
    }
    float r = peak_fold_sse2(m, 0.0f);
    for (; i < frames; i++)
        for (size_t p = 0; p < pairs; p++) r = mx_interp_pair_peak(r, bank + p * taps, x + i, taps);
    return r;
}

static float peak_interp_sse2(const float *restrict x, size_t frames, const float *restrict bank,
                              size_t pairs, size_t taps) {
    switch (pairs) {
    case 1: return peak_interp_sse2_n(x, frames, bank, taps, 1);
    case 2: return peak_interp_sse2_n(x, frames, bank, taps, 2);
    case 3: return peak_interp_sse2_n(x, frames, bank, taps, 3);
    default: return peak_interp_sse2_n(x, frames, bank, taps, 4);
    }
}

const mx_kernels mx_kernels_sse2 = {
    mix_ramp_sse2, mix_gain_sse2, apply_ramp_sse2, apply_gain_sse2,
    interleave_sse2, deinterleave_sse2, f32_to_s16_sse2, f32_to_s24_sse2, xcorr_sse2, s16_deinterleave_sse2,
    resample_sse2, resample_lerp_sse2,
    kweight_sse2, peak_sse2, peak_interp_sse2,
    mx_resample_positions_scalar, mx_cfft_pass4_v4, mx_rfft_unpack_auto, mx_rfft_pack_auto,
    mx_pvoc_analyse_base, mx_pvoc_synthesise_base,
};
#endif
