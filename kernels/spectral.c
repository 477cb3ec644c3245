/* Mixdown's spectral time-stretch: a float real FFT, and a phase vocoder whose phases
 * come from the phase gradient (PGHI: Prusa and Holighaus, "Phase vocoder done right",
 * 2017), with one phase field shared by every channel. See docs/spectral.md. */
#include "internal.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double mx_pi = 3.14159265358979323846264338327950288;
/* A frame whose magnitude is more than half new is an onset (measured: 0.3 costs round-trip
 * PESQ at every ratio; 0.5 leaves it as it was and takes a click's pre-echo from -48 to -58 dB
 * at 0.8). */
#define MX_ONSET 0.5f
/* The frequency-direction phase slope is this share of the reassigned local time's, the rest
 * the log magnitude's slope in time (measured on round-trip PESQ of five espeak-ng voices:
 * 0.75 beats 0, 0.5 and 1 from 0.8 to 2). */
#define MX_LOCAL_TIME_SHARE 0.75f
/* The log magnitude's share falls linearly from the centre to nothing at a local time of
 * n / MX_MAGNITUDE_REACH (measured with the slope taking R: a click's pre-echo at 0.8 from
 * -27 to -40 dB; round-trip PESQ of 20 espeak-ng sentences +0.04, +0.01, +0.02, +0.05 at
 * 0.5, 0.8, 1.25, 2; ViSQOL on 29 clips +0.016 at 0.5, level elsewhere; n/4 and n/2 did
 * less for both). */
#define MX_MAGNITUDE_REACH 8
/* Stretching, an onset ahead of a frame's centre is cut from it (mx_onset_block, in the
 * header: 30 dB over the blocks before; measured, 15 dB also cut speech's consonants and
 * cost 0.2 of round-trip PESQ at 1.25 to 2). */
#define MX_ONSETS_KEPT 8
/* The analysis phase's residual in time is kept whole up to a stretch (or a compression:
 * 1/R) of MX_KEEP_UNTIL and not at all from MX_KEEP_NONE (mx_pvoc_synthesise). */
#define MX_KEEP_UNTIL 1.5
#define MX_KEEP_NONE 2.0
/* Frames kept: a lane that synthesises k frames per step while its helper analyses the next
 * k needs 2k + 2 (SpectralStretch's steps of eight long hops: k = 16 for the short frame's
 * lane, 34 frames). */
#define MX_RING 40

/* ---- Real FFT ---------------------------------------------------------------------- */
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

/* The last pass when half is an odd power of two: radix 2, twiddle 1, s = half/2. */
static void mx_cfft_last2(float *restrict yr, float *restrict yi, const float *restrict xr, const float *restrict xi, size_t s) {
    for (size_t q = 0; q < s; q++) {
        float ar = xr[q], ai = xi[q], br = xr[q + s], bi = xi[q + s];
        yr[q] = ar + br; yi[q] = ai + bi;
        yr[q + s] = ar - br; yi[q + s] = ai - bi;
    }
}

/* Forward complex FFT (e^-) of half values in (re, im), in natural order; (tr, ti) is the
 * other buffer. The result is in (re, im). */
static void mx_cfft(const mx_rfft *p, float *restrict re, float *restrict im) {
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
    if (xr != re) {
        memcpy(re, xr, h * sizeof(float));
        memcpy(im, xi, h * sizeof(float));
    }
}

void mx_rfft_unpack_auto(float *restrict re, float *restrict im, const float *restrict zr, const float *restrict zi,
                         const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_UNPACK()
}

void mx_rfft_pack_auto(float *restrict zr, float *restrict zi, const float *restrict re, const float *restrict im,
                       const float *restrict pr, const float *restrict pi, size_t h) {
    MX_RFFT_PACK()
}

void mx_rfft_forward(const mx_rfft *p, float *restrict re, float *restrict im, const float *restrict x) {
    size_t h = p->half;
    float *restrict zr = p->zr, *restrict zi = p->zi;
    for (size_t j = 0; j < h; j++) {
        zr[j] = x[2 * j];
        zi[j] = x[2 * j + 1];
    }
    mx_cfft(p, zr, zi);
    p->unpack(re, im, zr, zi, p->pr, p->pi, h);
}

void mx_rfft_inverse(const mx_rfft *p, float *restrict x, const float *restrict re, const float *restrict im) {
    size_t h = p->half;
    float *restrict zr = p->zr, *restrict zi = p->zi;
    /* Z[k] = E[k] + i O[k], E = (X[k] + conj X[h-k]) / 2, O = conj(w^k) (X[k] - conj X[h-k]) / 2;
     * transformed with the forward FFT of the conjugate, then conjugated: x = 2/n Re/Im. */
    p->pack(zr, zi, re, im, p->pr, p->pi, h);
    mx_cfft(p, zr, zi);
    float scale = 2.0f / (float)p->n;
    for (size_t j = 0; j < h; j++) {
        x[2 * j] = zr[j] * scale;
        x[2 * j + 1] = -zi[j] * scale;
    }
}
/* ---- Elementary functions, by the array ------------------------------------------- */
/* Polynomials (fitted here, minimax on their ranges) in plain float arithmetic with no
 * branches, so each loop vectorises; libm's atan2f, logf, sinf and cosf were a quarter of the
 * stretch's instructions, one call per bin. Largest errors, against double precision:
 * atan2 4e-8 rad plus rounding, log 1e-7, sin and cos 5e-8 (the phase vocoder needs
 * phases to about 1e-5 rad). */

#if defined(__has_builtin)
#if __has_builtin(__builtin_elementwise_sqrt)
#define MX_SQRTF(x) __builtin_elementwise_sqrt(x)   /* no errno: it vectorises */
#endif
#endif
#ifndef MX_SQRTF
#define MX_SQRTF(x) sqrtf(x)
#endif

/* dst[k] = atan2(y[k], x[k]) in [-pi, pi]; 0 for (0, 0). */
static void mx_atan2_array(float *restrict dst, const float *restrict y, const float *restrict x, size_t count) {
    const float half_pi = (float)(mx_pi / 2), pi = (float)mx_pi;
    for (size_t k = 0; k < count; k++) {
        float ax = fabsf(x[k]), ay = fabsf(y[k]);
        float lo = ax < ay ? ax : ay, hi = ax < ay ? ay : ax;
        float a = lo / (hi > 0 ? hi : 1.0f);
        float s = a * a;
        float r = a * (0.9999993356591407f + s * (-0.3332986094799887f + s * (0.19946566676831531f
                 + s * (-0.13908632239527768f + s * (0.09642200174303547f + s * (-0.05591232765526423f
                 + s * (0.021862939512026704f + s * -0.0040545582262404645f)))))));
        r = ay > ax ? half_pi - r : r;
        r = x[k] < 0 ? pi - r : r;
        dst[k] = y[k] < 0 ? -r : r;
    }
}

/* dst[k] = log(x[k]) for normal positive x[k]. */
static void mx_log_array(float *restrict dst, const float *restrict x, size_t count) {
    for (size_t k = 0; k < count; k++) {
        uint32_t bits;
        memcpy(&bits, &x[k], 4);
        /* x = 2^e m, m in [sqrt(1/2), sqrt(2)): log x = e log 2 + log m, log m = 2 atanh t. */
        int32_t offset = (int32_t)(bits - 0x3f3504f3u);   /* 0x3f3504f3 = sqrt(1/2) */
        int32_t e = offset >> 23;                        /* arithmetic: floor */
        uint32_t mbits = bits - ((uint32_t)offset & 0xff800000u);
        float m;
        memcpy(&m, &mbits, 4);
        float t = (m - 1.0f) / (m + 1.0f), t2 = t * t;
        float lm = t * (1.9999999937469362f + t2 * (0.6666694836652283f + t2 * (0.39965800420551156f + t2 * 0.30100228583779814f)));
        dst[k] = (float)e * 0.69314718055994531f + lm;
    }
}

/* s[k] = sin(x[k]), c[k] = cos(x[k]) for x[k] in [-pi, pi]. */
static void mx_sincos_array(float *restrict s, float *restrict c, const float *restrict x, size_t count) {
    const float half_pi = (float)(mx_pi / 2), pi = (float)mx_pi;
    for (size_t k = 0; k < count; k++) {
        /* Folded into [-pi/2, pi/2]: sin(pi - a) = sin a, cos(pi - a) = -cos a. */
        float a = x[k];
        float folded = a > half_pi ? pi - a : a < -half_pi ? -pi - a : a;
        float sign = (a > half_pi || a < -half_pi) ? -1.0f : 1.0f;
        float z = folded * folded;
        s[k] = folded * (0.9999999766242322f + z * (-0.1666664765574518f + z * (0.008332900166369098f
               + z * (-0.0001980091810775187f + z * 2.5905282764428133e-06f))));
        c[k] = sign * (0.9999999535516942f + z * (-0.4999990547699321f + z * (0.04166358770028271f
               + z * (-0.0013853726119271263f + z * 2.3154418553970016e-05f))));
    }
}

