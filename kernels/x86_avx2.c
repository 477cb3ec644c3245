/* AVX2 paths, compiled with a per-function target attribute (no global flags) and
 * chosen at run time only when the CPU reports AVX2 and FMA. Unaligned loads and stores
 * only. FP contraction stays off: only the resampler fuses, explicitly, in its vector
 * groups and in its per-output tail alike. */
#include "internal.h"
#include "x86_lanes.h"
#if defined(MX_HAVE_X86)
#include <immintrin.h>

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)

static inline __m256 ramp_gains_avx2(__m256d g0v, __m256d stepv, __m256d idx0, __m256d idx1) {
    __m128 lo = _mm256_cvtpd_ps(_mm256_add_pd(g0v, _mm256_mul_pd(idx0, stepv)));
    __m128 hi = _mm256_cvtpd_ps(_mm256_add_pd(g0v, _mm256_mul_pd(idx1, stepv)));
    return _mm256_insertf128_ps(_mm256_castps128_ps256(lo), hi, 1);
}

static void mix_ramp_avx2(float *restrict dst, const float *restrict src, size_t frames,
                          double g0, double step, int64_t offset) {
    size_t i = 0;
    const __m256d g0v = _mm256_set1_pd(g0), stepv = _mm256_set1_pd(step), eight = _mm256_set1_pd(8.0);
    const double o = (double)offset;
    __m256d idx0 = _mm256_set_pd(o + 3, o + 2, o + 1, o);
    __m256d idx1 = _mm256_set_pd(o + 7, o + 6, o + 5, o + 4);
    for (; i + 8 <= frames; i += 8) {
        __m256 g = ramp_gains_avx2(g0v, stepv, idx0, idx1);
        __m256 d = _mm256_loadu_ps(dst + i), s = _mm256_loadu_ps(src + i);
        _mm256_storeu_ps(dst + i, _mm256_add_ps(d, _mm256_mul_ps(s, g)));
        idx0 = _mm256_add_pd(idx0, eight);
        idx1 = _mm256_add_pd(idx1, eight);
    }
    for (; i < frames; i++)
        dst[i] = dst[i] + src[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

static void mix_gain_avx2(float *restrict dst, const float *restrict src, size_t frames, float gain) {
    size_t i = 0;
    const __m256 g = _mm256_set1_ps(gain);
    for (; i + 8 <= frames; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_add_ps(_mm256_loadu_ps(dst + i),
                                                _mm256_mul_ps(_mm256_loadu_ps(src + i), g)));
    for (; i < frames; i++)
        dst[i] = dst[i] + src[i] * gain;
}

static void apply_ramp_avx2(float *restrict buf, size_t frames, double g0, double step, int64_t offset) {
    size_t i = 0;
    const __m256d g0v = _mm256_set1_pd(g0), stepv = _mm256_set1_pd(step), eight = _mm256_set1_pd(8.0);
    const double o = (double)offset;
    __m256d idx0 = _mm256_set_pd(o + 3, o + 2, o + 1, o);
    __m256d idx1 = _mm256_set_pd(o + 7, o + 6, o + 5, o + 4);
    for (; i + 8 <= frames; i += 8) {
        __m256 g = ramp_gains_avx2(g0v, stepv, idx0, idx1);
        _mm256_storeu_ps(buf + i, _mm256_mul_ps(_mm256_loadu_ps(buf + i), g));
        idx0 = _mm256_add_pd(idx0, eight);
        idx1 = _mm256_add_pd(idx1, eight);
    }
    for (; i < frames; i++)
        buf[i] = buf[i] * mx_ramp_gain(g0, step, offset + (int64_t)i);
}

static void apply_gain_avx2(float *restrict buf, size_t frames, float gain) {
    size_t i = 0;
    const __m256 g = _mm256_set1_ps(gain);
    for (; i + 8 <= frames; i += 8)
        _mm256_storeu_ps(buf + i, _mm256_mul_ps(_mm256_loadu_ps(buf + i), g));
    for (; i < frames; i++)
        buf[i] = buf[i] * gain;
}

static void interleave_avx2(float *restrict dst, const float *const *restrict src,
                            size_t channels, size_t frames) {
    if (channels != 2) { mx_interleave_scalar(dst, src, channels, frames); return; }
    const float *l = src[0], *r = src[1];
    size_t f = 0;
    for (; f + 8 <= frames; f += 8) {
        __m256 a = _mm256_loadu_ps(l + f), b = _mm256_loadu_ps(r + f);
        __m256 lo = _mm256_unpacklo_ps(a, b), hi = _mm256_unpackhi_ps(a, b);
        _mm256_storeu_ps(dst + 2 * f, _mm256_permute2f128_ps(lo, hi, 0x20));
        _mm256_storeu_ps(dst + 2 * f + 8, _mm256_permute2f128_ps(lo, hi, 0x31));
    }
    for (; f < frames; f++) { dst[2 * f] = l[f]; dst[2 * f + 1] = r[f]; }
}

static void deinterleave_avx2(float *const *restrict dst, const float *restrict src,
                              size_t channels, size_t frames) {
    if (channels != 2) { mx_deinterleave_scalar(dst, src, channels, frames); return; }
    float *l = dst[0], *r = dst[1];
    size_t f = 0;
    for (; f + 8 <= frames; f += 8) {
        __m256 a = _mm256_loadu_ps(src + 2 * f), b = _mm256_loadu_ps(src + 2 * f + 8);
        __m256 ls = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 rs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(l + f, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ls), _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(r + f, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(rs), _MM_SHUFFLE(3, 1, 2, 0))));
    }
    for (; f < frames; f++) { l[f] = src[2 * f]; r[f] = src[2 * f + 1]; }
}

