/* The phase vocoder's synthesis: PGHI's phases from the analysed frames, each channel
 * rotated to them, and the overlap-add. */
#include "pvoc.h"

/* A max-priority queue of entries by key, to a bucket's width: pushes and pops are O(1),
 * and a pop finds the highest bucket used from a bit per bucket (64 buckets a word; a
 * scan down the empty buckets one by one took an eighth of the synthesis). Entries in one
 * bucket come out last in, first out. PGHI needs "about the strongest first", not a total
 * order: a binary heap did the same work in a quarter of the whole stretch's time.
 *
 * Each bucket is a list linked both ways, so an entry that can no longer set a bin leaves
 * it at once instead of being popped for nothing: a bin's step in time when a neighbour
 * sets the bin first (mx_queue_remove_time), and a bin's step in frequency is not pushed
 * when both its neighbours are set (mx_queue_push_if). Two thirds of the time steps and a third
 * of the frequency steps popped for nothing; the entries that remain come out in the same
 * order, so the phases are the same. An entry not pushed goes to the spare entry of the
 * spare bucket (MX_BUCKETS), which nothing pops: no branch on whether it is pushed. */
typedef struct {
    int32_t *head;           /* MX_BUCKETS + 1: the newest entry in each bucket, or -1 */
    int32_t *next, *prev;    /* 2 bins + 3: the entry pushed before it (after it) into its bucket, or -1 */
    int32_t *slot;           /* bins: the bucket bin k's step in time waits in, or -1 */
    int32_t spare;           /* 2 bins: the entry the lists' ends and the pushes not made write to */
    int32_t absent;          /* 2 bins + 1: removed for a bin with no step waiting; its neighbour 2 bins + 2 */
    float floor, scale;      /* bucket = (key - floor) * scale, clamped to the range */
    uint32_t words;          /* bit w: used[w] is not 0 (the queue is empty when this is 0) */
    uint64_t used[MX_BUCKETS / 64 + 1];   /* bit b of word w: bucket 64 w + b holds entries (the spare bucket's: never) */
} mx_queue;

_Static_assert(MX_BUCKETS % 64 == 0 && MX_BUCKETS / 64 <= 32, "the queue's bits are whole words, and one word of words");

/* Pushes and pops do not branch: a branch on data that goes either way (a clamp, a new
 * top, a bucket left empty) mispredicts about half the time, and PGHI's mispredictions
 * were a third of the stretch's cycles. A pop finds the highest bucket used from two
 * levels of bits (`words`, then `used`), without a loop. */
static inline int32_t mx_bucket_of(float key, float lowest, float scale) {
    /* fmaxf first: a NaN key lands in bucket 0, not at an index out of range. */
    return (int32_t)fminf(fmaxf((key - lowest) * scale, 0.0f), (float)(MX_BUCKETS - 1));
}

static int32_t mx_queue_bucket(const mx_queue *q, float key) { return mx_bucket_of(key, q->floor, q->scale); }

/* Entry v to the head of bucket `at`'s list (the spare bucket's too). */
static void mx_queue_link(mx_queue *q, int32_t v, int32_t at) {
    int32_t newest = q->head[at];
    q->next[v] = newest;
    q->prev[v] = -1;
    q->prev[__builtin_unpredictable(newest >= 0) ? newest : q->spare] = v;
    q->head[at] = v;
}

/* Bucket t's bit cleared if its list is empty, and its word's if that leaves none. */
static void mx_queue_note_empty(mx_queue *q, int32_t t) {
    int32_t w = t >> 6;
    q->used[w] &= ~((uint64_t)(q->head[t] < 0) << (t & 63));
    q->words &= ~((uint32_t)(q->used[w] == 0) << w);
}

static int32_t mx_queue_push_at(mx_queue *q, uint32_t v, int32_t bucket) {
    mx_queue_link(q, (int32_t)v, bucket);
    q->used[bucket >> 6] |= (uint64_t)1 << (bucket & 63);
    q->words |= (uint32_t)1 << (bucket >> 6);
    return bucket;
}

static int32_t mx_queue_push(mx_queue *q, uint32_t v, float key) { return mx_queue_push_at(q, v, mx_queue_bucket(q, key)); }

/* Pushes v into `bucket` if `push` (0 or 1), and otherwise writes the spare entry to the
 * spare bucket. */
static void mx_queue_push_if(mx_queue *q, int push, uint32_t v, int32_t bucket) {
    mx_queue_link(q, push ? (int32_t)v : q->spare, push ? bucket : MX_BUCKETS);
    q->used[bucket >> 6] |= (uint64_t)push << (bucket & 63);
    q->words |= (uint32_t)push << (bucket >> 6);
}

/* Only with words != 0. */
static uint32_t mx_queue_pop(mx_queue *q) {
    int32_t w = 31 - __builtin_clz(q->words);
    int32_t top = w * 64 + 63 - __builtin_clzll(q->used[w]);
    int32_t v = q->head[top];
    int32_t rest = q->next[v];
    q->head[top] = rest;
    q->prev[__builtin_unpredictable(rest >= 0) ? rest : q->spare] = -1;
    mx_queue_note_empty(q, top);
    return (uint32_t)v;
}

/* Bin k's step in time out of the queue, if it waits there (k is set another way). If it
 * does not, the absent entry is taken out of the spare bucket instead: its neighbour both
 * ways is one more spare (2 bins + 2), so that writes only that entry (no branch). */
static void mx_queue_remove_time(mx_queue *q, size_t k) {
    int32_t slot = q->slot[k];
    int32_t here = -(int32_t)(slot >= 0);   /* all ones, or 0: selects without a branch */
    int32_t v = ((int32_t)k & here) | (q->absent & ~here), bucket = (slot & here) | (MX_BUCKETS & ~here);
    int32_t before = q->prev[v], after = q->next[v];
    int32_t first = -(int32_t)(before < 0);
    q->next[(q->spare & first) | (before & ~first)] = after;
    q->head[bucket] = (after & first) | (q->head[bucket] & ~first);
    q->prev[__builtin_unpredictable(after >= 0) ? after : q->spare] = before;
    mx_queue_note_empty(q, bucket);
}

#if defined(MX_PVOC_LEFT_PACK)
/* AVX2's copy (x86_avx2_pvoc.c) lists bins eight at a time: for each mask of eight lanes,
 * the lanes set, packed four bits each, lowest first. */
static const uint32_t mx_left_pack[256] = {
    0x00000000, 0x00000000, 0x00000001, 0x00000010, 0x00000002, 0x00000020, 0x00000021, 0x00000210,
    0x00000003, 0x00000030, 0x00000031, 0x00000310, 0x00000032, 0x00000320, 0x00000321, 0x00003210,
    0x00000004, 0x00000040, 0x00000041, 0x00000410, 0x00000042, 0x00000420, 0x00000421, 0x00004210,
    0x00000043, 0x00000430, 0x00000431, 0x00004310, 0x00000432, 0x00004320, 0x00004321, 0x00043210,
    0x00000005, 0x00000050, 0x00000051, 0x00000510, 0x00000052, 0x00000520, 0x00000521, 0x00005210,
    0x00000053, 0x00000530, 0x00000531, 0x00005310, 0x00000532, 0x00005320, 0x00005321, 0x00053210,
    0x00000054, 0x00000540, 0x00000541, 0x00005410, 0x00000542, 0x00005420, 0x00005421, 0x00054210,
    0x00000543, 0x00005430, 0x00005431, 0x00054310, 0x00005432, 0x00054320, 0x00054321, 0x00543210,
    0x00000006, 0x00000060, 0x00000061, 0x00000610, 0x00000062, 0x00000620, 0x00000621, 0x00006210,
    0x00000063, 0x00000630, 0x00000631, 0x00006310, 0x00000632, 0x00006320, 0x00006321, 0x00063210,
    0x00000064, 0x00000640, 0x00000641, 0x00006410, 0x00000642, 0x00006420, 0x00006421, 0x00064210,
    0x00000643, 0x00006430, 0x00006431, 0x00064310, 0x00006432, 0x00064320, 0x00064321, 0x00643210,
    0x00000065, 0x00000650, 0x00000651, 0x00006510, 0x00000652, 0x00006520, 0x00006521, 0x00065210,
    0x00000653, 0x00006530, 0x00006531, 0x00065310, 0x00006532, 0x00065320, 0x00065321, 0x00653210,
    0x00000654, 0x00006540, 0x00006541, 0x00065410, 0x00006542, 0x00065420, 0x00065421, 0x00654210,
    0x00006543, 0x00065430, 0x00065431, 0x00654310, 0x00065432, 0x00654320, 0x00654321, 0x06543210,
    0x00000007, 0x00000070, 0x00000071, 0x00000710, 0x00000072, 0x00000720, 0x00000721, 0x00007210,
    0x00000073, 0x00000730, 0x00000731, 0x00007310, 0x00000732, 0x00007320, 0x00007321, 0x00073210,
    0x00000074, 0x00000740, 0x00000741, 0x00007410, 0x00000742, 0x00007420, 0x00007421, 0x00074210,
    0x00000743, 0x00007430, 0x00007431, 0x00074310, 0x00007432, 0x00074320, 0x00074321, 0x00743210,
    0x00000075, 0x00000750, 0x00000751, 0x00007510, 0x00000752, 0x00007520, 0x00007521, 0x00075210,
    0x00000753, 0x00007530, 0x00007531, 0x00075310, 0x00007532, 0x00075320, 0x00075321, 0x00753210,
    0x00000754, 0x00007540, 0x00007541, 0x00075410, 0x00007542, 0x00075420, 0x00075421, 0x00754210,
    0x00007543, 0x00075430, 0x00075431, 0x00754310, 0x00075432, 0x00754320, 0x00754321, 0x07543210,
    0x00000076, 0x00000760, 0x00000761, 0x00007610, 0x00000762, 0x00007620, 0x00007621, 0x00076210,
    0x00000763, 0x00007630, 0x00007631, 0x00076310, 0x00007632, 0x00076320, 0x00076321, 0x00763210,
    0x00000764, 0x00007640, 0x00007641, 0x00076410, 0x00007642, 0x00076420, 0x00076421, 0x00764210,
    0x00007643, 0x00076430, 0x00076431, 0x00764310, 0x00076432, 0x00764320, 0x00764321, 0x07643210,
    0x00000765, 0x00007650, 0x00007651, 0x00076510, 0x00007652, 0x00076520, 0x00076521, 0x00765210,
    0x00007653, 0x00076530, 0x00076531, 0x00765310, 0x00076532, 0x00765320, 0x00765321, 0x07653210,
    0x00007654, 0x00076540, 0x00076541, 0x00765410, 0x00076542, 0x00765420, 0x00765421, 0x07654210,
    0x00076543, 0x00765430, 0x00765431, 0x07654310, 0x00765432, 0x07654320, 0x07654321, 0x76543210,
};

/* Appends from + j for each set bit j of `mask` (eight bits) to list[count..], and returns
 * the new count: the bins in order, as the scalar loop lists them. Writes eight entries
 * (list holds eight past its bins). */
static inline size_t mx_pack8(uint32_t *restrict list, size_t count, unsigned mask, uint32_t from) {
    __m256i lanes = _mm256_srlv_epi32(_mm256_set1_epi32((int)mx_left_pack[mask]), _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28));
    lanes = _mm256_add_epi32(_mm256_and_si256(lanes, _mm256_set1_epi32(15)), _mm256_set1_epi32((int)from));
    _mm256_storeu_si256((__m256i *)(list + count), lanes);
    return count + (size_t)__builtin_popcount(mask);
}
#endif

/* R for frame f by the time map (its unrounded hop), or `time_scale` (the rounded centres')
 * for a first frame. */
static inline double mx_map_scale(const mx_pv_frame *f, float time_scale) {
    return f->map_scale > 0 ? f->map_scale : (double)time_scale;
}

/* The frame's content `shift` whole frames later: phase[k] -= 2 pi k shift / n on [lo, hi). */
static void mx_shift_phases(float *restrict phase, size_t n, double shift, size_t lo, size_t hi) {
    for (size_t k = lo; k < hi; k++)
        phase[k] = mx_princarg(phase[k] - (float)(2 * mx_pi * (double)k / (double)n * shift));
}

