/* libebur128 reading a file (libsndfile): integrated loudness, range, true peak, and the
 * maximum momentary and short-term loudness read every 1 ms (tools/check/loudness/ceiling-check). */
#include <ebur128.h>
#include <sndfile.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
int main(int argc, char **argv) {
    SF_INFO info = {0}; SNDFILE *f = sf_open(argv[1], SFM_READ, &info);
    if (!f) { fprintf(stderr, "cannot open\n"); return 1; }
    ebur128_state *st = ebur128_init(info.channels, info.samplerate, EBUR128_MODE_I | EBUR128_MODE_TRUE_PEAK | EBUR128_MODE_SAMPLE_PEAK | EBUR128_MODE_M | EBUR128_MODE_S | EBUR128_MODE_LRA);
    float *buf = malloc(sizeof(float) * 4096 * info.channels); sf_count_t n;
    double maxM = -HUGE_VAL, maxS = -HUGE_VAL; long total = 0; long step = info.samplerate / 1000;
    while ((n = sf_readf_float(f, buf, step)) > 0) {
        ebur128_add_frames_float(st, buf, n); total += n;
        double m, s;
        if (ebur128_loudness_momentary(st, &m) == 0 && total >= info.samplerate * 4 / 10 && m > maxM) maxM = m;
        if (ebur128_loudness_shortterm(st, &s) == 0 && total >= info.samplerate * 3 && s > maxS) maxS = s;
    }
    double I, lra, tp = 0, p; ebur128_loudness_global(st, &I); ebur128_loudness_range(st, &lra);
    for (unsigned c = 0; c < info.channels; c++) { ebur128_true_peak(st, c, &p); if (p > tp) tp = p; }
    printf("I %.3f LRA %.3f TP %.3f maxM %.3f maxS %.3f\n", I, lra, 20 * log10(tp), maxM, maxS);
    return 0;
}