/* 8 int16 (at p) to 8 floats scaled by 2^-15. */
static inline __m256 s16x8_to_f32_avx2(const int16_t *p, __m256 scale) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
    return _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_cvtepi16_epi32(x)), scale);
}

static void s16_deinterleave_avx2(float *const *restrict dst, const int16_t *restrict src,
                                          size_t channels, size_t frames) {
    if (channels > 2) { mx_s16_deinterleave_scalar(dst, src, channels, frames); return; }
    const __m256 scale = _mm256_set1_ps(1.0f / 32768.0f);
    size_t f = 0;
    if (channels == 1) {
        float *d = dst[0];
        for (; f + 8 <= frames; f += 8) _mm256_storeu_ps(d + f, s16x8_to_f32_avx2(src + f, scale));
        for (; f < frames; f++) d[f] = (float)src[f] * (1.0f / 32768.0f);
        return;
    }
    float *l = dst[0], *r = dst[1];
    for (; f + 8 <= frames; f += 8) {
        __m256 a = s16x8_to_f32_avx2(src + 2 * f, scale), b = s16x8_to_f32_avx2(src + 2 * f + 8, scale);
        __m256 ls = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));
        __m256 rs = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1));
        _mm256_storeu_ps(l + f, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ls), _MM_SHUFFLE(3, 1, 2, 0))));
        _mm256_storeu_ps(r + f, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(rs), _MM_SHUFFLE(3, 1, 2, 0))));
    }
    for (; f < frames; f++) {
        l[f] = (float)src[2 * f] * (1.0f / 32768.0f);
        r[f] = (float)src[2 * f + 1] * (1.0f / 32768.0f);
    }
}

static inline __m256 scale_clip_avx2(__m256 x, __m256 scale, __m256 lo, __m256 hi) {
    __m256 v = _mm256_mul_ps(x, scale);
    v = _mm256_and_ps(v, _mm256_cmp_ps(v, v, _CMP_ORD_Q));
    return _mm256_max_ps(_mm256_min_ps(v, hi), lo);
}

static void f32_to_s16_avx2(int16_t *restrict dst, const float *restrict src, size_t n) {
    const __m256 scale = _mm256_set1_ps(32768.0f), lo = _mm256_set1_ps(-32768.0f), hi = _mm256_set1_ps(32767.0f);
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m256i a = _mm256_cvtps_epi32(scale_clip_avx2(_mm256_loadu_ps(src + i), scale, lo, hi));
        __m256i b = _mm256_cvtps_epi32(scale_clip_avx2(_mm256_loadu_ps(src + i + 8), scale, lo, hi));
        /* packs works per 128-bit lane: restore frame order with a 64-bit permute. */
        __m256i p = _mm256_permute4x64_epi64(_mm256_packs_epi32(a, b), _MM_SHUFFLE(3, 1, 2, 0));
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), p);
    }
    for (; i < n; i++) dst[i] = mx_s16_one(src[i]);
}

static void f32_to_s24_avx2(int32_t *restrict dst, const float *restrict src, size_t n) {
    const __m256 scale = _mm256_set1_ps(8388608.0f), lo = _mm256_set1_ps(-8388608.0f), hi = _mm256_set1_ps(8388607.0f);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256i a = _mm256_cvtps_epi32(scale_clip_avx2(_mm256_loadu_ps(src + i), scale, lo, hi));
        _mm256_storeu_si256((__m256i *)(void *)(dst + i), _mm256_slli_epi32(a, 8));
    }
    for (; i < n; i++) dst[i] = mx_s24_one(src[i]);
}


/* One output's lane sums (lanes 0-7 in a, 8-15 in b) to its value, in mx_lane_fold's order. */
static inline float lane_fold_avx2(__m256 a, __m256 b) {
    float h[8];
    _mm256_storeu_ps(h, _mm256_add_ps(a, b));
    return mx_lane_tree(h);
}

static inline __attribute__((always_inline)) float dot_avx2(const float *row, const float *x, size_t taps) {
    __m256 a = _mm256_setzero_ps(), b = a;
    for (size_t k = 0; k < taps; k += 16) {
        a = _mm256_fmadd_ps(_mm256_loadu_ps(row + k), _mm256_loadu_ps(x + k), a);
        b = _mm256_fmadd_ps(_mm256_loadu_ps(row + k + 8), _mm256_loadu_ps(x + k + 8), b);
    }
    return lane_fold_avx2(a, b);
}

/* Four outputs at a time across the taps (eight independent FMA chains), so any input
 * step vectorises: each output reads its own window and row. */
static void resample_avx2(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                          const int32_t *restrict phase, size_t count, const float *restrict bank, int taps) {
    const size_t t = (size_t)taps;
    size_t i = 0;
    for (; i + 4 <= count; i += 4) {
        const float *x0 = src + base[i], *x1 = src + base[i + 1], *x2 = src + base[i + 2], *x3 = src + base[i + 3];
        const float *r0 = bank + (size_t)phase[i] * t, *r1 = bank + (size_t)phase[i + 1] * t;
        const float *r2 = bank + (size_t)phase[i + 2] * t, *r3 = bank + (size_t)phase[i + 3] * t;
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (size_t k = 0; k < t; k += 16) {
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + k), _mm256_loadu_ps(x0 + k), a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + k), _mm256_loadu_ps(x1 + k), a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + k), _mm256_loadu_ps(x2 + k), a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + k), _mm256_loadu_ps(x3 + k), a3);
            b0 = _mm256_fmadd_ps(_mm256_loadu_ps(r0 + k + 8), _mm256_loadu_ps(x0 + k + 8), b0);
            b1 = _mm256_fmadd_ps(_mm256_loadu_ps(r1 + k + 8), _mm256_loadu_ps(x1 + k + 8), b1);
            b2 = _mm256_fmadd_ps(_mm256_loadu_ps(r2 + k + 8), _mm256_loadu_ps(x2 + k + 8), b2);
            b3 = _mm256_fmadd_ps(_mm256_loadu_ps(r3 + k + 8), _mm256_loadu_ps(x3 + k + 8), b3);
        }
        _mm_storeu_ps(dst + i, mx_lane_tree4_x86(_mm256_add_ps(a0, b0), _mm256_add_ps(a1, b1),
                                               _mm256_add_ps(a2, b2), _mm256_add_ps(a3, b3)));
    }
    for (; i < count; i++) dst[i] = dot_avx2(bank + (size_t)phase[i] * t, src + base[i], t);
}

