/* Shared by the kernel translation units; not part of the public header. */
#ifndef MIXDOWN_KERNELS_INTERNAL_H
#define MIXDOWN_KERNELS_INTERNAL_H
#include "mixdown_kernels.h"

/* pi, for the spectral stretch's FFT, phases and windows. */
static const double mx_pi = 3.14159265358979323846264338327950288;

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

/* The resampler's dot product in its lane order: sixteen lanes, lane l sums taps l, l + 16,
 * l + 32, ... in order; lanes l and l + 8 meet first, and the eight sums meet as
 * ((h0 + h1) + (h2 + h3)) + ((h4 + h5) + (h6 + h7)). Every path computes exactly this
 * sequence, fused (AVX2, NEON) or not (scalar, SSE2), so an output has the same value
 * whether it fell in a vector group or a tail. Sixteen lanes give an AVX2 core two
 * independent FMA chains per output. */
static inline float mx_lane_tree(const float h[8]) {
    return ((h[0] + h[1]) + (h[2] + h[3])) + ((h[4] + h[5]) + (h[6] + h[7]));
}
static inline float mx_lane_fold(const float s[16]) {
    float h[8];
    for (int l = 0; l < 8; l++) h[l] = s[l] + s[l + 8];
    return mx_lane_tree(h);
}
static inline float mx_dot_lanes(const float *row, const float *x, int taps) {
    float s[16] = {0};
    for (int k = 0; k < taps; k += 16) {
        MX_NO_VECTORIZE
        for (int l = 0; l < 16; l++) s[l] = s[l] + row[k + l] * x[k + l];
    }
    return mx_lane_fold(s);
}
/* The same with fused multiply-adds. Inlined into a caller compiled for FMA,
 * __builtin_fmaf is one instruction; the result is correctly rounded either way. */
static inline __attribute__((always_inline)) float mx_dot_lanes_fused(const float *row, const float *x, int taps) {
    float s[16] = {0};
    for (int k = 0; k < taps; k += 16)
        for (int l = 0; l < 16; l++) s[l] = __builtin_fmaf(row[k + l], x[k + l], s[l]);
    return mx_lane_fold(s);
}
/* resample_lerp's output for one channel (x1 NULL) or two: each coefficient row + f slope
 * (slope = row + taps), then the sums in the lane order. */
static inline void mx_dot_lerp_lanes(float *y0, float *y1, const float *row, float f, const float *x0,
                                     const float *x1, int taps) {
    const float *slope = row + taps;
    float s0[16] = {0}, s1[16] = {0};
    for (int k = 0; k < taps; k += 16) {
        MX_NO_VECTORIZE
        for (int l = 0; l < 16; l++) {
            const float c = row[k + l] + f * slope[k + l];
            s0[l] = s0[l] + c * x0[k + l];
            if (x1) s1[l] = s1[l] + c * x1[k + l];
        }
    }
    *y0 = mx_lane_fold(s0);
    if (x1) *y1 = mx_lane_fold(s1);
}
/* The same with fused multiply-adds (the coefficient and each product). */
static inline __attribute__((always_inline)) void mx_dot_lerp_lanes_fused(float *y0, float *y1, const float *row, float f,
                                                                          const float *x0, const float *x1, int taps) {
    const float *slope = row + taps;
    float s0[16] = {0}, s1[16] = {0};
    for (int k = 0; k < taps; k += 16)
        for (int l = 0; l < 16; l++) {
            const float c = __builtin_fmaf(f, slope[k + l], row[k + l]);
            s0[l] = __builtin_fmaf(c, x0[k + l], s0[l]);
            if (x1) s1[l] = __builtin_fmaf(c, x1[k + l], s1[l]);
        }
    *y0 = mx_lane_fold(s0);
    if (x1) *y1 = mx_lane_fold(s1);
}

static inline float mx_xcorr_one(const float *a, const float *x, size_t len) {
    float acc = 0.0f;
    MX_NO_VECTORIZE
    for (size_t i = 0; i < len; i++) acc = acc + a[i] * x[i];
    return acc;
}

/* One frame of K-weighting for one channel (see mx_kernels.kweight); s = {shelf s0, s1,
 * high pass s0, s1}. Returns the filtered value. */
