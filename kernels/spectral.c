/* Mixdown's spectral time-stretch: a float real FFT, and a phase vocoder whose phases
 * come from the phase gradient (PGHI: Prusa and Holighaus, "Phase vocoder done right",
 * 2017), with one phase field shared by every channel. See docs/spectral.md. */
#include "mixdown_kernels.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const double mx_pi = 3.14159265358979323846264338327950288;
/* A frame whose magnitude is more than half new is an onset (measured: 0.3 costs round-trip
 * PESQ at every ratio; 0.5 leaves it as it was and takes a click's pre-echo from -48 to -58 dB
 * at 0.8). */
#define MX_ONSET 0.5f

/* ---- Real FFT ---------------------------------------------------------------------- */

struct mx_rfft {
    size_t n, half;
    uint32_t *reverse;      /* bit reversal of half */
    float *wr, *wi;         /* complex twiddles per stage, contiguous: stage h at [h-1, 2h-1) */
    float *pr, *pi;         /* real-to-complex post-twiddles e^(-2 pi i k/n), k < half */
    float *zr, *zi;         /* scratch, half each */
};

mx_rfft *mx_rfft_create(size_t n) {
    if (n < 4 || (n & (n - 1)) != 0 || n > (1u << 24)) return NULL;
    mx_rfft *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->n = n;
    p->half = n / 2;
    size_t h = p->half;
    p->reverse = malloc(h * sizeof *p->reverse);
    p->wr = malloc(h * sizeof(float));
    p->wi = malloc(h * sizeof(float));
    p->pr = malloc(h * sizeof(float));
    p->pi = malloc(h * sizeof(float));
    p->zr = malloc(h * sizeof(float));
    p->zi = malloc(h * sizeof(float));
    if (!p->reverse || !p->wr || !p->wi || !p->pr || !p->pi || !p->zr || !p->zi) {
        mx_rfft_destroy(p);
        return NULL;
    }
    int bits = 0;
    while (((size_t)1 << bits) < h) bits++;
    for (size_t i = 0; i < h; i++) {
        uint32_t r = 0;
        for (int b = 0; b < bits; b++) r |= (uint32_t)((i >> b) & 1) << (bits - 1 - b);
        p->reverse[i] = r;
    }
    /* Stage with half-length s (s = 1, 2, 4, ...): twiddles e^(-i pi k/s), k < s, at s-1. */
    for (size_t s = 1; s < h; s <<= 1)
        for (size_t k = 0; k < s; k++) {
            p->wr[s - 1 + k] = (float)cos(mx_pi * (double)k / (double)s);
            p->wi[s - 1 + k] = (float)-sin(mx_pi * (double)k / (double)s);
        }
    for (size_t k = 0; k < h; k++) {
        p->pr[k] = (float)cos(2 * mx_pi * (double)k / (double)n);
        p->pi[k] = (float)-sin(2 * mx_pi * (double)k / (double)n);
    }
    return p;
}

void mx_rfft_destroy(mx_rfft *p) {
    if (!p) return;
    free(p->reverse); free(p->wr); free(p->wi); free(p->pr); free(p->pi); free(p->zr); free(p->zi);
    free(p);
}

size_t mx_rfft_size(const mx_rfft *p) { return p->n; }

/* One radix-2 stage's butterflies of one group: b *= w, then (a + b, a - b). The halves are
 * distinct (restrict), so the loop vectorises. */
static void mx_cfft_butterflies(float *restrict ar, float *restrict ai, float *restrict br, float *restrict bi,
                                const float *restrict wr, const float *restrict wi, size_t len) {
    for (size_t k = 0; k < len; k++) {
        float xr = br[k] * wr[k] - bi[k] * wi[k];
        float xi = br[k] * wi[k] + bi[k] * wr[k];
        br[k] = ar[k] - xr; bi[k] = ai[k] - xi;
        ar[k] = ar[k] + xr; ai[k] = ai[k] + xi;
    }
}