/* A phase reset lands the frame where the time map puts it. The analysis phases sound the
 * frame's content d frames from its centre at d from the output's centre; the map puts it at
 * R (d + e), e the centre's rounding (position - exact), with R and the centre the map's
 * own, unrounded. The whole frame moves by that at one d, rounded to whole frames: a
 * fractional shift of a click rings over the frame (-60 dB), and a shift per bin by its own
 * local time smears it (a bin's local time is noisy to a frame, which turns into a phase
 * error of pi at bin n/4). The d is its energy's centre in time (the reassigned local
 * times, weighted by energy); where the caller renormalises (mx_pvoc_set_renormalised: the
 * long frame alone, near 1), where the onset the frame was cut for begins to sound
 * (f->onset_behind), so that the attack lands on round(R T) and what follows it moves
 * instead.
 * Measured: through the long frame alone, a click stretched by 2 lands on its frame with
 * nothing above -120 dB in the 20 ms either side; round-trip PESQ on 20 espeak-ng
 * sentences +0.06, +0.02, -0.01 and +0.10 at 0.5, 0.8, 1.25 and 2 over the slope alone.
 * By the energy's centre a chord's attack after silence landed (1 - R) times its centre's
 * distance from the onset early when compressing (its first 3 ms 0.45 dB off at 0.95, the
 * 2 ms before it -6.9 dB), and that much late when stretching (16 frames at 1.05; by the
 * onset its first 3 ms 0.11 dB off, 0.17 before, and bursts of noise 0.36 dB loud at 1.1).
 * With two resolutions the energy's centre stays: by the onset a tone that stops rang on
 * 1.6 dB longer at 3/2. By the rounded centres and time scale 150 clicks landed up to 1.16
 * frames off, now within 0.5. Returns the shift, output frames. */
static double mx_land(const mx_pvoc *restrict p, const mx_pv_frame *restrict f, float *restrict phase, float time_scale,
                      size_t lo, size_t hi) {
    size_t n = p->n;
    double scale = mx_map_scale(f, time_scale);
    double centre = p->renormalised ? f->onset_behind : NAN;
    if (centre != centre) {
        double weighted = 0, energy = 0;
        for (size_t k = lo; k < hi; k++) {
            double m2 = (double)f->sum_mag[k] * (double)f->sum_mag[k];
            weighted += m2 * (double)f->local_time[k];
            energy += m2;
        }
        centre = energy > 0 ? weighted / energy : 0;
    }
    /* Within the frame's output: |R d| < n / 2. Compressing, every d in the frame lands in
     * it (a clamp at 0.45 n put a click entering a frame's edge 10 frames off, and the
     * frames after it, integrating from it, smeared it: -27 dB against -38 dB of a click's
     * own frame outside 1 ms of it at 1/2). */
    if (time_scale > 1.0f) {
        double limit = 0.45 * (double)n / (double)time_scale;
        centre = centre < -limit ? -limit : (centre > limit ? limit : centre);
    }
    /* Output frames, rounded to the nearest land_step (whole frames; of the full rate on a
     * decimated input, where a band far below the engine's Nyquist shifts by a fraction
     * without ringing). */
    double shift = round(((scale - 1.0) * centre + scale * (f->position - f->exact)) / p->land_step) * p->land_step;
    if (shift != 0) mx_shift_phases(phase, n, shift, lo, hi);
    return shift;
}


/* Close partials. Near two steady partials whose main lobes overlap (a minor third at 330
 * Hz is 2.7 to 2.9 bins of the long frame), every bin between them holds both, added with
 * their phases as analysed. A bin takes one rotation, its lobe's partial's: the other
 * partial's share in it turns with it, and the frames sound that share where the input's
 * relation of the two phases puts it, not the output's. Overlap-added, the two beat at
 * (1 - 1/R) times their distance: two sines 62 Hz apart at 21/20 came out 10 % up and down
 * in level and 0.12 radians in phase at 3 Hz (Signalsmith, with 120 ms frames: 0.05 % and
 * 0.0002), and a chord's notes wobbled by 0.02 cents. An 85 ms frame resolves them, but
 * costs music's attacks (round trip at 1.05 1.41 -> 1.59 dB). So each bin near such
 * partials is taken apart: a partial's share of it is its amplitude times the Hann
 * window's transform at its distance, the amplitudes solved from the partials' own bins
 * (a tridiagonal system per group of close partials: each partial against its next
 * neighbours), and each share turns with its own partial, the rest with the bin.
 * Measured: the two sines 0.1 % and 0.001 radians; the bench's chord (C4 E4 G4 C5) over
 * any second within 0.0016 cents from 0.95 to 1.05 (0.025 before); the bench's ten music
 * clips' round trip 0.0005 to 0.004 dB closer from 0.95 to 1.1 (docs/spectral.md, "Close
 * partials").
 * Which partials: peaks within MX_PARTIAL_RANGE of the frame's loudest bin (40 dB, on the
 * log keys), peaks in the frame before too, MX_PARTIAL_GAP bins or closer to the next,
 * and whose model explains the bins beside their own to MX_PARTIAL_FIT of their energy.
 * Without that test the chance peaks of noise came too, and took from music's round
 * trip: 0.739 -> 0.744 dB at 1.003 with every steady peak, 0.762 with 60 dB. The gap was
 * 6 bins (the transform under 0.3 % from there): partials 7 to 10 bins apart (300, 470
 * and 710 Hz in the bench's stereo mix) still leaked into each other's lobes at the other's
 * turn, and the mono sum came out 4e-5 to 8e-5 dB off, the stereo phase 2e-5 to 5e-5
 * degrees (a float STFT that changes nothing: under 7e-7). At 11 bins: 6e-6 dB and 1e-6 to
 * 4e-6 degrees over the bench's cells from 0.95 to 1.05, every other cell level, +0.9 %
 * instructions on orchestral music at 1.003.
 * A share turns over MX_PARTIAL_REACH bins either side of its partial. At 4, the leaks 5 to
 * 8 bins off (the transform -50 to -65 dB there) still turned with the other partial: the
 * stereo mix's channel sum 1.8e-5 to 2.2e-5 dB off at 300 Hz, its phase up to 1.9e-5
 * degrees (the bench's cells' means 5e-6 to 7e-6 dB, 5e-7 to 3.7e-6 degrees). At 8 (with
 * the partials' own steps, mx_step_terms): 7.5e-7 to 9.3e-7 dB and 1.7e-7 to 6.5e-7
 * degrees, and in one pass of the chord what its four notes do not explain is 2 to 9 dB
 * lower (-64.6 -> -73.2 dB at 1.05). It costs the synthetic chord's round trip 0.005 to
 * 0.007 dB of log-spectral distance (0.0727 -> 0.0769 at 1.003), in bins 5 to 7, below its
 * C4; the notes' levels within 0.0002 dB and their phases within 0.001 degrees of the
 * input's either way. A partial's phase against its bin's goes into the integration
 * (mx_partial_phases), and its rotation turns back by it (mx_partial_turns). */
#define MX_PARTIAL_RANGE (-4.605170186f)
#define MX_PARTIAL_GAP 11
#define MX_PARTIAL_FIT 0.03f
#define MX_PARTIAL_REACH 8
/* A partial's own bin at least this far inside the band. */
#define MX_PARTIAL_EDGE 4
/* Passes of mx_partial_frequencies, from the reassigned frequency or, for a partial that
 * held its bin's phase in the frame before (partial_delta_prev), from its frequency there
 * when the two are within MX_PARTIAL_WARM bins. Where two partials' lobes overlap (the
 * chord's E4 and G4, 2.7 bins apart) each pass moves one by what the other's last moved,
 * and they converge slowly: from the reassigned frequency, two passes left the chord's
 * notes 1.7e-5 and 2.8e-5 cents off on average at 0.95 and 1.05 (every neighbour taken
 * out), four 6.9e-6 and 5.6e-6, each pass 4 % of the instructions of a stretch of
 * orchestral music at 1.003; two from the frame before's, 7.3e-6 and 4.8e-6. (C4 and C5,
 * 11 bins apart, past the reach, are still 1e-4 to 3e-4 bins off each frame.) */
#define MX_PARTIAL_PASSES 2
#define MX_PARTIAL_WARM 0.1f

/* The periodic Hann window's transform, 1 at 0, at d + o bins from a frequency, s = sin(pi d)
 * (|d| <= 1/2, o whole): sin(pi v) / (pi v (1 - v^2)), v = d + o, sin(pi v) = (-1)^o s.
 * (v = +-1 only with d = 0: the partial on a bin.) */
static inline float mx_hann_at(float s, float d, int o) {
    float v = d + (float)o;
    if (fabsf(d) < 1e-5f) return o == 0 ? 1.0f : (o == 1 || o == -1) ? 0.5f : 0.0f;
    return ((o & 1) ? -s : s) / ((float)mx_pi * v * (1.0f - v * v));
}

/* Groups of close partials among c[0..count) (in bin order), each row of each group's
 * system factorised; a partial with none close is left out. In place; returns how many. */
static size_t mx_partial_groups(mx_partial *restrict c, size_t count) {
    size_t kept = 0;
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (j + 1 < count && c[j + 1].k - c[j].k <= MX_PARTIAL_GAP) j++;
        for (size_t t = i; j > i && t <= j; t++) {
            mx_partial q = c[t];
            /* Row t: its own partial at its bin, and its neighbours' transforms there. */
            float upper = t < j ? mx_hann_at(c[t + 1].s, c[t + 1].d, q.k - c[t + 1].k) : 0.0f;
            q.lower = t > i ? mx_hann_at(c[kept - 1].s, c[kept - 1].d, q.k - c[kept - 1].k) : 0.0f;
            q.inv = 1.0f / (q.h[MX_PARTIAL_REACH] - (t > i ? q.lower * c[kept - 1].cp : 0.0f));
            q.cp = upper * q.inv;
            q.last = t == j;
            c[kept++] = q;
        }
        i = j + 1;
    }
    return kept;
}

/* sin(pi d) for |d| <= 1/2: odd Taylor terms to x^11 (under 1e-7 over the range; libm's
 * sinf was 2 % of a stretch near 1). */
static inline float mx_sin_pi_half(float d) {
    float x = (float)mx_pi * d, x2 = x * x;
    return x * (1.0f + x2 * (-1.0f / 6 + x2 * (1.0f / 120 + x2 * (-1.0f / 5040 + x2 * (1.0f / 362880 + x2 * (-1.0f / 39916800))))));
}

/* A partial's frequency set: d bins below its bin (|d| <= 1/2), and its transform there
 * (mx_hann_at, in a loop without a branch: it vectorises). */
static inline void mx_partial_at(mx_partial *restrict q, float d) {
    q->d = d;
    float s = q->s = mx_sin_pi_half(d);
    if (fabsf(d) < 1e-5f) {
        for (int o = -MX_PARTIAL_REACH; o <= MX_PARTIAL_REACH; o++) q->h[o + MX_PARTIAL_REACH] = mx_hann_at(s, d, o);
        return;
    }
    float *restrict h = q->h;
    for (int i = 0; i < 2 * MX_PARTIAL_REACH + 1; i++) {
        float v = d + (float)(i - MX_PARTIAL_REACH);
        h[i] = (((i - MX_PARTIAL_REACH) & 1) ? -s : s) / ((float)mx_pi * v * (1.0f - v * v));
    }
}

/* (vr, vi) less the shares at bin k (by the amplitudes (ar, ai)) of every partial whose
 * reach holds k, but partial t and the `near` either side of it in the list. */
static inline void mx_take_shares(const mx_partial *restrict c, size_t count, size_t t, size_t near, int32_t k,
                                  const float *restrict ar, const float *restrict ai, float *restrict vr, float *restrict vi) {
    float r = *vr, i = *vi;
    for (size_t j = t > near ? t - near : 0; j-- > 0 && c[j].k + MX_PARTIAL_REACH >= k;) {
        float h = c[j].h[k - c[j].k + MX_PARTIAL_REACH];
        r -= ar[j] * h;
        i -= ai[j] * h;
    }
    for (size_t j = t + near + 1; j < count && c[j].k - MX_PARTIAL_REACH <= k; j++) {
        float h = c[j].h[k - c[j].k + MX_PARTIAL_REACH];
        r -= ar[j] * h;
        i -= ai[j] * h;
    }
    *vr = r;
    *vi = i;
}