/* ---- Phase vocoder ----------------------------------------------------------------- */

/* PGHI's queue of bins by log magnitude: buckets of equal width between the frame's
 * tolerance floor and its largest key, each a LIFO list threaded through `next`. */
#define MX_BUCKETS 1024

/* One analysed frame: each channel's spectrum, and the channels' sum (the shared field). */
typedef struct {
    float *re, *im;          /* channels x bins */
    float *sum_phase;        /* bins: phase of the channels' sum */
    float *sum_log;          /* bins: log magnitude of the sum */
    float *sum_mag;          /* bins: magnitude of the sum */
    float *sum_re, *sum_im;  /* bins: the sum */
    float *omega;            /* bins: instantaneous frequency of the sum, radians per input frame */
    float *local_time;       /* bins: the sum's reassigned time, input frames from the centre */
    double position;         /* input frame of the frame's centre */
    float rise;              /* the share of its magnitude that is new since the previous frame */
    float log_max;           /* the largest of sum_log over the band */
    float log_max_all;       /* and over every bin analysed */
    int valid;
} mx_pv_frame;

struct mx_pvoc {
    size_t n, bins, hop, channels;
    mx_rfft *fft;
    float *window;           /* periodic Hann, n */
    float *time_window;      /* n: (i - n/2) window[i], for each bin's local time */
    float *mix;              /* n: the channels' sum of the frame's input (more than one channel) */
    float *energy;           /* n / MX_ONSET_BLOCK: the sum's energy by blocks */
    double onsets[MX_ONSETS_KEPT];   /* the last onsets found, input frames (a ring) */
    size_t onset_count;
    float *phase;            /* bins: the synthesis phase of the last synthesised frame */
    float *shared;           /* bins: that phase where the bin had its own, NaN where it was too quiet (mx_pvoc_phases_halved) */
    float *next_phase;       /* bins */
    /* Frame j lives in frames[j % MX_RING]. Synthesising frame s reads s - 1, s and s + 1,
     * so frame s + 2 may be analysed at the same time, on another thread: analysis and
     * synthesis share nothing else that either writes (each has its own FFT plan and
     * scratch). */
    long long analysed;      /* frames analysed so far */
    long long synthesised;   /* frames synthesised so far */
    mx_pv_frame frames[MX_RING];
    /* The analysis's own: its FFT plan, and scratch. */
    mx_rfft *analysis_fft;
    float *ax;               /* n */
    float *asr, *asi, *ascratch, *atr, *ati;   /* bins each */
    /* A channel's spectrum with a rectangular window, and the channels' sum of it, each
     * with a guard bin either side (bins + 2 each; bin k at k + 1). */
    float *rre, *rim, *rsre, *rsim;
    /* PGHI: a bucket queue of bins by magnitude, and which bins have their phase. */
    int32_t *head;           /* MX_BUCKETS: the last entry pushed into each bucket, or -1 */
    int32_t *next;           /* 2 bins: the entry pushed into the same bucket before it, or -1 */
    uint8_t *done;
    float *y;                /* scratch, n */
    float *sr, *si, *fgrad, *re, *im;   /* scratch, bins each */
    float *key;              /* scratch, bins: this frame's queue keys (its log magnitudes) */
    float *steps;            /* scratch, 5 bins: each integration step's terms, made before the queue runs */
    float gamma;             /* the window's Gaussian time-frequency ratio, frames^2 */
    float tolerance;         /* bins below this fraction of the frame's largest are noise */
    uint32_t noise;          /* a deterministic generator for insignificant bins */
    /* The band this engine synthesises (mx_pvoc_set_band): a gain per bin, zero outside
     * [band_lo, band_hi); NULL for all of it. */
    float *band;
    size_t band_lo, band_hi;
    /* The analysis reads bins from analysis_lo (0 for an engine above a crossover: its frames
     * near an onset may also make the band below it, mx_pvoc_synthesise_low), and the last
     * frame synthesised had phases from prev_lo (a bin below has none to carry in time). */
    size_t analysis_lo, prev_lo;
    /* The bins that keep the analysis phase's residual: all but the crossover's (there the
     * two engines' phases must agree, and each engine's residual is its own window's). */
    size_t keep_lo, keep_hi;
    /* Phases given for the next frame's bins below follow_hi, by bin (mx_pvoc_follow). */
    float *follow;
    size_t follow_hi;
    /* Frames synthesised since the last phase reset (from the first frame on). */
    long long since_reset;
    /* Onset blocks, in this engine's frames (MX_ONSET_BLOCK, or less on a decimated input:
     * the same time), and the step a landing's shift is rounded to (1: whole frames; 1/D on
     * an input decimated by D, whole frames of the full rate). mx_pvoc_set_decimation. */
    size_t onset_block;
    double land_step;
    /* The time-weighted window centred f frames after the frame's centre, for each f = j / D
     * - 1/2 (j < D) of a decimated input (mx_pvoc_set_decimation), n each; and one made for
     * any other f (shifted_f, the f it was made for). */
    float *shifted_windows, *shifted;
    size_t shifted_count;
    double shifted_f;
};

static void mx_pv_frame_free(mx_pv_frame *f) {
    free(f->re); free(f->im); free(f->sum_phase); free(f->sum_log); free(f->omega); free(f->local_time);
    free(f->sum_mag); free(f->sum_re); free(f->sum_im);
}

void mx_pvoc_destroy(mx_pvoc *p) {
    if (!p) return;
    mx_rfft_destroy(p->fft);
    mx_rfft_destroy(p->analysis_fft);
    free(p->ax); free(p->asr); free(p->asi); free(p->ascratch); free(p->atr); free(p->ati);
    free(p->rre); free(p->rim); free(p->rsre); free(p->rsim);
    free(p->window); free(p->phase); free(p->next_phase); free(p->shared);
    for (int i = 0; i < MX_RING; i++) mx_pv_frame_free(&p->frames[i]);
    free(p->head); free(p->next); free(p->done);
    free(p->time_window); free(p->mix); free(p->energy);
    free(p->band); free(p->follow); free(p->shifted_windows); free(p->shifted);
    free(p->y); free(p->sr); free(p->si); free(p->fgrad); free(p->re); free(p->im); free(p->key); free(p->steps);
    free(p);
}

mx_pvoc *mx_pvoc_create(size_t n, size_t hop, size_t channels) {
    if (channels < 1 || channels > 64 || hop < 1 || hop > n / 2) return NULL;
    mx_pvoc *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->fft = mx_rfft_create(n);
    p->analysis_fft = mx_rfft_create(n);
    if (!p->fft || !p->analysis_fft) { mx_rfft_destroy(p->fft); mx_rfft_destroy(p->analysis_fft); free(p); return NULL; }
    p->n = n;
    p->bins = n / 2 + 1;
    p->hop = hop;
    p->channels = channels;
    size_t b = p->bins, cb = channels * b;
    p->window = malloc(n * sizeof(float));
    p->phase = calloc(b, sizeof(float));
    p->shared = malloc(b * sizeof(float));
    if (p->shared) for (size_t k = 0; k < b; k++) p->shared[k] = NAN;
    p->next_phase = calloc(b, sizeof(float));
    p->head = malloc(MX_BUCKETS * sizeof(int32_t));
    p->next = malloc(2 * b * sizeof(int32_t));
    p->done = calloc(b, 1);
    p->y = malloc(n * sizeof(float));
    p->time_window = malloc(n * sizeof(float));
    p->mix = malloc(n * sizeof(float)); p->energy = malloc((n + 1) * sizeof(float));
    p->sr = malloc(b * sizeof(float)); p->si = malloc(b * sizeof(float)); p->fgrad = malloc(b * sizeof(float));
    p->ax = malloc(n * sizeof(float));
    p->asr = malloc(b * sizeof(float)); p->asi = malloc(b * sizeof(float)); p->ascratch = malloc(b * sizeof(float));
    p->atr = malloc(b * sizeof(float)); p->ati = malloc(b * sizeof(float));
    p->rre = malloc((b + 2) * sizeof(float)); p->rim = malloc((b + 2) * sizeof(float));
    p->rsre = malloc((b + 2) * sizeof(float)); p->rsim = malloc((b + 2) * sizeof(float));
    p->re = malloc(b * sizeof(float)); p->im = malloc(b * sizeof(float)); p->key = malloc(b * sizeof(float));
    int ok = p->rre && p->rim && p->rsre && p->rsim && p->ax && p->asr && p->asi && p->ascratch && p->atr && p->ati && p->y && p->time_window && p->mix && p->energy && p->sr && p->si && p->fgrad && p->re && p->im && p->key && p->window && p->phase && p->shared && p->next_phase && p->head && p->next && p->done;
    for (int i = 0; i < MX_RING && ok; i++) {
        mx_pv_frame *f = &p->frames[i];
        f->re = calloc(cb, sizeof(float)); f->im = calloc(cb, sizeof(float));
        f->sum_phase = calloc(b, sizeof(float)); f->sum_log = calloc(b, sizeof(float)); f->omega = calloc(b, sizeof(float)); f->local_time = calloc(b, sizeof(float));
        f->sum_mag = calloc(b, sizeof(float)); f->sum_re = calloc(b, sizeof(float)); f->sum_im = calloc(b, sizeof(float));
        ok = f->re && f->im && f->sum_phase && f->sum_log && f->omega && f->local_time && f->sum_mag && f->sum_re && f->sum_im;
    }
    if (!ok) { mx_pvoc_destroy(p); return NULL; }
    for (size_t i = 0; i < n; i++) {
        double s = sin(mx_pi * (double)i / (double)n);
        p->window[i] = (float)(s * s);
        p->time_window[i] = (float)(s * s * ((double)i - (double)(n / 2)));
    }
    /* A Hann window of length n is close to a Gaussian with lambda = 0.25645 n^2. */
    p->gamma = (float)(0.25645 * (double)n * (double)n);
    p->tolerance = 1e-5f;
    p->noise = 0x9e3779b9u;
    p->band_lo = 0;
    p->band_hi = b;
    p->keep_lo = 0;
    p->keep_hi = b;
    p->onset_block = MX_ONSET_BLOCK;
    p->land_step = 1;
    p->shifted_f = NAN;
    p->follow = malloc(b * sizeof(float));
    p->steps = malloc(5 * b * sizeof(float));
    p->shifted = malloc(n * sizeof(float));
    if (!p->follow || !p->steps || !p->shifted) { mx_pvoc_destroy(p); return NULL; }
    return p;
}

