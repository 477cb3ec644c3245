/*
 * A C client of libmixdown, compiled by tools/testing/c-api against the installed header
 * and library:  cc client.c $(pkg-config --cflags --libs mixdown sndfile)
 *
 * Usage: client DIR
 * DIR holds what the CLI made (tools/testing/c-api): in.wav, doc.json, pair-ref.wav and
 * pair-rec.wav, and the CLI's outputs cli-stretch.wav, cli-export.wav, cli-doc.wav (f32).
 * The client stretches, exports and renders through the C API, pulls renders in irregular
 * blocks and after seeks, and checks every frame against the CLI's output (read with
 * libsndfile), then makes bad calls and checks their status codes and messages.
 * Exit status 0 when every check passes; each failure is printed.
 */
#include <mixdown.h>
#include <sndfile.h>

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures = 0;
static char dir[2048];

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            failures++;                                                   \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n");                                        \
        }                                                                 \
    } while (0)

static const char *path(const char *name) {
    static char buffers[8][4096];
    static int next = 0;
    char *p = buffers[next++ % 8];
    snprintf(p, 4096, "%s/%s", dir, name);
    return p;
}

/* A whole file as planar floats, read by libsndfile (independent of Mixdown's readers). */
typedef struct { int64_t frames; int channels; int rate; float **planar; } audio;

static audio load(const char *file) {
    audio a = {0, 0, 0, NULL};
    SF_INFO info;
    memset(&info, 0, sizeof info);
    SNDFILE *f = sf_open(file, SFM_READ, &info);
    if (!f) { fprintf(stderr, "cannot read %s: %s\n", file, sf_strerror(NULL)); exit(2); }
    a.frames = info.frames; a.channels = info.channels; a.rate = info.samplerate;
    float *interleaved = malloc(sizeof(float) * (size_t)(info.frames * info.channels) + 1);
    sf_readf_float(f, interleaved, info.frames);
    sf_close(f);
    a.planar = malloc(sizeof(float *) * (size_t)a.channels);
    for (int c = 0; c < a.channels; c++) {
        a.planar[c] = malloc(sizeof(float) * (size_t)a.frames + 1);
        for (int64_t i = 0; i < a.frames; i++) a.planar[c][i] = interleaved[i * a.channels + c];
    }
    free(interleaved);
    return a;
}

static void release(audio *a) {
    for (int c = 0; c < a->channels; c++) free(a->planar[c]);
    free(a->planar);
}

/* Frames that differ between a and b (which must have the same shape). */
static int64_t differing(const audio *a, const audio *b) {
    if (a->frames != b->frames || a->channels != b->channels) return -1;
    int64_t n = 0;
    for (int64_t i = 0; i < a->frames; i++)
        for (int c = 0; c < a->channels; c++)
            if (a->planar[c][i] != b->planar[c][i]) { n++; break; }
    return n;
}

/* Pulls a whole render in the block sizes of `blocks` (cycled), into `out`. */
static int pull_all(mixdown_render *h, const int64_t *blocks, int nblocks, audio *out) {
    int32_t rate = 0, channels = 0;
    int64_t total = 0;
    if (mixdown_render_format(h, &rate, &channels, &total) != MIXDOWN_OK) return -1;
    out->frames = total; out->channels = channels; out->rate = rate;
    out->planar = malloc(sizeof(float *) * (size_t)channels);
    for (int c = 0; c < channels; c++) out->planar[c] = malloc(sizeof(float) * (size_t)(total + 8192));
    int64_t done = 0;
    int ended = 0, k = 0;
    float *at[64];
    while (!ended) {
        int64_t want = blocks[k++ % nblocks], written = -1;
        for (int c = 0; c < channels; c++) at[c] = out->planar[c] + done;
        int s = mixdown_render_pull(h, at, want, &written, &ended);
        if (s != MIXDOWN_OK) { fprintf(stderr, "pull: %s\n", mixdown_render_error(h)); return -1; }
        /* Short only at the end. */
        CHECK(written == want || ended, "a short pull (%" PRId64 " of %" PRId64 ") before the end", written, want);
        done += written;
        CHECK(done <= total, "pulled past the end");
    }
    CHECK(done == total, "pulled %" PRId64 " frames, the render has %" PRId64, done, total);
    /* After the end: 0 frames, ended again. */
    int64_t written = -1;
    int again = 0;
    for (int c = 0; c < channels; c++) at[c] = out->planar[c];
    CHECK(mixdown_render_pull(h, at, 16, &written, &again) == MIXDOWN_OK && written == 0 && again == 1,
          "a pull after the end gave %" PRId64 " frames, ended %d", written, again);
    return 0;
}

static int progress_calls = 0;
static double last_fraction = -1;
static int monotonic = 1;