/* The groups' tridiagonal systems solved for right-hand sides (xr, xi) at the partials'
 * own bins less (fr, fi) each (the shares of partials two or more away), into (ar, ai). */
static void mx_partial_solve(const mx_partial *restrict c, size_t count, const float *restrict xr, const float *restrict xi,
                             float *restrict ar, float *restrict ai) {
    for (size_t i = 0; i < count;) {
        size_t j = i;
        while (!c[j].last) j++;
        float pr = 0, pi = 0;
        for (size_t t = i; t <= j; t++) {
            pr = (xr[c[t].k] - c[t].fr - c[t].lower * pr) * c[t].inv;
            pi = (xi[c[t].k] - c[t].fi - c[t].lower * pi) * c[t].inv;
            ar[t] = pr;
            ai[t] = pi;
        }
        for (size_t t = j; t-- > i;) {
            ar[t] -= c[t].cp * ar[t + 1];
            ai[t] -= c[t].cp * ai[t + 1];
        }
        i = j + 1;
    }
}

/* Each partial's amplitude in x (a channel's spectrum, or the sum), into (ar, ai): the
 * groups' systems hold each partial's next neighbours; the shares of the partials two or
 * more away within MX_PARTIAL_REACH (their transforms 1e-3 to 1e-4 at its bin: G4 at C4's
 * bin in the bench's chord) are taken out with the first solve's amplitudes and the
 * systems solved again (what is left is of the order of their square) when far is set.
 * With the next neighbours only, here and in mx_partial_frequencies, the chord's E4 and
 * G4 were estimated 1e-3 bins off, frame by frame (2e-5 with every one in reach). */
static void mx_partial_amplitudes(mx_partial *restrict c, size_t count, const float *restrict xr, const float *restrict xi,
                                  float *restrict ar, float *restrict ai, int far) {
    for (size_t t = 0; t < count; t++) c[t].fr = c[t].fi = 0.0f;
    mx_partial_solve(c, count, xr, xi, ar, ai);
    if (!far) return;
    for (size_t t = 0; t < count; t++) {
        float vr = 0, vi = 0;
        mx_take_shares(c, count, t, 1, c[t].k, ar, ai, &vr, &vi);
        c[t].fr = -vr;
        c[t].fi = -vi;
    }
    mx_partial_solve(c, count, xr, xi, ar, ai);
}

/* Each partial's frequency again, from its own bins with the shares of every partial in
 * reach (by the amplitudes (ar, ai) in x) taken out: the ratio of the Hann window's transform at its
 * louder side bin to its own bin's, (1 + d) / (2 - d) at d bins above it. The reassigned
 * frequency (the first estimate) is pulled by a neighbour's lobe: two tones 2.7 bins
 * apart, mixed 1 : 0.5 in a channel, still swung 0.5 % in level at 21/20 and 1.003 with
 * it, 0.1 % (as the input measures) after two passes. */
static void mx_partial_frequencies(mx_partial *restrict c, size_t count, const float *restrict xr, const float *restrict xi,
                                   const float *restrict ar, const float *restrict ai) {
    for (size_t t = 0; t < count; t++) {
        float am = sqrtf(ar[t] * ar[t] + ai[t] * ai[t]), side[3];
        for (int o = -1; o <= 1; o++) {
            int32_t k = c[t].k + o;
            float vr = xr[k], vi = xi[k];
            mx_take_shares(c, count, t, 0, k, ar, ai, &vr, &vi);
            /* Its part along the partial's own amplitude (the transform is real). */
            side[o + 1] = am > 0 ? (vr * ar[t] + vi * ai[t]) / am : 0.0f;
        }
        float up = side[2] >= side[0] ? (2 * side[2] - side[1]) / (side[1] + side[2]) : (side[1] - 2 * side[0]) / (side[0] + side[1]);
        up = up != up ? 0.0f : up < -0.5f ? -0.5f : up > 0.5f ? 0.5f : up;
        mx_partial_at(&c[t], -up);
    }
}

/* Frame f's close partials (mx_partial) into p->partials, each with its phase against its
 * bin's (mx_partial_phases, mx_partial_turns); p->partial_count 0 for none. */
static void mx_close_partials(mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev, float largest,
                              size_t lo, size_t hi) {
    mx_partial *restrict c = p->partials;
    const float *restrict m = f->sum_mag, *restrict mp = prev->sum_mag, *restrict key = p->key;
    float loud = largest + MX_PARTIAL_RANGE, to_bins = (float)p->n / (float)(2 * mx_pi);
    size_t count = 0;
    /* A partial's own bin MX_PARTIAL_EDGE inside the band, none folded over from below 0 or
     * past the Nyquist bin (the transform of its image would be there too); its reach is
     * cut at the band's edges (olo, ohi). */
    size_t edge_lo = lo > 1 ? lo : 1, edge_hi = hi < p->bins - 1 ? hi : p->bins - 1;
    size_t from = edge_lo + MX_PARTIAL_EDGE, to = edge_hi;
    /* The peaks listed first, without a branch per bin (most bins are none). */
    uint32_t *restrict order = p->order;
    size_t peaks = 0, k = from;
#if defined(MX_PVOC_LEFT_PACK)
    for (; k + 8 + MX_PARTIAL_EDGE <= to; k += 8) {
        __m256 here = _mm256_loadu_ps(m + k), before = _mm256_loadu_ps(mp + k);
        __m256 peak = _mm256_and_ps(_mm256_cmp_ps(here, _mm256_loadu_ps(m + k - 1), _CMP_GT_OQ),
                                    _mm256_cmp_ps(here, _mm256_loadu_ps(m + k + 1), _CMP_GE_OQ));
        __m256 was = _mm256_and_ps(_mm256_cmp_ps(before, _mm256_loadu_ps(mp + k - 1), _CMP_GE_OQ),
                                   _mm256_cmp_ps(before, _mm256_loadu_ps(mp + k + 1), _CMP_GE_OQ));
        __m256 loud_enough = _mm256_cmp_ps(_mm256_loadu_ps(key + k), _mm256_set1_ps(loud), _CMP_GT_OQ);
        peaks = mx_pack8(order, peaks, (unsigned)_mm256_movemask_ps(_mm256_and_ps(_mm256_and_ps(peak, was), loud_enough)), (uint32_t)k);
    }
#endif
    for (; k + MX_PARTIAL_EDGE < to; k++) {
        order[peaks] = (uint32_t)k;
        peaks += (size_t)((m[k] > m[k - 1]) & (m[k] >= m[k + 1]) & (key[k] > loud) & (mp[k] >= mp[k - 1]) & (mp[k] >= mp[k + 1]));
    }
    /* Only peaks with another close by take the transforms. */
    for (size_t i = 0; i < peaks; i++) {
        size_t k = order[i];
        if (!((i > 0 && k - order[i - 1] <= MX_PARTIAL_GAP) || (i + 1 < peaks && order[i + 1] - k <= MX_PARTIAL_GAP))) continue;
        float kappa = f->omega[k] * to_bins;
        kappa = kappa < (float)k - 0.5f ? (float)k - 0.5f : kappa > (float)k + 0.5f ? (float)k + 0.5f : kappa;
        if (kappa != kappa) kappa = (float)k;
        float was = (float)k - p->partial_d[k];
        if (p->partial_delta_prev[k] == p->partial_delta_prev[k] && fabsf(was - kappa) < MX_PARTIAL_WARM) kappa = was;
        mx_partial *q = &c[count++];
        q->k = (int32_t)k;
        q->olo = (int32_t)edge_lo - (int32_t)k > -MX_PARTIAL_REACH ? (int32_t)edge_lo - (int32_t)k : -MX_PARTIAL_REACH;
        q->ohi = (int32_t)edge_hi - 1 - (int32_t)k < MX_PARTIAL_REACH ? (int32_t)edge_hi - 1 - (int32_t)k : MX_PARTIAL_REACH;
        mx_partial_at(q, (float)k - kappa);
    }
    count = mx_partial_groups(c, count);
    if (count > 0) {
        /* The model of the sum; a partial whose bins beside its own it does not explain is
         * left out, and the groups made again. Scratch: p->y (n floats; 2 count + 2 are
         * used) for the amplitudes, p->re and p->im for the model. */
        float *ar = p->y, *ai = p->y + count + 1, *mr = p->re, *mi = p->im;
        mx_partial_amplitudes(c, count, f->sum_re, f->sum_im, ar, ai, 0);   /* a first estimate */
        for (int pass = 0; pass < MX_PARTIAL_PASSES; pass++) {
            mx_partial_frequencies(c, count, f->sum_re, f->sum_im, ar, ai);
            count = mx_partial_groups(c, count);
            mx_partial_amplitudes(c, count, f->sum_re, f->sum_im, ar, ai, 1);
        }
        for (size_t t = 0; t < count; t++)
            for (int o = c[t].olo; o <= c[t].ohi; o++) mr[c[t].k + o] = mi[c[t].k + o] = 0.0f;
        for (size_t t = 0; t < count; t++)
            for (int o = c[t].olo; o <= c[t].ohi; o++) {
                mr[c[t].k + o] += ar[t] * c[t].h[o + MX_PARTIAL_REACH];
                mi[c[t].k + o] += ai[t] * c[t].h[o + MX_PARTIAL_REACH];
            }
        size_t fit = 0;
        for (size_t t = 0; t < count; t++) {
            double missed = 0, held = 0;
            for (int o = -1; o <= 1; o += 2) {
                size_t k = (size_t)(c[t].k + o);
                double xr = f->sum_re[k], xi = f->sum_im[k], dr = xr - mr[k], di = xi - mi[k];
                missed += dr * dr + di * di;
                held += xr * xr + xi * xi;
            }
            if (missed <= (double)MX_PARTIAL_FIT * held) c[fit++] = c[t];
        }
        /* With every partial kept, the last pass's amplitudes are the groups'. */
        if (fit < count) {
            count = mx_partial_groups(c, fit);
            mx_partial_amplitudes(c, count, f->sum_re, f->sum_im, p->y, p->y + count + 1, 1);
        }
    }
    /* Each partial's phase against its bin's, e^(i delta) = A conj(X_k) / |A X_k| (into ur,
     * ui until mx_partial_turns). */
    if (count > 0) {
        const float *ar = p->y, *ai = p->y + count + 1;
        for (size_t t = 0; t < count; t++) {
            float xr = f->sum_re[c[t].k], xi = f->sum_im[c[t].k];
            float vr = ar[t] * xr + ai[t] * xi, vi = ai[t] * xr - ar[t] * xi;
            float m = sqrtf(vr * vr + vi * vi);
            c[t].ur = m > 0 ? vr / m : 1.0f;
            c[t].ui = m > 0 ? vi / m : 0.0f;
        }
    }
    p->partial_count = count;
}

/* Each close partial's own phase against its bin's (its amplitude's, with its neighbours'
 * shares solved out) into p->partial_delta at its bin, for PGHI's step in time
 * (mx_step_terms): the bin's phase holds the neighbours' lobes too (a note of a chord, -54
 * dB from the note 5.5 bins off), which turn against it at the notes' beat. Only where the
 * two are within MX_PARTIAL_OWN_PHASE (the partial holds its bin; the chord's notes: 0.02
 * radians at most); elsewhere NaN, and the bin is integrated as the bin. Where a partial's
 * model takes much of its bin from a neighbour its phase is the model's guess: taken
 * whatever the difference, music's round trip at 1.003 read 0.003 dB more on six held-out
 * pieces (0.5982 -> 0.6087 dB on hyperrogue's hr-domina-hunting), and 0.5969 with this. */
#define MX_PARTIAL_OWN_PHASE 0.03f
static void mx_partial_phases(mx_pvoc *restrict p) {
    mx_partial *restrict c = p->partials;
    for (size_t t = 0; t < p->partial_count; t++) {
        float delta = atan2f(c[t].ui, c[t].ur);
        int own = fabsf(delta) <= MX_PARTIAL_OWN_PHASE;
        p->partial_delta[c[t].k] = own ? delta : NAN;
        p->partial_d[c[t].k] = c[t].d;
        /* Integrated as the bin: turned as it (mx_partial_turns). */
        c[t].ur = own ? c[t].ur : 1.0f;
        c[t].ui = own ? c[t].ui : 0.0f;
    }
}

/* Each close partial's rotation (its bin's, from (p->sr, p->si) just made, turned back by
 * the partial's phase against the bin's: the partial's phase went into the integration, the
 * bin's into the rotation) and its share's turns at the bins it reaches. */
