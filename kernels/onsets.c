/* Onsets by block energy: the spectral stretch's cut of an attack from the frames before it.
 * Contracts in mixdown_kernels.h ("Onsets"). */
#include "internal.h"

typedef float mx_lanes4 __attribute__((vector_size(16), aligned(4)));   /* loads at any float */

/* Four frames of four blocks (the rows r) turned so that each vector holds one frame of
 * the four blocks: the lanes are blocks. */
#define MX_TURN4(c0, c1, c2, c3, r0, r1, r2, r3)                                     \
    mx_lanes4 t0 = __builtin_shufflevector(r0, r1, 0, 4, 1, 5);                     \
    mx_lanes4 t1 = __builtin_shufflevector(r0, r1, 2, 6, 3, 7);                     \
    mx_lanes4 t2 = __builtin_shufflevector(r2, r3, 0, 4, 1, 5);                     \
    mx_lanes4 t3 = __builtin_shufflevector(r2, r3, 2, 6, 3, 7);                     \
    mx_lanes4 c0 = __builtin_shufflevector(t0, t2, 0, 1, 4, 5);                     \
    mx_lanes4 c1 = __builtin_shufflevector(t0, t2, 2, 3, 6, 7);                     \
    mx_lanes4 c2 = __builtin_shufflevector(t1, t3, 0, 1, 4, 5);                     \
    mx_lanes4 c3 = __builtin_shufflevector(t1, t3, 2, 3, 6, 7);

/* Four blocks' sums from their rows, four frames at a time, each lane's squares added in
 * frame order. */
static mx_lanes4 mx_block_energy_4(const float *restrict x, size_t size) {
    mx_lanes4 acc = {0, 0, 0, 0};
    for (size_t i = 0; i < size; i += 4) {
        mx_lanes4 r0 = *(const mx_lanes4 *)(x + i), r1 = *(const mx_lanes4 *)(x + size + i);
        mx_lanes4 r2 = *(const mx_lanes4 *)(x + 2 * size + i), r3 = *(const mx_lanes4 *)(x + 3 * size + i);
        MX_TURN4(c0, c1, c2, c3, r0, r1, r2, r3)
        acc = acc + c0 * c0;
        acc = acc + c1 * c1;
        acc = acc + c2 * c2;
        acc = acc + c3 * c3;
    }
    return acc;
}

/* mx_block_energy for blocks of `size` frames (1 to MX_ONSET_BLOCK), each block's squares
 * summed in frame order. Eight blocks go at once where frames fit the lanes four at a time
 * (size a multiple of 4): four blocks in a vector's lanes, so eight chains of additions run
 * side by side where one block's sum waited on each addition before it (the onset scan took
 * 3 % of the spectral stretch's time); the same sums. */
static void mx_block_energy_of(float *restrict dst, const float *const *src, size_t channels, size_t blocks, size_t size) {
    for (size_t q = 0; q < blocks;) {
        size_t group = q + 8 <= blocks && size % 4 == 0 ? 8 : 1;
        /* The channels' sum, in channel order (one channel is read as it is). */
        float sum[8 * MX_ONSET_BLOCK];
        const float *x = src[0] + q * size;
        if (channels > 1) {
            for (size_t i = 0; i < group * size; i++) sum[i] = x[i];
            for (size_t c = 1; c < channels; c++) {
                const float *restrict y = src[c] + q * size;
                for (size_t i = 0; i < group * size; i++) sum[i] += y[i];
            }
            x = sum;
        }
        if (group == 8) {
            mx_lanes4 lo = mx_block_energy_4(x, size), hi = mx_block_energy_4(x + 4 * size, size);
            for (size_t j = 0; j < 4; j++) { dst[q + j] = lo[j]; dst[q + 4 + j] = hi[j]; }
        } else {
            float acc = 0;
            for (size_t i = 0; i < size; i++) acc += x[i] * x[i];
            dst[q] = acc;
        }
        q += group;
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

/* Where the first onset at or after the frame's centre begins (n if none): a block that
 * mx_onset_block takes for one, after the eight blocks before it. */
size_t mx_onset_ahead_in(float *restrict e, const float *const *in, size_t channels, size_t n, size_t size) {
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

size_t mx_onset_ahead_of(float *scratch, const float *const *in, size_t channels, size_t n) {
    return channels >= 1 && channels <= 64 ? mx_onset_ahead_in(scratch, in, channels, n, MX_ONSET_BLOCK) : n;
}
