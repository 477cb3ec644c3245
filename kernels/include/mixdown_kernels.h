/*
 * Mixdown's C kernels: the hot loops of the render engine.
 *
 * Conventions (after miniaudio's conversion routines):
 * - plain functions, destination first, `restrict` buffers that never overlap;
 * - lengths are in frames of one channel (a planar channel buffer), never bytes;
 * - every kernel has a `_scalar` reference that is always compiled, built with
 *   auto-vectorisation off, and used by the tests as the ground truth;
 * - SIMD paths (SSE2 and AVX2 on x86_64, NEON on arm64) are chosen in one place,
 *   `mx_kernels_active()`, and never depend on the alignment of any pointer;
 * - every SIMD path is bit-identical to the scalar reference (tolerance 0): the
 *   arithmetic is the same sequence of IEEE operations, with contraction to FMA off,
 *   so that a frame gets the same value whether it falls in a vector body or a tail.
 *
 * Gain ramps. A ramp is described by its start gain g0 and per-frame step, both in
 * double, and by the offset of dst[0] inside the ramp. Frame i of the call gets
 *     gain(i) = (float)(g0 + (double)(offset + i) * step)
 * so a frame's gain depends only on its position in the ramp, not on how the ramp was
 * cut into blocks: a render is the same whatever its block size.
 */
#ifndef MIXDOWN_KERNELS_H
#define MIXDOWN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#define MX_RESTRICT
#else
#define MX_RESTRICT restrict
#endif

/* The instruction sets a kernel table can be built for. */
typedef enum mx_isa {
    MX_ISA_SCALAR = 0,
    MX_ISA_SSE2 = 1,
    MX_ISA_AVX2 = 2,
    MX_ISA_NEON = 3,
    /* AVX2 everywhere, plus an AVX-512 Farrow kernel that is bit-identical to AVX2's. */
    MX_ISA_AVX512 = 4,
    MX_ISA_COUNT = 5
} mx_isa;

/* One implementation of every kernel. */
typedef struct mx_kernels {
    /* dst[i] += src[i] * gain(i), gain(i) = (float)(g0 + (offset + i) * step). */
    void (*mix_ramp)(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames,
                     double g0, double step, int64_t offset);
    /* dst[i] += src[i] * gain. */
    void (*mix_gain)(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames, float gain);
    /* buf[i] *= gain(i), same ramp rule as mix_ramp. */
    void (*apply_ramp)(float *MX_RESTRICT buf, size_t frames, double g0, double step, int64_t offset);
    /* buf[i] *= gain. */
    void (*apply_gain)(float *MX_RESTRICT buf, size_t frames, float gain);
    /* dst[f * channels + c] = src[c][f]: planar to interleaved. */
    void (*interleave)(float *MX_RESTRICT dst, const float *const *MX_RESTRICT src,
                       size_t channels, size_t frames);
    /* dst[c][f] = src[f * channels + c]: interleaved to planar. */
    void (*deinterleave)(float *const *MX_RESTRICT dst, const float *MX_RESTRICT src,
                         size_t channels, size_t frames);
    /* Float to 16-bit: x * 32768, rounded to nearest (ties to even), clipped to
     * [-32768, 32767]; NaN becomes 0. No dither. */
    void (*f32_to_s16)(int16_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
    /* Float to 24-bit: x * 8388608, rounded to nearest (ties to even), clipped to
     * [-8388608, 8388607], NaN becomes 0; stored left-justified in an int32 (value << 8),
     * which is what libsndfile's int API expects for a 24-bit file. */
    void (*f32_to_s24)(int32_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
    /* Farrow resampler with a symmetric filter (tap taps-1-k of branch m is (-1)^m times
     * tap k), given by its first half: for each output i in 0..<count, with x = src + base[i],
     *   s_k = x[k] + x[taps-1-k], d_k = x[k] - x[taps-1-k]            (k = 0..taps/2-1)
     *   c_m = sum over k, in order, of coef[k * (order + 1) + m] * (m even ? s_k : d_k)
     *   dst[i] = Horner(c_0..c_order at u[i]) = (((c_M) u + c_{M-1}) u + ...) u + c_0
     * `taps` is even; `coef` holds taps/2 * (order + 1) floats.
     * `base[i]` is the index in `src` of output i's first tap and `u[i]` its fractional
     * delay mapped to [-1, 1). `order` is 1...7. Paths with FMA (AVX2, NEON) fuse each
     * multiply-add, the others do not: they agree with the scalar reference within the
     * documented tolerance (2e-6 of full scale), and each path gives an output the same
     * value whatever group or tail it falls in, so renders are block-size independent. */
    void (*farrow)(float *MX_RESTRICT dst, const float *MX_RESTRICT src, const int32_t *MX_RESTRICT base,
                   const float *MX_RESTRICT u, size_t count, const float *MX_RESTRICT coef, int taps, int order);
    /* Cross-correlation: dst[l] = sum over i < len of a[i] * x[l + i], for l < lags, summed
     * in order of i with separate multiply and add: bit-identical on every path, so
     * the lag a search picks never depends on the CPU. */
    void (*xcorr)(float *MX_RESTRICT dst, const float *MX_RESTRICT a, const float *MX_RESTRICT x,
                  size_t len, size_t lags);
    /* Decoding 16-bit PCM: dst[c][f] = src[f * channels + c] / 32768 (libsndfile's
     * normalisation; exact in float, so every path is bit-identical). */
    void (*s16_deinterleave)(float *const *MX_RESTRICT dst, const int16_t *MX_RESTRICT src,
                             size_t channels, size_t frames);
} mx_kernels;

/* The table for `isa`, or NULL when that path is not built for this architecture or
 * this CPU cannot run it. MX_ISA_SCALAR is always available. */
const mx_kernels *mx_kernels_for_isa(mx_isa isa);

/* The best table this CPU runs, chosen once. The environment variable MIXDOWN_ISA
 * (scalar, sse2, avx2, avx512, neon) forces a path, for benchmarks and debugging; an
 * unavailable choice falls back to the best one. */
const mx_kernels *mx_kernels_active(void);
mx_isa mx_kernels_active_isa(void);
const char *mx_isa_name(mx_isa isa);

/* Scalar references, always compiled, vectorisation disabled. */
void mx_mix_ramp_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames,
                        double g0, double step, int64_t offset);
void mx_mix_gain_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t frames, float gain);
void mx_apply_ramp_scalar(float *MX_RESTRICT buf, size_t frames, double g0, double step, int64_t offset);
void mx_apply_gain_scalar(float *MX_RESTRICT buf, size_t frames, float gain);
void mx_interleave_scalar(float *MX_RESTRICT dst, const float *const *MX_RESTRICT src,
                          size_t channels, size_t frames);
void mx_deinterleave_scalar(float *const *MX_RESTRICT dst, const float *MX_RESTRICT src,
                            size_t channels, size_t frames);
void mx_f32_to_s16_scalar(int16_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
void mx_f32_to_s24_scalar(int32_t *MX_RESTRICT dst, const float *MX_RESTRICT src, size_t n);
void mx_xcorr_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT a, const float *MX_RESTRICT x,
                     size_t len, size_t lags);
void mx_s16_deinterleave_scalar(float *const *MX_RESTRICT dst, const int16_t *MX_RESTRICT src,
                                size_t channels, size_t frames);
void mx_farrow_scalar(float *MX_RESTRICT dst, const float *MX_RESTRICT src, const int32_t *MX_RESTRICT base,
                      const float *MX_RESTRICT u, size_t count, const float *MX_RESTRICT coef, int taps, int order);

#ifdef __cplusplus
}
#endif
#endif
