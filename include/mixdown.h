/*
 * mixdown.h: the C API of Mixdown, an offline audio render engine.
 *
 * Link with `$(pkg-config --cflags --libs mixdown)`.
 *
 * Conventions (as libsamplerate's):
 * - Counts are FRAMES, never samples: one frame holds one sample of every channel.
 * - Audio crosses the API as planar 32-bit float: `float *const *planar` is an array of
 *   one pointer per channel, each to at least the frames asked. The caller owns every
 *   buffer and every struct; the library keeps no pointer to them after a call returns.
 * - Every call returns a status (MIXDOWN_OK = 0, else a mixdown_status code).
 *   mixdown_strerror(status) names the code; the detail (which file, parameter or time is
 *   at fault) is in mixdown_last_error() for the calling thread, and for a render handle
 *   also in mixdown_render_error(handle).
 * - Handles are opaque. Every handle is released with its _free function. Using a handle
 *   after its _free is undefined behaviour; the library tracks its live handles and
 *   answers MIXDOWN_ERROR_INVALID_HANDLE while the freed address has not been reused.
 * - Strings are UTF-8, NUL-terminated. Strings the library returns are owned by it.
 * - Times that are exact are given as a numerator and a denominator of seconds.
 *
 * Thread safety is stated on each function. In short: everything without a handle may be
 * called from any thread at once (each call has its own state); one render handle must be
 * used by one thread at a time.
 */
#ifndef MIXDOWN_H
#define MIXDOWN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version this header describes. mixdown_version() gives the library's own. */
#define MIXDOWN_VERSION_MAJOR 0
#define MIXDOWN_VERSION_MINOR 3
#define MIXDOWN_VERSION_PATCH 0

/* Status codes. */
typedef enum mixdown_status {
    MIXDOWN_OK = 0,
    MIXDOWN_ERROR_NULL_POINTER = 1,     /* a required pointer argument is NULL */
    MIXDOWN_ERROR_INVALID_ARGUMENT = 2, /* a value out of range: a ratio of 0/0, 0 frames, an unknown enum */
    MIXDOWN_ERROR_INVALID_HANDLE = 3,   /* a handle that is not live (freed, or never made) */
    MIXDOWN_ERROR_FILE_NOT_FOUND = 4,   /* an input file does not exist or is not a file */
    MIXDOWN_ERROR_UNREADABLE = 5,       /* an input cannot be read or decoded (damaged, truncated, no audio) */
    MIXDOWN_ERROR_INVALID_DOCUMENT = 6, /* a composition document is not valid (bad JSON, a bad edit) */
    MIXDOWN_ERROR_UNSUPPORTED = 7,      /* an output the library cannot write (type, format, codec) */
    MIXDOWN_ERROR_OUTPUT_EXISTS = 8,    /* the output exists and overwrite is off */
    MIXDOWN_ERROR_WRITE = 9,            /* the output cannot be written (permissions, space) */
    MIXDOWN_ERROR_CANCELLED = 10,       /* the progress callback asked to stop */
    MIXDOWN_ERROR_NO_ALIGNMENT = 11,    /* drift estimation found no trustworthy alignment */
    MIXDOWN_ERROR_INTERNAL = 12,        /* a bug: please report it with mixdown_last_error() */
    MIXDOWN_ERROR_LOUDNESS = 13,        /* an output that cannot meet its loudness target or true-peak
                                           ceiling (measured after writing, or out of the limiter's
                                           reach): nothing was written */
    MIXDOWN_ERROR_BATCH = 14            /* since 0.3: a batch job failed or was not run (the others ran) */
} mixdown_status;