/* Lanes k..k+7 of output coefficients row + f slope (slope = row + t), one FMA. */
static inline __attribute__((always_inline)) __m256 lerp_coef_avx2(const float *row, size_t t, size_t k, __m256 f) {
    return _mm256_fmadd_ps(f, _mm256_loadu_ps(row + t + k), _mm256_loadu_ps(row + k));
}

/* One channel, two outputs at a time; near R = 1 neighbours mostly share their row (the
 * phase moves slowly), and then the row and slope are loaded once for both. */
static void resample_lerp_mono_avx2(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                                    const int32_t *restrict phase, const float *restrict frac, size_t count,
                                    const float *restrict table, size_t t) {
    size_t i = 0;
    for (; i + 2 <= count; i += 2) {
        const float *x0 = src + base[i], *x1 = src + base[i + 1];
        const float *p0 = table + (size_t)phase[i] * 2 * t, *p1 = table + (size_t)phase[i + 1] * 2 * t;
        const __m256 f0 = _mm256_set1_ps(frac[i]), f1 = _mm256_set1_ps(frac[i + 1]);
        __m256 a0 = _mm256_setzero_ps(), b0 = a0, a1 = a0, b1 = a0;
        if (p0 == p1) {
            for (size_t k = 0; k < t; k += 16) {
                const __m256 ra = _mm256_loadu_ps(p0 + k), rb = _mm256_loadu_ps(p0 + k + 8);
                const __m256 sa = _mm256_loadu_ps(p0 + t + k), sb = _mm256_loadu_ps(p0 + t + k + 8);
                a0 = _mm256_fmadd_ps(_mm256_fmadd_ps(f0, sa, ra), _mm256_loadu_ps(x0 + k), a0);
                b0 = _mm256_fmadd_ps(_mm256_fmadd_ps(f0, sb, rb), _mm256_loadu_ps(x0 + k + 8), b0);
                a1 = _mm256_fmadd_ps(_mm256_fmadd_ps(f1, sa, ra), _mm256_loadu_ps(x1 + k), a1);
                b1 = _mm256_fmadd_ps(_mm256_fmadd_ps(f1, sb, rb), _mm256_loadu_ps(x1 + k + 8), b1);
            }
        } else {
            for (size_t k = 0; k < t; k += 16) {
                a0 = _mm256_fmadd_ps(lerp_coef_avx2(p0, t, k, f0), _mm256_loadu_ps(x0 + k), a0);
                b0 = _mm256_fmadd_ps(lerp_coef_avx2(p0, t, k + 8, f0), _mm256_loadu_ps(x0 + k + 8), b0);
                a1 = _mm256_fmadd_ps(lerp_coef_avx2(p1, t, k, f1), _mm256_loadu_ps(x1 + k), a1);
                b1 = _mm256_fmadd_ps(lerp_coef_avx2(p1, t, k + 8, f1), _mm256_loadu_ps(x1 + k + 8), b1);
            }
        }
        const __m256 h0 = _mm256_add_ps(a0, b0), h1 = _mm256_add_ps(a1, b1);
        float y[4];
        _mm_storeu_ps(y, mx_lane_tree4_x86(h0, h1, h0, h1));
        dst[i] = y[0];
        dst[i + 1] = y[1];
    }
    for (; i < count; i++)
        mx_dot_lerp_lanes_fused(dst + i, NULL, table + (size_t)phase[i] * 2 * t, frac[i], src + base[i], NULL, (int)t);
}

/* Two channels, two outputs at a time: each output's coefficients are made once and serve
 * both channels (eight FMA chains); a shared row is loaded once for both outputs. */