static void mx_partial_turns(mx_pvoc *restrict p) {
    mx_partial *restrict c = p->partials;
    const float *restrict ur = p->sr, *restrict ui = p->si;
    for (size_t t = 0; t < p->partial_count; t++) {
        size_t bin = (size_t)c[t].k;
        float er = c[t].ur, ei = -c[t].ui;
        c[t].ur = ur[bin] * er - ui[bin] * ei;
        c[t].ui = ur[bin] * ei + ui[bin] * er;
        for (int o = c[t].olo; o <= c[t].ohi; o++) {
            size_t k = (size_t)(c[t].k + o);
            float h = c[t].h[o + MX_PARTIAL_REACH];
            c[t].tr[o + MX_PARTIAL_REACH] = h * (c[t].ur - ur[k]);
            c[t].ti[o + MX_PARTIAL_REACH] = h * (c[t].ui - ui[k]);
        }
    }
}

/* Channel c's close partials' shares turned by their own rotations, not their bins': added
 * to its rotated spectrum (re, im). Scratch: p->fgrad (2 count + 2 floats), free by now. */
static void mx_add_partial_turns(mx_pvoc *restrict p, const mx_pv_frame *f, size_t ch, float *restrict re, float *restrict im) {
    mx_partial *restrict c = p->partials;
    size_t count = p->partial_count, b = p->bins;
    float *ar = p->fgrad, *ai = p->fgrad + count + 1;
    mx_partial_amplitudes(c, count, f->re + ch * b, f->im + ch * b, ar, ai, 1);
    for (size_t t = 0; t < count; t++)
        for (int o = c[t].olo; o <= c[t].ohi; o++) {
            size_t k = (size_t)(c[t].k + o);
            float tr = c[t].tr[o + MX_PARTIAL_REACH], ti = c[t].ti[o + MX_PARTIAL_REACH];
            re[k] += ar[t] * tr - ai[t] * ti;
            im[k] += ar[t] * ti + ai[t] * tr;
        }
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
    if (p->partial_count) mx_add_partial_turns(p, f, c, re, im);
    im[0] = 0;
    im[b - 1] = 0;
    mx_rfft_inverse(p->fft, y, re, im);
    const float *restrict w = p->window;
    for (size_t i = 0; i < half; i++) out[i] += y[i + half] * w[i];
    for (size_t i = half; i < n; i++) out[i] += y[i - half] * w[i];
}

/* R for frame f, the output hop over the input hop, from the frames' positions (the same
 * at every block size), with the log magnitudes either side of f and the input frames
 * between them (*span, 0 with f alone) for the log magnitude's slope in time. A bin's
 * local time d in the input sounds at R d in the output, where the time map puts it: the
 * frequency-direction slope is R times the analysis's. Measured on round-trip PESQ of 20
 * espeak-ng sentences: +0.19, +0.07, +0.07 and +0.10 at 0.5, 0.8, 1.25 and 2 (the slope
 * as analysed put an attack d from the centre (R - 1) d off). */
static float mx_time_scale(const mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev, const mx_pv_frame *next,
                           const float **lo, const float **hi, double *span) {
    *span = 0;
    *lo = f->sum_log;
    *hi = f->sum_log;
    double hops = 1;   /* output hops across `span` */
    if (prev && prev->valid && next->valid && next != f) { *lo = prev->sum_log; *hi = next->sum_log; *span = next->position - prev->position; hops = 2; }
    else if (next->valid && next != f) { *hi = next->sum_log; *span = next->position - f->position; }
    else if (prev && prev->valid) { *lo = prev->sum_log; *span = f->position - prev->position; }
    return *span > 0 ? (float)((double)p->hop * hops / *span) : 1.0f;
}

/* The share of the analysis's own residual each step of the integration keeps in time, at
 * R = time_scale: how far the analysis phase moved from what its frequency predicts over
 * the input hop. With all of it, a frame's phases are the analysis's plus an offset
 * carried along (Laroche and Dolson's identity phase locking, in PGHI's order), so at R = 1
 * the output is the input, noise keeps its own phases, and a Hann window's sidelobes their
 * signs. Round-trip PESQ on 8 espeak-ng sentences, none kept against all of it: 4.19 ->
 * 4.46 at 1, 2.90 -> 2.94, 3.69 -> 3.76, 3.83 -> 3.88, 3.90 -> 3.94, 3.90 -> 3.96 and 3.93
 * -> 4.01 at 0.5, 0.8, 0.95, 1.05, 1.25 and 1.5; at 2, 3.87 -> 3.81, so the share falls
 * from all of it at 1.5 to none at 2 (MX_KEEP_UNTIL, MX_KEEP_NONE). Since the seventh
 * session of 2026-11-27 that share is the time direction's only, and compressing it falls
 * the same way by 1/R; across bins the residual is kept whole at every ratio. On the
 * bench's first 6 sentences and 3 pieces, against all of it in both directions: at 0.5,
 * round-trip PESQ 2.913 -> 2.966 and ViSQOL 4.605 -> 4.614 (none in either direction:
 * 2.952 and 4.621, but a stereo mix's partials, each channel's sum, 0.005 dB off where the
 * residual across bins keeps them within 0.0015); at 2, against none in either, PESQ 3.917
 * -> 3.929, ViSQOL 4.669 -> 4.673. At 0.67 to 0.95 all of it is ahead of none (ViSQOL by
 * 0.002; PESQ at 0.8 and 0.95 by 0.02 and 0.03). */
static float mx_keep_share(float time_scale) {
    double stretch = time_scale >= 1.0f ? (double)time_scale : 1.0 / (double)time_scale;
    return stretch <= MX_KEEP_UNTIL ? 1.0f
         : stretch >= MX_KEEP_NONE ? 0.0f
         : (float)(log(MX_KEEP_NONE / stretch) / log(MX_KEEP_NONE / MX_KEEP_UNTIL));
}

/* The frequency-direction phase derivative of frame f into p->fgrad (radians per bin) and
 * the queue's keys into p->key (its log magnitudes; -inf outside [lo_bin, hi_bin), whose
 * phases are not integrated), from the time derivative of the log magnitude (a Gaussian
 * window's relation: lo to hi over span input frames) blended with the local time. */
static void mx_slopes(mx_pvoc *restrict p, const mx_pv_frame *f, const float *lo, const float *hi, double span,
                      float time_scale, size_t lo_bin, size_t hi_bin) {
    size_t n = p->n, b = p->bins;
    float *restrict fgrad = p->fgrad, *restrict key = p->key;
    const float *restrict local_time = f->local_time, *restrict sum_log = f->sum_log;
    for (size_t k = 0; k < lo_bin; k++) key[k] = -INFINITY;
    for (size_t k = hi_bin; k < b; k++) key[k] = -INFINITY;
#pragma clang loop vectorize(enable)
    for (size_t k = lo_bin; k < hi_bin; k++) {
        float dt = span > 0 ? (hi[k] - lo[k]) / (float)span : 0;   /* per input frame */
        /* Two estimates of the same slope, blended (MX_LOCAL_TIME_SHARE). */
        float from_magnitude = -p->gamma / (float)n * dt;
        float from_local_time = -(float)(2 * mx_pi) / (float)n * local_time[k];
        /* The magnitude's estimate is a Gaussian's relation; a Hann window's log slope runs
         * to infinity at its edges, so it is trusted less as the local time leaves the
         * centre (MX_MAGNITUDE_REACH). */
        float trust = 1 - fabsf(local_time[k]) * (float)MX_MAGNITUDE_REACH / (float)n;
        float magnitude_share = (1 - MX_LOCAL_TIME_SHARE) * (trust > 0 ? trust : 0);
        fgrad[k] = time_scale * (magnitude_share * from_magnitude + (1 - magnitude_share) * from_local_time);
        key[k] = sum_log[k];
    }
}

/* A phase reset: frame f's analysis phases as they are, landed where the time map puts
 * them, and a leader's where given (mx_pvoc_follow). */
static void mx_reset_phases(mx_pvoc *restrict p, const mx_pv_frame *f, float *restrict phase, float time_scale,
                            size_t lo_bin, size_t hi_bin) {
    p->since_reset = 0;
    memcpy(phase + lo_bin, f->sum_phase + lo_bin, (hi_bin - lo_bin) * sizeof(float));
    p->reset_frame = p->synthesised;
    p->reset_position = f->position;
    p->reset_shift = time_scale != 1.0f ? mx_land(p, f, phase, time_scale, lo_bin, hi_bin) : 0;
    for (size_t k = lo_bin; k < p->follow_hi; k++)
        if (p->follow[k] == p->follow[k]) phase[k] = p->follow[k];
}

/* Where the frames renormalise (the long frame alone, near 1), a frame after a reset that
 * may still hold its onset (n / 2 input frames behind its centre: up to n / 2hop frames
 * after it) sounds its analysis phases shifted as the reset landed its own: the input
 * itself, from where the reset put it, with nothing of PGHI's. Returns the shift, output
 * frames: the reset's, less the output frames since it, plus the input frames.
 * Through PGHI these frames turned a chord's attack after silence apart from the input's
 * at its edge, where their lobes' phases cannot follow it: its first 3 ms 0.01 to
 * 0.03 dB low from 0.99 to 1.01, a steady 0.4 % from the onset fading out over 300
 * frames (Signalsmith's 0.003 to 0.07). Sounded so, the attack's first 3 ms are the
 * input's to 4e-7 of its peak (1e-3 to 3e-3 before). These frames are up to four times
 * (R - 1) hops off the time map; the frame after them integrates from their phases, and
 * the map holds from there. Music's round trip moves by under 0.006 dB (docs/spectral.md,
 * "An attack, held near 1"). */
static double mx_hold_landing(mx_pvoc *restrict p, const mx_pv_frame *f, float *restrict phase, size_t lo_bin, size_t hi_bin) {
    double shift = p->reset_shift + (f->position - p->reset_position) - (double)(p->synthesised - p->reset_frame) * (double)p->hop;
    memcpy(phase + lo_bin, f->sum_phase + lo_bin, (hi_bin - lo_bin) * sizeof(float));
    if (shift != 0) mx_shift_phases(phase, p->n, shift, lo_bin, hi_bin);
    return shift;
}

/* An onset's reset in part, above p->onset_whole_hi. The onsets the rise finds near 1 in
 * a voice are plosives and the starts of words, over room noise and the breath before
 * them; a reset takes every bin to the analysis phases, landed by the onset, and in the
 * bins the onset did not reach (the noise above it) the reset and the PGHI frames that
 * overlap it sum their unrelated phases: the noise came out up to 3.5 dB low above 4 kHz
 * around each reset (a test's noise, 4 to 7 dB in its worst 10 ms), and ViSQOL read the
 * German and Danish voices of the bench at 4.685 against Signalsmith's 4.72 at 1.003.
 * So above the band only the bins whose magnitude at least doubled since the frame
 * before (MX_ONSET_BIN_RISE: those the onset brought) take the landing; the rest keep
 * PGHI's phases, in `phase` already. Every bin, down to the voice's band, cost the round
 * trip's log-spectral distance 0.336 -> 0.436 dB and PESQ 4.523 -> 4.511 on the bench's
 * 28 voices: a mix of two time alignments within a formant. From 12 kHz up (the caller's
 * band): ViSQOL 4.7262 -> 4.7277, PESQ level, distance 0.336 -> 0.342 dB. From 8 kHz the
 * bench read 4.7285 and 0.353, but held-out voices paid 0.017 dB of distance for 0.0007
 * of ViSQOL (12 kHz: 0.005 for 0.0004; docs/spectral.md, "An onset over noise"). */
#define MX_ONSET_BIN_RISE 2.0f
static double mx_reset_risen(mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev, float *restrict phase,
                             float time_scale, size_t lo_bin, size_t hi_bin) {
    float *restrict landed = p->landing;
    uint8_t *restrict risen = p->risen;
    memcpy(landed + lo_bin, f->sum_phase + lo_bin, (hi_bin - lo_bin) * sizeof(float));
    p->since_reset = 0;
    p->reset_frame = p->synthesised;
    p->reset_position = f->position;
    p->reset_shift = time_scale != 1.0f ? mx_land(p, f, landed, time_scale, lo_bin, hi_bin) : 0;
    p->reset_partial = 1;
    for (size_t k = lo_bin; k < hi_bin; k++) {
        risen[k] = k < p->onset_whole_hi || f->sum_mag[k] >= MX_ONSET_BIN_RISE * prev->sum_mag[k];
        if (risen[k]) phase[k] = landed[k];
    }
    return p->reset_shift;
}

