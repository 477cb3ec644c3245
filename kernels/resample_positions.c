/* The resampler's per-output positions, stepped exactly: the scalar reference (the AVX2
 * path is in x86_avx2.c). Two positions, an output apart, step by two outputs each, so
 * that the carry chains of neighbours run side by side. */
#include "mixdown_kernels.h"

typedef struct { int64_t n, q; uint64_t e; } position;

/* Steps p by (frames, rows, excess): the exact sum, normalised. */
static inline __attribute__((always_inline)) void advance(position *p, int64_t frames, int64_t rows, uint64_t excess,
                                                          int64_t row_count, uint64_t numerator) {
    p->n += frames;
    p->q += rows;
    p->e += excess;
    if (p->e >= numerator) { p->e -= numerator; p->q += 1; }
    if (p->q >= row_count) { p->q -= row_count; p->n += 1; }
}

static inline __attribute__((always_inline)) void fill(int32_t *restrict base, int32_t *restrict phase, float *restrict frac,
                                                       size_t count, mx_resample_position *restrict start, int64_t offset,
                                                       const mx_resample_step *restrict step, int with_frac) {
    const int64_t row_count = step->row_count;
    const uint64_t numerator = step->numerator;
    /* e < numerator <= INT64_MAX: the signed conversion to double is exact. */
    const double scale = 1.0 / (double)numerator;
    /* Two steps at once, exactly: 2 excess < 2^64 since excess < numerator <= INT64_MAX. */
    uint64_t excess2 = 2 * step->excess;
    int64_t rows2 = 2 * step->rows, frames2 = 2 * step->frames;
    if (excess2 >= numerator) { excess2 -= numerator; rows2 += 1; }
    if (rows2 >= row_count) { rows2 -= row_count; frames2 += 1; }

    position a = { start->frame, start->row, start->excess }, b = a;
    advance(&b, step->frames, step->rows, step->excess, row_count, numerator);
    size_t i = 0;
    for (; i + 2 <= count; i += 2) {
        base[i] = (int32_t)(a.n - offset);
        base[i + 1] = (int32_t)(b.n - offset);
        phase[i] = (int32_t)a.q;
        phase[i + 1] = (int32_t)b.q;
        if (with_frac) {
            frac[i] = (float)((double)(int64_t)a.e * scale);
            frac[i + 1] = (float)((double)(int64_t)b.e * scale);
        }
        advance(&a, frames2, rows2, excess2, row_count, numerator);
        advance(&b, frames2, rows2, excess2, row_count, numerator);
    }
    if (i < count) {
        base[i] = (int32_t)(a.n - offset);
        phase[i] = (int32_t)a.q;
        if (with_frac) frac[i] = (float)((double)(int64_t)a.e * scale);
        a = b;   /* b is a stepped once: the output after the last */
    }
    start->frame = a.n;
    start->row = a.q;
    start->excess = a.e;
}

void mx_resample_positions_scalar(int32_t *restrict base, int32_t *restrict phase, float *restrict frac, size_t count,
                           mx_resample_position *restrict position, int64_t offset, const mx_resample_step *restrict step) {
    if (frac) fill(base, phase, frac, count, position, offset, step, 1);
    else fill(base, phase, frac, count, position, offset, step, 0);
}