/* In-place complex FFT of `half` values (forward: e^-; the inverse conjugates around it). */
static void mx_cfft(const mx_rfft *p, float *restrict re, float *restrict im) {
    size_t h = p->half;
    size_t len = 1;
    if (h >= 4) {
        /* The first two stages at once, as radix-4 butterflies: their twiddles are 1 and -i,
         * so they need no multiplication (and a loop of one or two butterflies costs more in
         * its own overhead than in arithmetic). */
        for (size_t s = 0; s < h; s += 4) {
            float t0r = re[s] + re[s + 1], t0i = im[s] + im[s + 1];
            float t1r = re[s] - re[s + 1], t1i = im[s] - im[s + 1];
            float t2r = re[s + 2] + re[s + 3], t2i = im[s + 2] + im[s + 3];
            float t3r = re[s + 2] - re[s + 3], t3i = im[s + 2] - im[s + 3];
            re[s] = t0r + t2r;     im[s] = t0i + t2i;
            re[s + 2] = t0r - t2r; im[s + 2] = t0i - t2i;
            re[s + 1] = t1r + t3i; im[s + 1] = t1i - t3r;   /* t1 + (-i) t3 */
            re[s + 3] = t1r - t3i; im[s + 3] = t1i + t3r;   /* t1 - (-i) t3 */
        }
        len = 4;
    }
    for (; len < h; len <<= 1) {
        const float *wr = p->wr + len - 1, *wi = p->wi + len - 1;
        for (size_t s = 0; s < h; s += 2 * len)
            mx_cfft_butterflies(re + s, im + s, re + s + len, im + s + len, wr, wi, len);
    }
}

void mx_rfft_forward(const mx_rfft *p, float *restrict re, float *restrict im, const float *restrict x) {
    size_t h = p->half;
    float *zr = p->zr, *zi = p->zi;
    for (size_t j = 0; j < h; j++) {
        uint32_t r = p->reverse[j];
        zr[r] = x[2 * j];
        zi[r] = x[2 * j + 1];
    }
    mx_cfft(p, zr, zi);
    /* X[k] = E[k] + w^k O[k], E = (Z[k] + conj Z[h-k]) / 2, O = (Z[k] - conj Z[h-k]) / 2i. */
    re[0] = zr[0] + zi[0];
    im[0] = 0;
    re[h] = zr[0] - zi[0];
    im[h] = 0;
    for (size_t k = 1; k < h; k++) {
        float ar = zr[k], ai = zi[k], br = zr[h - k], bi = -zi[h - k];
        float er = 0.5f * (ar + br), ei = 0.5f * (ai + bi);
        float orr = 0.5f * (ai - bi), oi = -0.5f * (ar - br);
        re[k] = er + p->pr[k] * orr - p->pi[k] * oi;
        im[k] = ei + p->pr[k] * oi + p->pi[k] * orr;
    }
}

void mx_rfft_inverse(const mx_rfft *p, float *restrict x, const float *restrict re, const float *restrict im) {
    size_t h = p->half;
    float *zr = p->zr, *zi = p->zi;
    /* Z[k] = E[k] + i O[k], E = (X[k] + conj X[h-k]) / 2, O = conj(w^k) (X[k] - conj X[h-k]) / 2;
     * transformed with the forward FFT of the conjugate, then conjugated: x = 2/n Re/Im. */
    for (size_t k = 0; k < h; k++) {
        float ar = re[k], ai = im[k], br = re[h - k], bi = -im[h - k];
        float er = 0.5f * (ar + br), ei = 0.5f * (ai + bi);
        float dr = 0.5f * (ar - br), di = 0.5f * (ai - bi);
        float wr = p->pr[k], wi = -p->pi[k];   /* e^(+2 pi i k/n) */
        float orr = dr * wr - di * wi, oi = dr * wi + di * wr;
        float cr = er - oi, ci = ei + orr;     /* E + i O */
        uint32_t r = p->reverse[k];
        zr[r] = cr;
        zi[r] = -ci;
    }
    mx_cfft(p, zr, zi);
    float scale = 2.0f / (float)p->n;
    for (size_t j = 0; j < h; j++) {
        x[2 * j] = zr[j] * scale;
        x[2 * j + 1] = -zi[j] * scale;
    }
}