static void resample_lerp_avx2(float *restrict dst0, float *restrict dst1, const float *restrict src0,
                               const float *restrict src1, const int32_t *restrict base,
                               const int32_t *restrict phase, const float *restrict frac, size_t count,
                               const float *restrict table, int taps) {
    const size_t t = (size_t)taps;
    if (!src1) {
        resample_lerp_mono_avx2(dst0, src0, base, phase, frac, count, table, t);
        return;
    }
    size_t i = 0;
    for (; i + 2 <= count; i += 2) {
        const float *l0 = src0 + base[i], *l1 = src0 + base[i + 1], *r0 = src1 + base[i], *r1 = src1 + base[i + 1];
        const float *p0 = table + (size_t)phase[i] * 2 * t, *p1 = table + (size_t)phase[i + 1] * 2 * t;
        const __m256 f0 = _mm256_set1_ps(frac[i]), f1 = _mm256_set1_ps(frac[i + 1]);
        __m256 la0 = _mm256_setzero_ps(), lb0 = la0, ra0 = la0, rb0 = la0, la1 = la0, lb1 = la0, ra1 = la0, rb1 = la0;
        if (p0 == p1) {
            for (size_t k = 0; k < t; k += 16) {
                const __m256 ra = _mm256_loadu_ps(p0 + k), rb = _mm256_loadu_ps(p0 + k + 8);
                const __m256 sa = _mm256_loadu_ps(p0 + t + k), sb = _mm256_loadu_ps(p0 + t + k + 8);
                const __m256 c0a = _mm256_fmadd_ps(f0, sa, ra), c0b = _mm256_fmadd_ps(f0, sb, rb);
                la0 = _mm256_fmadd_ps(c0a, _mm256_loadu_ps(l0 + k), la0);
                lb0 = _mm256_fmadd_ps(c0b, _mm256_loadu_ps(l0 + k + 8), lb0);
                ra0 = _mm256_fmadd_ps(c0a, _mm256_loadu_ps(r0 + k), ra0);
                rb0 = _mm256_fmadd_ps(c0b, _mm256_loadu_ps(r0 + k + 8), rb0);
                const __m256 c1a = _mm256_fmadd_ps(f1, sa, ra), c1b = _mm256_fmadd_ps(f1, sb, rb);
                la1 = _mm256_fmadd_ps(c1a, _mm256_loadu_ps(l1 + k), la1);
                lb1 = _mm256_fmadd_ps(c1b, _mm256_loadu_ps(l1 + k + 8), lb1);
                ra1 = _mm256_fmadd_ps(c1a, _mm256_loadu_ps(r1 + k), ra1);
                rb1 = _mm256_fmadd_ps(c1b, _mm256_loadu_ps(r1 + k + 8), rb1);
            }
        } else {
            for (size_t k = 0; k < t; k += 16) {
                const __m256 c0a = lerp_coef_avx2(p0, t, k, f0), c0b = lerp_coef_avx2(p0, t, k + 8, f0);
                la0 = _mm256_fmadd_ps(c0a, _mm256_loadu_ps(l0 + k), la0);
                lb0 = _mm256_fmadd_ps(c0b, _mm256_loadu_ps(l0 + k + 8), lb0);
                ra0 = _mm256_fmadd_ps(c0a, _mm256_loadu_ps(r0 + k), ra0);
                rb0 = _mm256_fmadd_ps(c0b, _mm256_loadu_ps(r0 + k + 8), rb0);
                const __m256 c1a = lerp_coef_avx2(p1, t, k, f1), c1b = lerp_coef_avx2(p1, t, k + 8, f1);
                la1 = _mm256_fmadd_ps(c1a, _mm256_loadu_ps(l1 + k), la1);
                lb1 = _mm256_fmadd_ps(c1b, _mm256_loadu_ps(l1 + k + 8), lb1);
                ra1 = _mm256_fmadd_ps(c1a, _mm256_loadu_ps(r1 + k), ra1);
                rb1 = _mm256_fmadd_ps(c1b, _mm256_loadu_ps(r1 + k + 8), rb1);
            }
        }
        float y[4];
        _mm_storeu_ps(y, mx_lane_tree4_x86(_mm256_add_ps(la0, lb0), _mm256_add_ps(ra0, rb0),
                                         _mm256_add_ps(la1, lb1), _mm256_add_ps(ra1, rb1)));
        dst0[i] = y[0];
        dst1[i] = y[1];
        dst0[i + 1] = y[2];
        dst1[i + 1] = y[3];
    }
    for (; i < count; i++)
        mx_dot_lerp_lanes_fused(dst0 + i, dst1 + i, table + (size_t)phase[i] * 2 * t, frac[i], src0 + base[i],
                                src1 + base[i], taps);
}

static void xcorr_avx2(float *restrict dst, const float *restrict a, const float *restrict x, size_t len, size_t lags) {
    size_t l = 0;
    for (; l + 16 <= lags; l += 16) {
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
        for (size_t i = 0; i < len; i++) {
            const __m256 ai = _mm256_broadcast_ss(a + i);
            acc0 = _mm256_add_ps(acc0, _mm256_mul_ps(ai, _mm256_loadu_ps(x + l + i)));
            acc1 = _mm256_add_ps(acc1, _mm256_mul_ps(ai, _mm256_loadu_ps(x + l + 8 + i)));
        }
        _mm256_storeu_ps(dst + l, acc0);
        _mm256_storeu_ps(dst + l + 8, acc1);
    }
    for (; l + 8 <= lags; l += 8) {
        __m256 acc = _mm256_setzero_ps();
        for (size_t i = 0; i < len; i++)
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_broadcast_ss(a + i), _mm256_loadu_ps(x + l + i)));
        _mm256_storeu_ps(dst + l, acc);
    }
    for (; l < lags; l++) dst[l] = mx_xcorr_one(a, x + l, len);
}

/* K-weighting, four channels side by side in the lanes of a __m256d (lane 0: channel c);
 * a pair left over runs in SSE2's __m128d pair, a last channel in the scalar reference. */
