/* The phase vocoder's analysis: one frame's spectra per channel and of their sum, its
 * phases, local times (reassignment) and instantaneous frequencies, and the onset it holds.
 * It may run on a helper thread beside the synthesis (pvoc.h's ring). */
#include "pvoc.h"

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

static size_t mx_onset_ahead(const mx_pvoc *restrict p, const float *mix) {
    const float *const in[1] = {mix};
    return mx_onset_ahead_in(p->energy, in, 1, p->n, p->onset_block);
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

/* The channels' sum of the frame's input: in[0] itself for one channel, else p->mix. */
static const float *mx_frame_mix(mx_pvoc *restrict p, const float *const *in) {
    if (p->channels == 1) return in[0];
    size_t n = p->n;
    float *restrict m = p->mix;
    memcpy(m, in[0], n * sizeof(float));
    for (size_t c = 1; c < p->channels; c++) {
        const float *restrict src = in[c];
        for (size_t i = 0; i < n; i++) m[i] += src[i];
    }
    return m;
}

/* The part of the frame read, [*start, *cut) of its n input frames (all of it unless
 * stretching: the time map's input hop hop_map, unrounded, below the output's; the rounded
 * centres' hop_in measures the reach behind. Compressing too where the caller renormalises,
 * mx_pvoc_set_renormalised), and *behind, where an onset found up to one input hop
 * behind the frame's centre begins to sound, input frames from the centre (NaN: none; the
 * landing's, mx_land). Stretching by R, the frame's input
 * at d frames from its centre sounds at R d from the centre of its output, where it keeps
 * its shape (an onset, by its phases):
 * - an onset d ahead lands (R - 1) d early: pre-echo. Cut from the frame, it first
 *   sounds from the frame centred on it. `onset` is where it begins, from the frame's
 *   first input frame (NaN: found here, on `mix`).
 * - an onset more than n / 2R behind lands past the frame's start, and wraps round to
 *   its end: an echo a frame later. The frame's input before n / 2R is left out then
 *   (a frame of 2048 at R = 2: an echo of a click went from -25 to -X dB). */
static void mx_frame_extent(mx_pvoc *restrict p, const float *mix, double centre, double hop_in, double hop_map,
                            double onset, size_t *start, size_t *cut, double *behind) {
    size_t n = p->n;
    *start = 0;
    *cut = n;
    *behind = NAN;
    if (!(hop_map > 0 && (hop_map < (double)p->hop || (p->renormalised && hop_map > (double)p->hop)))) return;
    double first = centre - (double)(n / 2);   /* the input frame at the frame's start */
    if (onset != onset) *cut = mx_onset_ahead(p, mix);
    else *cut = onset >= (double)n ? n : onset <= (double)(n / 2) ? n / 2 : (size_t)ceil(onset);
    /* Where the frames renormalise (near 1), the onset kept last, seen again at the
     * centre's block (its blocks lie on this frame's grid, and its first frames fell in the
     * block before): where it sounds at or before the centre, this frame holds it, behind
     * its centre, and is not cut. Cut at the centre, it kept the sound's first frames alone,
     * and the renormalisation doubled the last of them: a chord after silence at 1.01 came
     * out with its second frame doubled (0.06 where the input is 0.03). */
    if (p->renormalised && *cut < n && p->onset_count > 0) {
        size_t last = (p->onset_count - 1) % MX_ONSETS_KEPT;
        if (first + (double)*cut <= p->onsets[last] + (double)p->onset_block && p->onset_sounds[last] <= centre) *cut = n;
    }
    /* Each onset is found ahead of a centre before it is behind one: kept, by position. */
    if (*cut < n && (p->onset_count == 0 || first + (double)*cut > p->onsets[(p->onset_count - 1) % MX_ONSETS_KEPT] + (double)p->onset_block)) {
        /* Where it sounds: its block's first frame at half the block's peak (a click on the
         * block's last frame was landed by the block's start, 1.5 frames off at 1.05); a
         * tenth where the frames renormalise (near 1: at half, a chord whose first frames
         * are a fifth of its peak was put 9 frames late, and landed there). With this and the
         * rule above through two resolutions too, a click's pre-echo at 2 came out at -76 dB
         * (under -90 without). */
        size_t end = *cut + p->onset_block < n ? *cut + p->onset_block : n, at = *cut;
        float top = 0;
        for (size_t i = *cut; i < end; i++) top = fmaxf(top, fabsf(mix[i]));
        float share = p->renormalised ? 0.1f : 0.5f;
        while (at + 1 < end && fabsf(mix[at]) < share * top) at++;
        p->onset_sounds[p->onset_count % MX_ONSETS_KEPT] = first + (double)at;
        p->onsets[p->onset_count++ % MX_ONSETS_KEPT] = first + (double)*cut;
    }
    double reach = (double)(n / 2) * (1 - hop_in / (double)p->hop);
    size_t kept = p->onset_count < MX_ONSETS_KEPT ? p->onset_count : MX_ONSETS_KEPT;
    for (size_t i = 0; i < kept; i++) {
        double d = p->onsets[i] - first;
        if (d >= 0 && d < reach) *start = (size_t)reach;
        double s = p->onset_sounds[i] - first;
        /* Behind the centre by no more than the input hop: the onset this frame is the first
         * to hold whole (cut from the frames before it), and resets on. */
        if (d >= 0 && s <= (double)(n / 2) && s >= (double)(n / 2) - hop_in - 1 && !(s - (double)(n / 2) <= *behind))
            *behind = s - (double)(n / 2);
    }
}

/* Each channel's Hann spectrum into f, their sum into (f->sum_re, f->sum_im), and the sum of
 * their rectangular spectra (with guard bins) into (p->rsre, p->rsim), over the bins the
 * analysis reads (every bin without a band). One transform per channel, of its frame with
 * no window (R). The periodic Hann window is 1/2 - cos/2 and its derivative a sine, so in
 * the rotated frame's spectrum
 *     Hann:        X[k] = R[k]/2 + (R[k-1] + R[k+1])/4
 *     derivative:  D[k] = (pi / 2n) (-i) (R[k+1] - R[k-1])
 * exactly: the derivative window's transform of the channels' sum comes from the sum of
 * their R, without a transform of its own (a quarter of the analysis's transforms at two
 * channels). Centred frac frames after the input frame (shift = e^(i 2 pi frac / n)). */
static void mx_analyse_channels(mx_pvoc *restrict p, mx_pv_frame *f, const float *const *in, size_t start, size_t cut,
                                double frac, float shift_re, float shift_im) {
    size_t n = p->n, b = p->bins;
    float *sr = f->sum_re, *si = f->sum_im, *x = p->ax;
    size_t lo = p->analysis_lo, hi = p->band_hi, nb = hi - lo;
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
}

/* The largest of x[0..count), -inf for none (a NaN is passed over). Eight running maxima
 * side by side, then the largest of them: a maximum is exact in any order, so this is
 * the one-by-one scan's value without its chain of dependent comparisons. */
static float mx_largest(const float *restrict x, size_t count) {
    float lane[8] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY, -INFINITY};
    size_t i = 0;
    for (; i + 8 <= count; i += 8)
        for (size_t j = 0; j < 8; j++) lane[j] = x[i + j] > lane[j] ? x[i + j] : lane[j];
    float largest = -INFINITY;
    for (size_t j = 0; j < 8; j++) largest = lane[j] > largest ? lane[j] : largest;
    for (; i < count; i++) largest = x[i] > largest ? x[i] : largest;
    return largest;
}