/* Time-scale algorithms (the CLI's --algorithm). */
typedef enum mixdown_algorithm {
    MIXDOWN_ALGORITHM_AUTO = 0,       /* varispeed under 0.29 %, else spectral */
    MIXDOWN_ALGORITHM_VARISPEED = 1,  /* resampling: pitch follows speed (drift correction) */
    MIXDOWN_ALGORITHM_WSOLA = 2,      /* time domain, pitch kept */
    MIXDOWN_ALGORITHM_RUBBERBAND = 3, /* Rubber Band, pitch kept (when built with it) */
    MIXDOWN_ALGORITHM_SPECTRAL = 4,   /* Mixdown's spectral stretch, pitch kept (every build) */
    MIXDOWN_ALGORITHM_SPLICE = 5      /* the input untouched but for a few splices, pitch kept (every build) */
} mixdown_algorithm;

/* Resampler quality (the CLI's --quality). */
typedef enum mixdown_quality {
    MIXDOWN_QUALITY_BEST = 0,
    MIXDOWN_QUALITY_MEDIUM = 1,
    MIXDOWN_QUALITY_FASTEST = 2
} mixdown_quality;

/*
 * Progress: called with the fraction done (0..1, never decreasing) on the thread that
 * runs the job. Return 0 to go on, anything else to cancel: the job then stops at its
 * next block, writes nothing, and returns MIXDOWN_ERROR_CANCELLED.
 */
typedef int (*mixdown_progress_fn)(double fraction, void *user_data);

/* ---- Library ---------------------------------------------------------------------- */

/* "MAJOR.MINOR.PATCH" of the library. Thread-safe. Never NULL. */
const char *mixdown_version(void);

/* MAJOR * 10000 + MINOR * 100 + PATCH. Thread-safe. */
int mixdown_version_number(void);

/* A short static description of a status code ("invalid handle"). Thread-safe. Never NULL. */
const char *mixdown_strerror(int status);

/*
 * The message of the last call on this thread that failed ("'a.wav': no such file"), or
 * "" when none has. Valid until the next failing call on this thread. Thread-safe (each
 * thread has its own).
 */
const char *mixdown_last_error(void);

/* ---- File information ------------------------------------------------------------- */

typedef struct mixdown_file_info {
    int64_t frames;            /* exact length in frames */
    int32_t sample_rate;       /* Hz */
    int32_t channels;
    int32_t stream;            /* the container's index of the audio stream read */
    int32_t stream_count;      /* streams in the file (audio, video, others) */
    int64_t duration_num;      /* exact duration in seconds: duration_num / duration_den */
    int64_t duration_den;
    double duration_seconds;   /* the same, rounded to a double */
    char container[16];        /* "wav", "flac", "mp4", "matroska", ...: NUL-terminated */
    char sample_format[16];    /* "s16", "s24", "f32", "aac", ...: NUL-terminated */
} mixdown_file_info;

/*
 * Reads `path`'s header (and, for containers, its packet index) into `*info`. `stream`:
 * the container's index of an audio stream, or -1 for the first. Any file the engine
 * reads: WAV, AIFF, FLAC, Ogg, MP3, CAF, W64, MP4/MOV/M4A, MKV/WebM. Thread-safe.
 */
int mixdown_file_info_read(const char *path, int stream, mixdown_file_info *info);

/* ---- Loudness ------------------------------------------------------------------- */

/* A file's loudness (EBU R128; docs/loudness.md). -INFINITY where there is nothing to
 * measure: a silent file's integrated loudness and peaks, the maxima of a file shorter
 * than their window. */
typedef struct mixdown_loudness {
    double integrated_lufs;     /* gated programme loudness */
    double range_lu;            /* loudness range (Tech 3342) */
    double true_peak_dbtp;      /* BS.1770's 4x reading */
    double true_peak_fine_dbtp; /* the 8x reading the limiter holds */
    double sample_peak_dbfs;
    double max_momentary_lufs;  /* the loudest 400 ms window, read every 1 ms */
    double max_short_term_lufs; /* the loudest 3 s window, read every 1 ms */
    int64_t frames;
    int32_t sample_rate;
    int32_t channels;
} mixdown_loudness;

/*
 * Measures `path`'s audio stream `stream` (-1: the first) into `*loudness`. `progress`
 * may be NULL. Thread-safe.
 */
