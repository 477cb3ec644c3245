/* Mixdown's spectral time-stretch: a phase vocoder whose phases come from the phase
 * gradient (PGHI: Prusa and Holighaus, "Phase vocoder done right", 2017), with one phase
 * field shared by every channel. See docs/spectral.md. This file makes and frees the
 * engine, sets its band and decimation, and calls its kernel table's analysis and
 * synthesis: pvoc_analysis.c and pvoc_synthesis.c, which do the work (compiled for the
 * baseline, and again for AVX2 by x86_avx2_pvoc.c). */
#include "pvoc.h"
#include "vecmath.h"

static void mx_pv_frame_free(mx_pv_frame *f) {
    free(f->re); free(f->im); free(f->sum_phase); free(f->sum_log); free(f->omega); free(f->local_time);
    free(f->sum_mag); free(f->sum_re); free(f->sum_im);
}

void mx_pvoc_destroy(mx_pvoc *p) {
    if (!p) return;
    mx_rfft_destroy(p->fft);
    mx_rfft_destroy(p->analysis_fft);
    free(p->ax); free(p->ascratch); free(p->atr); free(p->ati);
    free(p->rre); free(p->rim); free(p->rsre); free(p->rsim);
    free(p->window); free(p->phase); free(p->next_phase); free(p->shared); free(p->partial_delta); free(p->partial_delta_prev); free(p->partial_d);
    for (int i = 0; i < MX_RING; i++) mx_pv_frame_free(&p->frames[i]);
    free(p->head); free(p->next); free(p->prev); free(p->slot); free(p->bucket); free(p->done); free(p->order);
    free(p->time_window); free(p->mix); free(p->energy);
    free(p->band); free(p->follow); free(p->shifted_windows); free(p->shifted);
    free(p->y); free(p->sr); free(p->si); free(p->fgrad); free(p->re); free(p->im); free(p->key); free(p->steps); free(p->refine); free(p->partials); free(p->risen); free(p->landing);
    free(p);
}

mx_pvoc *mx_pvoc_create(size_t n, size_t hop, size_t channels) {
    return mx_pvoc_create_with(n, hop, channels, mx_kernels_active());
}

mx_pvoc *mx_pvoc_create_with(size_t n, size_t hop, size_t channels, const mx_kernels *kernels) {
    if (channels < 1 || channels > 64 || hop < 1 || hop > n / 2 || !kernels) return NULL;
    mx_pvoc *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->kernels = kernels;
    p->fft = mx_rfft_create_with(n, kernels);
    p->analysis_fft = mx_rfft_create_with(n, kernels);
    if (!p->fft || !p->analysis_fft) { mx_rfft_destroy(p->fft); mx_rfft_destroy(p->analysis_fft); free(p); return NULL; }
    p->n = n;
    p->bins = n / 2 + 1;
    p->hop = hop;
    p->channels = channels;
    size_t b = p->bins, cb = channels * b;
    p->window = malloc(n * sizeof(float));
    p->phase = calloc(b, sizeof(float));
    p->shared = malloc(b * sizeof(float));
    p->partial_delta = malloc(b * sizeof(float)); p->partial_delta_prev = malloc(b * sizeof(float));
    p->partial_d = calloc(b, sizeof(float));
    if (p->shared) for (size_t k = 0; k < b; k++) p->shared[k] = NAN;
    p->next_phase = calloc(b, sizeof(float));
    p->head = malloc((MX_BUCKETS + 1) * sizeof(int32_t));
    if (p->head) for (int i = 0; i <= MX_BUCKETS; i++) p->head[i] = -1;   /* every bucket empty */
    p->next = malloc((2 * b + 3) * sizeof(int32_t));
    p->prev = malloc((2 * b + 3) * sizeof(int32_t));
    p->slot = malloc(b * sizeof(int32_t));
    p->bucket = malloc(b * sizeof(int32_t));
    p->done = calloc(b, 1);
    p->order = malloc((b + 8) * sizeof(uint32_t));   /* eight past the bins: AVX2's lists write eight at a time */
    p->y = malloc(n * sizeof(float));
    p->time_window = malloc(n * sizeof(float));
    p->mix = malloc(n * sizeof(float)); p->energy = malloc((n + 1) * sizeof(float));
    p->sr = malloc(b * sizeof(float)); p->si = malloc(b * sizeof(float)); p->fgrad = malloc(b * sizeof(float));
    p->ax = malloc(n * sizeof(float));
    p->ascratch = malloc(b * sizeof(float));
    p->atr = malloc(b * sizeof(float)); p->ati = malloc(b * sizeof(float));
    p->rre = malloc((b + 2) * sizeof(float)); p->rim = malloc((b + 2) * sizeof(float));
    p->rsre = malloc((b + 2) * sizeof(float)); p->rsim = malloc((b + 2) * sizeof(float));
    p->re = malloc(b * sizeof(float)); p->im = malloc(b * sizeof(float)); p->key = malloc(b * sizeof(float));
    int ok = p->rre && p->rim && p->rsre && p->rsim && p->ax && p->ascratch && p->atr && p->ati && p->y && p->time_window && p->mix && p->energy && p->sr && p->si && p->fgrad && p->re && p->im && p->key && p->window && p->phase && p->shared && p->partial_delta && p->partial_delta_prev && p->partial_d && p->next_phase && p->head && p->next && p->prev && p->slot && p->bucket && p->done && p->order;
    for (int i = 0; i < MX_RING && ok; i++) {
        mx_pv_frame *f = &p->frames[i];
        f->re = calloc(cb, sizeof(float)); f->im = calloc(cb, sizeof(float));
        f->sum_phase = calloc(b, sizeof(float)); f->sum_log = calloc(b, sizeof(float)); f->omega = calloc(b, sizeof(float)); f->local_time = calloc(b, sizeof(float));
        f->sum_mag = calloc(b, sizeof(float)); f->sum_re = calloc(b, sizeof(float)); f->sum_im = calloc(b, sizeof(float));
        ok = f->re && f->im && f->sum_phase && f->sum_log && f->omega && f->local_time && f->sum_mag && f->sum_re && f->sum_im;
    }
    if (!ok) { mx_pvoc_destroy(p); return NULL; }
    for (size_t k = 0; k < b; k++) p->partial_delta[k] = p->partial_delta_prev[k] = NAN;
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
    p->refine = calloc(MX_REFINE_ARRAYS * (b + 2 * MX_REFINE_PAD), sizeof(float));
    p->shifted = malloc(n * sizeof(float));
    p->partials = malloc((b / 2 + 2) * sizeof *p->partials);
    p->risen = calloc(b, 1);
    p->landing = calloc(b, sizeof(float));
    p->onset_whole_hi = b;
    if (!p->follow || !p->steps || !p->refine || !p->shifted || !p->partials || !p->risen || !p->landing) { mx_pvoc_destroy(p); return NULL; }
    return p;
}

