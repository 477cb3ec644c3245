/* Shared by the kernel translation units; not part of the public header. */
#ifndef MIXDOWN_KERNELS_INTERNAL_H
#define MIXDOWN_KERNELS_INTERNAL_H
#include "mixdown_kernels.h"

/* Keep a*b+c as two roundings everywhere, so vector bodies and scalar tails agree. */
#pragma STDC FP_CONTRACT OFF

#if defined(__clang__)
#define MX_NO_VECTORIZE _Pragma("clang loop vectorize(disable) interleave(disable)")
#else
#define MX_NO_VECTORIZE
#endif

/* One frame of each kernel: the scalar reference and every SIMD tail use these, so a
 * frame's value does not depend on whether it fell in a vector body or a tail. */
static inline float mx_ramp_gain(double g0, double step, int64_t index) {
    return (float)(g0 + (double)index * step);
}
static inline int16_t mx_s16_one(float x) {
    float v = x * 32768.0f;
    if (!(v == v)) v = 0.0f;
    if (v > 32767.0f) v = 32767.0f;
    if (v < -32768.0f) v = -32768.0f;
    return (int16_t)__builtin_rintf(v);
}
static inline int32_t mx_s24_one(float x) {
    float v = x * 8388608.0f;
    if (!(v == v)) v = 0.0f;
    if (v > 8388607.0f) v = 8388607.0f;
    if (v < -8388608.0f) v = -8388608.0f;
    return (int32_t)((uint32_t)(int32_t)__builtin_rintf(v) << 8);
}

/* One Farrow output without fused multiply-add: the scalar reference and SSE2 paths. */
#define MX_FARROW_MAX_ORDER 7
static inline float mx_farrow_one(const float *x, float u, const float *coef, int taps, int order) {
    float c[MX_FARROW_MAX_ORDER + 1];
    const int stride = order + 1, half = taps / 2;
    for (int m = 0; m <= order; m++) {
        float acc = 0.0f;
        MX_NO_VECTORIZE
        for (int k = 0; k < half; k++) {
            const float folded = (m & 1) ? x[k] - x[taps - 1 - k] : x[k] + x[taps - 1 - k];
            acc = acc + coef[k * stride + m] * folded;
        }
        c[m] = acc;
    }
    float y = c[order];
    for (int m = order - 1; m >= 0; m--) y = y * u + c[m];
    return y;
}

/* The same output with fused multiply-adds, in the order of a vector lane: the per-output
 * path of the FMA kernels (AVX2, AVX-512, NEON). Inlined into a caller compiled for FMA,
 * __builtin_fmaf is one instruction; the result is correctly rounded either way. */
static inline __attribute__((always_inline)) float mx_farrow_one_fused(const float *x, float u, const float *coef, int taps, int order) {
    float c[MX_FARROW_MAX_ORDER + 1];
    const int stride = order + 1, half = taps / 2;
    for (int m = 0; m <= order; m++) {
        float acc = 0.0f;
        for (int k = 0; k < half; k++) {
            const float folded = (m & 1) ? x[k] - x[taps - 1 - k] : x[k] + x[taps - 1 - k];
            acc = __builtin_fmaf(coef[k * stride + m], folded, acc);
        }
        c[m] = acc;
    }
    float y = c[order];
    for (int m = order - 1; m >= 0; m--) y = __builtin_fmaf(y, u, c[m]);
    return y;
}

static inline float mx_xcorr_one(const float *a, const float *x, size_t len) {
    float acc = 0.0f;
    MX_NO_VECTORIZE
    for (size_t i = 0; i < len; i++) acc = acc + a[i] * x[i];
    return acc;
}

#if defined(__x86_64__) || defined(_M_X64)
#define MX_HAVE_X86 1
extern const mx_kernels mx_kernels_sse2;
extern const mx_kernels mx_kernels_avx2;
/* The AVX-512 table is the AVX2 table with this Farrow kernel (built in dispatch.c). */
void mx_farrow_avx512(float *restrict dst, const float *restrict src, const int32_t *restrict base,
                      const float *restrict u, size_t count, const float *restrict coef, int taps, int order);
#endif
#if defined(__aarch64__)
#define MX_HAVE_NEON 1
extern const mx_kernels mx_kernels_neon;
#endif
extern const mx_kernels mx_kernels_scalar;

#endif