int mixdown_loudness_measure(const char *path, int stream, mixdown_progress_fn progress, void *user_data,
                             mixdown_loudness *loudness);

/* ---- File jobs -------------------------------------------------------------------- */

/* How a job writes its output. Fill with mixdown_output_options_init, then change. */
typedef struct mixdown_output_options {
    const char *type;          /* "wav", "flac", "m4a", ...; NULL: from the output's extension */
    const char *sample_format; /* "s16", "s24", "f32"; NULL: the input's precision */
    int overwrite;             /* nonzero: replace an existing output (atomically) */
    int threads;               /* 1 or 2; 0: the default (both cores) */
    /* Since 0.2. Loudness (docs/loudness.md): bring the output to `loudness` LUFS (-60 to
     * below 0; 0, the default: as rendered) under the true-peak ceiling `true_peak` dBTP
     * (default -1); with `limit` nonzero a true-peak limiter holds the ceiling and the target
     * is reached, else the gain is lowered to the ceiling. */
    double loudness;
    double true_peak;
    int limit;
    /* Since 0.2. mixdown_export and mixdown_stretch: write at this rate in Hz through the
     * resampler; 0 (the default): the input's (an Opus output of a rate Opus does not take:
     * 48000). */
    int32_t sample_rate;
} mixdown_output_options;

void mixdown_output_options_init(mixdown_output_options *options);

/* A stretch of a whole file to an exact length. Exactly one target is set. */
typedef struct mixdown_stretch_options {
    int64_t ratio_num;         /* output length / input length = ratio_num / ratio_den, */
    int64_t ratio_den;         /*   both > 0 (1000131 / 1000000: +131 ppm) */
    int64_t target_frames;     /* or, when > 0: exactly this many output frames */
    const char *match_path;    /* or, when not NULL: the exact duration of this file */
    mixdown_algorithm algorithm;
    mixdown_quality quality;
    int stream;                /* the input's audio stream; -1: the first */
} mixdown_stretch_options;

/* Defaults: ratio 1/1, no target, auto, best, stream -1. */
void mixdown_stretch_options_init(mixdown_stretch_options *options);

/* An export: a time range of a file, with fades. Times are exact: num / den seconds. */
typedef struct mixdown_export_options {
    int64_t start_num, start_den;       /* start; 0/1: the file's start */
    int64_t duration_num, duration_den; /* duration; 0/1: to the file's end */
    int64_t fade_in_num, fade_in_den;   /* linear fade in (gain 0 to 1); 0/1: none */
    int64_t fade_out_num, fade_out_den; /* linear fade out (gain 1 to 0); 0/1: none */
    int stream;                         /* the input's audio stream; -1: the first */
} mixdown_export_options;

void mixdown_export_options_init(mixdown_export_options *options);

/* What a job did. */
typedef struct mixdown_result {
    int64_t frames;            /* frames written */
    int32_t sample_rate;
    int32_t channels;
    double seconds;            /* wall time taken */
    double realtime_factor;    /* the audio's duration / wall time */
    /* Since 0.2. With a loudness target: the written output's integrated loudness (LUFS),
     * its true peak read 8x (dBTP), and the gain applied (dB); NAN without one. */
    double loudness_lufs;
    double true_peak_dbtp;
    double gain_db;
} mixdown_result;

/*
 * Stretches `input` to `output` (atomic: complete, or absent). `output_options` may be
 * NULL (defaults); `progress` may be NULL; `result` may be NULL. Thread-safe: jobs on
 * different threads run at once.
 */
int mixdown_stretch(const char *input, const char *output, const mixdown_stretch_options *options,
                    const mixdown_output_options *output_options,
                    mixdown_progress_fn progress, void *user_data, mixdown_result *result);

/* Since 0.3. What mixdown_stretch would do with the same input and options, known before
 * it starts (it opens the input, and a match_path's file, and renders nothing). */