/* A frame that holds a partial reset's landing: the bins that reset take the landing
 * (mx_hold_landing), the rest keep PGHI's phases, in `phase` already. */
static double mx_hold_risen(mx_pvoc *restrict p, const mx_pv_frame *f, float *restrict phase, size_t lo_bin, size_t hi_bin) {
    const uint8_t *restrict risen = p->risen;
    const float *restrict landed = p->landing;
    double shift = mx_hold_landing(p, f, p->landing, lo_bin, hi_bin);
    for (size_t k = lo_bin; k < hi_bin; k++)
        if (risen[k]) phase[k] = landed[k];
    return shift;
}

/* PGHI's queue for frame f after prev, its entries keyed on their log magnitude: k < b for
 * the previous frame's bin k, b + k for this one's. Bins at or under floor_log are done
 * (noise); a leader's phases are set into `phase` and done. Returns the bins left to set.
 *
 * In time only from bins the previous frame had phases for. A step in time is keyed on the
 * weaker of its two ends: where a sound decays, by this frame's magnitudes, so a peak
 * spreads its phase to its own main lobe before that lobe's bins carry their own offsets
 * on in time (offsets that drift apart bin by bin, and smeared a word's end into the pause
 * after it: 12 to 18 ms after it, -31 dB against -41; Bungee -52). Keyed on the previous
 * frame's, as in Průša and Holighaus, the decay went first. With less of the time residual
 * kept (stretch 1.5 to 2, either way) the key moves back to the previous frame's: there the
 * time steps carry the partials and the frequency steps cost ViSQOL (round trip at 2 and
 * 1/2, on 6 sentences and 3 pieces: -0.010 and -0.013, for +0.03 PESQ). Measured on those
 * at 0.67, 0.8, 1.05, 1.25 and 1.5: round-trip PESQ +0.18, +0.20, +0.19, +0.14 and +0.11;
 * ViSQOL -0.013, -0.004, -0.001, -0.003 and -0.004. Not within a frame's length of a phase
 * reset: there the steps in time carry an attack's phases from the frame that reset, and
 * the frequency steps, integrating the slope over every bin, put a click's energy before it
 * (pre-echo from 21 to 1 ms before a click -57 dB at 1.05, against -300).
 *
 * Except at a peak of the previous frame (a partial, where it was): its step in time is
 * keyed on its own past even as it decays, so a partial that fades beside a louder one
 * carries its own phase on instead of taking its louder neighbour's across the valley; the
 * bins beside a peak still take the weaker end, and its lobe from it. Measured (round trip,
 * `mixdown stretch` and back): log-spectral distance lower on every recorded clip of the
 * bench's quick set and of 7 held-out ones (ktuberling-data's el, da, ca and uk voices;
 * wesnoth's casualties_of_war, elvish-theme and frantic) at 0.8, 0.95, 1.05 and 1.25, by
 * 0.01 to 0.12 dB (orchestral music at 1.05: 2.153 -> 2.097 and 2.091 -> 2.007 dB, with
 * Signalsmith 1.987 and 1.963). Round-trip PESQ at 0.95 and 1.05: the recorded voices'
 * mean +0.06 and +0.02, espeak-ng's synthetic voices' -0.11 and -0.08 (docs/spectral.md,
 * "A partial carries itself on"). A word's end in the pause after it: -53.0 dB at 1.05
 * (-53.2 before), -54.7 at 5/4 (-56.0).
 *
 * A leader's phases are set first, and spread before anything else: the first bin past
 * them takes its phase from them, not from its own past, so a partial whose main lobe
 * straddles the last bin followed stays one partial. (Spread in their turn, the bins past
 * them kept their own phases, set apart from the leader's by how each engine began, and a
 * partial there lost up to 1.4 dB at R = 2.) A leader's bin too quiet to have a phase of
 * its own (NaN: a sine centred on bin m of this engine leaves the leader's bins 2m +- 2
 * empty, and their random phases in this engine's main lobe cost it up to 1.7 dB) is left
 * to this engine. */
static size_t mx_queue_seed(mx_pvoc *restrict p, mx_queue *q, const mx_pv_frame *prev, float *restrict phase, float keep,
                            float floor_log, float top_key, size_t lo_bin, size_t hi_bin, size_t *noise_bins) {
    size_t n = p->n, b = p->bins;
    const float *key = p->key, *prev_key = prev->sum_log;
    p->head[MX_BUCKETS] = -1;   /* the others are -1 between frames (mx_integrate) */
    for (size_t k = 0; k < b; k++) p->slot[k] = -1;
    p->prev[2 * b + 1] = p->next[2 * b + 1] = (int32_t)(2 * b + 2);
    *q = (mx_queue){p->head, p->next, p->prev, p->slot, (int32_t)(2 * b), (int32_t)(2 * b + 1), floor_log,
                    (float)(MX_BUCKETS - 1) / fmaxf(top_key - floor_log, 1e-6f), 0, {0}};
    /* Every flag written, and the count kept by lanes: both loops vectorise. */
    uint8_t *restrict done = p->done;
    uint32_t quiet = 0;
    for (size_t k = 0; k < b; k++) {
        uint8_t noise = !(key[k] > floor_log);
        done[k] = noise;
        quiet += noise;
    }
    size_t remaining = b - quiet;
    *noise_bins = quiet - (b - (hi_bin - lo_bin));   /* in the band: the keys outside it are -inf */
    float decay_share = p->since_reset < (long long)(n / p->hop) ? 0.0f : keep;
    /* The bins the previous frame had phases for, listed in bin order (their pushes' order),
     * then pushed: no branch on a bin's level. Not the bins quiet in this frame: they are
     * set already (noise), and their steps would pop for nothing. */
    uint32_t *restrict order = p->order;
    size_t first = lo_bin > p->prev_lo ? lo_bin : p->prev_lo;   /* a bin below had no phase to carry */
    size_t listed = 0, k = first;
#if defined(MX_PVOC_LEFT_PACK)
    for (; k + 8 <= hi_bin; k += 8) {
        __m256 loud = _mm256_cmp_ps(_mm256_loadu_ps(prev_key + k), _mm256_set1_ps(floor_log), _CMP_GT_OQ);
        __m256i unset = _mm256_cmpeq_epi32(_mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(done + k))), _mm256_setzero_si256());
        listed = mx_pack8(order, listed, (unsigned)_mm256_movemask_ps(_mm256_and_ps(loud, _mm256_castsi256_ps(unset))), (uint32_t)k);
    }
#endif
    for (; k < hi_bin; k++) {
        order[listed] = (uint32_t)k;
        listed += (prev_key[k] > floor_log) & !done[k];
    }
    /* Each bin's bucket for its step in time, over every bin from the first listed (a loop
     * that vectorises; the pushes below then only link). A peak of the previous frame (its
     * partial, as it was) carries itself on in time, keyed on its own past even as it
     * decays: only the bins beside a peak take the weaker end. The band's edges compare
     * with themselves (at least their own). */
    int32_t *restrict at = p->bucket;
    const float *restrict was = prev_key, *restrict now = key;
    float qfloor = q->floor, qscale = q->scale;
#define MX_TIME_BUCKET(k, below, above)                                                                   \
    mx_bucket_of(was[k] - (((was[k] >= was[below]) & (was[k] >= was[above]))                             \
                           ? 0.0f : decay_share * fmaxf(was[k] - now[k], 0)), qfloor, qscale)
    k = first;
    if (k < hi_bin && k == lo_bin) { at[k] = MX_TIME_BUCKET(k, k, k + 1 < hi_bin ? k + 1 : k); k++; }
    for (; k + 1 < hi_bin; k++) at[k] = MX_TIME_BUCKET(k, k - 1, k + 1);
    if (k < hi_bin) at[k] = MX_TIME_BUCKET(k, k - 1, k);
#undef MX_TIME_BUCKET
    for (size_t i = 0; i < listed; i++) {
        size_t k = order[i];
        p->slot[k] = mx_queue_push_at(q, (uint32_t)k, at[k]);
    }
    /* Then each bin's bucket for its step in frequency, for the drain (its key is the bin's
     * own: the bucket is ready before the step is pushed, off the pops' chain). */
    for (k = lo_bin; k < hi_bin; k++) at[k] = mx_bucket_of(now[k], qfloor, qscale);
    for (size_t k = lo_bin; k < p->follow_hi; k++) {
        if (p->follow[k] != p->follow[k]) continue;
        phase[k] = p->follow[k];
        if (!p->done[k]) { p->done[k] = 1; remaining--; }
        mx_queue_remove_time(q, k);
        p->slot[k] = -1;
        if (key[k] > floor_log) mx_queue_push(q, (uint32_t)(b + k), top_key);
    }
    return remaining;
}

/* Each integration step's terms, per bin, into p->steps, in loops that vectorise (the
 * queue's order does not change them): in time, hop_out w and the residual kept (keep of
 * it); up from k, the slope gu[k] and its residual ru[k]; down to j, the residual rd[j]
 * (its slope is gu[j]). The residuals only over the bins that keep them (p->keep_lo to
 * keep_hi), up and down whole at every ratio. */
static void mx_step_terms(mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev, float hop_in, float time_scale,
                          float keep, size_t lo_bin, size_t hi_bin) {
    size_t b = p->bins;
    float hop_out = (float)p->hop;
    const float *restrict fgrad = p->fgrad;
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
    size_t klo = p->keep_lo > lo_bin ? p->keep_lo : lo_bin, khi = p->keep_hi < hi_bin ? p->keep_hi : hi_bin;
    if (klo >= khi) return;
    /* Kept whole, the step is the analysis phases' own advance and the hops' difference at
     * the bin's frequency: summed so, no term is tens of radians (hop_out w is 33 radians
     * for a 997 Hz sine at 48 kHz, and each rounding of such a sum, the same frame after
     * frame, drifted its phase: 5e-5 cents flat or sharp near 1).
     * A close partial's bin is integrated as the partial (mx_partial_phases): its advance is
     * the partial's own phase's (the bin's less the partial's phase against it, delta, the
     * frame before's and this one's; 0 where a frame has no partial there: a partial that
     * begins or ends moves its bin between the two), and where both frames have it, the
     * frequency over the hops' difference is the advance's, w + r / hop_in (r: the advance
     * less w hop_in): the step is the advance times hop_out / hop_in, the phase vocoder's.
     * The reassigned w of a partial 2.6 to 5.6 bins from another (a chord's notes) is pulled
     * by the other's lobe the same way frame after frame, and (hop_out - hop_in) w turned
     * that into a steady pitch error (the bench's chord 2e-5 to 3.9e-4 cents off from 0.95
     * to 1.05); the bin's own advance holds the other's lobe turning against it. An error in
     * one frame's advance is the next frame's with the opposite sign: they add up to nothing.
     * Not at other bins: their advance is not a frequency (noise, a lobe's flank), and at a
     * partial with no close neighbour w is not pulled. */
    if (keep == 1.0f) {
        const float *restrict now = p->partial_delta, *restrict before = p->partial_delta_prev;
        for (size_t k = klo; k < khi; k++) {
            float w = 0.5f * (wo[k] + wn[k]);
            float own = (now[k] == now[k] ? now[k] : 0.0f) - (before[k] == before[k] ? before[k] : 0.0f);
            tstep[k] = mx_princarg(sp[k] - pp[k] + own) + (hop_out - hop_in) * w;
        }
        for (size_t t = 0; t < p->partial_count; t++) {
            size_t k = (size_t)p->partials[t].k;
            if (k < klo || k >= khi || before[k] != before[k]) continue;
            float w = 0.5f * (wo[k] + wn[k]);
            float r = mx_princarg(tstep[k] - hop_out * w);   /* the advance less w hop_in */
            tstep[k] += (hop_out - hop_in) * r / hop_in;
        }
    }
    else if (keep > 0)
        for (size_t k = klo; k < khi; k++) {
            float w = 0.5f * (wo[k] + wn[k]);
            rt[k] = keep * mx_princarg(sp[k] - pp[k] - hop_in * w);
        }
    /* Up from k to k + 1 (k + 1 keeps), and down from k + 1 to k (k keeps). */
    for (size_t k = klo > lo_bin ? klo - 1 : lo_bin; k + 1 < khi; k++)
        ru[k] = mx_princarg(sp[k + 1] - sp[k] - gu[k] / time_scale);
    for (size_t k = klo; k < khi && k + 1 < hi_bin; k++)
        rd[k] = mx_princarg(sp[k] - sp[k + 1] + gu[k] / time_scale);
}