/* ---- Phase vocoder ----------------------------------------------------------------- */

typedef struct { float key; uint32_t v; } mx_heap_entry;

/* One analysed frame: each channel's spectrum, and the channels' sum (the shared field). */
typedef struct {
    float *re, *im;          /* channels x bins */
    float *sum_phase;        /* bins: phase of the channels' sum */
    float *sum_log;          /* bins: log magnitude of the sum */
    float *sum_mag;          /* bins: magnitude of the sum */
    float *sum_re, *sum_im;  /* bins: the sum */
    float *omega;            /* bins: instantaneous frequency of the sum, radians per input frame */
    double position;         /* input frame of the frame's centre */
    float rise;              /* the share of its magnitude that is new since the previous frame */
    int valid;
} mx_pv_frame;

struct mx_pvoc {
    size_t n, bins, hop, channels;
    mx_rfft *fft;
    float *window;           /* periodic Hann, n */
    float *phase;            /* bins: the synthesis phase of the last synthesised frame */
    float *next_phase;       /* bins */
    int synthesised;         /* frames synthesised so far */
    mx_pv_frame frames[3];   /* ring: previous, current, next */
    int newest;              /* index of the last analysed frame in the ring */
    /* PGHI: a max-heap of bins by magnitude, and which bins have their phase. */
    mx_heap_entry *heap;
    uint8_t *done;
    float *x, *y;            /* scratch, n each */
    float *sr, *si, *fgrad, *re, *im;   /* scratch, bins each */
    float *keys;             /* scratch, 2 bins: heap keys (the previous frame's, then this one's) */
    float gamma;             /* the window's Gaussian time-frequency ratio, frames^2 */
    float tolerance;         /* bins below this fraction of the frame's largest are noise */
    uint32_t noise;          /* a deterministic generator for insignificant bins */
};

static void mx_pv_frame_free(mx_pv_frame *f) {
    free(f->re); free(f->im); free(f->sum_phase); free(f->sum_log); free(f->omega);
    free(f->sum_mag); free(f->sum_re); free(f->sum_im);
}

void mx_pvoc_destroy(mx_pvoc *p) {
    if (!p) return;
    mx_rfft_destroy(p->fft);
    free(p->window); free(p->phase); free(p->next_phase);
    for (int i = 0; i < 3; i++) mx_pv_frame_free(&p->frames[i]);
    free(p->heap); free(p->done);
    free(p->x); free(p->y); free(p->sr); free(p->si); free(p->fgrad); free(p->re); free(p->im); free(p->keys);
    free(p);
}