void mx_pvoc_follow(mx_pvoc *p, const float *phases, size_t below) {
    below = below < p->band_hi ? below : p->band_hi;
    p->follow_hi = below;
    memcpy(p->follow, phases, below * sizeof(float));
}

void mx_pvoc_phases_halved(const mx_pvoc *p, float *restrict dst, size_t count) {
    const mx_pv_frame *f = &p->frames[(p->synthesised - 1) % MX_RING];
    /* A Hann kernel at half-bin steps: D(x) = sinc(x) / (1 - x^2) at x = d / 2. */
    static const float weight[4] = {1.0f, 0.84882636f, 0.5f, 0.16976527f};
    /* Above its band (and reach) the engine sets no phases. */
    size_t top = p->band ? p->band_hi : p->bins;
    for (size_t m = 0; m < count; m++) {
        float re = 0, im = 0;
        for (int d = -3; d <= 3; d++) {
            long j = 2 * (long)m + d;
            if (j < 0 || (size_t)j >= top) continue;
            float ph = p->shared[j];
            if (ph != ph) continue;
            float w = weight[d < 0 ? -d : d] * f->sum_mag[j];
            re += w * cosf(ph);
            im += w * sinf(ph);
        }
        dst[m] = re == 0 && im == 0 ? NAN : atan2f(im, re);
    }
}

/* The crossover's gain below it at frequency f (cycles per frame): 1 under it, 0 over it,
 * and across it 1 minus a quintic smoothstep, whose first and second derivatives are 0 at
 * both ends (a raised cosine's second derivative jumps there, and a partial at its knee
 * was smoothed off the rest: +0.048 dB at 710 Hz). */
static double mx_below(double f, double split, double width) {
    double t = width > 0 ? (f - (split - width / 2)) / width : (f < split ? 0 : 1);
    t = t < 0 ? 0 : t > 1 ? 1 : t;
    return 1 - t * t * t * (10 - 15 * t + 6 * t * t);
}

/* A Hann window's transform at d bins, 1 at 0: sinc(d) / (1 - d^2). */
static double mx_hann_kernel(double d) {
    if (fabs(d) < 1e-9) return 1;
    if (fabs(fabs(d) - 1) < 1e-9) return 0.5;
    return sin(mx_pi * d) / (mx_pi * d) / (1 - d * d);
}

/* Refines gains g[k0..k1) so that a partial at any frequency x (in bins) sounds target(x)
 * through Hann analysis and synthesis: its gain is the average of g weighted by the
 * kernel's square at k - x (the bins outside [k0, k1) fixed). Least squares over x every
 * 1/16 of a bin, with a little pull towards the g given (the system stays well posed).
 * 0 on success. */
static int mx_refine_band(double *g, size_t b, size_t k0, size_t k1, size_t n, int above, double split, double width) {
    size_t m = k1 - k0;
    if (m == 0 || m > 64) return -1;
    double *ata = calloc(m * m, sizeof(double)), *atb = calloc(m, sizeof(double)), *row = calloc(m, sizeof(double));
    if (!ata || !atb || !row) { free(ata); free(atb); free(row); return -1; }
    for (size_t step = 0; step <= (m - 1) * 16; step++) {
        double x = (double)k0 + (double)step / 16;
        double target = mx_below(x / (double)n, split, width);
        target = above ? 1 - target : target;
        double total = 0, fixed = 0;
        memset(row, 0, m * sizeof(double));
        for (long k = (long)floor(x) - 4; k <= (long)floor(x) + 5; k++) {
            double w = mx_hann_kernel((double)k - x);
            w *= w;
            total += w;
            long kk = k < 0 ? -k : k;   /* bin -k mirrors bin k */
            if (kk >= (long)b) continue;
            if ((size_t)kk >= k0 && (size_t)kk < k1) row[kk - (long)k0] += w;
            else fixed += w * g[kk];
        }
        double rhs = target - fixed / total;
        for (size_t i = 0; i < m; i++) {
            double ai = row[i] / total;
            atb[i] += ai * rhs;
            for (size_t j = 0; j < m; j++) ata[i * m + j] += ai * row[j] / total;
        }
    }
    for (size_t i = 0; i < m; i++) { ata[i * m + i] += 1e-6; atb[i] += 1e-6 * g[k0 + i]; }
    /* Gaussian elimination with partial pivoting. */
    int ok = 1;
    for (size_t c = 0; c < m && ok; c++) {
        size_t piv = c;
        for (size_t r = c + 1; r < m; r++) if (fabs(ata[r * m + c]) > fabs(ata[piv * m + c])) piv = r;
        if (fabs(ata[piv * m + c]) < 1e-15) { ok = 0; break; }
        if (piv != c) {
            for (size_t j = 0; j < m; j++) { double t = ata[c * m + j]; ata[c * m + j] = ata[piv * m + j]; ata[piv * m + j] = t; }
            double t = atb[c]; atb[c] = atb[piv]; atb[piv] = t;
        }
        for (size_t r = c + 1; r < m; r++) {
            double f = ata[r * m + c] / ata[c * m + c];
            for (size_t j = c; j < m; j++) ata[r * m + j] -= f * ata[c * m + j];
            atb[r] -= f * atb[c];
        }
    }
    if (ok) {
        for (size_t c = m; c-- > 0;) {
            double v = atb[c];
            for (size_t j = c + 1; j < m; j++) v -= ata[c * m + j] * row[j];
            row[c] = v / ata[c * m + c];
        }
        for (size_t i = 0; i < m; i++) g[k0 + i] = row[i];
    }
    free(ata); free(atb); free(row);
    return ok ? 0 : -1;
}