static void kweight_quad_avx2(double *restrict energy, double *restrict state, const float *const *restrict src,
                              size_t frames, const double *restrict c) {
    double *s[4] = {state, state + 4, state + 8, state + 12};
    const float *x0 = src[0], *x1 = src[1], *x2 = src[2], *x3 = src[3];
    __m256d s0 = _mm256_set_pd(s[3][0], s[2][0], s[1][0], s[0][0]), s1 = _mm256_set_pd(s[3][1], s[2][1], s[1][1], s[0][1]);
    __m256d s2 = _mm256_set_pd(s[3][2], s[2][2], s[1][2], s[0][2]), s3 = _mm256_set_pd(s[3][3], s[2][3], s[1][3], s[0][3]);
    __m256d e = _mm256_loadu_pd(energy);
    const __m256d c0 = _mm256_set1_pd(c[0]), c1 = _mm256_set1_pd(c[1]), c2 = _mm256_set1_pd(c[2]),
                  c3 = _mm256_set1_pd(c[3]), c4 = _mm256_set1_pd(c[4]), c5 = _mm256_set1_pd(c[5]),
                  c6 = _mm256_set1_pd(c[6]), c7 = _mm256_set1_pd(c[7]), c8 = _mm256_set1_pd(c[8]),
                  c9 = _mm256_set1_pd(c[9]);
    for (size_t i = 0; i < frames; i++) {
        const __m256d x = _mm256_set_pd((double)x3[i], (double)x2[i], (double)x1[i], (double)x0[i]);
        const __m256d y = _mm256_add_pd(_mm256_mul_pd(c0, x), s0);
        s0 = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(c1, x), s1), _mm256_mul_pd(c3, y));
        s1 = _mm256_sub_pd(_mm256_mul_pd(c2, x), _mm256_mul_pd(c4, y));
        const __m256d z = _mm256_add_pd(_mm256_mul_pd(c5, y), s2);
        s2 = _mm256_sub_pd(_mm256_add_pd(_mm256_mul_pd(c6, y), s3), _mm256_mul_pd(c8, z));
        s3 = _mm256_sub_pd(_mm256_mul_pd(c7, y), _mm256_mul_pd(c9, z));
        e = _mm256_add_pd(e, _mm256_mul_pd(z, z));
    }
    double t[4][4];
    _mm256_storeu_pd(t[0], s0); _mm256_storeu_pd(t[1], s1); _mm256_storeu_pd(t[2], s2); _mm256_storeu_pd(t[3], s3);
    for (int l = 0; l < 4; l++) {
        for (int j = 0; j < 4; j++) s[l][j] = t[j][l];
        mx_kweight_flush(s[l]);
    }
    _mm256_storeu_pd(energy, e);
}

static void kweight_avx2(double *restrict energy, double *restrict state, const float *const *restrict src,
                         size_t channels, size_t frames, const double *restrict coef) {
    size_t c = 0;
    for (; c + 4 <= channels; c += 4) kweight_quad_avx2(energy + c, state + 4 * c, src + c, frames, coef);
    for (; c + 2 <= channels; c += 2) mx_kweight_pair_sse2(energy + c, state + 4 * c, src[c], src[c + 1], frames, coef);
    if (c < channels) mx_kweight_scalar(energy + c, state + 4 * c, src + c, 1, frames, coef);
}

/* The larger of each lane of m and |v|, passing over NaN (VMAXPS returns its second
 * operand when the comparison fails, as mx_peak_one does). */
static inline __m256 peak_lanes_avx2(__m256 m, __m256 v) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    return _mm256_max_ps(_mm256_and_ps(v, magnitude), m);
}
static inline float peak_fold_avx2(__m256 m, float r) {
    float t[8];
    _mm256_storeu_ps(t, m);
    for (int l = 0; l < 8; l++) r = mx_peak_one(r, t[l]);
    return r;
}

static float peak_avx2(const float *restrict x, size_t n) {
    size_t i = 0;
    __m256 m0 = _mm256_setzero_ps(), m1 = _mm256_setzero_ps();
    for (; i + 16 <= n; i += 16) {
        m0 = peak_lanes_avx2(m0, _mm256_loadu_ps(x + i));
        m1 = peak_lanes_avx2(m1, _mm256_loadu_ps(x + i + 8));
    }
    for (; i + 8 <= n; i += 8) m0 = peak_lanes_avx2(m0, _mm256_loadu_ps(x + i));
    float r = peak_fold_avx2(m1, peak_fold_avx2(m0, 0.0f));
    for (; i < n; i++) r = mx_peak_one(r, x[i]);
    return r;
}

/* Eight windows per step, a pair's two sums each (up to eight independent sums); then
 * the scalar tail. Inlined with a constant `pairs`, so that the accumulators stay in
 * registers. */
static inline __attribute__((always_inline)) float peak_interp_avx2_n(const float *restrict x, size_t frames,
                                                                      const float *restrict bank, size_t taps,
                                                                      const size_t pairs) {
    const size_t h = taps / 2;
    size_t i = 0;
    __m256 m = _mm256_setzero_ps();
    for (; i + 8 <= frames; i += 8) {
        __m256 u[4], v[4];
        for (size_t p = 0; p < pairs; p++) u[p] = v[p] = _mm256_setzero_ps();
        for (size_t k = 0; k < h; k++) {
            const __m256 lo = _mm256_loadu_ps(x + i + k), hi = _mm256_loadu_ps(x + i + taps - 1 - k);
            const __m256 s = _mm256_add_ps(lo, hi), d = _mm256_sub_ps(lo, hi);
            for (size_t p = 0; p < pairs; p++) {
                u[p] = _mm256_add_ps(u[p], _mm256_mul_ps(_mm256_broadcast_ss(bank + p * taps + k), s));
                v[p] = _mm256_add_ps(v[p], _mm256_mul_ps(_mm256_broadcast_ss(bank + p * taps + h + k), d));
            }
        }
        for (size_t p = 0; p < pairs; p++)
            m = peak_lanes_avx2(peak_lanes_avx2(m, _mm256_add_ps(u[p], v[p])), _mm256_sub_ps(u[p], v[p]));
    }
    float r = peak_fold_avx2(m, 0.0f);
    for (; i < frames; i++)
        for (size_t p = 0; p < pairs; p++) r = mx_interp_pair_peak(r, bank + p * taps, x + i, taps);
    return r;
}

static float peak_interp_avx2(const float *restrict x, size_t frames, const float *restrict bank,
                              size_t pairs, size_t taps) {
    switch (pairs) {
    case 1: return peak_interp_avx2_n(x, frames, bank, taps, 1);
    case 2: return peak_interp_avx2_n(x, frames, bank, taps, 2);
    case 3: return peak_interp_avx2_n(x, frames, bank, taps, 3);
    default: return peak_interp_avx2_n(x, frames, bank, taps, 4);
    }
}