void mx_pvoc_set_deficit(mx_pvoc *p, float *deficit) { p->deficit = deficit; }

void mx_pvoc_set_renormalised(mx_pvoc *p, int renormalised) { p->renormalised = renormalised != 0; }

int mx_pvoc_set_onset_band(mx_pvoc *p, double from) {
    if (!(from >= 0 && from <= 0.5)) return -1;
    size_t k = from >= 0.5 ? p->bins : (size_t)ceil(from * (double)p->n);
    p->onset_whole_hi = k < p->bins ? k : p->bins;
    return 0;
}

void mx_pvoc_analyse(mx_pvoc *restrict p, const float *const *in, double position) {
    p->kernels->pvoc_analyse(p, in, position, NAN, NAN);
}

void mx_pvoc_analyse_mapped(mx_pvoc *restrict p, const float *const *in, double position, double exact, double onset) {
    p->kernels->pvoc_analyse(p, in, position, exact, onset);
}

void mx_pvoc_synthesise(mx_pvoc *restrict p, float *const *out, int reset) {
    p->kernels->pvoc_synthesise(p, out, NULL, reset);
}

void mx_pvoc_synthesise_low(mx_pvoc *restrict p, float *const *out, float *const *low, int reset) {
    p->kernels->pvoc_synthesise(p, out, low, reset);
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
    /* By chunks of bins m: their taps' cosines and sines (bins 2 m0 - 3 to 2 (m0 + chunk) + 1)
     * in one loop that vectorises, then the sums, then their angles (libm's cosf, sinf
     * and atan2f, one call a tap, were 2.5 % of a stretch's time). A tap with no phase
     * (past the band, or NaN: too quiet) weighs 0. */
    enum { CHUNK = 32, SPAN = 2 * CHUNK + 5 };
    float angle[SPAN], weighted[SPAN], cosines[SPAN], sines[SPAN], re[CHUNK], im[CHUNK];
    for (size_t m0 = 0; m0 < count; m0 += CHUNK) {
        size_t chunk = count - m0 < CHUNK ? count - m0 : CHUNK, span = 2 * chunk + 5;
        long first = 2 * (long)m0 - 3;
        for (size_t i = 0; i < span; i++) {
            long j = first + (long)i;
            float ph = j >= 0 && (size_t)j < top ? p->shared[j] : NAN;
            int some = ph == ph;
            angle[i] = some ? ph : 0.0f;
            weighted[i] = some ? f->sum_mag[j] : 0.0f;
        }
        mx_sincos_array(sines, cosines, angle, span);
        for (size_t m = 0; m < chunk; m++) {
            float r = 0, q = 0;
            for (int d = -3; d <= 3; d++) {
                size_t i = 2 * m + 3 + (size_t)d;
                float w = weight[d < 0 ? -d : d] * weighted[i];
                r += w * cosines[i];
                q += w * sines[i];
            }
            re[m] = r;
            im[m] = q;
        }
        for (size_t m = 0; m < chunk; m++) dst[m0 + m] = re[m] == 0 && im[m] == 0 ? NAN : mx_atan2_one(im[m], re[m]);
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


/* The overlap-add gain of a Hann analysis and synthesis window at hop n/h: sum of sin^4. */
double mx_pvoc_window_gain(size_t n, size_t hop) {
    double s = 0;
    for (size_t i = 0; i < n; i += hop) {
        double w = sin(mx_pi * (double)i / (double)n);
        s += w * w * w * w;
    }
    return s;
}