typedef struct mixdown_stretch_plan {
    int64_t ratio_num;          /* the exact ratio the stretch uses, reduced */
    int64_t ratio_den;
    int64_t output_frames;      /* exactly the frames it writes */
    mixdown_algorithm algorithm; /* the algorithm that runs (AUTO resolved for the ratio) */
    double estimated_seconds;   /* a rough estimate of the wall time */
    /* When AUTO chose a pitch-keeping algorithm that will take long (10 s or more): what it
     * chose, why, about how long, and the faster choices, as text; else "". */
    char notice[512];
} mixdown_stretch_plan;

/* Fills `*plan` for a stretch of `input` with `options`. Thread-safe. */
int mixdown_stretch_plan_read(const char *input, const mixdown_stretch_options *options, mixdown_stretch_plan *plan);

/* Exports a time range of `input` with fades. As mixdown_stretch. */
int mixdown_export(const char *input, const char *output, const mixdown_export_options *options,
                   const mixdown_output_options *output_options,
                   mixdown_progress_fn progress, void *user_data, mixdown_result *result);

/*
 * Renders a composition document (docs/composition.md) to `output`. The document is
 * `json` (relative paths in it are relative to `base_dir`, or to the working directory
 * when `base_dir` is NULL) or, when `json` is NULL, the file `path`. The document's own
 * output settings apply; `output_options` (may be NULL) overrides type, sample format,
 * overwrite and threads where set. Thread-safe.
 */
int mixdown_render_document(const char *json, const char *base_dir, const char *path, const char *output,
                            const mixdown_output_options *output_options,
                            mixdown_progress_fn progress, void *user_data, mixdown_result *result);

/*
 * Since 0.3. Where a timeline's media is looked for when it is not where the timeline
 * says (`mixdown render --media DIR --relink OLD=NEW`; docs/otio.md). Each list is an
 * array of strings ended by NULL, or NULL for none.
 */
typedef struct mixdown_media_options {
    const char *const *directories; /* looked in by file name, then by clip name */
    const char *const *relink;      /* "OLD_PREFIX=NEW_PREFIX": a path under OLD_PREFIX is looked for under NEW_PREFIX */
} mixdown_media_options;

/*
 * Since 0.3. Renders the document or editor's timeline in the file `path` (.json, .otio,
 * .edl, .xml, .aaf) to `output`, finding moved media through `media` (may be NULL). As
 * mixdown_render_document otherwise. Thread-safe.
 */
int mixdown_render_timeline(const char *path, const mixdown_media_options *media, const char *output,
                            const mixdown_output_options *output_options,
                            mixdown_progress_fn progress, void *user_data, mixdown_result *result);

/* ---- Drift estimation ------------------------------------------------------------- */

typedef struct mixdown_drift_options {
    double max_offset_seconds;  /* search range for the start offset; default 60 */
    double max_drift_ppm;       /* default 1000 */
    double window_spacing;      /* seconds between analysis windows; default 10 */
    double min_confidence;      /* below it the call fails with MIXDOWN_ERROR_NO_ALIGNMENT; default 0.5 */
} mixdown_drift_options;

void mixdown_drift_options_init(mixdown_drift_options *options);

/*
 * reference_time = offset + ratio * recording_time: the recording's frame at time t (its
 * own clock) sounds at offset + ratio * t on the reference's clock.
 */
typedef struct mixdown_drift {
    int64_t offset_num;         /* offset in seconds, exact to the microsecond: num / den */
    int64_t offset_den;
    double offset_seconds;
    double ratio;               /* stretch the recording by this to match the reference */
    double ppm;                 /* (ratio - 1) * 1e6 */
    double confidence;          /* 0..1: the share of windows that agree with the line */
    int32_t windows_used;
    int32_t windows_rejected;
    double residual_rms_ms;     /* the used windows' distance from the line */
    double residual_max_ms;
    double seconds;             /* wall time taken */
} mixdown_drift;