int mx_pvoc_set_band(mx_pvoc *p, int above, double split, double width, double reach) {
    size_t n = p->n, b = p->bins;
    if (!(split > 0 && split < 0.5 && width >= 0 && reach >= 0 && split - width / 2 > 0 && split + width / 2 < 0.5)) return -1;
    float *g = malloc(b * sizeof(float));
    double *raw = calloc(b + 2, sizeof(double));
    if (!g || !raw) { free(g); free(raw); return -1; }
    for (size_t k = 0; k < b + 1; k++) {
        /* Below: 1 under the crossover, a raised cosine across it, 0 over it; above: 1 minus
         * that, so two engines split at the same place sum to the whole band. */
        double below = mx_below((double)k / (double)n, split, width);
        raw[k + 1] = above ? 1 - below : below;
    }
    raw[0] = raw[2];   /* bin -1 mirrors bin 1 */
    /* A partial's gain through an engine is not g at its frequency but g smoothed over its
     * main lobe: with a Hann window for analysis and for synthesis, overlap-added, g plus
     * g''/6 (g'' in the engine's own bins). A frame twice as long has bins half as wide, so
     * the two sides of the crossover were smoothed differently and summed to more than 1
     * where the raised cosine bends down and less where it bends up: +0.22 dB at 730 Hz and
     * -0.24 dB at 870 Hz (a crossover at 800 Hz, 200 Hz wide). Each engine takes g minus
     * its own bins' g''/6, so each sounds g at its bins' centres, and then solves its gains
     * so that it sounds g between them too (mx_refine_band): the two sum to 1. */
    double *gd = malloc(b * sizeof(double));
    if (!gd) { free(g); free(raw); return -1; }
    size_t k0 = b, k1 = 0;
    for (size_t k = 0; k < b; k++) {
        double curvature = raw[k] - 2 * raw[k + 1] + raw[k + 2];
        gd[k] = raw[k + 1] - curvature / 6;
        if (raw[k + 1] > 0 && raw[k + 1] < 1) { if (k < k0) k0 = k; k1 = k + 1; }
    }
    /* g - g''/6 holds at a bin's centre; between bins the kernel weights differ. The gains
     * across the crossover (and 3 bins either side) are solved for every 1/16 of a bin:
     * a partial at 710 Hz went from +0.048 dB to +0.0003 dB with the smoothstep. */
    if (k0 < k1) {
        k0 = k0 > 3 ? k0 - 3 : 0;
        k1 = k1 + 3 < b ? k1 + 3 : b;
        mx_refine_band(gd, b, k0, k1, n, above, split, width);
    }
    size_t lo = b, hi = 0;
    for (size_t k = 0; k < b; k++) {
        g[k] = (float)gd[k];
        if (g[k] != 0) { if (k < lo) lo = k; hi = k + 1; }
    }
    free(gd);
    free(raw);
    free(p->band);
    p->band = g;
    p->band_lo = lo < hi ? lo : 0;
    p->analysis_lo = above ? 0 : p->band_lo;
    p->prev_lo = p->band_lo;
    /* Phases are kept `reach` past the band's top (a follower's bins there take them). */
    if (!above) {
        size_t top = (size_t)ceil((split + width / 2 + reach) * (double)n) + 1;
        hi = top > hi ? top : hi;
        hi = hi < b ? hi : b;
    }
    p->band_hi = hi;
    /* Below, up to the crossover's start; above, from four bins past its top (past the bins
     * a follower takes from its leader). */
    if (!above) {
        p->keep_lo = 0;
        p->keep_hi = (size_t)floor((split - width / 2) * (double)n);
    } else {
        p->keep_lo = (size_t)ceil((split + width / 2) * (double)n) + 4;
        p->keep_hi = b;
    }
    return 0;
}

/* x wrapped into about [-pi, pi] (the nearest whole number of turns taken off; |x| < 2^31
 * turns). A conversion, not floorf: it vectorises without SSE4.1. */
static inline float mx_princarg(float x) {
    float turns = x * (float)(1 / (2 * mx_pi));
    float whole = (float)(int32_t)(turns + (turns >= 0 ? 0.5f : -0.5f));
    return x - (float)(2 * mx_pi) * whole;
}

/* mx_block_energy for blocks of `size` frames (1 to MX_ONSET_BLOCK). */
static void mx_block_energy_of(float *restrict dst, const float *const *src, size_t channels, size_t blocks, size_t size) {
    for (size_t q = 0; q < blocks; q++) {
        float sum[MX_ONSET_BLOCK];
        const float *restrict first = src[0] + q * size;
        for (size_t i = 0; i < size; i++) sum[i] = first[i];
        for (size_t c = 1; c < channels; c++) {
            const float *restrict x = src[c] + q * size;
            for (size_t i = 0; i < size; i++) sum[i] += x[i];
        }
        float acc = 0;
        for (size_t i = 0; i < size; i++) acc += sum[i] * sum[i];
        dst[q] = acc;
    }
}

void mx_block_energy(float *restrict dst, const float *const *src, size_t channels, size_t blocks) {
    mx_block_energy_of(dst, src, channels, blocks, MX_ONSET_BLOCK);
}

/* mx_onset_block for blocks of `size` frames: the floor is per frame. */
static int mx_onset_block_of(float block, float before, size_t size) {
    return block > MX_ONSET_JUMP * (before / 8) && block > 1e-12f * (float)size;
}

int mx_onset_block(float block, float before) { return mx_onset_block_of(block, before, MX_ONSET_BLOCK); }

/* The time-weighted window centred f frames after the frame's centre (|f| <= 1/2):
 * (i - n/2 - f) sin^2(pi (i - f) / n). */
static void mx_shifted_time_window(float *restrict dst, size_t n, double f) {
    for (size_t i = 0; i < n; i++) {
        double u = (double)i - f, s = sin(mx_pi * u / (double)n);
        dst[i] = (float)(s * s * (u - (double)(n / 2)));
    }
}

int mx_pvoc_set_decimation(mx_pvoc *p, size_t factor) {
    if (factor < 1 || factor > MX_ONSET_BLOCK || MX_ONSET_BLOCK % factor != 0 || p->n / factor < 1) return -1;
    p->onset_block = MX_ONSET_BLOCK / factor;
    p->land_step = 1.0 / (double)factor;
    free(p->shifted_windows);
    p->shifted_windows = NULL;
    p->shifted_count = 0;
    if (factor > 1) {
        p->shifted_windows = malloc(factor * p->n * sizeof(float));
        if (!p->shifted_windows) return -1;
        for (size_t j = 0; j < factor; j++)
            mx_shifted_time_window(p->shifted_windows + j * p->n, p->n, (double)j / (double)factor - 0.5);
        p->shifted_count = factor;
    }
    return 0;
}

/* The time-weighted window centred f frames after the frame's centre (f != 0): one of the
 * decimation's, or made in `shifted` (allocated with the engine) for any other f. */
static const float *mx_time_window_at(mx_pvoc *p, double f) {
    if (p->shifted_count > 0) {
        double j = (f + 0.5) * (double)p->shifted_count;
        if (j == floor(j) && j >= 0 && j < (double)p->shifted_count) return p->shifted_windows + (size_t)j * p->n;
    }
    if (!(f == p->shifted_f)) {
        mx_shifted_time_window(p->shifted, p->n, f);
        p->shifted_f = f;
    }
    return p->shifted;
}

/* Where the first onset at or after the frame's centre begins (n if none): a block that
 * mx_onset_block takes for one, after the eight blocks before it. */
static size_t mx_onset_ahead_in(float *restrict e, const float *const *in, size_t channels, size_t n, size_t size) {
    size_t blocks = n / size;
    if (blocks < 16) return n;
    size_t first = blocks / 2 - 8;
    const float *from[64];
    for (size_t c = 0; c < channels; c++) from[c] = in[c] + first * size;
    mx_block_energy_of(e + first, from, channels, blocks - first, size);
    float before = 0;
    for (size_t q = first; q < blocks / 2; q++) before += e[q];
    for (size_t q = blocks / 2; q < blocks; q++) {
        if (mx_onset_block_of(e[q], before, size)) return q * size;
        before += e[q] - e[q - 8];
    }
    return n;
}

static size_t mx_onset_ahead(const mx_pvoc *restrict p, const float *mix) {
    const float *const in[1] = {mix};
    return mx_onset_ahead_in(p->energy, in, 1, p->n, p->onset_block);
}

size_t mx_onset_ahead_of(float *scratch, const float *const *in, size_t channels, size_t n) {
    return channels >= 1 && channels <= 64 ? mx_onset_ahead_in(scratch, in, channels, n, MX_ONSET_BLOCK) : n;
}

/* x = src times window on [start, cut) and 0 elsewhere, rotated by half a frame so that
 * phase is measured at the centre (start <= n/2 <= cut). */
static void mx_window_rotated(float *restrict x, const float *restrict src, const float *restrict w, size_t n,
                              size_t start, size_t cut) {
    size_t half = n / 2;
    memset(x + half, 0, start * sizeof(float));
    for (size_t i = start; i < half; i++) x[i + half] = src[i] * w[i];
    for (size_t i = half; i < cut; i++) x[i - half] = src[i] * w[i];
    memset(x + (cut - half), 0, (n - cut) * sizeof(float));
}

/* x = src on [start, cut) and 0 elsewhere (no window), rotated as mx_window_rotated. */
static void mx_rect_rotated(float *restrict x, const float *restrict src, size_t n, size_t start, size_t cut) {
    size_t half = n / 2;
    memset(x + half, 0, start * sizeof(float));
    memcpy(x + half + start, src + start, (half - start) * sizeof(float));
    memcpy(x, src + half, (cut - half) * sizeof(float));
    memset(x + (cut - half), 0, (n - cut) * sizeof(float));
}