/* Pops the queue until it is empty or every bin is set: in time from the previous frame's
 * synthesis phase (p->phase), in frequency from a neighbour already set. One loop: each
 * pop's step depends on the one before. */
static void mx_queue_drain(mx_pvoc *restrict p, mx_queue *shared_q, float *restrict phase, size_t *remaining, size_t lo_bin,
                           size_t hi_bin) {
    /* A copy the stores below cannot alias: its words and lists' pointers stay in registers. */
    mx_queue local = *shared_q, *q = &local;
    size_t b = p->bins, left = *remaining;
    uint8_t *restrict done = p->done;
    const float *restrict tstep = p->steps, *restrict rt = p->steps + b, *restrict gu = p->steps + 2 * b;
    const float *restrict ru = p->steps + 3 * b, *restrict rd = p->steps + 4 * b;
    const float *restrict previous = p->phase;   /* held: the stores to done[] (bytes) may alias p */
    const int32_t *restrict at = p->bucket;      /* each bin's step in frequency's bucket (mx_queue_seed) */
    /* Whether bin j, just set, leaves a neighbour to set: its step in frequency is pushed
     * only then (a neighbour past the band reads as j itself, which is set). */
#define MX_OPEN_NEIGHBOUR(j) (!done[(j) + 1 < hi_bin ? (j) + 1 : (j)] | !done[(j) > lo_bin ? (j) - 1 : (j)])
    while (left > 0 && q->words != 0) {
        uint32_t top = mx_queue_pop(q);
        if (top < b) {
            /* A step in time waits only while its bin is unset (mx_queue_remove_time). */
            size_t k = top;
            assert(!done[k]);
            phase[k] = previous[k] + tstep[k];
            phase[k] += rt[k];
            done[k] = 1;
            left--;
            mx_queue_push_if(q, MX_OPEN_NEIGHBOUR(k), (uint32_t)(b + k), at[k]);
        } else {
            size_t k = top - b;
            if (k + 1 < hi_bin && !done[k + 1]) {
                phase[k + 1] = phase[k] + gu[k];
                phase[k + 1] += ru[k];
                done[k + 1] = 1;
                left--;
                mx_queue_remove_time(q, k + 1);
                mx_queue_push_if(q, MX_OPEN_NEIGHBOUR(k + 1), (uint32_t)(b + k + 1), at[k + 1]);
            }
            if (k > lo_bin && !done[k - 1]) {
                phase[k - 1] = phase[k] - gu[k - 1];
                phase[k - 1] += rd[k - 1];
                done[k - 1] = 1;
                left--;
                mx_queue_remove_time(q, k - 1);
                mx_queue_push_if(q, MX_OPEN_NEIGHBOUR(k - 1), (uint32_t)(b + k - 1), at[k - 1]);
            }
        }
    }
#undef MX_OPEN_NEIGHBOUR
    *remaining = left;
    *shared_q = local;
}

/* A noise bin's phase from the generator's value: its top 24 bits as a share of a turn. */
static inline float mx_noise_phase(uint32_t value) { return (float)(2 * mx_pi) * (float)(value >> 8) / 16777216.0f; }

/* PGHI's integration (heap integration, with a bucket queue): from the strongest bins
 * outward (mx_queue_drain) until `remaining` bins are set; where nothing connects, from the
 * strongest unset bin at its analysis phase. Once the queue is empty, what is left are runs
 * of neighbouring unset bins between set ones, and nothing reaches across a set bin (no
 * step in time is left), so each run is its own: set from its strongest bin (the first of
 * equals) and spread, it comes out the same whichever run goes first. So one pass in bin
 * order, not a search of every bin for the strongest of all at each (near the tolerance
 * floor a frame had about seven such islands, and the searches took 4 to 7 % of the
 * stretch). */
static void mx_queue_run(mx_pvoc *restrict p, mx_queue *q, const mx_pv_frame *f, float *restrict phase, size_t remaining,
                         size_t lo_bin, size_t hi_bin) {
    const float *key = p->key;
    uint8_t *done = p->done;
    mx_queue_drain(p, q, phase, &remaining, lo_bin, hi_bin);
    /* Bins outside [lo_bin, hi_bin) are done (their keys are -inf). */
    for (size_t k = lo_bin; remaining > 0 && k < hi_bin;) {
        /* Eight set bins at a time (most are set by now: a branch per bin mispredicted). */
        uint64_t eight;
        if (k + 8 <= hi_bin && (memcpy(&eight, done + k, 8), eight == 0x0101010101010101u)) { k += 8; continue; }
        if (done[k]) { k++; continue; }
        size_t end = k, best = k;
        for (; end < hi_bin && !done[end]; end++)
            if (key[end] > key[best]) best = end;
        phase[best] = f->sum_phase[best];
        done[best] = 1;
        remaining--;
        mx_queue_push(q, (uint32_t)(p->bins + best), key[best]);
        mx_queue_drain(p, q, phase, &remaining, lo_bin, hi_bin);
        k = end;
    }
}

/* One sweep of mx_refine_phases: each moving bin's phasor the normalised sum of its own
 * past's prediction (t) and its neighbours' phasors turned by their steps (a from k - 1, b
 * from k + 1), from the sweep before (z); the others as they were. z[lo - 1] and z[hi] are 0. */
static void mx_refine_sweep(float *restrict outr, float *restrict outi, const float *restrict zr, const float *restrict zi,
                            const float *restrict tr, const float *restrict ti, const float *restrict ar, const float *restrict ai,
                            const float *restrict br, const float *restrict bi, const float *restrict moves, size_t lo, size_t hi) {
#pragma clang loop vectorize(enable)
    for (size_t k = lo; k < hi; k++) {
        float sr = tr[k] + ar[k] * zr[k - 1] - ai[k] * zi[k - 1] + br[k] * zr[k + 1] - bi[k] * zi[k + 1];
        float si = ti[k] + ar[k] * zi[k - 1] + ai[k] * zr[k - 1] + br[k] * zi[k + 1] + bi[k] * zr[k + 1];
        float norm = sr * sr + si * si;
        int take = (moves[k] != 0.0f) & (norm > 1e-30f);
        float inv = 1.0f / MX_SQRTF(take ? norm : 1.0f);
        outr[k] = take ? sr * inv : zr[k];
        outi[k] = take ? si * inv : zi[k];
    }
}

/* mx_refine_sweep with the bins two and three away too (near ratio 1,
 * MX_REFINE_WIDE_UNTIL): c2 from k - 2, d2 from k + 2, c3 from k - 3, d3 from k + 3, each
 * a neighbour's weight times its turn (re, im: the arrays w[0..7] in that order). z is 0
 * for three bins either side of [lo, hi). */
static void mx_refine_sweep_wide(float *restrict outr, float *restrict outi, const float *restrict zr, const float *restrict zi,
                                 const float *restrict tr, const float *restrict ti, const float *restrict ar, const float *restrict ai,
                                 const float *restrict br, const float *restrict bi, const float *const *w, const float *restrict moves,
                                 size_t lo, size_t hi) {
    const float *restrict c2r = w[0], *restrict c2i = w[1], *restrict d2r = w[2], *restrict d2i = w[3];
    const float *restrict c3r = w[4], *restrict c3i = w[5], *restrict d3r = w[6], *restrict d3i = w[7];
#pragma clang loop vectorize(enable)
    for (size_t k = lo; k < hi; k++) {
        float sr = tr[k] + ar[k] * zr[k - 1] - ai[k] * zi[k - 1] + br[k] * zr[k + 1] - bi[k] * zi[k + 1];
        float si = ti[k] + ar[k] * zi[k - 1] + ai[k] * zr[k - 1] + br[k] * zi[k + 1] + bi[k] * zr[k + 1];
        sr += c2r[k] * zr[k - 2] - c2i[k] * zi[k - 2] + d2r[k] * zr[k + 2] - d2i[k] * zi[k + 2];
        si += c2r[k] * zi[k - 2] + c2i[k] * zr[k - 2] + d2r[k] * zi[k + 2] + d2i[k] * zr[k + 2];
        sr += c3r[k] * zr[k - 3] - c3i[k] * zi[k - 3] + d3r[k] * zr[k + 3] - d3i[k] * zi[k + 3];
        si += c3r[k] * zi[k - 3] + c3i[k] * zr[k - 3] + d3r[k] * zi[k + 3] + d3i[k] * zr[k + 3];
        float norm = sr * sr + si * si;
        int take = (moves[k] != 0.0f) & (norm > 1e-30f);
        float inv = 1.0f / MX_SQRTF(take ? norm : 1.0f);
        outr[k] = take ? sr * inv : zr[k];
        outi[k] = take ? si * inv : zi[k];
    }
}

/* After PGHI: each bin but a steady peak takes the mean of the phases its own past and its
 * two neighbours predict for it, as unit phasors weighted by magnitude (the past by the
 * weaker of its two frames), in MX_REFINE_SWEEPS sweeps, each from the one before (so the
 * loops vectorise). PGHI gives each bin its phase by one step, from whichever neighbour
 * came first; where two of its fronts meet, or a bin's own past and its neighbour's step
 * disagree, the bin keeps one and the overlap-add of the frames then cancels part of it
 * (Signalsmith Stretch blends its predictions the same way). A peak in this frame and the
 * last (a partial, as it was) keeps its own step in time: with peaks blended too, a chord's
 * notes 2.9 bins apart pulled each other 20 cents off at 1.05. A leader's phases
 * (mx_pvoc_follow) are kept. Measured (docs/spectral.md, "Phases blended after the
 * integration"), the bench's quick round trips at 0.95 / 1.05: music's log-spectral
 * distance 2.01 / 1.64 -> 1.74 / 1.32 dB (Signalsmith 2.08 / 1.63), speech's 1.59 / 1.35 ->
 * 1.37 / 1.10, PESQ-WB 4.15 / 4.24 -> 4.26 / 4.32; held-out orchestral music at 0.99
 * (breaking_the_chains, `--algorithm spectral` and back) 1.35 -> 1.05 dB (Signalsmith 1.21). */
#define MX_REFINE_SWEEPS 2
/* Only for an engine with no band (the long frame alone: the jobs' stretch near ratio 1),
 * and only to a stretch (or compression, 1/R) of MX_REFINE_UNTIL. Beyond, measured: at
 * 11/10 a low voice's harmonics under a 5 % vibrato came out 0.4 to 1.2 dB low (its peaks
 * move from bin to bin, so they are blended), and through two resolutions a chord's notes
 * 1.5 of the short frame's bins apart lost their own peaks (1.2 cents off at 19/20 and
 * 21/20; within 0.01 with the long frame alone). */
#define MX_REFINE_UNTIL 1.075f
/* Up to a stretch or compression of MX_REFINE_LOBE_UNTIL, a steady peak within 20 dB of
 * the frame's loudest bin (ln 0.1, on the log keys) keeps the bins either side of it too,
 * its main lobe. Measured: blended, a chord's notes 2.9 bins apart came out up to 0.34
 * cents off from 0.98 to 1.02 (0.26 at 99/100 and 101/100) and 0.14 to 0.25 dB low (their
 * lobes overlap, and each side bin's own past and its peak disagree a little, frame after
 * frame); kept, 0.011 cents and 0.02 dB at most, as with no blend. The 20 dB leaves noise's
 * chance peaks to the blend: with every steady peak's lobe kept, red noise's round trip at
 * 1.003 read 1.88 dB against 1.69, held-out orchestral music 0.03 to 0.09 dB worse. Kept at
 * 0.95 too, it cost speech's round-trip PESQ 0.07 (4.26 -> 4.19), where the chord was within
 * 0.03 cents without it; inside 1.03, 0.01 to 0.03 (docs/spectral.md). */
