/* The AVX-512 table's own kernel: the resampler's dense-table interpolation
 * (resample_lerp) in 16-lane vectors. The rest of the AVX-512 table is the AVX2 one
 * (x86_avx2.c): those kernels are bound by memory or by loads, and this machine's Zen 4
 * splits a 512-bit load or FMA into two 256-bit ones. Compiled with a per-function target
 * attribute (no global flags), chosen at run time only when the CPU reports AVX-512F;
 * unaligned loads only; FP contraction off, the resampler fusing explicitly. */
#include "internal.h"
#include "x86_lanes.h"
#if defined(MX_HAVE_X86)
#include <immintrin.h>

#pragma clang attribute push(__attribute__((target("avx2,fma,avx512f"))), apply_to = function)

/* A 16-lane sum folded to the 8 lanes mx_lane_fold adds first: lanes l + lanes l + 8. */
static inline __m256 fold_avx512(__m512 v) {
    return _mm256_add_ps(_mm512_castps512_ps256(v), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1)));
}

/* Outputs i and i + 1, each with its own row (one channel when x1 is NULL). One 16-lane
 * accumulator per output and channel holds exactly the reference's 16 lanes. */
static inline __attribute__((always_inline)) void lerp_two_avx512(float *restrict dst0, float *restrict dst1,
                                                                  const float *restrict src0, const float *restrict src1,
                                                                  const int32_t *restrict base, const int32_t *restrict phase,
                                                                  const float *restrict frac, size_t i,
                                                                  const float *restrict table, size_t t) {
    const float *p0 = table + (size_t)phase[i] * 2 * t, *p1 = table + (size_t)phase[i + 1] * 2 * t;
    const float *l0 = src0 + base[i], *l1 = src0 + base[i + 1];
    const __m512 f0 = _mm512_set1_ps(frac[i]), f1 = _mm512_set1_ps(frac[i + 1]);
    __m512 la0 = _mm512_setzero_ps(), la1 = la0, ra0 = la0, ra1 = la0;
    if (src1) {
        const float *r0 = src1 + base[i], *r1 = src1 + base[i + 1];
        for (size_t k = 0; k < t; k += 16) {
            const __m512 c0 = _mm512_fmadd_ps(f0, _mm512_loadu_ps(p0 + t + k), _mm512_loadu_ps(p0 + k));
            const __m512 c1 = _mm512_fmadd_ps(f1, _mm512_loadu_ps(p1 + t + k), _mm512_loadu_ps(p1 + k));
            la0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(l0 + k), la0);
            ra0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(r0 + k), ra0);
            la1 = _mm512_fmadd_ps(c1, _mm512_loadu_ps(l1 + k), la1);
            ra1 = _mm512_fmadd_ps(c1, _mm512_loadu_ps(r1 + k), ra1);
        }
        float y[4];
        _mm_storeu_ps(y, mx_lane_tree4_x86(fold_avx512(la0), fold_avx512(ra0), fold_avx512(la1), fold_avx512(ra1)));
        dst0[i] = y[0];
        dst1[i] = y[1];
        dst0[i + 1] = y[2];
        dst1[i + 1] = y[3];
    } else {
        for (size_t k = 0; k < t; k += 16) {
            const __m512 c0 = _mm512_fmadd_ps(f0, _mm512_loadu_ps(p0 + t + k), _mm512_loadu_ps(p0 + k));
            const __m512 c1 = _mm512_fmadd_ps(f1, _mm512_loadu_ps(p1 + t + k), _mm512_loadu_ps(p1 + k));
            la0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(l0 + k), la0);
            la1 = _mm512_fmadd_ps(c1, _mm512_loadu_ps(l1 + k), la1);
        }
        const __m256 h0 = fold_avx512(la0), h1 = fold_avx512(la1);
        float y[4];
        _mm_storeu_ps(y, mx_lane_tree4_x86(h0, h1, h0, h1));
        dst0[i] = y[0];
        dst0[i + 1] = y[1];
    }
}

/* Outputs i ... i + 3 when they share one row (near R = 1 the phase moves by a small
 * fraction of a row per output, so most runs of four do): the row and its slope are
 * loaded once for the four, each output's coefficients once for both channels. */
