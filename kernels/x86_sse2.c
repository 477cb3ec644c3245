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

static void resample_lerp_sse2(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                               const int32_t *restrict phase, const float *restrict frac, size_t count,
                               const float *restrict bank, int taps) {
    const size_t t = (size_t)taps;
    for (size_t i = 0; i < count; i++) {
        const float *row = bank + (size_t)phase[i] * t;
        dst[i] = mx_lerp(dot_sse2(row, src + base[i], t), dot_sse2(row + t, src + base[i], t), frac[i]);
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

const mx_kernels mx_kernels_sse2 = {
    mix_ramp_sse2, mix_gain_sse2, apply_ramp_sse2, apply_gain_sse2,
    interleave_sse2, deinterleave_sse2, f32_to_s16_sse2, f32_to_s24_sse2, xcorr_sse2, s16_deinterleave_sse2,
    resample_sse2, resample_lerp_sse2,
};
#endif