#define MX_REFINE_PARTIAL (-2.302585093f)
#define MX_REFINE_LOBE_UNTIL 1.03f
/* Near 1 each moving bin also takes the phases of the bins two and three away, turned by
 * the steps between, at MX_REFINE_WIDE_WEIGHT of their magnitudes at ratio 1, falling
 * linearly to none at a stretch or compression of MX_REFINE_WIDE_UNTIL. Near 1 the output
 * is the input shifted a little, frame by frame, so the input's phase relations hold across
 * more than one bin: where a bin's own past and its next neighbours are weak beside louder
 * sound two or three bins off (reverberation, the noise between an orchestra's partials),
 * those relations are what keeps it. Measured on the bench's ten music clips (round trip,
 * `--algorithm spectral` and back, log-spectral distance): 0.84 -> 0.76 dB at 1.003, 1.17
 * -> 1.11 at 0.99, 1.06 -> 1.00 at 1.01 (Signalsmith 0.88, 1.37, 1.20). At full weight
 * music gains about as much, but clean steady partials lose: forty partials at unrelated
 * frequencies 0.22 -> 0.80 dB at 0.99 (a quarter: 0.39), a low chord of harmonics 0.47 ->
 * 0.66 (0.48). Bins four away as well add nothing; eight alone costs (0.84 -> 1.05 dB at
 * 1.003); at full weight to 1.015 and beyond, 1.155 -> 1.233 dB at 1.015 (docs/spectral.md,
 * "Two and three bins away, near 1"). */
#define MX_REFINE_WIDE_WEIGHT 0.25f
#define MX_REFINE_WIDE_UNTIL 1.03f
static void mx_refine_phases(mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev, float *restrict phase,
                             float stretch, float largest, float floor_log, size_t lo_bin, size_t hi_bin) {
    size_t b = p->bins, stride = b + 2 * MX_REFINE_PAD;
    if (hi_bin < lo_bin + 2) return;
    /* MX_REFINE_ARRAYS arrays, each with MX_REFINE_PAD bins either side of the band (index -3
     * to b + 2 are valid): the phasors' are zero there. */
    float *base = p->refine + MX_REFINE_PAD;
    float *restrict angle = base, *restrict sines = base + stride, *restrict cosines = base + 2 * stride;
    float *restrict tr = base + 3 * stride, *restrict ti = base + 4 * stride;
    float *restrict ar = base + 5 * stride, *restrict ai = base + 6 * stride;
    float *restrict br = base + 7 * stride, *restrict bi = base + 8 * stride;
    float *zr = base + 9 * stride, *zi = base + 10 * stride;
    float *nr = base + 11 * stride, *ni = base + 12 * stride;
    float *restrict weight = base + 13 * stride, *restrict moves = base + 14 * stride;
    const float *restrict m = f->sum_mag, *restrict mp = prev->sum_mag, *restrict key = p->key;
    const float *restrict previous = p->phase;
    const float *restrict tstep = p->steps, *restrict rt = p->steps + b, *restrict gu = p->steps + 2 * b;
    const float *restrict ru = p->steps + 3 * b, *restrict rd = p->steps + 4 * b;
    size_t lo = lo_bin, hi = hi_bin, count = hi - lo;
    /* A bin under the floor has no phase yet (its random one comes after): it predicts nothing. */
    for (size_t k = lo; k < hi; k++) weight[k] = key[k] > floor_log ? m[k] : 0.0f;
    /* Which bins move: set, not a steady peak (its neighbours past the band count as 0), not
     * beside a loud one (a partial's main lobe; `angle` holds, for now, which peaks are), not
     * a leader's. */
    float loud_log = stretch <= MX_REFINE_LOBE_UNTIL ? largest + MX_REFINE_PARTIAL : INFINITY;
    for (size_t k = lo; k < hi; k++) {
        float ml = k > lo ? m[k - 1] : 0.0f, mr = k + 1 < hi ? m[k + 1] : 0.0f;
        float pl = k > lo ? mp[k - 1] : 0.0f, pr = k + 1 < hi ? mp[k + 1] : 0.0f;
        int peak = (m[k] >= ml) & (m[k] >= mr) & (mp[k] >= pl) & (mp[k] >= pr);
        moves[k] = ((key[k] > floor_log) & !peak) ? 1.0f : 0.0f;
        angle[k] = (peak & (key[k] >= loud_log)) ? 1.0f : 0.0f;
    }
    angle[(ptrdiff_t)lo - 1] = angle[hi] = 0.0f;
    for (size_t k = lo; k < hi; k++) moves[k] = angle[k - 1] + angle[k + 1] != 0.0f ? 0.0f : moves[k];
    for (size_t k = lo; k < p->follow_hi && k < hi; k++)
        if (p->follow[k] == p->follow[k]) moves[k] = 0.0f;
    /* Its own past: the step in time PGHI takes (none below the bins the last frame had). */
    for (size_t k = lo; k < hi; k++) angle[k] = mx_princarg(previous[k] + tstep[k] + rt[k]);
    mx_sincos_array(sines + lo, cosines + lo, angle + lo, count);
    for (size_t k = lo; k < hi; k++) {
        float w = k >= p->prev_lo ? fminf(mp[k], m[k]) : 0.0f;
        tr[k] = w * cosines[k];
        ti[k] = w * sines[k];
    }
    /* From k - 1, up: its step gu + ru, weighted by it; from k + 1, down: -gu + rd. */
    for (size_t k = lo; k + 1 < hi; k++) angle[k] = mx_princarg(gu[k] + ru[k]);
    mx_sincos_array(sines + lo, cosines + lo, angle + lo, count - 1);
    ar[lo] = ai[lo] = 0.0f;
    for (size_t k = lo + 1; k < hi; k++) {
        ar[k] = weight[k - 1] * cosines[k - 1];
        ai[k] = weight[k - 1] * sines[k - 1];
    }
    /* Near 1, from two and three bins away too: turned by the steps between (the product of
     * the steps up, e^(i(gu + ru)), as PGHI would take them one by one), weighted by
     * magnitude and by `share`, MX_REFINE_WIDE_WEIGHT at ratio 1 falling to 0 at
     * MX_REFINE_WIDE_UNTIL. */
    float share = stretch < MX_REFINE_WIDE_UNTIL
                ? MX_REFINE_WIDE_WEIGHT * (MX_REFINE_WIDE_UNTIL - stretch) / (MX_REFINE_WIDE_UNTIL - 1.0f) : 0.0f;
    int wide = share > 0 && count > 3;
    float *restrict wr[8];
    for (int i = 0; i < 8; i++) wr[i] = base + (15 + i) * stride;
    if (wide) {
        /* The step up from k, e^(i(gu + ru)) (in cosines and sines until the next
         * mx_sincos_array), and the turns two and three bins up to k, into c2 and c3. */
        float *restrict c2r = wr[0], *restrict c2i = wr[1], *restrict d2r = wr[2], *restrict d2i = wr[3];
        float *restrict c3r = wr[4], *restrict c3i = wr[5], *restrict d3r = wr[6], *restrict d3i = wr[7];
        for (size_t k = lo; k < hi; k++) c2r[k] = c2i[k] = d2r[k] = d2i[k] = c3r[k] = c3i[k] = d3r[k] = d3i[k] = 0.0f;
        for (size_t k = lo + 2; k < hi; k++) {
            float pr = cosines[k - 1] * cosines[k - 2] - sines[k - 1] * sines[k - 2];
            float pi = cosines[k - 1] * sines[k - 2] + sines[k - 1] * cosines[k - 2];
            c2r[k] = pr;
            c2i[k] = pi;
        }
        for (size_t k = lo + 3; k < hi; k++) {
            c3r[k] = c2r[k] * cosines[k - 3] - c2i[k] * sines[k - 3];
            c3i[k] = c2r[k] * sines[k - 3] + c2i[k] * cosines[k - 3];
        }
        /* Weighted: from k - d up (the turn), from k + d down (its conjugate, at k + d). */
        for (size_t k = lo + 2; k < hi; k++) {
            d2r[k - 2] = share * weight[k] * c2r[k];
            d2i[k - 2] = -share * weight[k] * c2i[k];
        }
        for (size_t k = lo + 3; k < hi; k++) {
            d3r[k - 3] = share * weight[k] * c3r[k];
            d3i[k - 3] = -share * weight[k] * c3i[k];
        }
        for (size_t k = lo + 2; k < hi; k++) {
            c2r[k] *= share * weight[k - 2];
            c2i[k] *= share * weight[k - 2];
        }
        for (size_t k = lo + 3; k < hi; k++) {
            c3r[k] *= share * weight[k - 3];
            c3i[k] *= share * weight[k - 3];
        }
    }
    for (size_t k = lo; k + 1 < hi; k++) angle[k] = mx_princarg(rd[k] - gu[k]);
    mx_sincos_array(sines + lo, cosines + lo, angle + lo, count - 1);
    for (size_t k = lo; k + 1 < hi; k++) {
        br[k] = weight[k + 1] * cosines[k];
        bi[k] = weight[k + 1] * sines[k];
    }
    br[hi - 1] = bi[hi - 1] = 0.0f;
    /* The phasors now, with zeros past the band. */
    for (size_t k = lo; k < hi; k++) angle[k] = mx_princarg(phase[k]);
    mx_sincos_array(zi + lo, zr + lo, angle + lo, count);
    for (ptrdiff_t e = 1; e <= MX_REFINE_PAD; e++) {
        zr[(ptrdiff_t)lo - e] = zi[(ptrdiff_t)lo - e] = zr[hi + (size_t)e - 1] = zi[hi + (size_t)e - 1] = 0.0f;
        nr[(ptrdiff_t)lo - e] = ni[(ptrdiff_t)lo - e] = nr[hi + (size_t)e - 1] = ni[hi + (size_t)e - 1] = 0.0f;
    }
    for (int sweep = 0; sweep < MX_REFINE_SWEEPS; sweep++) {
        if (wide) mx_refine_sweep_wide(nr, ni, zr, zi, tr, ti, ar, ai, br, bi, (const float *const *)wr, moves, lo, hi);
        else mx_refine_sweep(nr, ni, zr, zi, tr, ti, ar, ai, br, bi, moves, lo, hi);
        float *t = zr; zr = nr; nr = t;
        t = zi; zi = ni; ni = t;
    }
    mx_atan2_array(angle + lo, zi + lo, zr + lo, count);
    for (size_t k = lo; k < hi; k++) phase[k] = moves[k] != 0.0f ? angle[k] : phase[k];
}

/* Frame f's phases by PGHI from prev's (p->phase): the queue seeded, the steps' terms,
 * the integration, and a random phase for bins too quiet to matter (a fixed sequence:
 * renders repeat). */
static void mx_integrate(mx_pvoc *restrict p, const mx_pv_frame *f, const mx_pv_frame *prev, float *restrict phase,
                         float hop_in, float time_scale, float keep, float largest, float prev_largest, float floor_log,
                         size_t lo_bin, size_t hi_bin) {
    p->since_reset++;
    float top_key = largest > prev_largest ? largest : prev_largest;
    mx_queue q;
    size_t noise_bins;
    size_t remaining = mx_queue_seed(p, &q, prev, phase, keep, floor_log, top_key, lo_bin, hi_bin, &noise_bins);
    mx_step_terms(p, f, prev, hop_in, time_scale, keep, lo_bin, hi_bin);
    mx_queue_run(p, &q, f, phase, remaining, lo_bin, hi_bin);
    /* How far from 1, either way: max(R, 1/R). */
    float stretch = fmaxf(time_scale, 1.0f / time_scale);
    if (!p->band && stretch <= MX_REFINE_UNTIL) mx_refine_phases(p, f, prev, phase, stretch, largest, floor_log, lo_bin, hi_bin);
    /* The buckets left holding entries emptied for the next frame: only those (their bits),
     * not every bucket's head. */
    for (int w = 0; w < MX_BUCKETS / 64; w++)
        for (uint64_t bits = q.used[w]; bits != 0; bits &= bits - 1) p->head[w * 64 + __builtin_ctzll(bits)] = -1;
    /* Most frames have no bin under the floor: the loop below, a branch per bin, is skipped. */
    if (noise_bins == 0) return;
    /* The quiet bins listed first (no branch per bin: quiet and loud bins interleave), the
     * ones a leader's phase is given for left out. */
    const float *restrict key = p->key, *restrict follow = p->follow;
    uint32_t *restrict order = p->order;
    size_t quiet = 0, followed_hi = p->follow_hi < hi_bin ? p->follow_hi : hi_bin, k = lo_bin;
#if defined(MX_PVOC_LEFT_PACK)
    /* Not over the floor (a NaN key is quiet), and no leader's phase (NaN: none). */
    for (; k + 8 <= followed_hi; k += 8) {
        __m256 still = _mm256_cmp_ps(_mm256_loadu_ps(key + k), _mm256_set1_ps(floor_log), _CMP_NGT_UQ);
        __m256 unfollowed = _mm256_cmp_ps(_mm256_loadu_ps(follow + k), _mm256_loadu_ps(follow + k), _CMP_UNORD_Q);
        quiet = mx_pack8(order, quiet, (unsigned)_mm256_movemask_ps(_mm256_and_ps(still, unfollowed)), (uint32_t)k);
    }
#endif
    for (; k < followed_hi; k++) {
        order[quiet] = (uint32_t)k;
        quiet += !(key[k] > floor_log) & !(follow[k] == follow[k]);
    }
#if defined(MX_PVOC_LEFT_PACK)
    for (; k + 8 <= hi_bin; k += 8)
        quiet = mx_pack8(order, quiet, (unsigned)_mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(key + k), _mm256_set1_ps(floor_log), _CMP_NGT_UQ)), (uint32_t)k);