/* The guard bins of a real frame's spectrum at (re + 1, im + 1), bins 0 to n/2: bin -1 is
 * the conjugate of bin 1, bin n/2 + 1 that of bin n/2 - 1. */
static void mx_guard_bins(float *restrict re, float *restrict im, size_t b) {
    re[0] = re[2]; im[0] = -im[2];
    re[b + 1] = re[b - 1]; im[b + 1] = -im[b - 1];
}

static void analyse_onset(mx_pvoc *restrict p, const float *const *in, double position, double onset);

void mx_pvoc_analyse(mx_pvoc *restrict p, const float *const *in, double position) {
    mx_pvoc_analyse_onset(p, in, position, NAN);
}

void mx_pvoc_analyse_onset(mx_pvoc *restrict p, const float *const *in, double position, double onset) {
    unsigned state = mx_denormals_flush_begin();
    analyse_onset(p, in, position, onset);
    mx_denormals_flush_end(state);
}

static void analyse_onset(mx_pvoc *restrict p, const float *const *in, double position, double onset) {
    size_t n = p->n, b = p->bins;
    long long j = p->analysed;
    mx_pv_frame *f = &p->frames[j % MX_RING];
    mx_pv_frame *prev = j > 0 ? &p->frames[(j - 1) % MX_RING] : NULL;
    float *sr = p->asr, *si = p->asi, *x = p->ax;
    double hop_in = prev && prev->valid ? position - prev->position : 0;
    /* Stretching: the input hop is below the output's. */
    int stretching = hop_in > 0 && hop_in < (double)p->hop;
    const float *mix = in[0];
    if (p->channels > 1) {
        float *restrict m = p->mix;
        memcpy(m, in[0], n * sizeof(float));
        for (size_t c = 1; c < p->channels; c++) {
            const float *restrict src = in[c];
            for (size_t i = 0; i < n; i++) m[i] += src[i];
        }
        mix = m;
    }
    /* Stretching by R, the frame's input at d frames from its centre sounds at R d from the
     * centre of its output, where it keeps its shape (an onset, by its phases):
     * - an onset d ahead lands (R - 1) d early: pre-echo. Cut from the frame, it first
     *   sounds from the frame centred on it.
     * - an onset more than n / 2R behind lands past the frame's start, and wraps round to
     *   its end: an echo a frame later. The frame's input before n / 2R is left out then
     *   (a frame of 2048 at R = 2: an echo of a click went from -25 to -X dB). */
    /* The frame's input is centred on input frame `centre`; a position between frames (an
     * input decimated by D, its frames' centres on the full rate's) is frac frames after
     * it, and the windows below are centred there (on the full rate's frame, as a frame of
     * the full rate would be): the Hann window and its derivative by complex weights on
     * the rectangular window's neighbouring bins, the time-weighted one by a window of its
     * own, and the phases measured from there. Centred on the input frame instead, a
     * stationary partial's main lobe took the offset as a slope across its bins, which the
     * synthesis moved off its window: a tone that stops rang on 7 dB longer at 5/4. */
    double centre = floor(position + 0.5), frac = position - centre;
    float shift_re = 1, shift_im = 0;
    if (frac != 0) { shift_re = (float)cos(2 * mx_pi * frac / (double)n); shift_im = (float)sin(2 * mx_pi * frac / (double)n); }
    size_t start = 0, cut = n;
    if (stretching) {
        double first = centre - (double)(n / 2);   /* the input frame at the frame's start */
        if (onset != onset) cut = mx_onset_ahead(p, mix);
        else cut = onset >= (double)n ? n : onset <= (double)(n / 2) ? n / 2 : (size_t)ceil(onset);
        /* Each onset is found ahead of a centre before it is behind one: kept, by position. */
        if (cut < n && (p->onset_count == 0 || first + (double)cut > p->onsets[(p->onset_count - 1) % MX_ONSETS_KEPT] + (double)p->onset_block))
            p->onsets[p->onset_count++ % MX_ONSETS_KEPT] = first + (double)cut;
        double reach = (double)(n / 2) * (1 - hop_in / (double)p->hop);
        size_t kept = p->onset_count < MX_ONSETS_KEPT ? p->onset_count : MX_ONSETS_KEPT;
        for (size_t i = 0; i < kept; i++) {
            double d = p->onsets[i] - first;
            if (d >= 0 && d < reach) start = (size_t)reach;
        }
    }

    /* Only the band this engine synthesises is read (every bin without a band).
     * One transform per channel, of its frame with no window (R). The periodic Hann window
     * is 1/2 - cos/2 and its derivative a sine, so in the rotated frame's spectrum
     *     Hann:        X[k] = R[k]/2 + (R[k-1] + R[k+1])/4
     *     derivative:  D[k] = (pi / 2n) (-i) (R[k+1] - R[k-1])
     * exactly: the derivative window's transform of the channels' sum comes from the sum
     * of their R, without a transform of its own (a quarter of the analysis's transforms
     * at two channels). */
    size_t lo = p->analysis_lo, hi = p->band_hi, nb = hi - lo;
    size_t sounding = p->band_lo;   /* the band's own bins, for the frame's largest and its rise */
    float *restrict rre = p->rre, *restrict rim = p->rim, *restrict rsre = p->rsre, *restrict rsim = p->rsim;
    memset(sr + lo, 0, nb * sizeof(float));   /* only [lo, hi) is read */
    memset(si + lo, 0, nb * sizeof(float));
    for (size_t c = 0; c < p->channels; c++) {
        mx_rect_rotated(x, in[c], n, start, cut);
        mx_rfft_forward(p->analysis_fft, rre + 1, rim + 1, x);
        mx_guard_bins(rre, rim, b);
        if (c == 0) {
            memcpy(rsre + lo, rre + lo, (nb + 2) * sizeof(float));
            memcpy(rsim + lo, rim + lo, (nb + 2) * sizeof(float));
        } else {
            for (size_t k = lo; k < hi + 2; k++) { rsre[k] += rre[k]; rsim[k] += rim[k]; }
        }
        float *restrict re = f->re + c * b, *restrict im = f->im + c * b;
        if (frac == 0) {
            for (size_t k = lo; k < hi; k++) {
                re[k] = 0.5f * rre[k + 1] + 0.25f * (rre[k] + rre[k + 2]);
                im[k] = 0.5f * rim[k + 1] + 0.25f * (rim[k] + rim[k + 2]);
                sr[k] += re[k];
                si[k] += im[k];
            }
        } else {
            /* Centred at frac: R[k]/2 + (e^(-i theta) R[k-1] + e^(i theta) R[k+1]) / 4,
             * theta = 2 pi frac / n. */
            for (size_t k = lo; k < hi; k++) {
                re[k] = 0.5f * rre[k + 1] + 0.25f * (shift_re * (rre[k] + rre[k + 2]) + shift_im * (rim[k] - rim[k + 2]));
                im[k] = 0.5f * rim[k + 1] + 0.25f * (shift_re * (rim[k] + rim[k + 2]) - shift_im * (rre[k] - rre[k + 2]));
                sr[k] += re[k];
                si[k] += im[k];
            }
        }
    }
    float *floored = p->ascratch;
    for (size_t k = lo; k < hi; k++) {
        float m = MX_SQRTF(sr[k] * sr[k] + si[k] * si[k]);
        f->sum_mag[k] = m;
        floored[k] = m + 1e-30f;
    }
    memcpy(f->sum_re + lo, sr + lo, nb * sizeof(float));
    memcpy(f->sum_im + lo, si + lo, nb * sizeof(float));
    mx_log_array(f->sum_log + lo, floored + lo, nb);
    float log_max = -INFINITY, log_max_low = -INFINITY;
    for (size_t k = lo; k < sounding; k++) log_max_low = f->sum_log[k] > log_max_low ? f->sum_log[k] : log_max_low;
    for (size_t k = sounding; k < hi; k++) log_max = f->sum_log[k] > log_max ? f->sum_log[k] : log_max;
    f->log_max = log_max;
    /* With the band below (mx_pvoc_synthesise_low): a key above the queue's top would
     * land in its top bucket, out of order (a click's pre-echo -115 -> -40 dB). */
    f->log_max_all = log_max_low > log_max ? log_max_low : log_max;
    mx_atan2_array(f->sum_phase + lo, si + lo, sr + lo, nb);
    /* Measured from `position`, frac frames after `centre`: an impulse t from the centre is
     * t - frac from it, its phase 2 pi k frac / n further on. */
    if (frac != 0)
        for (size_t k = lo; k < hi; k++) f->sum_phase[k] += (float)(2 * mx_pi * (double)k * frac / (double)n);

    /* Each bin's local time (Auger and Flandrin's reassignment): Re(X_tw / X) with the
     * time-weighted window, in input frames from the centre. It is the phase's slope across
     * bins: -2 pi / n times it. */
    float *restrict tr = p->atr, *restrict ti = p->ati;
    mx_window_rotated(x, mix, frac == 0 ? p->time_window : mx_time_window_at(p, frac), n, start, cut);
    mx_rfft_forward(p->analysis_fft, tr, ti, x);
    for (size_t k = lo; k < hi; k++) {
        float m2 = sr[k] * sr[k] + si[k] * si[k];
        float dot = tr[k] * sr[k] + ti[k] * si[k];
        f->local_time[k] = m2 > 1e-30f ? dot / m2 : 0;
    }

    /* Each bin's instantaneous frequency from the derivative window: bin - Im(X_dw / X),
     * radians per input frame. It needs no previous frame: a frame after a cut one, or after
     * a jump in the input hop, reads as it is. Measured against the phase difference over
     * the hop: level on round-trip PESQ of ten espeak-ng voices, and a click at 0.95 keeps
     * its shape (pre-echo -56 dB; -26 dB through the phase difference, which smears an
     * impulse when the hop is near the output's). */
    float *restrict omega = f->omega;
    float bin_step = (float)(2 * mx_pi / (double)n);
    float slope = (float)(mx_pi / (2 * (double)n));
    if (frac == 0) {
        for (size_t k = lo; k < hi; k++) {
            float dr = slope * (rsim[k + 2] - rsim[k]), di = -slope * (rsre[k + 2] - rsre[k]);
            float m2 = sr[k] * sr[k] + si[k] * si[k];
            float cross = di * sr[k] - dr * si[k];
            omega[k] = bin_step * (float)k - (m2 > 1e-30f ? cross / m2 : 0);
        }
    } else {
        /* Centred at frac: (i pi / 2n)(e^(-i theta) S[k-1] - e^(i theta) S[k+1]). */
        for (size_t k = lo; k < hi; k++) {
            float ar = shift_re * (rsre[k] - rsre[k + 2]) + shift_im * (rsim[k] + rsim[k + 2]);
            float ai = shift_re * (rsim[k] - rsim[k + 2]) - shift_im * (rsre[k] + rsre[k + 2]);
            float dr = -slope * ai, di = slope * ar;
            float m2 = sr[k] * sr[k] + si[k] * si[k];
            float cross = di * sr[k] - dr * si[k];
            omega[k] = bin_step * (float)k - (m2 > 1e-30f ? cross / m2 : 0);
        }
    }
    /* Onset strength: how much of this frame's magnitude is new (0 steady, 1 after silence). */
    float grown = 0, total = 0;
    const float *restrict mag = f->sum_mag;
    if (prev && prev->valid) {
        const float *restrict was = prev->sum_mag;
        for (size_t k = sounding; k < hi; k++) {
            grown += mag[k] > was[k] ? mag[k] - was[k] : 0;
            total += mag[k];
        }
    } else {
        for (size_t k = sounding; k < hi; k++) total += mag[k];
        grown = total;
    }
    f->rise = total > 1e-20 ? (float)(grown / total) : 0;
    f->position = position;
    f->valid = 1;
    p->analysed = j + 1;
}