/* The channels' sum (f->sum_re, f->sum_im): its magnitude, log magnitude, their largest,
 * and its phase, measured from the frame's position (frac frames after its centre). */
static void mx_analyse_sum(mx_pvoc *restrict p, mx_pv_frame *f, double frac) {
    size_t n = p->n;
    const float *sr = f->sum_re, *si = f->sum_im;
    size_t lo = p->analysis_lo, hi = p->band_hi, nb = hi - lo;
    size_t sounding = p->band_lo;   /* the band's own bins, for the frame's largest */
    float *floored = p->ascratch;
    for (size_t k = lo; k < hi; k++) {
        float m = MX_SQRTF(sr[k] * sr[k] + si[k] * si[k]);
        f->sum_mag[k] = m;
        floored[k] = m + 1e-30f;
    }
    mx_log_array(f->sum_log + lo, floored + lo, nb);
    float log_max_low = mx_largest(f->sum_log + lo, sounding > lo ? sounding - lo : 0);
    float log_max = mx_largest(f->sum_log + sounding, hi > sounding ? hi - sounding : 0);
    f->log_max = log_max;
    /* With the band below (mx_pvoc_synthesise_low): a key above the queue's top would
     * land in its top bucket, out of order (a click's pre-echo -115 -> -40 dB). */
    f->log_max_all = log_max_low > log_max ? log_max_low : log_max;
    mx_atan2_array(f->sum_phase + lo, si + lo, sr + lo, nb);
    /* Measured from `position`, frac frames after `centre`: an impulse t from the centre is
     * t - frac from it, its phase 2 pi k frac / n further on. */
    if (frac != 0)
        for (size_t k = lo; k < hi; k++) f->sum_phase[k] += (float)(2 * mx_pi * (double)k * frac / (double)n);
}

