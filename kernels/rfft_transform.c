/* The spectral stretch's real FFT, forward and inverse, on a plan made by rfft.c (its
 * passes from the plan's kernel table). Compiled on its own for the baseline, and again for
 * AVX2 by x86_avx2_pvoc.c (as mx_rfft_forward_avx2 and mx_rfft_inverse_avx2, for the
 * engine's AVX2 copy: the same samples). Contracts in mixdown_kernels.h ("Real FFT"). */
#include "rfft.h"

/* The last pass when half is an odd power of two: radix 2, twiddle 1, s = half/2. */
static void mx_cfft_last2(float *restrict yr, float *restrict yi, const float *restrict xr, const float *restrict xi, size_t s) {
    for (size_t q = 0; q < s; q++) {
        float ar = xr[q], ai = xi[q], br = xr[q + s], bi = xi[q + s];
        yr[q] = ar + br; yi[q] = ai + bi;
        yr[q + s] = ar - br; yi[q + s] = ai - bi;
    }
}

/* Forward complex FFT (e^-) of half values in (re, im), in natural order; (tr, ti) is the
 * other buffer. The result is in (*out_re, *out_im): (re, im) after an even number of
 * passes, the other buffer after an odd one (not copied back: the step after reads it
 * there). */
static void mx_cfft(const mx_rfft *p, float *restrict re, float *restrict im, const float **out_re, const float **out_im) {
    size_t h = p->half, s = 1, len = h;
    float *xr = re, *xi = im, *yr = p->tr, *yi = p->ti;
    const float *tw = p->tw;
    while (len >= 4) {
        size_t n1 = len / 4;
        /* Butterfly p reads x[q + s (p + j n1)] and writes y[q + s (4p + j)], q < s. */
        p->pass4(yr, yi, xr, xi, tw, n1, s);
        tw += 6 * n1;
        len = n1;
        s *= 4;
        float *t = xr; xr = yr; yr = t;
        t = xi; xi = yi; yi = t;
    }
    if (len == 2) {
        mx_cfft_last2(yr, yi, xr, xi, s);
        float *t = xr; xr = yr; yr = t;
        t = xi; xi = yi; yi = t;
    }
    *out_re = xr;
    *out_im = xi;
}

void mx_rfft_forward(const mx_rfft *p, float *restrict re, float *restrict im, const float *restrict x) {
    size_t h = p->half;
    float *restrict zr = p->zr, *restrict zi = p->zi;
    for (size_t j = 0; j < h; j++) {
        zr[j] = x[2 * j];
        zi[j] = x[2 * j + 1];
    }
    const float *yr, *yi;
    mx_cfft(p, zr, zi, &yr, &yi);
    p->unpack(re, im, yr, yi, p->pr, p->pi, h);
}

void mx_rfft_inverse(const mx_rfft *p, float *restrict x, const float *restrict re, const float *restrict im) {
    size_t h = p->half;
    float *restrict zr = p->zr, *restrict zi = p->zi;
    /* Z[k] = E[k] + i O[k], E = (X[k] + conj X[h-k]) / 2, O = conj(w^k) (X[k] - conj X[h-k]) / 2;
     * transformed with the forward FFT of the conjugate, then conjugated: x = 2/n Re/Im. */
    p->pack(zr, zi, re, im, p->pr, p->pi, h);
    const float *out_re, *out_im;
    mx_cfft(p, zr, zi, &out_re, &out_im);
    const float *restrict yr = out_re, *restrict yi = out_im;
    float scale = 2.0f / (float)p->n;
    for (size_t j = 0; j < h; j++) {
        x[2 * j] = yr[j] * scale;
        x[2 * j + 1] = -yi[j] * scale;
    }
}