/* A max-priority queue of entries by key, to a bucket's width: pushes and pops are O(1),
 * and a pop scans down from the highest bucket used. Entries in one bucket come out last
 * in, first out. PGHI needs "about the strongest first", not a total order: a binary heap
 * did the same work in a quarter of the whole stretch's time. */
typedef struct {
    int32_t *head, *next;
    float floor, scale;      /* bucket = (key - floor) * scale, clamped to the range */
    int32_t top;             /* no entry lies above this bucket */
    size_t count;
} mx_queue;

static void mx_queue_push(mx_queue *q, uint32_t v, float key) {
    float f = (key - q->floor) * q->scale;
    int32_t bucket = f <= 0 ? 0 : f >= (float)(MX_BUCKETS - 1) ? MX_BUCKETS - 1 : (int32_t)f;
    q->next[v] = q->head[bucket];
    q->head[bucket] = (int32_t)v;
    if (bucket > q->top) q->top = bucket;
    q->count++;
}

/* Only with count > 0. */
static uint32_t mx_queue_pop(mx_queue *q) {
    while (q->head[q->top] < 0) q->top--;
    int32_t v = q->head[q->top];
    q->head[q->top] = q->next[v];
    q->count--;
    return (uint32_t)v;
}

/* A phase reset lands the frame where the time map puts it. The analysis phases sound the
 * frame's content d frames from its centre at d from the output's centre; the map puts it at
 * R d. The whole frame moves by (R - 1) times its energy's centre in time (the reassigned
 * local times, weighted by energy), rounded to whole frames: a fractional shift of a click
 * rings over the frame (-60 dB), and a shift per bin by its own local time smears it (a
 * bin's local time is noisy to a frame, which turns into a phase error of pi at bin n/4).
 * Measured: through the long frame alone, a click stretched by 2 lands on its frame with
 * nothing above -120 dB in the 20 ms either side; round-trip PESQ on 20 espeak-ng
 * sentences +0.06, +0.02, -0.01 and +0.10 at 0.5, 0.8, 1.25 and 2 over the slope alone. */
static void mx_land(const mx_pvoc *restrict p, const mx_pv_frame *restrict f, float *restrict phase, float time_scale,
                    size_t lo, size_t hi) {
    size_t n = p->n;
    double weighted = 0, energy = 0;
    for (size_t k = lo; k < hi; k++) {
        double m2 = (double)f->sum_mag[k] * (double)f->sum_mag[k];
        weighted += m2 * (double)f->local_time[k];
        energy += m2;
    }
    /* Within the frame's output: |R d| < n / 2. Compressing, every d in the frame lands in
     * it (a clamp at 0.45 n put a click entering a frame's edge 10 frames off, and the
     * frames after it, integrating from it, smeared it: -27 dB against -38 dB of a click's
     * own frame outside 1 ms of it at 1/2). */
    double centre = energy > 0 ? weighted / energy : 0;
    if (time_scale > 1.0f) {
        double limit = 0.45 * (double)n / (double)time_scale;
        centre = centre < -limit ? -limit : (centre > limit ? limit : centre);
    }
    /* Output frames, rounded to the nearest land_step (whole frames; of the full rate on a
     * decimated input, where a band far below the engine's Nyquist shifts by a fraction
     * without ringing). */
    double shift = round(((double)time_scale - 1.0) * centre / p->land_step) * p->land_step;
    if (shift == 0) return;
    for (size_t k = lo; k < hi; k++)
        phase[k] = mx_princarg(phase[k] - (float)(2 * mx_pi * (double)k / (double)n * shift));
}

/* Adds channel c of frame f, rotated by u = (ur, ui) on bins [lo, hi) (0 elsewhere),
 * inverse transformed and windowed, to out[0..n). */
static void mx_add_frame(mx_pvoc *restrict p, const mx_pv_frame *restrict f, size_t c, const float *restrict ur,
                         const float *restrict ui, size_t lo, size_t hi, float *restrict out) {
    size_t n = p->n, b = p->bins, half = n / 2;
    const float *restrict xr = f->re + c * b, *restrict xi = f->im + c * b;
    float *restrict re = p->re, *restrict im = p->im, *restrict y = p->y;
    /* Zero outside [lo, hi), written below. */
    memset(re, 0, lo * sizeof(float));
    memset(im, 0, lo * sizeof(float));
    memset(re + hi, 0, (b - hi) * sizeof(float));
    memset(im + hi, 0, (b - hi) * sizeof(float));
    for (size_t k = lo; k < hi; k++) {
        re[k] = xr[k] * ur[k] - xi[k] * ui[k];
        im[k] = xr[k] * ui[k] + xi[k] * ur[k];
    }
    im[0] = 0;
    im[b - 1] = 0;
    mx_rfft_inverse(p->fft, y, re, im);
    const float *restrict w = p->window;
    for (size_t i = 0; i < half; i++) out[i] += y[i + half] * w[i];
    for (size_t i = half; i < n; i++) out[i] += y[i - half] * w[i];
}

void mx_pvoc_synthesise(mx_pvoc *restrict p, float *const *out, int reset) {
    mx_pvoc_synthesise_low(p, out, NULL, reset);
}

static void synthesise_low(mx_pvoc *restrict p, float *const *out, float *const *low, int reset);

void mx_pvoc_synthesise_low(mx_pvoc *restrict p, float *const *out, float *const *low, int reset) {
    unsigned state = mx_denormals_flush_begin();
    synthesise_low(p, out, low, reset);
    mx_denormals_flush_end(state);
}