/* Each bin's local time into f (Auger and Flandrin's reassignment): Re(X_tw / X) with the
 * time-weighted window on the channels' sum `mix` over [start, cut), in input frames from
 * the centre. It is the phase's slope across bins: -2 pi / n times it. */
static void mx_analyse_local_time(mx_pvoc *restrict p, mx_pv_frame *f, const float *mix, size_t start, size_t cut, double frac) {
    size_t n = p->n, lo = p->analysis_lo, hi = p->band_hi;
    const float *sr = f->sum_re, *si = f->sum_im;
    float *x = p->ax;
    float *restrict tr = p->atr, *restrict ti = p->ati;
    mx_window_rotated(x, mix, frac == 0 ? p->time_window : mx_time_window_at(p, frac), n, start, cut);
    mx_rfft_forward(p->analysis_fft, tr, ti, x);
    for (size_t k = lo; k < hi; k++) {
        float m2 = sr[k] * sr[k] + si[k] * si[k];
        float dot = tr[k] * sr[k] + ti[k] * si[k];
        f->local_time[k] = m2 > 1e-30f ? dot / m2 : 0;
    }
}

/* Each bin's instantaneous frequency into f, from the derivative window: bin - Im(X_dw /
 * X), radians per input frame. It needs no previous frame: a frame after a cut one, or
 * after a jump in the input hop, reads as it is. Measured against the phase difference
 * over the hop: level on round-trip PESQ of ten espeak-ng voices, and a click at 0.95
 * keeps its shape (pre-echo -56 dB; -26 dB through the phase difference, which smears an
 * impulse when the hop is near the output's). */
static void mx_analyse_frequency(const mx_pvoc *restrict p, mx_pv_frame *f, double frac, float shift_re, float shift_im) {
    size_t n = p->n, lo = p->analysis_lo, hi = p->band_hi;
    const float *sr = f->sum_re, *si = f->sum_im;
    const float *restrict rsre = p->rsre, *restrict rsim = p->rsim;
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
}

/* Onset strength: how much of frame f's magnitude over the band's own bins is new since
 * prev (0 steady, 1 after silence or with no previous frame). Summed in eight lanes (bin
 * k in lane k % 8 from the band's first), then the lanes: a loop that vectorises, where
 * one running sum waited on each addition (a sixth of the analysis's time). */
