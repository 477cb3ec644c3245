/* The spectral stretch's real FFT plan, shared by its files: rfft.c (the plan: made, freed,
 * the baseline's passes) and rfft_transform.c (the transforms, compiled again for AVX2 by
 * x86_avx2_pvoc.c). Private to the kernel. */
#ifndef MIXDOWN_RFFT_H
#define MIXDOWN_RFFT_H
#include "internal.h"

/* A real FFT of n through a complex FFT of n/2 (even samples as real parts, odd as
 * imaginary). The complex FFT is a Stockham autosort: each pass reads one buffer and writes
 * the other in natural order, so there is no bit-reversal scatter, and every pass is a
 * loop over contiguous runs that vectorises. Radix 4 (no multiplications in its core), with
 * one radix-2 pass last when n/2 is an odd power of two. */

struct mx_rfft {
    size_t n, half;
    float *tw;              /* radix-4 twiddles, pass after pass: w^p, w^2p, w^3p (re, im), p < L/4 */
    float *pr, *pi;         /* real-to-complex post-twiddles e^(-2 pi i k/n), k < half */
    float *zr, *zi;         /* scratch, half each */
    float *tr, *ti;         /* the other buffer of each pass, half each */
    /* The radix-4 pass, from the kernel table the plan was made with. */
    void (*pass4)(float *MX_RESTRICT, float *MX_RESTRICT, const float *MX_RESTRICT, const float *MX_RESTRICT,
                  const float *MX_RESTRICT, size_t, size_t);
    void (*unpack)(float *MX_RESTRICT, float *MX_RESTRICT, const float *MX_RESTRICT, const float *MX_RESTRICT,
                   const float *MX_RESTRICT, const float *MX_RESTRICT, size_t);
    void (*pack)(float *MX_RESTRICT, float *MX_RESTRICT, const float *MX_RESTRICT, const float *MX_RESTRICT,
                 const float *MX_RESTRICT, const float *MX_RESTRICT, size_t);
};

#endif
