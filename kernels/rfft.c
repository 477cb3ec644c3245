/* The spectral stretch's real FFT: a real transform of n through a complex FFT of n/2,
 * whose passes come from the kernel table the plan was made with. This file makes and frees
 * the plan and holds the baseline's passes; rfft_transform.c transforms. Contracts in
 * mixdown_kernels.h ("Real FFT"). */
#include "rfft.h"
#include <math.h>
#include <stdlib.h>

mx_rfft *mx_rfft_create(size_t n) { return mx_rfft_create_with(n, mx_kernels_active()); }

mx_rfft *mx_rfft_create_with(size_t n, const mx_kernels *kernels) {
    if (n < 4 || (n & (n - 1)) != 0 || n > (1u << 24) || !kernels) return NULL;
    mx_rfft *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->pass4 = kernels->cfft_pass4;
    p->unpack = kernels->rfft_unpack;
    p->pack = kernels->rfft_pack;
    p->n = n;
    p->half = n / 2;
    size_t h = p->half;
    p->tw = malloc(2 * h * sizeof(float));   /* 6 L/4 floats a pass, L = h, h/4, ...: under 2 h */
    p->pr = malloc(h * sizeof(float));
    p->pi = malloc(h * sizeof(float));
    p->zr = malloc(h * sizeof(float));
    p->zi = malloc(h * sizeof(float));
    p->tr = malloc(h * sizeof(float));
    p->ti = malloc(h * sizeof(float));
    if (!p->tw || !p->pr || !p->pi || !p->zr || !p->zi || !p->tr || !p->ti) {
        mx_rfft_destroy(p);
        return NULL;
    }
    float *t = p->tw;
    for (size_t len = h; len >= 4; len /= 4) {
        size_t n1 = len / 4;
        for (size_t j = 1; j <= 3; j++) {
            for (size_t k = 0; k < n1; k++) {
                double a = -2 * mx_pi * (double)(j * k) / (double)len;
                t[k] = (float)cos(a);
                t[n1 + k] = (float)sin(a);
            }
            t += 2 * n1;
        }
    }
    for (size_t k = 0; k < h; k++) {
        p->pr[k] = (float)cos(2 * mx_pi * (double)k / (double)n);
        p->pi[k] = (float)-sin(2 * mx_pi * (double)k / (double)n);
    }
    return p;
}

void mx_rfft_destroy(mx_rfft *p) {
    if (!p) return;
    free(p->tw); free(p->pr); free(p->pi); free(p->zr); free(p->zi); free(p->tr); free(p->ti);
    free(p);
}

size_t mx_rfft_size(const mx_rfft *p) { return p->n; }

/* The radix-4 pass in vectors of four (clang's generic vectors: SSE2 and NEON alike), the
 * SSE2 and NEON tables' cfft_pass4; the same arithmetic as mx_cfft_pass4_scalar, element
 * for element. */