/* Eight positions in the lanes of two 64-bit vectors, an output apart, each stepping by
 * eight outputs with the scalar's compare-and-subtract carries (signed compares: every
 * value is below 2^53; e >= numerator is e > numerator - 1). The two vectors' carry chains
 * are independent, so they run side by side. The fraction's conversion uses the 2^52
 * trick, exact for e < 2^52, so a numerator of 2^52 or more goes to the scalar path. The
 * tail is the scalar's, from lane 0's position. */
static void resample_positions_avx2(int32_t *restrict base, int32_t *restrict phase, float *restrict frac,
                                    size_t count, mx_resample_position *restrict position, int64_t offset,
                                    const mx_resample_step *restrict step) {
    const uint64_t numerator = step->numerator;
    if (count < 16 || numerator >= ((uint64_t)1 << 52)) {
        mx_resample_positions_scalar(base, phase, frac, count, position, offset, step);
        return;
    }
    const int64_t row_count = step->row_count;
    int64_t n[8], q[8], e[8];
    int64_t f8 = 0, r8 = 0, e8 = 0;   /* eight steps from zero, normalised as the scalar steps */
    for (int k = 0; k < 8; k++) {
        f8 += step->frames; r8 += step->rows; e8 += (int64_t)step->excess;
        if (e8 >= (int64_t)numerator) { e8 -= (int64_t)numerator; r8 += 1; }
        if (r8 >= row_count) { r8 -= row_count; f8 += 1; }
    }
    n[0] = position->frame; q[0] = position->row; e[0] = (int64_t)position->excess;
    for (int k = 1; k < 8; k++) {
        n[k] = n[k - 1] + step->frames; q[k] = q[k - 1] + step->rows; e[k] = e[k - 1] + (int64_t)step->excess;
        if (e[k] >= (int64_t)numerator) { e[k] -= (int64_t)numerator; q[k] += 1; }
        if (q[k] >= row_count) { q[k] -= row_count; n[k] += 1; }
    }
    __m256i vn0 = _mm256_loadu_si256((const __m256i *)n), vq0 = _mm256_loadu_si256((const __m256i *)q);
    __m256i ve0 = _mm256_loadu_si256((const __m256i *)e);
    __m256i vn1 = _mm256_loadu_si256((const __m256i *)(n + 4)), vq1 = _mm256_loadu_si256((const __m256i *)(q + 4));
    __m256i ve1 = _mm256_loadu_si256((const __m256i *)(e + 4));
    const __m256i num = _mm256_set1_epi64x((int64_t)numerator), num1 = _mm256_set1_epi64x((int64_t)numerator - 1);
    const __m256i rows = _mm256_set1_epi64x(row_count), rows1 = _mm256_set1_epi64x(row_count - 1);
    const __m256i sf = _mm256_set1_epi64x(f8), sr = _mm256_set1_epi64x(r8), se = _mm256_set1_epi64x(e8);
    const __m256i off = _mm256_set1_epi64x(offset);
    const __m256i magic = _mm256_set1_epi64x(0x4330000000000000LL);
    const __m256d magicd = _mm256_set1_pd(4503599627370496.0), scale = _mm256_set1_pd(1.0 / (double)numerator);
    const __m256i low = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    size_t i = 0;
/* The low 32 bits of a's and b's four lanes, in order: eight int32. */
#define MX_LOW_HALVES(a, b) _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(a, low), _mm256_permutevar8x32_epi32(b, low), 0x20)
/* One vector's step by eight outputs. */
#define MX_STEP8(vn, vq, ve) do { \
        ve = _mm256_add_epi64(ve, se); \
        const __m256i carry = _mm256_cmpgt_epi64(ve, num1);                 /* e >= numerator: -1 */ \
        ve = _mm256_sub_epi64(ve, _mm256_and_si256(carry, num)); \
        vq = _mm256_sub_epi64(_mm256_add_epi64(vq, sr), carry); \
        const __m256i wrap = _mm256_cmpgt_epi64(vq, rows1);                 /* q >= row_count: -1 */ \
        vq = _mm256_sub_epi64(vq, _mm256_and_si256(wrap, rows)); \
        vn = _mm256_sub_epi64(_mm256_add_epi64(vn, sf), wrap); \
    } while (0)
    for (; i + 8 <= count; i += 8) {
        _mm256_storeu_si256((__m256i *)(void *)(base + i), MX_LOW_HALVES(_mm256_sub_epi64(vn0, off), _mm256_sub_epi64(vn1, off)));
        _mm256_storeu_si256((__m256i *)(void *)(phase + i), MX_LOW_HALVES(vq0, vq1));
        if (frac) {
            const __m256d d0 = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(ve0, magic)), magicd);
            const __m256d d1 = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(ve1, magic)), magicd);
            _mm_storeu_ps(frac + i, _mm256_cvtpd_ps(_mm256_mul_pd(d0, scale)));
            _mm_storeu_ps(frac + i + 4, _mm256_cvtpd_ps(_mm256_mul_pd(d1, scale)));
        }
        MX_STEP8(vn0, vq0, ve0);
        MX_STEP8(vn1, vq1, ve1);
    }
#undef MX_STEP8
#undef MX_LOW_HALVES
    mx_resample_position next = { _mm256_extract_epi64(vn0, 0), _mm256_extract_epi64(vq0, 0), (uint64_t)_mm256_extract_epi64(ve0, 0) };
    mx_resample_positions_scalar(base + i, phase + i, frac ? frac + i : NULL, count - i, &next, offset, step);
    *position = next;
}

