/* What the x86 paths of the resampler share (x86_avx2.c, x86_avx512.c): the last steps of
 * the sixteen-lane summation order, in one place, so that every path that folds lanes
 * this way stays bit-identical to mx_lane_tree. Not part of the public header. */
#ifndef MIXDOWN_KERNELS_X86_LANES_H
#define MIXDOWN_KERNELS_X86_LANES_H
#include "internal.h"
#if defined(MX_HAVE_X86)
#include <immintrin.h>

/* Four outputs' folded lane sums (h = lanes l + lanes l + 8) to their four values: hadd
 * pairs (h0 + h1, h2 + h3), the second hadd makes (h0 + h1) + (h2 + h3), and the halves
 * meet last: mx_lane_tree's order. AVX only, so it inlines into the AVX2 and the AVX-512
 * functions alike. */
static inline __attribute__((target("avx"), always_inline)) __m128 mx_lane_tree4_x86(__m256 a, __m256 b, __m256 c, __m256 d) {
    const __m256 abcd = _mm256_hadd_ps(_mm256_hadd_ps(a, b), _mm256_hadd_ps(c, d));
    return _mm_add_ps(_mm256_castps256_ps128(abcd), _mm256_extractf128_ps(abcd, 1));
}

#endif
#endif
