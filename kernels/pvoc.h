/* The phase vocoder's engine, shared by its files: pvoc.c (making it, its band),
 * pvoc_analysis.c (a frame's spectra, phases, local times and frequencies) and
 * pvoc_synthesis.c (PGHI's phases and the overlap-add). Private to the kernel. */
#ifndef MIXDOWN_PVOC_H
#define MIXDOWN_PVOC_H
#include "internal.h"
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
/* mx_refine_phases' scratch: MX_REFINE_ARRAYS arrays of the bins and MX_REFINE_PAD more
 * either side (the sweep reads three bins past the band's ends). */
#define MX_REFINE_ARRAYS 23
#define MX_REFINE_PAD 3

#if defined(__has_builtin)
#if __has_builtin(__builtin_elementwise_sqrt)
#define MX_SQRTF(x) __builtin_elementwise_sqrt(x)   /* no errno: it vectorises */
#endif
#endif
#ifndef MX_SQRTF
#define MX_SQRTF(x) sqrtf(x)
#endif

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
    double exact;            /* where the time map puts the frame's centre, unrounded (else position) */
    double map_scale;        /* the output hop over the time map's input hop from the last frame (0: none) */
    double onset_behind;     /* where an onset up to one input hop behind the centre begins to sound, input frames from it (NaN: none) */
    float rise;              /* the share of its magnitude that is new since the previous frame */
    size_t kept_from, kept_to;   /* the frame's input that was analysed: [kept_from, kept_to) of n (onset cuts) */
    float log_max;           /* the largest of sum_log over the band */
    float log_max_all;       /* and over every bin analysed */
    int valid;
} mx_pv_frame;

/* A close partial (pvoc_synthesis.c, mx_close_partials). */
typedef struct mx_partial {
    int32_t k;               /* the partial's bin */
    int32_t last;            /* the last of its group */
    int32_t olo, ohi;        /* the bins its share reaches: k + olo .. k + ohi, inside the band */
    float d, s;              /* its bin less its frequency, bins (|d| <= 1/2), and sin(pi d) */
    float ur, ui;            /* its phase against its bin's, e^(i delta) (1 where integrated as the bin); then its rotation (mx_partial_turns) */
    float h[17];             /* the Hann window's transform at bins k - 8 .. k + 8, 1 at its frequency */
    float lower, cp, inv;    /* its row of the group's system, factorised (Thomas) */
    float fr, fi;            /* the shares at its bin of the partials two or more away (mx_partial_amplitudes) */
    float tr[17], ti[17];    /* its share's turn at bins k - 8 .. k + 8: h (u_k - u_bin) */
} mx_partial;