static inline double mx_kweight_one(double x, double *s, const double *c) {
    double y = c[0] * x + s[0];
    s[0] = (c[1] * x + s[1]) - c[3] * y;
    s[1] = c[2] * x - c[4] * y;
    double z = c[5] * y + s[2];
    s[2] = (c[6] * y + s[3]) - c[8] * z;
    s[3] = c[7] * y - c[9] * z;
    return z;
}
/* The end of a K-weighting call: a state too small to matter becomes 0. */
static inline void mx_kweight_flush(double *s) {
    for (int j = 0; j < 4; j++)
        if (__builtin_fabs(s[j]) < 1e-30) s[j] = 0.0;
}
/* One output of the oversampled peak: sum over k of row[k] * x[k], in order of k. */
/* The larger of a running peak and |v|, passing over NaN (v > m is false for NaN). */
static inline float mx_peak_one(float m, float v) {
    float a = __builtin_fabsf(v);
    return a > m ? a : m;
}
/* peak_interp's larger |point| of one pair (row: e, then o) at one window, and `m`. */
static inline float mx_interp_pair_peak(float m, const float *row, const float *x, size_t taps) {
    const size_t h = taps / 2;
    float u = 0.0f, v = 0.0f;
    MX_NO_VECTORIZE
    for (size_t k = 0; k < h; k++) {
        const float lo = x[k], hi = x[taps - 1 - k];
        u = u + row[k] * (lo + hi);
        v = v + row[h + k] * (lo - hi);
    }
    return mx_peak_one(mx_peak_one(m, u + v), u - v);
}

#if defined(__x86_64__) || defined(_M_X64)
#define MX_HAVE_X86 1
extern const mx_kernels mx_kernels_sse2;
/* Two channels of K-weighting in a __m128d (x86_sse2.c; the AVX2 table uses it too). */
void mx_kweight_pair_sse2(double *MX_RESTRICT energy, double *MX_RESTRICT state, const float *MX_RESTRICT x0,
                          const float *MX_RESTRICT x1, size_t frames, const double *MX_RESTRICT coef);
extern const mx_kernels mx_kernels_avx2;
/* The AVX-512 table: the AVX2 kernels, but resample_lerp in 16-lane vectors (x86_avx512.c). */
extern const mx_kernels mx_kernels_avx512;
void mx_resample_lerp_avx512(float *MX_RESTRICT dst0, float *MX_RESTRICT dst1, const float *MX_RESTRICT src0,
                             const float *MX_RESTRICT src1, const int32_t *MX_RESTRICT base, const int32_t *MX_RESTRICT phase,
                             const float *MX_RESTRICT frac, size_t count, const float *MX_RESTRICT table, int taps);
#endif
#if defined(__aarch64__)
#define MX_HAVE_NEON 1
extern const mx_kernels mx_kernels_neon;
#endif
extern const mx_kernels mx_kernels_scalar;
/* The frame engine's analysis and synthesis (mx_kernels.pvoc_analyse, pvoc_synthesise):
 * pvoc_analysis.c and pvoc_synthesis.c compiled for the baseline (the scalar, SSE2 and NEON
 * tables'), and again for AVX2 by x86_avx2_pvoc.c (the AVX2 and AVX-512 tables'). */
void mx_pvoc_analyse_base(struct mx_pvoc *MX_RESTRICT engine, const float *const *in, double position, double exact,
                          double onset);
void mx_pvoc_synthesise_base(struct mx_pvoc *MX_RESTRICT engine, float *const *out, float *const *low, int reset);
#if defined(MX_HAVE_X86)
void mx_pvoc_analyse_avx2(struct mx_pvoc *MX_RESTRICT engine, const float *const *in, double position, double exact,
                          double onset);
void mx_pvoc_synthesise_avx2(struct mx_pvoc *MX_RESTRICT engine, float *const *out, float *const *low, int reset);
#endif
/* The spectral FFT's radix-4 pass in generic vectors of four (rfft.c): the SSE2 and
 * NEON tables' cfft_pass4, bit-identical to mx_cfft_pass4_scalar. */
/* One radix-4 butterfly of the spectral FFT (mx_kernels.cfft_pass4) on T (float or a
 * vector of floats): declares o0r, o0i ... o3r, o3i, the outputs times their twiddles, in
 * the one order of sums and products every path uses (so every path is bit-identical). */
