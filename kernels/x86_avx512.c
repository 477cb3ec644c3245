/* AVX-512 Farrow kernel: 16 outputs per group, coefficients broadcast straight from
 * memory into the FMA. Every lane runs the same fused sequence as the AVX2 path and its
 * per-output fallback, so the two paths give bit-identical output. The other kernels are
 * memory-bound and keep their AVX2 versions. */
#include "internal.h"
#if defined(MX_HAVE_X86)
#include <immintrin.h>

#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)

static inline __attribute__((always_inline))
void farrow_avx512_impl(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                        const float *restrict u, size_t count, const float *restrict coef, const int taps, const int order) {
    size_t i = 0;
    const __m512i lanes = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
    for (; i + 16 <= count; i += 16) {
        const int32_t b0 = base[i];
        const __m512i want = _mm512_add_epi32(_mm512_set1_epi32(b0), lanes);
        if (_mm512_cmpeq_epi32_mask(_mm512_loadu_si512((const void *)(base + i)), want) != 0xFFFF) {
            for (size_t j = i; j < i + 16; j++) dst[j] = mx_farrow_one_fused(src + base[j], u[j], coef, taps, order);
            continue;
        }
        __m512 acc[MX_FARROW_MAX_ORDER + 1];
        for (int m = 0; m <= order; m++) acc[m] = _mm512_setzero_ps();
        const float *x = src + b0;
        const float *b = coef;
        for (int k = 0; k < taps / 2; k++, b += order + 1) {
            const __m512 lo = _mm512_loadu_ps(x + k), hi = _mm512_loadu_ps(x + taps - 1 - k);
            const __m512 sum = _mm512_add_ps(lo, hi), diff = _mm512_sub_ps(lo, hi);
            for (int m = 0; m <= order; m++)
                acc[m] = _mm512_fmadd_ps(_mm512_set1_ps(b[m]), (m & 1) ? diff : sum, acc[m]);
        }
        const __m512 uv = _mm512_loadu_ps(u + i);
        __m512 y = acc[order];
        for (int m = order - 1; m >= 0; m--) y = _mm512_fmadd_ps(y, uv, acc[m]);
        _mm512_storeu_ps(dst + i, y);
    }
    for (; i < count; i++) dst[i] = mx_farrow_one_fused(src + base[i], u[i], coef, taps, order);
}

void mx_farrow_avx512(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                          const float *restrict u, size_t count, const float *restrict coef, int taps, int order) {
    if (taps == 64 && order == 6) farrow_avx512_impl(dst, src, base, u, count, coef, 64, 6);
    else if (taps == 48 && order == 5) farrow_avx512_impl(dst, src, base, u, count, coef, 48, 5);
    else if (taps == 32 && order == 4) farrow_avx512_impl(dst, src, base, u, count, coef, 32, 4);
    else farrow_avx512_impl(dst, src, base, u, count, coef, taps, order);
}

#pragma clang attribute pop

#endif
