/*
 * Pulls a composition document's whole render through the C API into one block of its
 * own memory and discards it: the C side of tools/bench/c-api's comparison with
 * `mixdown bench --pull` (the same pulls through the Swift API).
 * Usage: bench-pull DOC.json [BLOCK]
 * Prints frames, block, seconds, x real time and the sum of every sample in pull order.
 */
#define _POSIX_C_SOURCE 200809L
#include <mixdown.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv) {
    if (argc < 2) { fprintf(stderr, "usage: bench-pull DOC.json [BLOCK]\n"); return 2; }
    int64_t block = argc > 2 ? atoll(argv[2]) : 4096;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mixdown_render *h = NULL;
    if (mixdown_render_open_document(&h, NULL, NULL, argv[1]) != MIXDOWN_OK) {
        fprintf(stderr, "bench-pull: %s\n", mixdown_last_error());
        return 1;
    }
    int32_t rate = 0, channels = 0;
    int64_t total = 0;
    mixdown_render_format(h, &rate, &channels, &total);
    float **planes = malloc(sizeof(float *) * (size_t)channels);
    for (int c = 0; c < channels; c++) planes[c] = malloc(sizeof(float) * (size_t)block);
    double sum = 0;
    int64_t done = 0;
    for (int ended = 0; !ended;) {
        int64_t written = 0;
        if (mixdown_render_pull(h, planes, block, &written, &ended) != MIXDOWN_OK) {
            fprintf(stderr, "bench-pull: %s\n", mixdown_render_error(h));
            return 1;
        }
        for (int c = 0; c < channels; c++)
            for (int64_t i = 0; i < written; i++) sum += (double)planes[c][i];
        done += written;
    }
    mixdown_render_free(h);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    printf("pulled %" PRId64 " frames in blocks of %" PRId64 " in %.2f s (%.0fx real time); checksum %.17g\n",
           done, block, seconds, (double)done / rate / seconds, sum);
    for (int c = 0; c < channels; c++) free(planes[c]);
    free(planes);
    return done == total ? 0 : 1;
}
