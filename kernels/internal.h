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

#if defined(__x86_64__) || defined(_M_X64)
#define MX_HAVE_X86 1
extern const mx_kernels mx_kernels_sse2;
extern const mx_kernels mx_kernels_avx2;
#endif
#if defined(__aarch64__)
#define MX_HAVE_NEON 1
extern const mx_kernels mx_kernels_neon;
#endif
extern const mx_kernels mx_kernels_scalar;

#endif