static int count_progress(double fraction, void *user) {
    (void)user;
    progress_calls++;
    if (fraction < last_fraction || fraction < 0 || fraction > 1) monotonic = 0;
    last_fraction = fraction;
    return 0;
}

static int cancel_at_once(double fraction, void *user) {
    (void)fraction;
    (*(int *)user)++;
    return 1;
}

static int exists(const char *file) { return access(file, F_OK) == 0; }

int main(int argc, char **argv) {
    if (argc != 2) { fprintf(stderr, "usage: client DIR\n"); return 2; }
    snprintf(dir, sizeof dir, "%s", argv[1]);

    /* Version: the header and the library agree. */
    char expected[32];
    snprintf(expected, sizeof expected, "%d.%d.%d", MIXDOWN_VERSION_MAJOR, MIXDOWN_VERSION_MINOR, MIXDOWN_VERSION_PATCH);
    CHECK(strcmp(mixdown_version(), expected) == 0, "library %s, header %s", mixdown_version(), expected);
    CHECK(mixdown_version_number() == MIXDOWN_VERSION_MAJOR * 10000 + MIXDOWN_VERSION_MINOR * 100 + MIXDOWN_VERSION_PATCH,
          "version number %d", mixdown_version_number());

    /* File info agrees with libsndfile. */
    audio in = load(path("in.wav"));
    mixdown_file_info info;
    CHECK(mixdown_file_info_read(path("in.wav"), -1, &info) == MIXDOWN_OK, "%s", mixdown_last_error());
    CHECK(info.frames == in.frames && info.sample_rate == in.rate && info.channels == in.channels,
          "info %" PRId64 " frames %d Hz %d ch; libsndfile %" PRId64 " %d %d",
          info.frames, info.sample_rate, info.channels, in.frames, in.rate, in.channels);
    CHECK(info.duration_num * in.rate == in.frames * info.duration_den, "duration %" PRId64 "/%" PRId64,
          info.duration_num, info.duration_den);
    CHECK(strcmp(info.container, "wav") == 0, "container '%s'", info.container);

    /* A stretch by 10001309/10000000 to a file: exactly round(N * R) frames, and the CLI's samples. */
    mixdown_stretch_options so;
    mixdown_stretch_options_init(&so);
    so.ratio_num = 10001309;
    so.ratio_den = 10000000;
    mixdown_output_options oo;
    mixdown_output_options_init(&oo);
    oo.sample_format = "f32";
    oo.overwrite = 1;
    mixdown_result result;
    int s = mixdown_stretch(path("in.wav"), path("c-stretch.wav"), &so, &oo, count_progress, NULL, &result);
    CHECK(s == MIXDOWN_OK, "stretch: %s", mixdown_last_error());
    /* round(N * 10001309 / 10000000), half away from zero, in integers. */
    int64_t target = (in.frames * 10001309 + 5000000) / 10000000;
    CHECK(result.frames == target, "stretch wrote %" PRId64 " frames, round(N x R) = %" PRId64, result.frames, target);
    CHECK(result.sample_rate == in.rate && result.channels == in.channels && result.seconds > 0 && result.realtime_factor > 0,
          "result %d Hz %d ch %.3f s", result.sample_rate, result.channels, result.seconds);
    CHECK(progress_calls > 0 && monotonic && last_fraction == 1.0, "progress: %d calls, last %.3f, monotonic %d",
          progress_calls, last_fraction, monotonic);
    audio cli_stretch = load(path("cli-stretch.wav"));
    audio c_stretch = load(path("c-stretch.wav"));
    CHECK(differing(&c_stretch, &cli_stretch) == 0, "the C stretch differs from the CLI's in %" PRId64 " frames",
          differing(&c_stretch, &cli_stretch));

    /* Loudness (since 0.2): the stretch measured; an export brought to -20 LUFS lands there
     * by the job's result and by a second measurement; an export at 32 kHz has its frames. */
    mixdown_loudness ld;
    CHECK(mixdown_loudness_measure(path("c-stretch.wav"), -1, NULL, NULL, &ld) == MIXDOWN_OK, "loudness: %s", mixdown_last_error());
    CHECK(ld.frames == target && ld.sample_rate == in.rate && ld.integrated_lufs > -70 && ld.integrated_lufs < 0 &&
          ld.true_peak_fine_dbtp >= ld.true_peak_dbtp - 0.5 && ld.max_momentary_lufs >= ld.integrated_lufs,
          "loudness %.2f LUFS, peaks %.2f / %.2f dBTP, max M %.2f", ld.integrated_lufs, ld.true_peak_dbtp,
          ld.true_peak_fine_dbtp, ld.max_momentary_lufs);
    CHECK(mixdown_loudness_measure(NULL, -1, NULL, NULL, &ld) == MIXDOWN_ERROR_NULL_POINTER, "loudness of NULL");
    CHECK(mixdown_loudness_measure(path("in.wav"), -1, NULL, NULL, NULL) == MIXDOWN_ERROR_NULL_POINTER, "loudness into NULL");
    CHECK(mixdown_loudness_measure(path("in.wav"), -7, NULL, NULL, &ld) == MIXDOWN_ERROR_INVALID_ARGUMENT
          && strstr(mixdown_last_error(), "stream -7") != NULL, "loudness of stream -7: %s", mixdown_last_error());
    mixdown_export_options leo;
    mixdown_export_options_init(&leo);
    mixdown_output_options lo;
    mixdown_output_options_init(&lo);
    CHECK(lo.loudness == 0 && lo.true_peak == -1 && lo.limit == 0 && lo.sample_rate == 0, "output options' defaults");
    lo.overwrite = 1;
    lo.loudness = -20;
    lo.limit = 1;
    mixdown_result lr;
    s = mixdown_export(path("in.wav"), path("c-loud.wav"), &leo, &lo, NULL, NULL, &lr);
    CHECK(s == MIXDOWN_OK && fabs(lr.loudness_lufs + 20) <= 0.05 && lr.true_peak_dbtp <= -1.49 && !isnan(lr.gain_db),
          "export at -20 LUFS: %d %s, %.3f LUFS, %.2f dBTP", s, mixdown_last_error(), lr.loudness_lufs, lr.true_peak_dbtp);
    CHECK(mixdown_loudness_measure(path("c-loud.wav"), -1, NULL, NULL, &ld) == MIXDOWN_OK && fabs(ld.integrated_lufs + 20) <= 0.05,
          "the -20 LUFS export measures %.3f", ld.integrated_lufs);
    CHECK(isnan(result.loudness_lufs) && isnan(result.gain_db), "no target: NAN loudness in the result");
    lo.loudness = 0;
    CHECK(mixdown_export(path("in.wav"), path("c-limit.wav"), &leo, &lo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT &&
          !exists(path("c-limit.wav")), "limit without a target: %s", mixdown_last_error());
    lo.limit = 0;
    lo.sample_rate = 32000;
    CHECK(mixdown_export(path("in.wav"), path("c-32k.wav"), &leo, &lo, NULL, NULL, &lr) == MIXDOWN_OK && lr.sample_rate == 32000 &&
          lr.frames == (in.frames * 32000 * 2 + in.rate) / (2 * (int64_t)in.rate), "export at 32 kHz: %d Hz, %" PRId64 " frames (%s)",
          lr.sample_rate, lr.frames, mixdown_last_error());

    /* The same stretch pulled in irregular blocks: the file's frames. */
    mixdown_render *h = NULL;
    CHECK(mixdown_render_open_stretch(&h, path("in.wav"), &so) == MIXDOWN_OK && h != NULL, "%s", mixdown_last_error());
    int64_t irregular[] = {1, 64, 511, 4096, 4097, 9000, 3};
    audio pulled;
    CHECK(pull_all(h, irregular, 7, &pulled) == 0, "pull of the stretch");
    CHECK(differing(&pulled, &cli_stretch) == 0, "the pulled stretch differs from the CLI's file in %" PRId64 " frames",
          differing(&pulled, &cli_stretch));
    /* A seek inside the stretch: the frames from there on are the file's. */
    int64_t at = 123457, position = -1;
    CHECK(mixdown_render_seek(h, at) == MIXDOWN_OK, "%s", mixdown_render_error(h));
    CHECK(mixdown_render_position(h, &position) == MIXDOWN_OK && position == at, "position %" PRId64, position);
    float *ch[64];
    for (int c = 0; c < pulled.channels; c++) ch[c] = pulled.planar[c];
    int64_t written = 0;
    int ended = 0;
    CHECK(mixdown_render_pull(h, ch, 5000, &written, &ended) == MIXDOWN_OK && written == 5000 && !ended, "pull after seek");
    int same = 1;
    for (int c = 0; c < pulled.channels; c++)
        for (int64_t i = 0; i < 5000; i++) same &= pulled.planar[c][i] == cli_stretch.planar[c][at + i];
    CHECK(same, "the frames after a seek to %" PRId64 " are not the file's", at);
    /* The interleaved pull, in irregular blocks from the start: frame f's channel c at
     * f * channels + c, the same frames as the planar pull. */
    CHECK(mixdown_render_seek(h, 0) == MIXDOWN_OK, "%s", mixdown_render_error(h));
    {
        int channels = pulled.channels;
        float *inter = malloc(sizeof(float) * (size_t)channels * (size_t)(cli_stretch.frames + 20000));
        int64_t done = 0, sizes[] = {1, 8191, 8192, 8193, 20000, 7};
        int k = 0;
        for (int end = 0; !end;) {
            int64_t want = sizes[k++ % 6], got = -1;
            CHECK(mixdown_render_pull_interleaved(h, inter + done * channels, want, &got, &end) == MIXDOWN_OK, "%s",
                  mixdown_render_error(h));
            CHECK(got == want || end, "a short interleaved pull (%" PRId64 " of %" PRId64 ") before the end", got, want);
            done += got;
        }
        CHECK(done == cli_stretch.frames, "the interleaved pull gave %" PRId64 " frames of %" PRId64, done, cli_stretch.frames);
        int64_t off = 0;
        for (int64_t i = 0; i < done; i++)
            for (int c = 0; c < channels; c++) off += inter[i * channels + c] != cli_stretch.planar[c][i];
        CHECK(off == 0, "%" PRId64 " interleaved samples differ from the CLI's file", off);
        int64_t got = -1;
        int end = 0;
        CHECK(mixdown_render_pull_interleaved(h, NULL, 10, &got, &end) == MIXDOWN_ERROR_NULL_POINTER, "interleaved pull into NULL");
        CHECK(strstr(mixdown_render_error(h), "interleaved is NULL") != NULL, "'%s'", mixdown_render_error(h));
        CHECK(mixdown_render_pull_interleaved(h, inter, 0, &got, &end) == MIXDOWN_ERROR_INVALID_ARGUMENT, "interleaved pull of 0 frames");
        free(inter);
    }
    mixdown_render_free(h);
    release(&pulled);

    /* An export of 0.5 s + 3 s with fades: the CLI's samples. */
    mixdown_export_options eo;
    mixdown_export_options_init(&eo);
    eo.start_num = 1; eo.start_den = 2;
    eo.duration_num = 3; eo.duration_den = 1;
    eo.fade_in_num = 1; eo.fade_in_den = 10;
    eo.fade_out_num = 1; eo.fade_out_den = 4;
    s = mixdown_export(path("in.wav"), path("c-export.wav"), &eo, &oo, NULL, NULL, &result);
    CHECK(s == MIXDOWN_OK && result.frames == 3 * in.rate, "export: %d %s, %" PRId64 " frames", s, mixdown_last_error(), result.frames);
    audio cli_export = load(path("cli-export.wav")), c_export = load(path("c-export.wav"));
    CHECK(differing(&c_export, &cli_export) == 0, "the C export differs from the CLI's");
    CHECK(c_export.planar[0][0] == 0.0f, "the fade-in does not start at 0");

    /* A document rendered to a file, and pulled: the CLI's frames, whatever the blocks. */
    s = mixdown_render_document(NULL, NULL, path("doc.json"), path("c-doc.wav"), &oo, NULL, NULL, &result);
    CHECK(s == MIXDOWN_OK, "render: %s", mixdown_last_error());
    audio cli_doc = load(path("cli-doc.wav")), c_doc = load(path("c-doc.wav"));
    CHECK(differing(&c_doc, &cli_doc) == 0, "the C render differs from the CLI's");
    CHECK(mixdown_render_open_document(&h, NULL, NULL, path("doc.json")) == MIXDOWN_OK, "%s", mixdown_last_error());
    int64_t blocks[][3] = {{4096, 4096, 4096}, {1, 1, 1}, {1000, 37, 65536}};
    for (int b = 0; b < 3; b++) {
        if (b > 0) CHECK(mixdown_render_seek(h, 0) == MIXDOWN_OK, "seek 0");
        /* Pulling 1 frame at a time is slow: do it on a seek near the end instead. */
        if (b == 1) CHECK(mixdown_render_seek(h, cli_doc.frames - 3000) == MIXDOWN_OK, "seek near the end");
        audio p;
        if (b == 1) {
            int32_t channels = 0;
            mixdown_render_format(h, NULL, &channels, NULL);
            float one[64][1];
            float *one_at[64];
            for (int c = 0; c < channels; c++) one_at[c] = one[c];
            int64_t i = cli_doc.frames - 3000, bad = 0;
            for (;; i++) {
                int end = 0;
                int64_t w = 0;
                CHECK(mixdown_render_pull(h, one_at, 1, &w, &end) == MIXDOWN_OK, "pull 1");
                if (w == 0) { CHECK(end, "0 frames without the end"); break; }
                for (int c = 0; c < channels; c++) bad += one[c][0] != cli_doc.planar[c][i];
            }
            CHECK(i == cli_doc.frames && bad == 0, "1-frame pulls: ended at %" PRId64 ", %" PRId64 " samples differ", i, bad);
            continue;
        }
        CHECK(pull_all(h, blocks[b], 3, &p) == 0, "pull of the document");
        CHECK(differing(&p, &cli_doc) == 0, "the pulled render (blocks %d) differs from the CLI's file", b);
        release(&p);
    }
    /* Seeks anywhere, in any order: each lands on its frame. */
    int64_t seeks[] = {cli_doc.frames / 2 + 17, 1, 48000 * 3 + 1, cli_doc.frames - 10, 0, 250000};
    int nch = cli_doc.channels;
    float *buf[64];
    for (int c = 0; c < nch; c++) buf[c] = malloc(sizeof(float) * 2048);
    for (int k = 0; k < 6; k++) {
        int64_t f = seeks[k], w = 0;
        int end = 0;
        CHECK(mixdown_render_seek(h, f) == MIXDOWN_OK, "seek %" PRId64 ": %s", f, mixdown_render_error(h));
        CHECK(mixdown_render_pull(h, buf, 2048, &w, &end) == MIXDOWN_OK, "pull after seek %" PRId64, f);
        int64_t expect = cli_doc.frames - f < 2048 ? cli_doc.frames - f : 2048;
        CHECK(w == expect && end == (f + w == cli_doc.frames), "after seek %" PRId64 ": %" PRId64 " frames, ended %d", f, w, end);
        int64_t bad = 0;
        for (int c = 0; c < nch; c++)
            for (int64_t i = 0; i < w; i++) bad += buf[c][i] != cli_doc.planar[c][f + i];
        CHECK(bad == 0, "after a seek to %" PRId64 ", %" PRId64 " samples differ", f, bad);
    }
    CHECK(mixdown_render_seek(h, cli_doc.frames + 1) == MIXDOWN_ERROR_INVALID_ARGUMENT, "a seek past the end");
    CHECK(strstr(mixdown_render_error(h), "seek frame") != NULL, "the handle's error: '%s'", mixdown_render_error(h));
    CHECK(mixdown_render_seek(h, cli_doc.frames) == MIXDOWN_OK, "a seek to the end");
    {
        int64_t w = -1;
        int end = 0;
        CHECK(mixdown_render_pull(h, buf, 10, &w, &end) == MIXDOWN_OK && w == 0 && end == 1, "a pull at the end");
    }

    /* Cancellation from the progress callback: a status, and no file. */
    int calls = 0;
    s = mixdown_stretch(path("in.wav"), path("cancelled.wav"), &so, &oo, cancel_at_once, &calls, NULL);
    CHECK(s == MIXDOWN_ERROR_CANCELLED && calls >= 1 && !exists(path("cancelled.wav")), "cancel: status %d, %d calls", s, calls);

    /* Drift estimation on a pair made with a known offset and drift (tools/testing/c-api). */
    mixdown_drift drift;
    s = mixdown_estimate_drift(path("pair-ref.wav"), path("pair-rec.wav"), NULL, &drift);
    CHECK(s == MIXDOWN_OK, "drift: %s", mixdown_last_error());
    CHECK(fabs(drift.offset_seconds - 2.5) < 0.001 && fabs(drift.ppm - 131) < 2, "drift: offset %.6f s, %.2f ppm",
          drift.offset_seconds, drift.ppm);
    CHECK(fabs((double)drift.offset_num / (double)drift.offset_den - drift.offset_seconds) < 1e-6, "offset %" PRId64 "/%" PRId64,
          drift.offset_num, drift.offset_den);
    CHECK(drift.confidence > 0.9 && drift.windows_used > 3, "confidence %.2f, %d windows", drift.confidence, drift.windows_used);

    /* Since 0.3: the plan of a stretch, said before it runs. */
    mixdown_stretch_plan plan;
    CHECK(mixdown_stretch_plan_read(path("in.wav"), &so, &plan) == MIXDOWN_OK, "plan: %s", mixdown_last_error());
    CHECK(plan.output_frames == target && plan.ratio_num == 10001309 && plan.ratio_den == 10000000 &&
          plan.algorithm == MIXDOWN_ALGORITHM_VARISPEED && plan.estimated_seconds > 0 && plan.notice[0] == 0,
          "plan: %" PRId64 " frames, %" PRId64 "/%" PRId64 ", algorithm %d, %.3f s, notice '%s'", plan.output_frames,
          plan.ratio_num, plan.ratio_den, (int)plan.algorithm, plan.estimated_seconds, plan.notice);
    mixdown_stretch_options pso;
    mixdown_stretch_options_init(&pso);
    pso.ratio_num = 1003; pso.ratio_den = 1000;
    CHECK(mixdown_stretch_plan_read(path("in.wav"), &pso, &plan) == MIXDOWN_OK && plan.algorithm != MIXDOWN_ALGORITHM_AUTO &&
          plan.algorithm != MIXDOWN_ALGORITHM_VARISPEED && plan.output_frames == (in.frames * 1003 + 500) / 1000,
          "plan of 1.003: algorithm %d, %" PRId64 " frames", (int)plan.algorithm, plan.output_frames);
    CHECK(mixdown_stretch_plan_read(path("in.wav"), &pso, NULL) == MIXDOWN_ERROR_NULL_POINTER, "plan into NULL");

    /* Since 0.3: an editor's timeline whose media moved, found by name under a directory,
     * renders the CLI's frames (`render moved.otio --media DIR`); without it, the clip is named. */
    const char *media_dirs[] = {dir, NULL};
    mixdown_media_options media = {media_dirs, NULL};
    CHECK(mixdown_render_timeline(path("moved.otio"), &media, path("c-moved.wav"), &oo, NULL, NULL, &result) == MIXDOWN_OK,
          "timeline: %s", mixdown_last_error());
    audio cli_moved = load(path("cli-moved.wav")), c_moved = load(path("c-moved.wav"));
    CHECK(cli_moved.frames > 0 && differing(&c_moved, &cli_moved) == 0, "the C timeline render differs from the CLI's in %" PRId64 " frames",
          differing(&c_moved, &cli_moved));
    release(&cli_moved); release(&c_moved);
    CHECK(mixdown_render_timeline(path("moved.otio"), NULL, path("c-unmoved.wav"), &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_DOCUMENT &&
          !exists(path("c-unmoved.wav")), "a timeline with moved media and no --media");
    CHECK(strstr(mixdown_last_error(), "/Volumes/Other/in.wav': no such file") != NULL, "'%s'", mixdown_last_error());
    const char *bad_rules[] = {"no-equals-sign", NULL};
    mixdown_media_options bad_media = {NULL, bad_rules};
    CHECK(mixdown_render_timeline(path("moved.otio"), &bad_media, path("c-bad.wav"), &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT,
          "a relink rule without '='");
    CHECK(strstr(mixdown_last_error(), "--relink 'no-equals-sign': must be OLD_PREFIX=NEW_PREFIX") != NULL, "'%s'", mixdown_last_error());
    mixdown_render *th = NULL;
    int64_t tframes = 0;
    CHECK(mixdown_render_open_timeline(&th, path("moved.otio"), &media) == MIXDOWN_OK &&
          mixdown_render_format(th, NULL, NULL, &tframes) == MIXDOWN_OK && tframes == result.frames,
          "open a timeline: %s (%" PRId64 " frames)", mixdown_last_error(), tframes);
    mixdown_render_free(th);

    /* Since 0.3: many recordings on the reference's clock, with stems, a document and a
     * timeline, as `mixdown sync REF REC REC --stems --doc --otio`. */
    char rec1[2048], rec2[2048];  /* path() reuses one buffer */
    snprintf(rec1, sizeof rec1, "%s", path("pair-rec.wav"));
    snprintf(rec2, sizeof rec2, "%s", path("pair-rec2.wav"));
    const char *recs[] = {rec1, rec2};
    char ref[2048];
    snprintf(ref, sizeof ref, "%s", path("pair-ref.wav"));
    char stems[2048], doc_out[2048], otio_out[2048];
    snprintf(stems, sizeof stems, "%s", path("stems"));
    snprintf(doc_out, sizeof doc_out, "%s", path("event.json"));
    snprintf(otio_out, sizeof otio_out, "%s", path("event.otio"));
    mixdown_sync_options syo;
    mixdown_sync_options_init(&syo);
    CHECK(syo.max_drift_ppm == 1000 && syo.min_confidence == 0.5 && syo.max_offset_num == 0 && syo.stems_dir == NULL, "sync defaults");
    syo.stems_dir = stems;
    syo.document_path = doc_out;
    syo.otio_path = otio_out;
    mixdown_sync_result sr;
    const char *report = NULL;
    progress_calls = 0; last_fraction = -1; monotonic = 1;
    s = mixdown_sync(ref, recs, 2, &syo, count_progress, NULL, &sr, &report);
    CHECK(s == MIXDOWN_OK, "sync: %s", mixdown_last_error());
    CHECK(sr.recordings == 2 && sr.placed == 2, "sync placed %d of %d", sr.placed, sr.recordings);
    mixdown_file_info ref_info;
    CHECK(mixdown_file_info_read(ref, -1, &ref_info) == MIXDOWN_OK && sr.stem_frames == 2 * ref_info.frames,
          "stems: %" PRId64 " frames, 2 x REF's %" PRId64, sr.stem_frames, ref_info.frames);
    CHECK(report != NULL && report[0] == '[' && strstr(report, "pair-rec2.wav") != NULL && strstr(report, "\"ppm\"") != NULL,
          "report '%.200s'", report ? report : "(null)");
    CHECK(exists(path("stems/pair-rec.wav")) && exists(path("stems/pair-rec2.wav")) && exists(doc_out) && exists(otio_out),
          "the sync's outputs");
    CHECK(progress_calls > 0 && monotonic, "sync progress: %d calls", progress_calls);
    /* Unrelated audio is not placed: the status says so, the report says which. */
    const char *unrelated[] = {path("m44.wav")};
    mixdown_sync_options_init(&syo);
    CHECK(mixdown_sync(ref, unrelated, 1, &syo, NULL, NULL, &sr, &report) == MIXDOWN_ERROR_NO_ALIGNMENT, "unrelated audio placed");
    CHECK(strstr(mixdown_last_error(), "m44.wav") != NULL, "'%s'", mixdown_last_error());
    CHECK(mixdown_sync(ref, NULL, 1, &syo, NULL, NULL, NULL, NULL) == MIXDOWN_ERROR_NULL_POINTER, "sync of NULL recordings");
    /* require_one_line with outputs that follow the clock: refused before anything is written. */
    char stems2[2048];
    snprintf(stems2, sizeof stems2, "%s", path("stems2"));
    syo.stems_dir = stems2;
    syo.require_one_line = 1;
    CHECK(mixdown_sync(ref, recs, 2, &syo, NULL, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT && !exists(stems2),
          "require_one_line with stems: '%s'", mixdown_last_error());
    CHECK(strstr(mixdown_last_error(), "require_one_line: not with stems_dir") != NULL, "'%s'", mixdown_last_error());

    /* Since 0.3: a batch manifest, run and resumed, as `mixdown batch`. */
    mixdown_batch_options bo;
    mixdown_batch_options_init(&bo);
    mixdown_batch_result br;
    s = mixdown_batch_run(path("batch.jsonl"), &bo, NULL, NULL, &br);
    CHECK(s == MIXDOWN_OK && br.total == 2 && br.done == 2 && br.skipped == 0 && br.failed == 0, "batch: %s (%d done of %d)",
          mixdown_last_error(), br.done, br.total);
    audio b1 = load(path("b1.wav"));
    CHECK(b1.frames == (in.frames * 10001 + 5000) / 10000, "batch stretch: %" PRId64 " frames", b1.frames);
    release(&b1);
    s = mixdown_batch_run(path("batch.jsonl"), &bo, NULL, NULL, &br);
    CHECK(s == MIXDOWN_OK && br.skipped == 2 && br.done == 0, "the batch resumed: %d skipped", br.skipped);
    bo.keep_going = 1;
    s = mixdown_batch_run(path("failing.jsonl"), &bo, NULL, NULL, &br);
    CHECK(s == MIXDOWN_ERROR_BATCH && br.failed == 1 && br.done == 1, "a failing batch: status %d, %d failed, %d done", s, br.failed, br.done);
    CHECK(strstr(mixdown_last_error(), "missing.wav") != NULL && strstr(mixdown_last_error(), "'gone'") != NULL, "'%s'", mixdown_last_error());
    bo.shard_index = 2; bo.shard_count = 2;
    CHECK(mixdown_batch_run(path("batch.jsonl"), &bo, NULL, NULL, &br) == MIXDOWN_ERROR_INVALID_ARGUMENT, "shard 2/2");
    CHECK(strstr(mixdown_last_error(), "--shard 2/2") != NULL, "'%s'", mixdown_last_error());

    /* Bad calls: a status and a message, never a crash, nothing written. */
    int64_t w = 0;
    int e = 0;
    CHECK(mixdown_render_pull(NULL, buf, 10, &w, &e) == MIXDOWN_ERROR_NULL_POINTER, "pull on NULL");
    CHECK(strstr(mixdown_last_error(), "handle is NULL") != NULL, "'%s'", mixdown_last_error());
    CHECK(mixdown_render_pull(h, NULL, 10, &w, &e) == MIXDOWN_ERROR_NULL_POINTER, "pull into NULL");
    CHECK(strstr(mixdown_render_error(h), "planar is NULL") != NULL, "'%s'", mixdown_render_error(h));
    CHECK(mixdown_render_seek(h, 0) == MIXDOWN_OK, "seek 0");
    CHECK(mixdown_render_pull(h, buf, 0, &w, &e) == MIXDOWN_ERROR_INVALID_ARGUMENT, "pull of 0 frames");
    CHECK(strstr(mixdown_last_error(), "frames 0") != NULL, "'%s'", mixdown_last_error());
    mixdown_render_free(h);
    CHECK(mixdown_render_pull(h, buf, 10, &w, &e) == MIXDOWN_ERROR_INVALID_HANDLE, "pull on a freed handle");
    CHECK(strstr(mixdown_last_error(), "not a live mixdown_render") != NULL, "'%s'", mixdown_last_error());
    CHECK(mixdown_render_seek(h, 0) == MIXDOWN_ERROR_INVALID_HANDLE, "seek on a freed handle");
    CHECK(strcmp(mixdown_render_error(h), "") == 0, "a freed handle's error: '%s'", mixdown_render_error(h));
    mixdown_render_free(h); /* twice: refused, no crash */
    CHECK(strstr(mixdown_last_error(), "freed twice") != NULL, "'%s'", mixdown_last_error());
    mixdown_render_free(NULL);

    h = (mixdown_render *)0x1;
    CHECK(mixdown_render_open_document(&h, "{\"version\": 1, \"tracks\": [", NULL, NULL) == MIXDOWN_ERROR_INVALID_DOCUMENT && h == NULL,
          "bad JSON");
    CHECK(strstr(mixdown_last_error(), "not valid JSON") != NULL, "'%s'", mixdown_last_error());
    CHECK(mixdown_render_open_document(&h, NULL, NULL, NULL) == MIXDOWN_ERROR_NULL_POINTER, "no document");
    CHECK(mixdown_render_open_document(&h, "{\"version\": 1, \"tracks\": [{\"segments\": [{\"file\": \"in.wav\", \"at\": \"0\"}]}]}", dir, NULL) == MIXDOWN_OK,
          "a JSON string with a base directory: %s", mixdown_last_error());
    int64_t frames = 0;
    CHECK(mixdown_render_format(h, NULL, NULL, &frames) == MIXDOWN_OK && frames == in.frames, "%" PRId64 " frames", frames);
    mixdown_render_free(h);
    CHECK(mixdown_render_open_stretch(&h, path("missing.wav"), &so) == MIXDOWN_ERROR_FILE_NOT_FOUND, "a missing file");
    CHECK(strstr(mixdown_last_error(), "missing.wav") != NULL, "'%s'", mixdown_last_error());
    CHECK(mixdown_file_info_read(path("missing.wav"), -1, &info) == MIXDOWN_ERROR_FILE_NOT_FOUND, "info of a missing file");
    CHECK(mixdown_file_info_read(NULL, -1, &info) == MIXDOWN_ERROR_NULL_POINTER, "info of NULL");
    CHECK(mixdown_file_info_read(path("in.wav"), -1, NULL) == MIXDOWN_ERROR_NULL_POINTER, "info into NULL");
    so.ratio_num = 0;
    so.ratio_den = 0;
    CHECK(mixdown_stretch(path("in.wav"), path("zero.wav"), &so, &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT &&
          !exists(path("zero.wav")), "a ratio of 0/0");
    CHECK(strstr(mixdown_last_error(), "0/0") != NULL, "'%s'", mixdown_last_error());
    CHECK(mixdown_render_open_stretch(&h, path("in.wav"), &so) == MIXDOWN_ERROR_INVALID_ARGUMENT && h == NULL, "open a 0/0 stretch");
    so.ratio_num = 5; so.ratio_den = 1;
    CHECK(mixdown_stretch(path("in.wav"), path("five.wav"), &so, &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT &&
          !exists(path("five.wav")), "a ratio of 5");
    CHECK(strstr(mixdown_last_error(), "between 0.25 and 4") != NULL, "'%s'", mixdown_last_error());
    so.ratio_num = 1; so.ratio_den = 1; so.algorithm = (mixdown_algorithm)42;
    CHECK(mixdown_stretch(path("in.wav"), path("x.wav"), &so, &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT, "algorithm 42");
    so.algorithm = MIXDOWN_ALGORITHM_AUTO;
    CHECK(mixdown_stretch(NULL, path("x.wav"), &so, &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_NULL_POINTER, "NULL input");
    oo.overwrite = 0;
    CHECK(mixdown_stretch(path("in.wav"), path("c-stretch.wav"), &so, &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_OUTPUT_EXISTS,
          "an existing output");
    eo.duration_den = 0;
    CHECK(mixdown_export(path("in.wav"), path("x.wav"), &eo, &oo, NULL, NULL, NULL) == MIXDOWN_ERROR_INVALID_ARGUMENT, "3/0 s");
    CHECK(strstr(mixdown_last_error(), "duration 3/0") != NULL, "'%s'", mixdown_last_error());
    CHECK(!exists(path("x.wav")), "a refused job wrote its output");
    CHECK(strcmp(mixdown_strerror(MIXDOWN_ERROR_INVALID_HANDLE), "invalid handle") == 0, "strerror");
    CHECK(strstr(mixdown_strerror(999), "unknown") != NULL, "strerror(999)");
    /* Every status the header declares has its own words. */
    for (int st = MIXDOWN_OK; st <= MIXDOWN_ERROR_BATCH; st++)
        CHECK(strstr(mixdown_strerror(st), "unknown") == NULL, "strerror(%d): '%s'", st, mixdown_strerror(st));

    for (int c = 0; c < nch; c++) free(buf[c]);
    release(&in); release(&cli_stretch); release(&c_stretch); release(&cli_export); release(&c_export);
    int64_t doc_frames = cli_doc.frames;
    release(&cli_doc); release(&c_doc);
    if (failures) { fprintf(stderr, "client: %d checks failed\n", failures); return 1; }
    printf("client: every check passed (stretch %" PRId64 " frames, document %" PRId64 " frames, drift %+.3f ms / %.3f ppm off)\n",
           target, doc_frames, (drift.offset_seconds - 2.5) * 1e3, drift.ppm - 131);
    return 0;
}