static inline __attribute__((always_inline)) void lerp_four_avx512(float *restrict dst0, float *restrict dst1,
                                                                   const float *restrict src0, const float *restrict src1,
                                                                   const int32_t *restrict base, const float *restrict frac,
                                                                   size_t i, const float *restrict row, size_t t) {
    const float *l0 = src0 + base[i], *l1 = src0 + base[i + 1], *l2 = src0 + base[i + 2], *l3 = src0 + base[i + 3];
    const __m512 f0 = _mm512_set1_ps(frac[i]), f1 = _mm512_set1_ps(frac[i + 1]);
    const __m512 f2 = _mm512_set1_ps(frac[i + 2]), f3 = _mm512_set1_ps(frac[i + 3]);
    __m512 la0 = _mm512_setzero_ps(), la1 = la0, la2 = la0, la3 = la0;
    if (src1) {
        const float *r0 = src1 + base[i], *r1 = src1 + base[i + 1], *r2 = src1 + base[i + 2], *r3 = src1 + base[i + 3];
        __m512 ra0 = la0, ra1 = la0, ra2 = la0, ra3 = la0;
        for (size_t k = 0; k < t; k += 16) {
            const __m512 w = _mm512_loadu_ps(row + k), s = _mm512_loadu_ps(row + t + k);
            const __m512 c0 = _mm512_fmadd_ps(f0, s, w), c1 = _mm512_fmadd_ps(f1, s, w);
            const __m512 c2 = _mm512_fmadd_ps(f2, s, w), c3 = _mm512_fmadd_ps(f3, s, w);
            la0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(l0 + k), la0);
            ra0 = _mm512_fmadd_ps(c0, _mm512_loadu_ps(r0 + k), ra0);
            la1 = _mm512_fmadd_ps(c1, _mm512_loadu_ps(l1 + k), la1);
            ra1 = _mm512_fmadd_ps(c1, _mm512_loadu_ps(r1 + k), ra1);
            la2 = _mm512_fmadd_ps(c2, _mm512_loadu_ps(l2 + k), la2);
            ra2 = _mm512_fmadd_ps(c2, _mm512_loadu_ps(r2 + k), ra2);
            la3 = _mm512_fmadd_ps(c3, _mm512_loadu_ps(l3 + k), la3);
            ra3 = _mm512_fmadd_ps(c3, _mm512_loadu_ps(r3 + k), ra3);
        }
        float y[8];
        _mm_storeu_ps(y, mx_lane_tree4_x86(fold_avx512(la0), fold_avx512(ra0), fold_avx512(la1), fold_avx512(ra1)));
        _mm_storeu_ps(y + 4, mx_lane_tree4_x86(fold_avx512(la2), fold_avx512(ra2), fold_avx512(la3), fold_avx512(ra3)));
        for (size_t o = 0; o < 4; o++) {
            dst0[i + o] = y[2 * o];
            dst1[i + o] = y[2 * o + 1];
        }
    } else {
        for (size_t k = 0; k < t; k += 16) {
            const __m512 w = _mm512_loadu_ps(row + k), s = _mm512_loadu_ps(row + t + k);
            la0 = _mm512_fmadd_ps(_mm512_fmadd_ps(f0, s, w), _mm512_loadu_ps(l0 + k), la0);
            la1 = _mm512_fmadd_ps(_mm512_fmadd_ps(f1, s, w), _mm512_loadu_ps(l1 + k), la1);
            la2 = _mm512_fmadd_ps(_mm512_fmadd_ps(f2, s, w), _mm512_loadu_ps(l2 + k), la2);
            la3 = _mm512_fmadd_ps(_mm512_fmadd_ps(f3, s, w), _mm512_loadu_ps(l3 + k), la3);
        }
        _mm_storeu_ps(dst0 + i, mx_lane_tree4_x86(fold_avx512(la0), fold_avx512(la1), fold_avx512(la2), fold_avx512(la3)));
    }
}

/* resample_lerp (mx_kernels): four outputs at a time where they share a row, else two;
 * the tail one at a time. Bit-identical to mx_resample_lerp_fma_scalar, as the AVX2 path. */
void mx_resample_lerp_avx512(float *restrict dst0, float *restrict dst1, const float *restrict src0,
                             const float *restrict src1, const int32_t *restrict base, const int32_t *restrict phase,
                             const float *restrict frac, size_t count, const float *restrict table, int taps) {
    const size_t t = (size_t)taps;
    size_t i = 0;
    while (i + 4 <= count) {
        if (phase[i] == phase[i + 1] && phase[i + 1] == phase[i + 2] && phase[i + 2] == phase[i + 3]) {
            lerp_four_avx512(dst0, dst1, src0, src1, base, frac, i, table + (size_t)phase[i] * 2 * t, t);
            i += 4;
        } else {
            lerp_two_avx512(dst0, dst1, src0, src1, base, phase, frac, i, table, t);
            i += 2;
        }
    }
    if (i + 2 <= count) {
        lerp_two_avx512(dst0, dst1, src0, src1, base, phase, frac, i, table, t);
        i += 2;
    }
    for (; i < count; i++)
        mx_dot_lerp_lanes_fused(dst0 + i, src1 ? dst1 + i : NULL, table + (size_t)phase[i] * 2 * t, frac[i], src0 + base[i],
                                src1 ? src1 + base[i] : NULL, taps);
}

#pragma clang attribute pop
#endif