struct mx_pvoc {
    size_t n, bins, hop, channels;
    const mx_kernels *kernels;   /* its analysis and synthesis (pvoc_analyse, pvoc_synthesise), and its transforms' */
    mx_rfft *fft;
    float *window;           /* periodic Hann, n */
    float *time_window;      /* n: (i - n/2) window[i], for each bin's local time */
    float *mix;              /* n: the channels' sum of the frame's input (more than one channel) */
    float *energy;           /* n / MX_ONSET_BLOCK: the sum's energy by blocks */
    double onsets[MX_ONSETS_KEPT];   /* the last onsets found, input frames (a ring) */
    double onset_sounds[MX_ONSETS_KEPT];   /* where each begins to sound: its block's first frame at half its peak */
    size_t onset_count;
    float *phase;            /* bins: the synthesis phase of the last synthesised frame */
    float *shared;           /* bins: that phase where the bin had its own, NaN where it was too quiet (mx_pvoc_phases_halved) */
    float *partial_delta;    /* bins: a close partial's phase less its bin's, this frame's (mx_partial_phases); NaN: none */
    float *partial_delta_prev;   /* bins: the same, the frame before's */
    float *partial_d;        /* bins: the last close partial's d there (the frame before's where partial_delta_prev is not NaN) */
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
    float *ascratch, *atr, *ati;   /* bins each */
    /* A channel's spectrum with a rectangular window, and the channels' sum of it, each
     * with a guard bin either side (bins + 2 each; bin k at k + 1). */
    float *rre, *rim, *rsre, *rsim;
    /* PGHI: a bucket queue of bins by magnitude, and which bins have their phase. */
    int32_t *head;           /* MX_BUCKETS + 1: the last entry pushed into each bucket, or -1 */
    int32_t *next, *prev;    /* 2 bins + 3: the entries pushed into the same bucket before and after it, or -1 */
    int32_t *slot;           /* bins: the bucket a bin's step in time waits in, or -1 */
    int32_t *bucket;         /* scratch, bins: the bucket each bin's step in time would take */
    uint8_t *done;
    uint32_t *order;         /* scratch, bins + 8: a list of bins, taken in bin order without a branch per bin */
    float *y;                /* scratch, n */
    float *sr, *si, *fgrad, *re, *im;   /* scratch, bins each */
    float *key;              /* scratch, bins: this frame's queue keys (its log magnitudes) */
    float *steps;            /* scratch, 5 bins: each integration step's terms, made before the queue runs */
    float *refine;           /* scratch, 15 (bins + 2): mx_refine_phases's predictions and phasors */
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
    /* Where the next frame adds the window products its cut input left out (mx_pvoc_set_deficit). */
    float *deficit;
    int renormalised;        /* the caller renormalises by the deficit (mx_pvoc_set_renormalised) */
    /* Frames synthesised since the last phase reset (from the first frame on). */
    long long since_reset;
    /* The last phase reset's frame (p->synthesised then), its input centre and the shift
     * that landed it, output frames (mx_hold_landing). */
    long long reset_frame;
    double reset_position, reset_shift;
    /* An onset's reset takes the analysis phases whole below bin onset_whole_hi, and above
     * it only where a bin's magnitude rose (mx_pvoc_set_onset_band); b: whole. `risen` marks
     * the bins the last reset took, `landing` holds a held frame's landed phases (bins
     * each), and reset_partial says the last reset took only some. */
    size_t onset_whole_hi;
    uint8_t *risen;
    float *landing;
    int reset_partial;
    /* Onset blocks, in this engine's frames (MX_ONSET_BLOCK, or less on a decimated input:
     * the same time), and the step a landing's shift is rounded to (1: whole frames; 1/D on
     * an input decimated by D, whole frames of the full rate). mx_pvoc_set_decimation. */
    size_t onset_block;
    double land_step;
    /* The time-weighted window centred f frames after the frame's centre, for each f = j / D
     * - 1/2 (j < D) of a decimated input (mx_pvoc_set_decimation), n each; and one made for
     * any other f (shifted_f, the f it was made for). */
    float *shifted_windows, *shifted;
    /* The close partials of the frame being synthesised (mx_close_partials), bins / 2 + 2. */
    mx_partial *partials;
    size_t partial_count;
    size_t shifted_count;
    double shifted_f;
};

/* The analysis's and synthesis's bodies by the path they are compiled for: _base in their
 * own files, _avx2 where x86_avx2_pvoc.c compiles the same files again (it names them
 * before it includes this header). */
#ifndef MX_PVOC_VARIANT
#define MX_PVOC_VARIANT(name) name##_base
#endif

/* The time-weighted window centred f frames after the frame's centre (|f| <= 1/2):
 * (i - n/2 - f) sin^2(pi (i - f) / n). */
static inline void mx_shifted_time_window(float *restrict dst, size_t n, double f) {
    for (size_t i = 0; i < n; i++) {
        double u = (double)i - f, s = sin(mx_pi * u / (double)n);
        dst[i] = (float)(s * s * (u - (double)(n / 2)));
    }
}

/* x wrapped into about [-pi, pi] (the nearest whole number of turns taken off; |x| < 2^31
 * turns). A conversion, not floorf: it vectorises without SSE4.1. */
static inline float mx_princarg(float x) {
    float turns = x * (float)(1 / (2 * mx_pi));
    float whole = (float)(int32_t)(turns + (turns >= 0 ? 0.5f : -0.5f));
    return x - (float)(2 * mx_pi) * whole;
}

#endif