#define MX_RADIX4(T, ar, ai, br, bi, cr, ci, dr, di, w1r, w1i, w2r, w2i, w3r, w3i)                       \
    T apcr = ar + cr, apci = ai + ci, amcr = ar - cr, amci = ai - ci;                                     \
    T bpdr = br + dr, bpdi = bi + di, bmdr = br - dr, bmdi = bi - di;                                     \
    T s1r = amcr + bmdi, s1i = amci - bmdr, s2r = apcr - bpdr, s2i = apci - bpdi;                         \
    T s3r = amcr - bmdi, s3i = amci + bmdr;                                                              \
    T o0r = apcr + bpdr, o0i = apci + bpdi;                                                              \
    T o1r = s1r * w1r - s1i * w1i, o1i = s1r * w1i + s1i * w1r;                                          \
    T o2r = s2r * w2r - s2i * w2i, o2i = s2r * w2i + s2i * w2r;                                          \
    T o3r = s3r * w3r - s3i * w3i, o3i = s3r * w3i + s3i * w3r;
void mx_cfft_pass4_v4(float *MX_RESTRICT yr, float *MX_RESTRICT yi, const float *MX_RESTRICT xr,
                      const float *MX_RESTRICT xi, const float *MX_RESTRICT tw, size_t n1, size_t s);
/* The real FFT's unpack and pack (mx_kernels.rfft_unpack, rfft_pack), compiled for the
 * baseline (rfft.c: the SSE2 and NEON tables'); the scalar reference and the AVX2 path
 * compile the same loops (MX_RFFT_UNPACK, MX_RFFT_PACK), with vectorisation off and with
 * AVX2 on. */
void mx_rfft_unpack_auto(float *MX_RESTRICT re, float *MX_RESTRICT im, const float *MX_RESTRICT zr,
                         const float *MX_RESTRICT zi, const float *MX_RESTRICT pr, const float *MX_RESTRICT pi, size_t h);
void mx_rfft_pack_auto(float *MX_RESTRICT zr, float *MX_RESTRICT zi, const float *MX_RESTRICT re,
                       const float *MX_RESTRICT im, const float *MX_RESTRICT pr, const float *MX_RESTRICT pi, size_t h);
#define MX_RFFT_UNPACK(LOOP_PRAGMA)                                                           \
    re[0] = zr[0] + zi[0];                                                                   \
    im[0] = 0;                                                                               \
    re[h] = zr[0] - zi[0];                                                                   \
    im[h] = 0;                                                                               \
    LOOP_PRAGMA                                                                              \
    for (size_t k = 1; k < h; k++) {                                                         \
        float ar = zr[k], ai = zi[k], br = zr[h - k], bi = -zi[h - k];                       \
        float er = 0.5f * (ar + br), ei = 0.5f * (ai + bi);                                  \
        float orr = 0.5f * (ai - bi), oi = -0.5f * (ar - br);                                \
        re[k] = er + pr[k] * orr - pi[k] * oi;                                               \
        im[k] = ei + pr[k] * oi + pi[k] * orr;                                               \
    }
#define MX_RFFT_PACK(LOOP_PRAGMA)                                                             \
    LOOP_PRAGMA                                                                              \
    for (size_t k = 0; k < h; k++) {                                                         \
        float ar = re[k], ai = im[k], br = re[h - k], bi = -im[h - k];                       \
        float er = 0.5f * (ar + br), ei = 0.5f * (ai + bi);                                  \
        float dr = 0.5f * (ar - br), di = 0.5f * (ai - bi);                                  \
        float wr = pr[k], wi = -pi[k];   /* e^(+2 pi i k/n) */                               \
        float orr = dr * wr - di * wi, oi = dr * wi + di * wr;                               \
        zr[k] = er - oi;                 /* E + i O, conjugated */                           \
        zi[k] = -(ei + orr);                                                                 \
    }


/* Denormals flushed to zero (FTZ and DAZ) for the span of a kernel call, the caller's
 * mode restored after: a decaying spectrum reaches denormal floats, which cost x86 about
 * a hundred cycles each (a denormal input made the spectral stretch 3x slower). Results
 * differ only where a value would have been denormal (below 1.2e-38). A no-op elsewhere. */
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
static inline unsigned mx_denormals_flush_begin(void) {
    unsigned state = _mm_getcsr();
    _mm_setcsr(state | 0x8040u);   /* FTZ (bit 15) and DAZ (bit 6) */
    return state;
}
static inline void mx_denormals_flush_end(unsigned state) { _mm_setcsr(state); }
#else
static inline unsigned mx_denormals_flush_begin(void) { return 0; }
static inline void mx_denormals_flush_end(unsigned state) { (void)state; }
#endif

/* Where the first onset at or after the frame's centre begins in in[0..channels), n frames
 * each, by blocks of `size` frames (n if none); e: n / size floats of scratch (onsets.c). */
size_t mx_onset_ahead_in(float *MX_RESTRICT e, const float *const *in, size_t channels, size_t n, size_t size);

#endif