#endif
    for (; k < hi_bin; k++) {
        order[quiet] = (uint32_t)k;
        quiet += !(key[k] > floor_log);
    }
    /* The generator's values eight at a time: lane j holds the value j + 1 steps on, and
     * eight steps are one step of a^8 and c (a^7 + ... + a + 1), mod 2^32 as each step is.
     * The same sequence as one step at a time, without its chain of multiplies. */
    const uint32_t a = 1664525u, c = 1013904223u;
    uint32_t lane[8], noise = p->noise, a8 = 1, c8 = 0;
    for (int j = 0; j < 8; j++) {
        noise = noise * a + c;
        lane[j] = noise;
        c8 = c8 * a + c;
        a8 *= a;
    }
    uint32_t last = p->noise;   /* the value after the steps taken */
    size_t i = 0;
    for (; i + 8 <= quiet; i += 8) {
        for (int j = 0; j < 8; j++) phase[order[i + j]] = mx_noise_phase(lane[j]);
        last = lane[7];
        for (int j = 0; j < 8; j++) lane[j] = lane[j] * a8 + c8;
    }
    for (int j = 0; i < quiet; i++, j++) {
        phase[order[i]] = mx_noise_phase(lane[j]);
        last = lane[j];
    }
    p->noise = last;
}

/* The rotation from the sum's analysis phase to its synthesis phase, once per bin, into
 * (p->sr, p->si): u = e^(i phase) conj(sum) / |sum|; channel c is then X_c u (its
 * magnitude, and its phase offset from the sum, kept: so inter-channel phase, and with it
 * the stereo image and mono sum, is kept). */
static void mx_rotation(mx_pvoc *restrict p, const mx_pv_frame *f, const float *phase, size_t lo_bin, size_t hi_bin) {
    float *restrict ur = p->sr, *restrict ui = p->si;
    mx_sincos_array(ui + lo_bin, ur + lo_bin, phase + lo_bin, hi_bin - lo_bin);
    const float *restrict mag = f->sum_mag, *restrict sre = f->sum_re, *restrict sim = f->sum_im;
#pragma clang loop vectorize(enable)
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

/* Frame f's channels rotated by (p->sr, p->si) added to out (and with a band, the band
 * below it to low at 1 - g: the same phases, zero from the crossover's top up). */
static void mx_add_channels(mx_pvoc *restrict p, const mx_pv_frame *f, float *const *out, float *const *low,
                            size_t lo_bin, size_t hi_bin) {
    float *restrict ur = p->sr, *restrict ui = p->si;
    if (low && p->band) {
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
}

/* The window products frame f's cut input left out, into p->deficit (mx_pvoc_set_deficit).
 * Output frame i sounds the frame's input frame n/2 + (i - n/2) / R - (position - exact):
 * by the time map, whose R and centre are unrounded (the rounded centres' time scale was
 * 1.01186 for 1.01). The deficit starts one input frame before the cut: an onset on the
 * first frame of its block is cut exactly there, and the frame that resets on it lands it
 * to the nearest frame. By the rounded centres and from the cut itself, a cut frame's
 * share was missing where the click sounded: 4 of 228 clicks came out at 0.43 to 0.58 of
 * their height at 1.01 and 1.05 (-2.8 to -5.5 dB). */
static void mx_add_deficit(mx_pvoc *restrict p, const mx_pv_frame *restrict f, float time_scale) {
    size_t n = p->n;
    double half = (double)(n / 2);
    const float *restrict w = p->window;
    float *restrict d = p->deficit;
    double scale = mx_map_scale(f, time_scale);
    for (size_t i = 0; i < n; i++) {
        double at = half + ((double)i - half) / scale + (f->exact - f->position);
        if (at < (double)f->kept_from || at + 1.0 >= (double)f->kept_to) d[i] += w[i] * w[i];
    }
}

/* A frame whose content was shifted whole (by `shift`, output frames) weighs its input by
 * its analysis window moved by that against its synthesis window, not by the window
 * squared: the difference goes into p->deficit, so the renormalisation divides by the
 * products the frames sounded. Near an onset the frames that hold it are those on one
 * side, and their errors do not cancel: the frames after a reset at 1.01, shifted 2.5 frames
 * more each, sounded a chord's attack 0.4 % loud. */
static void mx_add_moved_window(mx_pvoc *restrict p, double shift) {
    long long n = (long long)p->n, s = (long long)llround(shift);
    const float *restrict w = p->window;
    float *restrict d = p->deficit;
    s = ((s % n) + n) % n;   /* a whole shift is a rotation of the frame */
    for (long long i = 0; i < n; i++) {
        long long from = i - s < 0 ? i - s + n : i - s;
        d[i] += w[i] * (w[i] - w[from]);
    }
}

void MX_PVOC_VARIANT(mx_pvoc_synthesise)(mx_pvoc *restrict p, float *const *out, float *const *low, int reset) {
    unsigned state = mx_denormals_flush_begin();
    /* Frame s, with one frame of look-ahead (s + 1 is analysed). The caller has analysed up
     * to s + 1 (p->analysed is not read: the analysis of s + 2 may be writing it, on
     * another thread). */
    long long s = p->synthesised;
    mx_pv_frame *f = &p->frames[s % MX_RING], *next = &p->frames[(s + 1) % MX_RING];
    mx_pv_frame *prev = s > 0 ? &p->frames[(s - 1) % MX_RING] : NULL;
    float *phase = p->next_phase;
    float hop_in = (prev && prev->valid) ? (float)(f->position - prev->position) : (float)p->hop;
    const float *lo, *hi;
    double span;
    float time_scale = mx_time_scale(p, f, prev, next, &lo, &hi, &span);
    float keep = mx_keep_share(time_scale);
    /* The largest key, found by the analysis (on the helper thread when there is one). */
    float largest = low ? f->log_max_all : f->log_max;
    /* Bins outside the band are not synthesised: their phases are not integrated. */
    size_t lo_bin = low ? p->analysis_lo : p->band_lo, hi_bin = p->band_hi;
    mx_slopes(p, f, lo, hi, span, time_scale, lo_bin, hi_bin);
    float floor_log = largest + logf(p->tolerance);
    /* An onset (most of the frame's magnitude new, and more so than before): the analysis
     * phases, so the attack keeps its shape instead of spreading over the frame. */
    int onset = prev && f->rise > MX_ONSET && f->rise > prev->rise;
    double shifted = 0;   /* the frame's content against its window: output frames */
    int integrated = 0;   /* the phases are PGHI's */
    int held = p->renormalised && p->since_reset < (long long)(p->n / (2 * p->hop));
    /* This frame's close partials, if it integrates with no band (below); their phases
     * against their bins' (NaN: none), and the frame before's. */
    p->partial_count = 0;
    if (!p->band) {
        float *t = p->partial_delta_prev; p->partial_delta_prev = p->partial_delta; p->partial_delta = t;
        for (size_t k = 0; k < p->bins; k++) t[k] = NAN;
    }
    if (onset && !reset && p->renormalised && p->onset_whole_hi < hi_bin) {
        /* Above the band the bins the onset did not reach keep PGHI's phases. */
        mx_integrate(p, f, prev, phase, hop_in, time_scale, keep, largest, low ? prev->log_max_all : prev->log_max,
                     floor_log, lo_bin, hi_bin);
        shifted = mx_reset_risen(p, f, prev, phase, time_scale, lo_bin, hi_bin);
    } else if (reset || onset || !prev) {
        mx_reset_phases(p, f, phase, time_scale, lo_bin, hi_bin);
        p->reset_partial = 0;
        shifted = p->reset_shift;
    } else if (held && p->reset_partial) {
        mx_integrate(p, f, prev, phase, hop_in, time_scale, keep, largest, low ? prev->log_max_all : prev->log_max,
                     floor_log, lo_bin, hi_bin);
        shifted = mx_hold_risen(p, f, phase, lo_bin, hi_bin);
    } else if (held) {
        p->since_reset++;
        shifted = mx_hold_landing(p, f, phase, lo_bin, hi_bin);
    } else {
        /* Close partials' own phases, before PGHI (with no band, the long frame alone). */
        if (!p->band) {
            mx_close_partials(p, f, prev, largest, lo_bin, hi_bin);
            mx_partial_phases(p);
        }
        mx_integrate(p, f, prev, phase, hop_in, time_scale, keep, largest, low ? prev->log_max_all : prev->log_max,
                     floor_log, lo_bin, hi_bin);
        integrated = 1;
        /* The DC bin of a real frame is real: its phase is 0 or pi at any time, and the frame
         * sounds it as re cos(phase - analysis phase) (mx_add_frame drops the rest). PGHI gave
         * it a phase like any bin's, from a louder neighbour or the blend where it was no
         * peak: an offset drifting under a rumble (a speech recording's) came out at 0.02 to
         * 0.9 of its level at 99/100, and of the opposite sign at 5/4 and 4/5. Where the
         * offset leads its lobe (bin 0 at least bin 1) it takes its own phase: 0.84 to 1.02
         * near 1, 0.65 to 0.93 at 5/4 and 4/5 (`aDriftingOffsetKeepsItsLevel`); the round
         * trips' log-spectral distance 0.01 to 0.02 dB lower on the bench's speech and music
         * at 0.8, 0.99, 1.003 and 1.25. Taken whatever bin 1 holds, a tone that stops rang on
         * under bins 1 and 2, turned apart from it (12-18 ms after its end -32 dB at 19/20,
         * -39 before). (A reset or a held landing has it already.) */
        if (lo_bin == 0 && f->sum_mag[0] >= f->sum_mag[1]) phase[0] = f->sum_phase[0];
    }
    for (size_t k = lo_bin; k < hi_bin; k++) phase[k] = mx_princarg(phase[k]);
    /* princarg's rounding can leave a hair past pi: sincos folds [-pi, pi] only. */
    for (size_t k = lo_bin; k < hi_bin; k++) phase[k] = fminf(fmaxf(phase[k], -(float)mx_pi), (float)mx_pi);
    /* What a follower takes: the phase where the bin had one of its own. */
    {
        float *restrict shared = p->shared;
        const float *restrict key = p->key;
#pragma clang loop vectorize(enable)
        for (size_t k = lo_bin; k < hi_bin; k++) shared[k] = key[k] > floor_log ? phase[k] : NAN;
    }
    mx_rotation(p, f, phase, lo_bin, hi_bin);
    /* Close partials' shares turned as their own (a frame PGHI integrated: a reset or a held
     * landing turns every bin alike; with no band, the long frame alone). */
    if (p->partial_count) mx_partial_turns(p);
    mx_add_channels(p, f, out, low, lo_bin, hi_bin);
    if (p->deficit && (f->kept_from > 0 || f->kept_to < p->n)) mx_add_deficit(p, f, time_scale);
    if (p->deficit && shifted != 0) mx_add_moved_window(p, shifted);
    /* The phase just set is the previous one for the next frame. */
    float *t = p->phase; p->phase = p->next_phase; p->next_phase = t;
    p->follow_hi = 0;
    p->prev_lo = lo_bin;
    p->synthesised++;
    mx_denormals_flush_end(state);
}