mx_pvoc *mx_pvoc_create(size_t n, size_t hop, size_t channels) {
    if (channels < 1 || channels > 64 || hop < 1 || hop > n / 2) return NULL;
    mx_pvoc *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->fft = mx_rfft_create(n);
    if (!p->fft) { free(p); return NULL; }
    p->n = n;
    p->bins = n / 2 + 1;
    p->hop = hop;
    p->channels = channels;
    size_t b = p->bins, cb = channels * b;
    p->window = malloc(n * sizeof(float));
    p->phase = calloc(b, sizeof(float));
    p->next_phase = calloc(b, sizeof(float));
    p->heap = malloc(2 * b * sizeof(mx_heap_entry));
    p->done = calloc(b, 1);
    p->x = malloc(n * sizeof(float)); p->y = malloc(n * sizeof(float));
    p->sr = malloc(b * sizeof(float)); p->si = malloc(b * sizeof(float)); p->fgrad = malloc(b * sizeof(float));
    p->re = malloc(b * sizeof(float)); p->im = malloc(b * sizeof(float)); p->keys = malloc(2 * b * sizeof(float));
    int ok = p->x && p->y && p->sr && p->si && p->fgrad && p->re && p->im && p->keys && p->window && p->phase && p->next_phase && p->heap && p->done;
    for (int i = 0; i < 3 && ok; i++) {
        mx_pv_frame *f = &p->frames[i];
        f->re = calloc(cb, sizeof(float)); f->im = calloc(cb, sizeof(float));
        f->sum_phase = calloc(b, sizeof(float)); f->sum_log = calloc(b, sizeof(float)); f->omega = calloc(b, sizeof(float));
        f->sum_mag = calloc(b, sizeof(float)); f->sum_re = calloc(b, sizeof(float)); f->sum_im = calloc(b, sizeof(float));
        ok = f->re && f->im && f->sum_phase && f->sum_log && f->omega && f->sum_mag && f->sum_re && f->sum_im;
    }
    if (!ok) { mx_pvoc_destroy(p); return NULL; }
    for (size_t i = 0; i < n; i++) {
        double s = sin(mx_pi * (double)i / (double)n);
        p->window[i] = (float)(s * s);
    }
    /* A Hann window of length n is close to a Gaussian with lambda = 0.25645 n^2. */
    p->gamma = (float)(0.25645 * (double)n * (double)n);
    p->tolerance = 1e-5f;
    p->newest = -1;
    p->noise = 0x9e3779b9u;
    return p;
}

static float mx_princarg(float x) {
    return x - (float)(2 * mx_pi) * floorf((x + (float)mx_pi) / (float)(2 * mx_pi));
}

void mx_pvoc_analyse(mx_pvoc *restrict p, const float *const *in, double position) {
    size_t n = p->n, b = p->bins, half = n / 2;
    int slot = (p->newest + 1) % 3;
    mx_pv_frame *f = &p->frames[slot];
    mx_pv_frame *prev = p->newest >= 0 ? &p->frames[p->newest] : NULL;
    float *sr = p->sr, *si = p->si, *x = p->x;
    memset(sr, 0, b * sizeof(float));
    memset(si, 0, b * sizeof(float));
    for (size_t c = 0; c < p->channels; c++) {
        /* Windowed and rotated by half a frame, so that phase is measured at the centre. */
        for (size_t i = 0; i < n; i++) x[(i + half) & (n - 1)] = in[c][i] * p->window[i];
        float *re = f->re + c * b, *im = f->im + c * b;
        mx_rfft_forward(p->fft, re, im, x);
        for (size_t k = 0; k < b; k++) {
            sr[k] += re[k];
            si[k] += im[k];
        }
    }
    double hop_in = prev && prev->valid ? position - prev->position : 0;
    for (size_t k = 0; k < b; k++) {
        float m = sqrtf(sr[k] * sr[k] + si[k] * si[k]);
        f->sum_mag[k] = m;
        f->sum_re[k] = sr[k];
        f->sum_im[k] = si[k];
        f->sum_log[k] = logf(m + 1e-30f);
        f->sum_phase[k] = atan2f(si[k], sr[k]);
        float bin = (float)(2 * mx_pi * (double)k / (double)n);
        if (hop_in > 0) {
            /* The phase advance beyond the bin's own, over the hop: the deviation. */
            float expected = (float)((double)bin * hop_in);
            float dev = mx_princarg(f->sum_phase[k] - prev->sum_phase[k] - expected);
            f->omega[k] = bin + dev / (float)hop_in;
        } else {
            f->omega[k] = bin;
        }
    }
    /* Onset strength: how much of this frame's magnitude is new (0 steady, 1 after silence). */
    double grown = 0, total = 0;
    for (size_t k = 0; k < b; k++) {
        float m = f->sum_mag[k];
        float before = prev && prev->valid ? prev->sum_mag[k] : 0;
        grown += m > before ? m - before : 0;
        total += m;
    }
    f->rise = total > 1e-20 ? (float)(grown / total) : 0;
    f->position = position;
    f->valid = 1;
    p->newest = slot;
}