static float mx_rise(const mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev) {
    size_t sounding = p->band_lo, hi = p->band_hi, k = sounding;
    const float *restrict mag = f->sum_mag;
    const float *restrict was = prev && prev->valid ? prev->sum_mag : NULL;
    float grown[8] = {0}, total[8] = {0};
    if (was)
        for (; k + 8 <= hi; k += 8)
            for (size_t j = 0; j < 8; j++) {
                float m = mag[k + j], w = was[k + j];
                grown[j] += m > w ? m - w : 0;
                total[j] += m;
            }
    else
        for (; k + 8 <= hi; k += 8)
            for (size_t j = 0; j < 8; j++) total[j] += mag[k + j];
    for (size_t j = 0; k < hi; k++, j++) {
        grown[j] += was ? (mag[k] > was[k] ? mag[k] - was[k] : 0) : 0;
        total[j] += mag[k];
    }
    float g = ((grown[0] + grown[1]) + (grown[2] + grown[3])) + ((grown[4] + grown[5]) + (grown[6] + grown[7]));
    float t = ((total[0] + total[1]) + (total[2] + total[3])) + ((total[4] + total[5]) + (total[6] + total[7]));
    if (!was) g = t;
    return t > 1e-20 ? (float)(g / t) : 0;
}

/* The frame's input is centred on input frame `centre`; a position between frames (an
 * input decimated by D, its frames' centres on the full rate's) is frac frames after it,
 * and the windows are centred there (on the full rate's frame, as a frame of the full
 * rate would be): the Hann window and its derivative by complex weights on the
 * rectangular window's neighbouring bins, the time-weighted one by a window of its own,
 * and the phases measured from there. Centred on the input frame instead, a stationary
 * partial's main lobe took the offset as a slope across its bins, which the synthesis
 * moved off its window: a tone that stops rang on 7 dB longer at 5/4. */
void MX_PVOC_VARIANT(mx_pvoc_analyse)(mx_pvoc *restrict p, const float *const *in, double position, double exact,
                                      double onset) {
    unsigned state = mx_denormals_flush_begin();
    long long j = p->analysed;
    mx_pv_frame *f = &p->frames[j % MX_RING];
    mx_pv_frame *prev = j > 0 ? &p->frames[(j - 1) % MX_RING] : NULL;
    double hop_in = prev && prev->valid ? position - prev->position : 0;
    if (exact != exact) exact = position;
    /* Whether the frame is stretched, by the time map's hop, not the rounded centres':
     * stretching by 1.003, those alternate 255 and 256 frames against an output hop of 256,
     * and a frame whose hop came out 256 kept an onset ahead of its centre. That onset reset
     * it and the frame three on, each landing it by its own rounding: a click came out as
     * two copies 2 frames apart, its spectrum 2.7 dB low at 12 kHz (docs/spectral.md). */
    double hop_map = prev && prev->valid ? exact - prev->exact : 0;
    const float *mix = mx_frame_mix(p, in);
    double centre = floor(position + 0.5), frac = position - centre;
    float shift_re = 1, shift_im = 0;
    if (frac != 0) { shift_re = (float)cos(2 * mx_pi * frac / (double)p->n); shift_im = (float)sin(2 * mx_pi * frac / (double)p->n); }
    size_t start, cut;
    double behind;
    mx_frame_extent(p, mix, centre, hop_in, hop_map, onset, &start, &cut, &behind);
    f->onset_behind = behind - frac;
    f->kept_from = start;
    f->kept_to = cut;
    mx_analyse_channels(p, f, in, start, cut, frac, shift_re, shift_im);
    mx_analyse_sum(p, f, frac);
    mx_analyse_local_time(p, f, mix, start, cut, frac);
    mx_analyse_frequency(p, f, frac, shift_re, shift_im);
    f->rise = mx_rise(p, f, prev);
    f->position = position;
    f->exact = exact;
    f->map_scale = hop_map > 0 ? (double)p->hop / hop_map : 0;
    f->valid = 1;
    p->analysed = j + 1;
    mx_denormals_flush_end(state);
}