/* The spectral FFT's radix-4 pass (mx_kernels.cfft_pass4) in vectors of eight: the same
 * sums and products as mx_cfft_pass4_scalar, unfused (this file keeps FP_CONTRACT off), so
 * bit-identical. The first pass (s = 1) takes eight butterflies along p and transposes
 * each half as the four-wide path does; s = 4 takes two butterflies a vector (the four-wide
 * path, one with its twiddles broadcast, was a third of the transform's instructions); a
 * first pass under eight butterflies goes to the four-wide path. */
typedef float mx_v8 __attribute__((vector_size(32), aligned(4)));
typedef float mx_v4 __attribute__((vector_size(16), aligned(4)));
/* Stores (a[i], b[i], c[i], d[i]) for i < 4 as 16 consecutive floats. */
static inline void mx_store_transposed4(float *y, mx_v4 a, mx_v4 b, mx_v4 c, mx_v4 d) {
    mx_v4 t0 = __builtin_shufflevector(a, b, 0, 4, 1, 5), t1 = __builtin_shufflevector(c, d, 0, 4, 1, 5);
    mx_v4 t2 = __builtin_shufflevector(a, b, 2, 6, 3, 7), t3 = __builtin_shufflevector(c, d, 2, 6, 3, 7);
    *(mx_v4 *)(y) = __builtin_shufflevector(t0, t1, 0, 1, 4, 5);
    *(mx_v4 *)(y + 4) = __builtin_shufflevector(t0, t1, 2, 3, 6, 7);
    *(mx_v4 *)(y + 8) = __builtin_shufflevector(t2, t3, 0, 1, 4, 5);
    *(mx_v4 *)(y + 12) = __builtin_shufflevector(t2, t3, 2, 3, 6, 7);
}
#define MX_LO(v) __builtin_shufflevector(v, v, 0, 1, 2, 3)
#define MX_HI(v) __builtin_shufflevector(v, v, 4, 5, 6, 7)