/* Max-heap of bin indices keyed by key[index]. */
/* The heap holds each entry's key beside it: the sift compares neighbours in memory, not
 * keys looked up through the bins (the lookups were a quarter of the stretch's time). The
 * order of pushes, pops and comparisons is the indexed heap's, so the result is too. */
static void mx_heap_push(mx_heap_entry *heap, size_t *count, uint32_t v, const float *key) {
    size_t i = (*count)++;
    mx_heap_entry e = {key[v], v};
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (heap[parent].key >= e.key) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
}

static uint32_t mx_heap_pop(mx_heap_entry *heap, size_t *count, const float *key) {
    (void)key;
    uint32_t top = heap[0].v;
    mx_heap_entry e = heap[--(*count)];
    size_t i = 0, n = *count;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        float best = e.key;
        if (l < n && heap[l].key > best) { m = l; best = heap[l].key; }
        if (r < n && heap[r].key > best) m = r;
        if (m == i) break;
        heap[i] = heap[m];
        i = m;
    }
    if (n > 0) heap[i] = e;
    return top;
}

void mx_pvoc_synthesise(mx_pvoc *restrict p, float *const *out, int reset) {
    size_t n = p->n, b = p->bins, half = n / 2;
    /* The frame synthesised is the one before the newest (one frame of look-ahead). */
    int cur_slot = (p->newest + 2) % 3, prev_slot = (p->newest + 1) % 3;
    mx_pv_frame *f = &p->frames[cur_slot], *next = &p->frames[p->newest];
    mx_pv_frame *prev = p->synthesised > 0 ? &p->frames[prev_slot] : NULL;
    float *phase = p->next_phase;
    float hop_out = (float)p->hop;

    /* The frequency-direction phase derivative from the time derivative of the log
     * magnitude (a Gaussian window's relation): radians per bin. */
    float *fgrad = p->fgrad, *keys = p->keys, *key = keys + b;
    double span = 0;
    const float *lo = f->sum_log, *hi = f->sum_log;
    if (prev && prev->valid && next->valid && next != f) { lo = prev->sum_log; hi = next->sum_log; span = next->position - prev->position; }
    else if (next->valid && next != f) { hi = next->sum_log; span = next->position - f->position; }
    else if (prev && prev->valid) { lo = prev->sum_log; span = f->position - prev->position; }
    float largest = -INFINITY;
    for (size_t k = 0; k < b; k++) {
        float dt = span > 0 ? (hi[k] - lo[k]) / (float)span : 0;   /* per input frame */
        fgrad[k] = -p->gamma / (float)n * dt;
        key[k] = f->sum_log[k];
        if (key[k] > largest) largest = key[k];
    }
    float floor_log = largest + logf(p->tolerance);

    /* An onset (most of the frame's magnitude new, and more so than before): the analysis
     * phases, so the attack keeps its shape instead of spreading over the frame. */
    if (prev && f->rise > MX_ONSET && f->rise > prev->rise) reset = 1;
    if (reset || !prev) {
        /* A phase reset: the analysis phases, as they are. */
        memcpy(phase, f->sum_phase, b * sizeof(float));
    } else {
        /* PGHI (heap integration): from the strongest bins outward, in time from the
         * previous frame's synthesis phase, in frequency from a neighbour already set. */
        memset(p->done, 0, b);
        size_t count = 0;
        /* Heap entries: k < b for the previous frame, b + k for this one; keyed on their log magnitude. */
        const float *prev_key = keys;
        memcpy(keys, prev->sum_log, b * sizeof(float));
        size_t remaining = 0;
        for (size_t k = 0; k < b; k++) {
            if (key[k] > floor_log) remaining++;
            else { p->done[k] = 1; }
        }
        for (size_t k = 0; k < b; k++)
            if (prev_key[k] > floor_log) mx_heap_push(p->heap, &count, (uint32_t)k, keys);
        while (remaining > 0) {
            if (count == 0) {
                /* Nothing connects: start from the strongest unset bin, at its analysis phase. */
                size_t best = b;
                for (size_t k = 0; k < b; k++)
                    if (!p->done[k] && (best == b || key[k] > key[best])) best = k;
                phase[best] = f->sum_phase[best];
                p->done[best] = 1;
                remaining--;
                mx_heap_push(p->heap, &count, (uint32_t)(b + best), keys);
                continue;
            }
            uint32_t top = mx_heap_pop(p->heap, &count, keys);
            if (top < b) {
                size_t k = top;
                if (!p->done[k]) {
                    phase[k] = p->phase[k] + hop_out * 0.5f * (prev->omega[k] + f->omega[k]);
                    p->done[k] = 1;
                    remaining--;
                    mx_heap_push(p->heap, &count, (uint32_t)(b + k), keys);
                }
            } else {
                size_t k = top - b;
                if (k + 1 < b && !p->done[k + 1]) {
                    phase[k + 1] = phase[k] + 0.5f * (fgrad[k] + fgrad[k + 1]);
                    p->done[k + 1] = 1;
                    remaining--;
                    mx_heap_push(p->heap, &count, (uint32_t)(b + k + 1), keys);
                }
                if (k > 0 && !p->done[k - 1]) {
                    phase[k - 1] = phase[k] - 0.5f * (fgrad[k] + fgrad[k - 1]);
                    p->done[k - 1] = 1;
                    remaining--;
                    mx_heap_push(p->heap, &count, (uint32_t)(b + k - 1), keys);
                }
            }
        }
        /* Bins too quiet to matter: a random phase (a fixed sequence: renders repeat). */
        for (size_t k = 0; k < b; k++)
            if (!(key[k] > floor_log)) {
                p->noise = p->noise * 1664525u + 1013904223u;
                phase[k] = (float)(2 * mx_pi) * (float)(p->noise >> 8) / 16777216.0f;
            }
    }
    for (size_t k = 0; k < b; k++) phase[k] = mx_princarg(phase[k]);

    /* Each channel: its own magnitude, at the shared phase plus its own offset from the
     * sum's (so inter-channel phase, and with it the stereo image and mono sum, is kept). */
    float *y = p->y, *re = p->re, *im = p->im;
    /* The rotation from the sum's analysis phase to its synthesis phase, once per bin:
     * u = e^(i phase) conj(sum) / |sum|; channel c is then X_c u (its magnitude, and its
     * phase offset from the sum, kept). */
    float *ur = p->sr, *ui = p->si;
    for (size_t k = 0; k < b; k++) {
        float cr = cosf(phase[k]), ci = sinf(phase[k]);
        float m = f->sum_mag[k];
        if (m > 1e-30f) {
            float nr = f->sum_re[k] / m, ni = -f->sum_im[k] / m;
            ur[k] = cr * nr - ci * ni;
            ui[k] = cr * ni + ci * nr;
        } else {
            ur[k] = cr;
            ui[k] = ci;
        }
    }
    for (size_t c = 0; c < p->channels; c++) {
        const float *xr = f->re + c * b, *xi = f->im + c * b;
        for (size_t k = 0; k < b; k++) {
            re[k] = xr[k] * ur[k] - xi[k] * ui[k];
            im[k] = xr[k] * ui[k] + xi[k] * ur[k];
        }
        im[0] = 0;
        im[b - 1] = 0;
        mx_rfft_inverse(p->fft, y, re, im);
        float *o = out[c];
        for (size_t i = 0; i < n; i++) o[i] += y[(i + half) & (n - 1)] * p->window[i];
    }
    /* The phase just set is the previous one for the next frame. */
    float *t = p->phase; p->phase = p->next_phase; p->next_phase = t;
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
