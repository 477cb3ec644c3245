/* The real FFT candidates for the spectral stretch, timed on one core: Mixdown's own
 * (kernels/rfft.c), libavutil's av_tx, KissFFT and FFTW3f. Built and run by
 * tools/bench/fft. Prints nanoseconds per forward + inverse pair at each size. */
#define _POSIX_C_SOURCE 199309L
#include "mixdown_kernels.h"
#include <libavutil/mem.h>
#include <fftw3.h>
#include <kissfft/kiss_fftr.h>
#include <libavutil/tx.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(void) {
    size_t sizes[] = {1024, 2048, 4096};
    printf("| n | mixdown (mx_rfft) | av_tx (libavutil) | KissFFT | FFTW3f (measure) |\n|---|---|---|---|---|\n");
    for (int s = 0; s < 3; s++) {
        size_t n = sizes[s];
        int reps = (int)(4000000 / n);
        float *x = fftwf_malloc(n * sizeof(float)), *y = fftwf_malloc(n * sizeof(float));
        float *re = malloc((n / 2 + 1) * sizeof(float)), *im = malloc((n / 2 + 1) * sizeof(float));
        for (size_t i = 0; i < n; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        double t, ours, av, kiss, fftw;

        mx_rfft *p = mx_rfft_create(n);
        t = now();
        for (int r = 0; r < reps; r++) { mx_rfft_forward(p, re, im, x); mx_rfft_inverse(p, y, re, im); }
        ours = (now() - t) / reps * 1e9;
        mx_rfft_destroy(p);

        AVTXContext *fwd, *inv;
        av_tx_fn ff, fi;
        float scale = 1.0f, iscale = 1.0f / (float)n;
        av_tx_init(&fwd, &ff, AV_TX_FLOAT_RDFT, 0, (int)n, &scale, 0);
        av_tx_init(&inv, &fi, AV_TX_FLOAT_RDFT, 1, (int)n, &iscale, 0);
        AVComplexFloat *c = av_malloc((n / 2 + 1) * sizeof(AVComplexFloat));
        float *xa = av_malloc((n + 2) * sizeof(float));
        for (size_t i = 0; i < n; i++) xa[i] = x[i];
        t = now();
        for (int r = 0; r < reps; r++) { ff(fwd, c, xa, sizeof(float)); fi(inv, xa, c, sizeof(AVComplexFloat)); }
        av = (now() - t) / reps * 1e9;
        av_tx_uninit(&fwd); av_tx_uninit(&inv);

        kiss_fftr_cfg kf = kiss_fftr_alloc((int)n, 0, NULL, NULL), ki = kiss_fftr_alloc((int)n, 1, NULL, NULL);
        kiss_fft_cpx *kc = malloc((n / 2 + 1) * sizeof(kiss_fft_cpx));
        t = now();
        for (int r = 0; r < reps; r++) { kiss_fftr(kf, x, kc); kiss_fftri(ki, kc, y); }
        kiss = (now() - t) / reps * 1e9;
        kiss_fftr_free(kf); kiss_fftr_free(ki);

        fftwf_complex *fc = fftwf_malloc((n / 2 + 1) * sizeof(fftwf_complex));
        fftwf_plan pf = fftwf_plan_dft_r2c_1d((int)n, x, fc, FFTW_MEASURE), pi = fftwf_plan_dft_c2r_1d((int)n, fc, y, FFTW_MEASURE);
        for (size_t i = 0; i < n; i++) x[i] = (float)rand() / (float)RAND_MAX - 0.5f;
        t = now();
        for (int r = 0; r < reps; r++) { fftwf_execute(pf); fftwf_execute(pi); }
        fftw = (now() - t) / reps * 1e9;
        printf("| %zu | %.0f ns | %.0f ns | %.0f ns | %.0f ns |\n", n, ours, av, kiss, fftw);
    }
    return 0;
}