/* Estimates how `recording` drifts against `reference`. `options` may be NULL. Thread-safe. */
int mixdown_estimate_drift(const char *reference, const char *recording,
                           const mixdown_drift_options *options, mixdown_drift *drift);

/* ---- Sync of many recordings ------------------------------------------------------- */

/* Since 0.3. `mixdown sync`'s options. Fill with mixdown_sync_options_init, then change. */
typedef struct mixdown_sync_options {
    int64_t max_offset_num;     /* the largest offset searched, num / den seconds; */
    int64_t max_offset_den;     /*   0/1: 60 s for two files, any overlap for more */
    double max_drift_ppm;       /* default 1000 */
    double window_spacing;      /* seconds between analysis windows; default 10 */
    double min_confidence;      /* below it a recording is not placed; default 0.5 */
    int piecewise;              /* nonzero: report where the drift changes (two files only) */
    const char *const *devices; /* NULL-ended "NAME=CLIP,CLIP,...": clips of one device share a clock; or NULL */
    const char *plot_path;      /* an SVG of every window's lag, or NULL */
    const char *document_path;  /* a composition document of the aligned event, or NULL */
    const char *otio_path;      /* an OpenTimelineIO timeline of the aligned event, or NULL */
    const char *otio_rate;      /* with otio_path: every time at this edit rate ("24", "30000/1001"), or NULL */
    const char *stems_dir;      /* every recording aligned and drift-corrected, REF's length, into this directory, or NULL */
    const char *stems_type;     /* the stems' type ("wav", "flac", ...); NULL: wav */
    int keep_polarity;          /* nonzero: stems keep the polarity as recorded */
    int keep_going;             /* nonzero: write the outputs of the recordings placed even if one was not */
    int overwrite;              /* nonzero: replace the plot, document, timeline and stems */
    int require_one_line;       /* nonzero: a recording that one offset and ratio do not describe (a clock
                                   that wanders or jumps) fails the call with MIXDOWN_ERROR_NO_ALIGNMENT;
                                   zero: the report has its map, and the outputs follow it; not
                                   with stems_dir, document_path or otio_path (refused) */
} mixdown_sync_options;

void mixdown_sync_options_init(mixdown_sync_options *options);

/* What a sync did. */
typedef struct mixdown_sync_result {
    int32_t recordings;         /* recordings placed or not (device clips included) */
    int32_t placed;
    int64_t stem_frames;        /* frames written to the stems, all together */
    double seconds;             /* wall time taken */
} mixdown_sync_result;

/*
 * Places `count` recordings (and the devices' clips) on `reference`'s clock, and writes
 * the outputs the options name, as `mixdown sync` does. `options`, `progress`, `result`
 * and `report_json` may be NULL. `*report_json` receives the report `mixdown sync --json`
 * prints, as one JSON array (one object per recording, with its estimate, device, path of
 * placement and error), owned by the library and valid until the calling thread's next
 * mixdown_sync or its end (copy it before the thread ends). A recording not placed fails the call with MIXDOWN_ERROR_NO_ALIGNMENT (and
 * with keep_going the others' outputs are written); the report is set either way once the
 * analysis ran. Thread-safe.
 */
int mixdown_sync(const char *reference, const char *const *recordings, int32_t count,
                 const mixdown_sync_options *options, mixdown_progress_fn progress, void *user_data,
                 mixdown_sync_result *result, const char **report_json);

/* ---- Batches ---------------------------------------------------------------------- */

/* Since 0.3. `mixdown batch`'s options (docs/batch.md). Fill with mixdown_batch_options_init. */
typedef struct mixdown_batch_options {
    int32_t jobs;               /* jobs at once; 0: one per core */
    int32_t shard_index;        /* with shard_count > 0: run the jobs whose index is shard_index mod shard_count */
    int32_t shard_count;        /* 0: every job */
    const char *results_path;   /* NULL: beside the manifest, one per shard */
    int keep_going;             /* nonzero: run every job even when one fails */
} mixdown_batch_options;

void mixdown_batch_options_init(mixdown_batch_options *options);