static void cfft_pass4_avx2(float *restrict yr, float *restrict yi, const float *restrict xr, const float *restrict xi,
                            const float *restrict tw, size_t n1, size_t s) {
    if (s == 1 && n1 >= 8) {
        for (size_t p = 0; p < n1; p += 8) {   /* n1 is a power of two: a multiple of 8 here */
            mx_v8 ar = *(const mx_v8 *)(xr + p), ai = *(const mx_v8 *)(xi + p);
            mx_v8 br = *(const mx_v8 *)(xr + p + n1), bi = *(const mx_v8 *)(xi + p + n1);
            mx_v8 cr = *(const mx_v8 *)(xr + p + 2 * n1), ci = *(const mx_v8 *)(xi + p + 2 * n1);
            mx_v8 dr = *(const mx_v8 *)(xr + p + 3 * n1), di = *(const mx_v8 *)(xi + p + 3 * n1);
            mx_v8 W1r = *(const mx_v8 *)(tw + p), W1i = *(const mx_v8 *)(tw + n1 + p);
            mx_v8 W2r = *(const mx_v8 *)(tw + 2 * n1 + p), W2i = *(const mx_v8 *)(tw + 3 * n1 + p);
            mx_v8 W3r = *(const mx_v8 *)(tw + 4 * n1 + p), W3i = *(const mx_v8 *)(tw + 5 * n1 + p);
            MX_RADIX4(mx_v8, ar, ai, br, bi, cr, ci, dr, di, W1r, W1i, W2r, W2i, W3r, W3i)
            mx_store_transposed4(yr + 4 * p, MX_LO(o0r), MX_LO(o1r), MX_LO(o2r), MX_LO(o3r));
            mx_store_transposed4(yr + 4 * p + 16, MX_HI(o0r), MX_HI(o1r), MX_HI(o2r), MX_HI(o3r));
            mx_store_transposed4(yi + 4 * p, MX_LO(o0i), MX_LO(o1i), MX_LO(o2i), MX_LO(o3i));
            mx_store_transposed4(yi + 4 * p + 16, MX_HI(o0i), MX_HI(o1i), MX_HI(o2i), MX_HI(o3i));
        }
        return;
    }
    if (s == 4 && n1 >= 2) {
        /* Two butterflies a vector: p's four transforms in the low half, p + 1's in the
         * high one (their inputs lie side by side), each half stored where the four-wide
         * path stores it. */
        size_t quarter = 4 * n1;
        for (size_t p = 0; p < n1; p += 2) {   /* n1 is a power of two: even here */
            mx_v8 w1r = {tw[p], tw[p], tw[p], tw[p], tw[p + 1], tw[p + 1], tw[p + 1], tw[p + 1]};
            mx_v8 w1i = {tw[n1 + p], tw[n1 + p], tw[n1 + p], tw[n1 + p], tw[n1 + p + 1], tw[n1 + p + 1], tw[n1 + p + 1], tw[n1 + p + 1]};
            const float *t2 = tw + 2 * n1, *t3 = tw + 3 * n1, *t4 = tw + 4 * n1, *t5 = tw + 5 * n1;
            mx_v8 w2r = {t2[p], t2[p], t2[p], t2[p], t2[p + 1], t2[p + 1], t2[p + 1], t2[p + 1]};
            mx_v8 w2i = {t3[p], t3[p], t3[p], t3[p], t3[p + 1], t3[p + 1], t3[p + 1], t3[p + 1]};
            mx_v8 w3r = {t4[p], t4[p], t4[p], t4[p], t4[p + 1], t4[p + 1], t4[p + 1], t4[p + 1]};
            mx_v8 w3i = {t5[p], t5[p], t5[p], t5[p], t5[p + 1], t5[p + 1], t5[p + 1], t5[p + 1]};
            const float *a_r = xr + 4 * p, *a_i = xi + 4 * p;
            mx_v8 ar = *(const mx_v8 *)(a_r), ai = *(const mx_v8 *)(a_i);
            mx_v8 br = *(const mx_v8 *)(a_r + quarter), bi = *(const mx_v8 *)(a_i + quarter);
            mx_v8 cr = *(const mx_v8 *)(a_r + 2 * quarter), ci = *(const mx_v8 *)(a_i + 2 * quarter);
            mx_v8 dr = *(const mx_v8 *)(a_r + 3 * quarter), di = *(const mx_v8 *)(a_i + 3 * quarter);
            MX_RADIX4(mx_v8, ar, ai, br, bi, cr, ci, dr, di, w1r, w1i, w2r, w2i, w3r, w3i)
            float *or_ = yr + 16 * p, *oi = yi + 16 * p;
            *(mx_v8 *)(or_) = __builtin_shufflevector(o0r, o1r, 0, 1, 2, 3, 8, 9, 10, 11);
            *(mx_v8 *)(or_ + 8) = __builtin_shufflevector(o2r, o3r, 0, 1, 2, 3, 8, 9, 10, 11);
            *(mx_v8 *)(or_ + 16) = __builtin_shufflevector(o0r, o1r, 4, 5, 6, 7, 12, 13, 14, 15);
            *(mx_v8 *)(or_ + 24) = __builtin_shufflevector(o2r, o3r, 4, 5, 6, 7, 12, 13, 14, 15);
            *(mx_v8 *)(oi) = __builtin_shufflevector(o0i, o1i, 0, 1, 2, 3, 8, 9, 10, 11);
            *(mx_v8 *)(oi + 8) = __builtin_shufflevector(o2i, o3i, 0, 1, 2, 3, 8, 9, 10, 11);
            *(mx_v8 *)(oi + 16) = __builtin_shufflevector(o0i, o1i, 4, 5, 6, 7, 12, 13, 14, 15);
            *(mx_v8 *)(oi + 24) = __builtin_shufflevector(o2i, o3i, 4, 5, 6, 7, 12, 13, 14, 15);
        }
        return;
    }
    if (s < 8) {
        mx_cfft_pass4_v4(yr, yi, xr, xi, tw, n1, s);
        return;
    }
    size_t quarter = s * n1;
    for (size_t p = 0; p < n1; p++) {
        mx_v8 w1r = (mx_v8){0} + tw[p], w1i = (mx_v8){0} + tw[n1 + p];
        mx_v8 w2r = (mx_v8){0} + tw[2 * n1 + p], w2i = (mx_v8){0} + tw[3 * n1 + p];
        mx_v8 w3r = (mx_v8){0} + tw[4 * n1 + p], w3i = (mx_v8){0} + tw[5 * n1 + p];
        const float *a_r = xr + s * p, *a_i = xi + s * p;
        float *or_ = yr + 4 * s * p, *oi = yi + 4 * s * p;
        for (size_t q = 0; q < s; q += 8) {
            mx_v8 ar = *(const mx_v8 *)(a_r + q), ai = *(const mx_v8 *)(a_i + q);
            mx_v8 br = *(const mx_v8 *)(a_r + quarter + q), bi = *(const mx_v8 *)(a_i + quarter + q);
            mx_v8 cr = *(const mx_v8 *)(a_r + 2 * quarter + q), ci = *(const mx_v8 *)(a_i + 2 * quarter + q);
            mx_v8 dr = *(const mx_v8 *)(a_r + 3 * quarter + q), di = *(const mx_v8 *)(a_i + 3 * quarter + q);
            MX_RADIX4(mx_v8, ar, ai, br, bi, cr, ci, dr, di, w1r, w1i, w2r, w2i, w3r, w3i)
            *(mx_v8 *)(or_ + q) = o0r; *(mx_v8 *)(oi + q) = o0i;
            *(mx_v8 *)(or_ + s + q) = o1r; *(mx_v8 *)(oi + s + q) = o1i;
            *(mx_v8 *)(or_ + 2 * s + q) = o2r; *(mx_v8 *)(oi + 2 * s + q) = o2i;
            *(mx_v8 *)(or_ + 3 * s + q) = o3r; *(mx_v8 *)(oi + 3 * s + q) = o3i;
        }
    }
}

/* The real FFT's unpack and pack: the reference's loops, vectorised eight wide. */
static void rfft_unpack_avx2(float *restrict re, float *restrict im, const float *restrict zr, const float *restrict zi,
                             const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_UNPACK()
}

static void rfft_pack_avx2(float *restrict zr, float *restrict zi, const float *restrict re, const float *restrict im,
                           const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_PACK()
}

#pragma clang attribute pop

/* The AVX2 table, and the AVX-512 one: the same kernels but the resampler's interpolation
 * (mx_resample_lerp_avx512). */
#define MX_AVX2_TABLE(resample_lerp)                                                                              \
    {                                                                                                             \
        mix_ramp_avx2, mix_gain_avx2, apply_ramp_avx2, apply_gain_avx2,                                           \
        interleave_avx2, deinterleave_avx2, f32_to_s16_avx2, f32_to_s24_avx2, xcorr_avx2, s16_deinterleave_avx2, \
        resample_avx2, resample_lerp,                                                                             \
        kweight_avx2, peak_avx2, peak_interp_avx2,                                                                \
        resample_positions_avx2, cfft_pass4_avx2, rfft_unpack_avx2, rfft_pack_avx2,                               \
        mx_pvoc_analyse_avx2, mx_pvoc_synthesise_avx2,                                                            \
    }
const mx_kernels mx_kernels_avx2 = MX_AVX2_TABLE(resample_lerp_avx2);
const mx_kernels mx_kernels_avx512 = MX_AVX2_TABLE(mx_resample_lerp_avx512);
#undef MX_AVX2_TABLE
#endif