void mx_cfft_pass4_v4(float *restrict yr, float *restrict yi, const float *restrict xr, const float *restrict xi,
                      const float *restrict tw, size_t n1, size_t s) {
#if defined(__clang__)
    typedef float v4 __attribute__((vector_size(16), aligned(4)));
    if (s == 1 && n1 < 4) {
        /* Transforms of 4 and 8: under one vector of butterflies. */
        mx_cfft_pass4_scalar(yr, yi, xr, xi, tw, n1, s);
        return;
    }
    if (s == 1) {
        /* The first pass: four butterflies at once along p, then a 4 x 4 transpose for the
         * stores (row i is (o0[i], o1[i], o2[i], o3[i])). */
        const float *w1r = tw, *w1i = tw + n1, *w2r = tw + 2 * n1, *w2i = tw + 3 * n1, *w3r = tw + 4 * n1, *w3i = tw + 5 * n1;
        size_t p = 0;
        for (; p + 4 <= n1; p += 4) {
            v4 ar = *(const v4 *)(xr + p), ai = *(const v4 *)(xi + p);
            v4 br = *(const v4 *)(xr + p + n1), bi = *(const v4 *)(xi + p + n1);
            v4 cr = *(const v4 *)(xr + p + 2 * n1), ci = *(const v4 *)(xi + p + 2 * n1);
            v4 dr = *(const v4 *)(xr + p + 3 * n1), di = *(const v4 *)(xi + p + 3 * n1);
            v4 W1r = *(const v4 *)(w1r + p), W1i = *(const v4 *)(w1i + p);
            v4 W2r = *(const v4 *)(w2r + p), W2i = *(const v4 *)(w2i + p);
            v4 W3r = *(const v4 *)(w3r + p), W3i = *(const v4 *)(w3i + p);
            MX_RADIX4(v4, ar, ai, br, bi, cr, ci, dr, di, W1r, W1i, W2r, W2i, W3r, W3i)
            v4 t0 = __builtin_shufflevector(o0r, o1r, 0, 4, 1, 5), t1 = __builtin_shufflevector(o2r, o3r, 0, 4, 1, 5);
            v4 t2 = __builtin_shufflevector(o0r, o1r, 2, 6, 3, 7), t3 = __builtin_shufflevector(o2r, o3r, 2, 6, 3, 7);
            *(v4 *)(yr + 4 * p) = __builtin_shufflevector(t0, t1, 0, 1, 4, 5);
            *(v4 *)(yr + 4 * p + 4) = __builtin_shufflevector(t0, t1, 2, 3, 6, 7);
            *(v4 *)(yr + 4 * p + 8) = __builtin_shufflevector(t2, t3, 0, 1, 4, 5);
            *(v4 *)(yr + 4 * p + 12) = __builtin_shufflevector(t2, t3, 2, 3, 6, 7);
            t0 = __builtin_shufflevector(o0i, o1i, 0, 4, 1, 5); t1 = __builtin_shufflevector(o2i, o3i, 0, 4, 1, 5);
            t2 = __builtin_shufflevector(o0i, o1i, 2, 6, 3, 7); t3 = __builtin_shufflevector(o2i, o3i, 2, 6, 3, 7);
            *(v4 *)(yi + 4 * p) = __builtin_shufflevector(t0, t1, 0, 1, 4, 5);
            *(v4 *)(yi + 4 * p + 4) = __builtin_shufflevector(t0, t1, 2, 3, 6, 7);
            *(v4 *)(yi + 4 * p + 8) = __builtin_shufflevector(t2, t3, 0, 1, 4, 5);
            *(v4 *)(yi + 4 * p + 12) = __builtin_shufflevector(t2, t3, 2, 3, 6, 7);
        }
        return;
    }
    /* A later pass (s a multiple of 4): butterfly p of each of the s interleaved transforms,
     * in vectors of four along q. */
    size_t quarter = s * n1;
    for (size_t p = 0; p < n1; p++) {
        v4 w1r = {tw[p], tw[p], tw[p], tw[p]}, w1i = {tw[n1 + p], tw[n1 + p], tw[n1 + p], tw[n1 + p]};
        v4 w2r = {tw[2 * n1 + p], tw[2 * n1 + p], tw[2 * n1 + p], tw[2 * n1 + p]};
        v4 w2i = {tw[3 * n1 + p], tw[3 * n1 + p], tw[3 * n1 + p], tw[3 * n1 + p]};
        v4 w3r = {tw[4 * n1 + p], tw[4 * n1 + p], tw[4 * n1 + p], tw[4 * n1 + p]};
        v4 w3i = {tw[5 * n1 + p], tw[5 * n1 + p], tw[5 * n1 + p], tw[5 * n1 + p]};
        const float *ar = xr + s * p, *ai = xi + s * p;
        float *or_ = yr + 4 * s * p, *oi = yi + 4 * s * p;
        for (size_t q = 0; q < s; q += 4) {
            v4 a_r = *(const v4 *)(ar + q), a_i = *(const v4 *)(ai + q);
            v4 b_r = *(const v4 *)(ar + quarter + q), b_i = *(const v4 *)(ai + quarter + q);
            v4 c_r = *(const v4 *)(ar + 2 * quarter + q), c_i = *(const v4 *)(ai + 2 * quarter + q);
            v4 d_r = *(const v4 *)(ar + 3 * quarter + q), d_i = *(const v4 *)(ai + 3 * quarter + q);
            MX_RADIX4(v4, a_r, a_i, b_r, b_i, c_r, c_i, d_r, d_i, w1r, w1i, w2r, w2i, w3r, w3i)
            *(v4 *)(or_ + q) = o0r; *(v4 *)(oi + q) = o0i;
            *(v4 *)(or_ + s + q) = o1r; *(v4 *)(oi + s + q) = o1i;
            *(v4 *)(or_ + 2 * s + q) = o2r; *(v4 *)(oi + 2 * s + q) = o2i;
            *(v4 *)(or_ + 3 * s + q) = o3r; *(v4 *)(oi + 3 * s + q) = o3i;
        }
    }
#else
    mx_cfft_pass4_scalar(yr, yi, xr, xi, tw, n1, s);
#endif
}

void mx_rfft_unpack_auto(float *restrict re, float *restrict im, const float *restrict zr, const float *restrict zi,
                         const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_UNPACK()
}

void mx_rfft_pack_auto(float *restrict zr, float *restrict zi, const float *restrict re, const float *restrict im,
                       const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_PACK()
}