typedef struct mixdown_batch_result {
    int32_t total;              /* the shard's jobs */
    int32_t done;
    int32_t skipped;            /* done by an earlier run and unchanged */
    int32_t failed;
    int32_t not_run;            /* not started after a failure (without keep_going) or a cancel */
    int64_t frames;             /* frames written */
    double seconds;
} mixdown_batch_result;

/*
 * Runs the manifest `manifest` (JSON Lines of {"args": [...], "id": ...}; docs/batch.md) as
 * `mixdown batch` does: resumably, `jobs` at once. Every line is checked before anything
 * runs. A failed job fails the call (MIXDOWN_ERROR_BATCH, the first failure's message in
 * mixdown_last_error()) after the others ran or were not started; `*result` is set either
 * way. Thread-safe.
 */
int mixdown_batch_run(const char *manifest, const mixdown_batch_options *options,
                      mixdown_progress_fn progress, void *user_data, mixdown_batch_result *result);

/* ---- Pull rendering ----------------------------------------------------------------- */

/* A render the caller pulls into its own buffers, frame-identical to the file render. */
typedef struct mixdown_render mixdown_render;

/*
 * Opens a pull render of a composition document (`json` with `base_dir`, or the file
 * `path` when `json` is NULL, as in mixdown_render_document). On success `*handle` is a
 * new handle; on failure it is set to NULL. Thread-safe.
 */
int mixdown_render_open_document(mixdown_render **handle, const char *json, const char *base_dir, const char *path);

/* Since 0.3. Opens a pull render of the document or timeline in the file `path`, finding
 * moved media through `media` (may be NULL). As mixdown_render_open_document. */
int mixdown_render_open_timeline(mixdown_render **handle, const char *path, const mixdown_media_options *media);

/* Opens a pull render of a stretch of `input`. As mixdown_render_open_document. */
int mixdown_render_open_stretch(mixdown_render **handle, const char *input, const mixdown_stretch_options *options);

/* The render's rate, channels and total frames. Any pointer may be NULL. One thread at a time per handle. */
int mixdown_render_format(mixdown_render *handle, int32_t *sample_rate, int32_t *channels, int64_t *frames);

/*
 * Writes up to `frames` (> 0) frames at the start of each of `planar`'s channels (one
 * pointer per channel, each to at least `frames` floats). `*written` receives the frames
 * written: fewer than asked only at the end, where `*ended` becomes 1 (0 before it). After
 * the end every pull writes 0 frames and sets `*ended`. One thread at a time per handle.
 */
int mixdown_render_pull(mixdown_render *handle, float *const *planar, int64_t frames,
                        int64_t *written, int *ended);

/*
 * As mixdown_render_pull, into one interleaved buffer: `interleaved` holds at least
 * `frames` x channels floats, and frame f's channel c lands at interleaved[f * channels + c]
 * (the layout of a C-ordered numpy array of shape (frames, channels), and of most audio
 * sinks). The frames are those mixdown_render_pull gives. One thread at a time per handle.
 */
int mixdown_render_pull_interleaved(mixdown_render *handle, float *interleaved, int64_t frames,
                                    int64_t *written, int *ended);

/*
 * Moves to `frame` (0 ... total frames): the next pull begins with exactly that frame of
 * the render. One thread at a time per handle.
 */
int mixdown_render_seek(mixdown_render *handle, int64_t frame);

/* The frame the next pull begins with, in `*frame`. One thread at a time per handle. */
int mixdown_render_position(mixdown_render *handle, int64_t *frame);

/*
 * The message of this handle's last failed call, or "" (never NULL, also for a NULL or
 * dead handle). Valid until the handle's next call.
 */
const char *mixdown_render_error(mixdown_render *handle);

/* Releases the handle and everything it holds. NULL is accepted (nothing happens). */
void mixdown_render_free(mixdown_render *handle);

#ifdef __cplusplus
}
#endif

#endif /* MIXDOWN_H */