static void synthesise_low(mx_pvoc *restrict p, float *const *out, float *const *low, int reset) {
    size_t n = p->n, b = p->bins;
    /* Frame s, with one frame of look-ahead (s + 1 is analysed). */
    long long s = p->synthesised;   /* the caller has analysed up to s + 1 (p->analysed is not read: */
                                    /* the analysis of s + 2 may be writing it, on another thread) */
    mx_pv_frame *f = &p->frames[s % MX_RING], *next = &p->frames[(s + 1) % MX_RING];
    mx_pv_frame *prev = s > 0 ? &p->frames[(s - 1) % MX_RING] : NULL;
    float *phase = p->next_phase;
    float hop_out = (float)p->hop;
    float hop_in = (prev && prev->valid) ? (float)(f->position - prev->position) : hop_out;

    /* The frequency-direction phase derivative from the time derivative of the log
     * magnitude (a Gaussian window's relation): radians per bin. */
    float *fgrad = p->fgrad, *key = p->key;
    double span = 0;
    const float *lo = f->sum_log, *hi = f->sum_log;
    double hops = 1;   /* output hops across `span` */
    if (prev && prev->valid && next->valid && next != f) { lo = prev->sum_log; hi = next->sum_log; span = next->position - prev->position; hops = 2; }
    else if (next->valid && next != f) { hi = next->sum_log; span = next->position - f->position; }
    else if (prev && prev->valid) { lo = prev->sum_log; span = f->position - prev->position; }
    /* R, the output hop over the input hop (from the frames' positions: the same at every
     * block size). A bin's local time d in the input sounds at R d in the output, where the
     * time map puts it: the frequency-direction slope is R times the analysis's. Measured on
     * round-trip PESQ of 20 espeak-ng sentences: +0.19, +0.07, +0.07 and +0.10 at 0.5, 0.8,
     * 1.25 and 2 (the slope as analysed put an attack d from the centre (R - 1) d off). */
    float time_scale = span > 0 ? (float)((double)p->hop * hops / span) : 1.0f;
    /* Each step of the integration also keeps this share of the analysis's own residual:
     * in time, how far the analysis phase moved from what its frequency predicts over the
     * input hop; across bins, how far it moved from the slope. With all of it, a frame's
     * phases are the analysis's plus an offset carried along (Laroche and Dolson's identity
     * phase locking, in PGHI's order), so at R = 1 the output is the input, noise keeps
     * its own phases, and a Hann window's sidelobes their signs. Round-trip PESQ on 8
     * espeak-ng sentences, none kept against all of it: 4.19 -> 4.46 at 1, 2.90 -> 2.94,
     * 3.69 -> 3.76, 3.83 -> 3.88, 3.90 -> 3.94, 3.90 -> 3.96 and 3.93 -> 4.01 at 0.5, 0.8,
     * 0.95, 1.05, 1.25 and 1.5; at 2, 3.87 -> 3.81, so the share falls from all of it at
     * 1.5 to none at 2 (MX_KEEP_UNTIL, MX_KEEP_NONE). Since the seventh session of
     * 2026-11-27 that share is the time direction's only, and compressing it falls the same
     * way by 1/R; across bins the residual is kept whole at every ratio. On the bench's
     * first 6 sentences and 3 pieces, against all of it in both directions: at 0.5,
     * round-trip PESQ 2.913 -> 2.966 and ViSQOL 4.605 -> 4.614 (none in either direction:
     * 2.952 and 4.621, but a stereo mix's partials, each channel's sum, 0.005 dB off where
     * the residual across bins keeps them within 0.0015); at 2, against none in either,
     * PESQ 3.917 -> 3.929, ViSQOL 4.669 -> 4.673. At 0.67 to 0.95 all of it is ahead of
     * none (ViSQOL by 0.002; PESQ at 0.8 and 0.95 by 0.02 and 0.03). */
    double stretch = time_scale >= 1.0f ? (double)time_scale : 1.0 / (double)time_scale;
    float keep = stretch <= MX_KEEP_UNTIL ? 1.0f
               : stretch >= MX_KEEP_NONE ? 0.0f
               : (float)(log(MX_KEEP_NONE / stretch) / log(MX_KEEP_NONE / MX_KEEP_UNTIL));
    size_t keep_lo = p->keep_lo, keep_hi = p->keep_hi;
    /* The largest key, found by the analysis (on the helper thread when there is one). */
    float largest = low ? f->log_max_all : f->log_max;
    /* Bins outside the band are not synthesised: their phases are not integrated. */
    size_t lo_bin = low ? p->analysis_lo : p->band_lo, hi_bin = p->band_hi;
    for (size_t k = 0; k < lo_bin; k++) key[k] = -INFINITY;
    for (size_t k = hi_bin; k < b; k++) key[k] = -INFINITY;
    for (size_t k = lo_bin; k < hi_bin; k++) {
        float dt = span > 0 ? (hi[k] - lo[k]) / (float)span : 0;   /* per input frame */
        /* Two estimates of the same slope, blended (MX_LOCAL_TIME_SHARE). */
        float from_magnitude = -p->gamma / (float)n * dt;
        float from_local_time = -(float)(2 * mx_pi) / (float)n * f->local_time[k];
        /* The magnitude's estimate is a Gaussian's relation; a Hann window's log slope runs
         * to infinity at its edges, so it is trusted less as the local time leaves the
         * centre (MX_MAGNITUDE_REACH). */
        float trust = 1 - fabsf(f->local_time[k]) * (float)MX_MAGNITUDE_REACH / (float)n;
        float magnitude_share = (1 - MX_LOCAL_TIME_SHARE) * (trust > 0 ? trust : 0);
        fgrad[k] = time_scale * (magnitude_share * from_magnitude + (1 - magnitude_share) * from_local_time);
        key[k] = f->sum_log[k];
    }
    float floor_log = largest + logf(p->tolerance);

    /* An onset (most of the frame's magnitude new, and more so than before): the analysis
     * phases, so the attack keeps its shape instead of spreading over the frame. */
    if (prev && f->rise > MX_ONSET && f->rise > prev->rise) reset = 1;
    /* Bins whose phases a leader gave (mx_pvoc_follow). */
    size_t follow_hi = p->follow_hi;
    if (reset || !prev) {
        /* A phase reset: the analysis phases, as they are (a leader's where given). */
        p->since_reset = 0;
        memcpy(phase + lo_bin, f->sum_phase + lo_bin, (hi_bin - lo_bin) * sizeof(float));
        if (time_scale != 1.0f) mx_land(p, f, phase, time_scale, lo_bin, hi_bin);
        for (size_t k = lo_bin; k < follow_hi; k++)
            if (p->follow[k] == p->follow[k]) phase[k] = p->follow[k];
    } else {
        /* PGHI (heap integration): from the strongest bins outward, in time from the
         * previous frame's synthesis phase, in frequency from a neighbour already set. */
        p->since_reset++;
        memset(p->done, 0, b);
        /* Entries: k < b for the previous frame's bin k, b + k for this one's; keyed on
         * their log magnitude. */
        const float *prev_key = prev->sum_log;
        float prev_largest = low ? prev->log_max_all : prev->log_max;
        float top_key = largest > prev_largest ? largest : prev_largest;
        for (int i = 0; i < MX_BUCKETS; i++) p->head[i] = -1;
        mx_queue q = {p->head, p->next, floor_log, (float)(MX_BUCKETS - 1) / fmaxf(top_key - floor_log, 1e-6f), 0, 0};
        size_t remaining = 0;
        for (size_t k = 0; k < b; k++) {
            if (key[k] > floor_log) remaining++;
            else { p->done[k] = 1; }
        }
        /* In time only from bins the previous frame had phases for. A step in time is keyed on
         * the weaker of its two ends: where a sound decays, by this frame's magnitudes, so a
         * peak spreads its phase to its own main lobe before that lobe's bins carry their own
         * offsets on in time (offsets that drift apart bin by bin, and smeared a word's end
         * into the pause after it: 12 to 18 ms after it, -31 dB against -41; Bungee -52). Keyed
         * on the previous frame's, as in Průša and Holighaus, the decay went first. With less
         * of the time residual kept (stretch 1.5 to 2, either way) the key moves back to the
         * previous frame's: there the time steps carry the partials and the frequency steps
         * cost ViSQOL (round trip at 2 and 1/2, on 6 sentences and 3 pieces: -0.010 and
         * -0.013, for +0.03 PESQ). Measured on those at 0.67, 0.8, 1.05, 1.25 and 1.5:
         * round-trip PESQ +0.18, +0.20, +0.19, +0.14 and +0.11; ViSQOL -0.013, -0.004,
         * -0.001, -0.003 and -0.004. Not within a frame's length of a phase reset: there the
         * steps in time carry an attack's phases from the frame that reset, and the frequency
         * steps, integrating the slope over every bin, put a click's energy before it
         * (pre-echo from 21 to 1 ms before a click -57 dB at 1.05, against -300). */
        float decay_share = p->since_reset < (long long)(n / p->hop) ? 0.0f : keep;
        for (size_t k = lo_bin > p->prev_lo ? lo_bin : p->prev_lo; k < hi_bin; k++)
            if (prev_key[k] > floor_log)
                mx_queue_push(&q, (uint32_t)k, prev_key[k] - decay_share * fmaxf(prev_key[k] - key[k], 0));
        /* A leader's phases are set first, and spread before anything else: the first bin
         * past them takes its phase from them, not from its own past, so a partial whose
         * main lobe straddles the last bin followed stays one partial. (Spread in their
         * turn, the bins past them kept their own phases, set apart from the leader's by
         * how each engine began, and a partial there lost up to 1.4 dB at R = 2.) */
        /* A leader's bin too quiet to have a phase of its own (NaN: a sine centred on bin m
         * of this engine leaves the leader's bins 2m +- 2 empty, and their random phases
         * in this engine's main lobe cost it up to 1.7 dB) is left to this engine. */
        for (size_t k = lo_bin; k < follow_hi; k++) {
            if (p->follow[k] != p->follow[k]) continue;
            phase[k] = p->follow[k];
            if (!p->done[k]) { p->done[k] = 1; remaining--; }
            if (key[k] > floor_log) mx_queue_push(&q, (uint32_t)(b + k), top_key);
        }
        /* Each step's terms, per bin, in loops that vectorise (the queue's order does not
         * change them): in time, hop_out w and the residual kept; up from k, the slope gu[k]
         * and its residual ru[k]; down to j, the residual rd[j] (its slope is gu[j]). */
        float *restrict tstep = p->steps, *restrict rt = p->steps + b, *restrict gu = p->steps + 2 * b;
        float *restrict ru = p->steps + 3 * b, *restrict rd = p->steps + 4 * b;
        const float *restrict sp = f->sum_phase, *restrict pp = prev->sum_phase;
        const float *restrict wo = prev->omega, *restrict wn = f->omega;
        for (size_t k = lo_bin; k < hi_bin; k++) {
            float w = 0.5f * (wo[k] + wn[k]);
            tstep[k] = hop_out * w;
            rt[k] = 0.0f;
        }
        for (size_t k = lo_bin; k + 1 < hi_bin; k++) {
            gu[k] = 0.5f * (fgrad[k] + fgrad[k + 1]);
            ru[k] = 0.0f;
            rd[k] = 0.0f;
        }
        /* The residuals, over the bins that keep them only. */
        size_t klo = keep_lo > lo_bin ? keep_lo : lo_bin, khi = keep_hi < hi_bin ? keep_hi : hi_bin;
        if (klo < khi) {
            if (keep > 0)
                for (size_t k = klo; k < khi; k++) {
                    float w = 0.5f * (wo[k] + wn[k]);
                    rt[k] = keep * mx_princarg(sp[k] - pp[k] - hop_in * w);
                }
            /* Up from k to k + 1 (k + 1 keeps), and down from k + 1 to k (k keeps): whole at
             * every ratio. */
            for (size_t k = klo > lo_bin ? klo - 1 : lo_bin; k + 1 < khi; k++)
                ru[k] = mx_princarg(sp[k + 1] - sp[k] - gu[k] / time_scale);
            for (size_t k = klo; k < khi && k + 1 < hi_bin; k++)
                rd[k] = mx_princarg(sp[k] - sp[k + 1] + gu[k] / time_scale);
        }
        while (remaining > 0) {
            if (q.count == 0) {
                /* Nothing connects: start from the strongest unset bin, at its analysis phase. */
                size_t best = b;
                for (size_t k = 0; k < b; k++)
                    if (!p->done[k] && (best == b || key[k] > key[best])) best = k;
                phase[best] = f->sum_phase[best];
                p->done[best] = 1;
                remaining--;
                mx_queue_push(&q, (uint32_t)(b + best), key[best]);
                continue;
            }
            uint32_t top = mx_queue_pop(&q);
            if (top < b) {
                size_t k = top;
                if (!p->done[k]) {
                    phase[k] = p->phase[k] + tstep[k];
                    phase[k] += rt[k];
                    p->done[k] = 1;
                    remaining--;
                    mx_queue_push(&q, (uint32_t)(b + k), key[k]);
                }
            } else {
                size_t k = top - b;
                if (k + 1 < hi_bin && !p->done[k + 1]) {
                    phase[k + 1] = phase[k] + gu[k];
                    phase[k + 1] += ru[k];
                    p->done[k + 1] = 1;
                    remaining--;
                    mx_queue_push(&q, (uint32_t)(b + k + 1), key[k + 1]);
                }
                if (k > lo_bin && !p->done[k - 1]) {
                    phase[k - 1] = phase[k] - gu[k - 1];
                    phase[k - 1] += rd[k - 1];
                    p->done[k - 1] = 1;
                    remaining--;
                    mx_queue_push(&q, (uint32_t)(b + k - 1), key[k - 1]);
                }
            }
        }
        /* Bins too quiet to matter: a random phase (a fixed sequence: renders repeat). */
        for (size_t k = lo_bin; k < hi_bin; k++)
            if (!(key[k] > floor_log) && !(k < follow_hi && p->follow[k] == p->follow[k])) {
                p->noise = p->noise * 1664525u + 1013904223u;
                phase[k] = (float)(2 * mx_pi) * (float)(p->noise >> 8) / 16777216.0f;
            }
    }
    for (size_t k = lo_bin; k < hi_bin; k++) phase[k] = mx_princarg(phase[k]);
    /* princarg's rounding can leave a hair past pi: sincos folds [-pi, pi] only. */
    for (size_t k = lo_bin; k < hi_bin; k++) phase[k] = fminf(fmaxf(phase[k], -(float)mx_pi), (float)mx_pi);
    /* What a follower takes: the phase where the bin had one of its own. */
    for (size_t k = lo_bin; k < hi_bin; k++) p->shared[k] = key[k] > floor_log ? phase[k] : NAN;

    /* Each channel: its own magnitude, at the shared phase plus its own offset from the
     * sum's (so inter-channel phase, and with it the stereo image and mono sum, is kept). */
    /* The rotation from the sum's analysis phase to its synthesis phase, once per bin:
     * u = e^(i phase) conj(sum) / |sum|; channel c is then X_c u (its magnitude, and its
     * phase offset from the sum, kept). */
    float *restrict ur = p->sr, *restrict ui = p->si;
    size_t nb = hi_bin - lo_bin;
    mx_sincos_array(ui + lo_bin, ur + lo_bin, phase + lo_bin, nb);
    {
        const float *restrict mag = f->sum_mag, *restrict sre = f->sum_re, *restrict sim = f->sum_im;
        for (size_t k = lo_bin; k < hi_bin; k++) {
            float cr = ur[k], ci = ui[k];
            float m = mag[k];
            int some = m > 1e-30f;
            float inv = 1.0f / (some ? m : 1.0f);
            float nr = some ? sre[k] * inv : 1.0f, ni = some ? -sim[k] * inv : 0.0f;
            ur[k] = cr * nr - ci * ni;
            ui[k] = cr * ni + ci * nr;
        }
    }
    if (low && p->band) {
        /* The band below: the same phases, at 1 - g (zero from the crossover's top up). */
        const float *restrict g = p->band;
        float *restrict lr = p->fgrad, *restrict li = p->key;   /* free by now: scratch */
        size_t top = lo_bin;
        for (size_t k = lo_bin; k < hi_bin; k++) if (g[k] != 1.0f) top = k + 1;   /* g passes 1 where it bends */
        for (size_t k = lo_bin; k < top; k++) { lr[k] = ur[k] * (1.0f - g[k]); li[k] = ui[k] * (1.0f - g[k]); }
        for (size_t c = 0; c < p->channels; c++) mx_add_frame(p, f, c, lr, li, lo_bin, top, low[c]);
    }
    if (p->band) {
        const float *restrict g = p->band;
        for (size_t k = lo_bin; k < hi_bin; k++) { ur[k] *= g[k]; ui[k] *= g[k]; }
    }
    for (size_t c = 0; c < p->channels; c++) mx_add_frame(p, f, c, ur, ui, lo_bin, hi_bin, out[c]);
    /* The phase just set is the previous one for the next frame. */
    float *t = p->phase; p->phase = p->next_phase; p->next_phase = t;
    p->follow_hi = 0;
    p->prev_lo = lo_bin;
    p->synthesised++;
}

/* The overlap-add gain of a Hann analysis and synthesis window at hop n/h: sum of sin^4. */
double mx_pvoc_window_gain(size_t n, size_t hop) {
    double s = 0;
    for (size_t i = 0; i < n; i += hop) {
        double w = sin(mx_pi * (double)i / (double)n);
        s += w * w * w * w;
    }
    return s;
}
