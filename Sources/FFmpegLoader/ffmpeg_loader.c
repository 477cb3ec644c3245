/* FFmpeg's functions as calls through pointers that mx_ffmpeg_load fills (ffmpeg_loader.h
 * says why). A build without FFmpeg's headers compiles this file to nothing: the FFmpeg
 * trait is off there and nothing calls it. */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Hidden: what this file defines serves the binary that holds it (the command, libmixdown,
 * a test bundle): never exported, and never what FFmpeg's own libraries bind to. */
#pragma GCC visibility push(hidden)
#include "ffmpeg_loader.h"

#if __has_include(<libavformat/avformat.h>)
#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/frame.h>
#include <libavutil/mathematics.h>

/* Every FFmpeg function Mixdown and its tests call: F(return type, name, parameters,
 * arguments), V(name, parameters, arguments) for those that return nothing. The
 * prototypes are checked against the headers' declarations by the compiler. */
#define MX_FFMPEG_FUNCTIONS(F, V) \
    F(int, av_channel_layout_copy, (AVChannelLayout *dst, const AVChannelLayout *src), (dst, src)) \
    V(av_channel_layout_default, (AVChannelLayout *layout, int channels), (layout, channels)) \
    F(int, av_compare_ts, (int64_t a, AVRational ta, int64_t b, AVRational tb), (a, ta, b, tb)) \
    F(int, av_dict_copy, (AVDictionary **dst, const AVDictionary *src, int flags), (dst, src, flags)) \
    V(av_dict_free, (AVDictionary **m), (m)) \
    F(AVDictionaryEntry *, av_dict_get, (const AVDictionary *m, const char *key, const AVDictionaryEntry *prev, int flags), \
      (m, key, prev, flags)) \
    F(int, av_dict_set, (AVDictionary **m, const char *key, const char *value, int flags), (m, key, value, flags)) \
    F(int, av_find_best_stream, (AVFormatContext *ic, enum AVMediaType type, int wanted, int related, \
      const AVCodec **decoder, int flags), (ic, type, wanted, related, decoder, flags)) \
    F(AVFrame *, av_frame_alloc, (void), ()) \
    V(av_frame_free, (AVFrame **frame), (frame)) \
    F(int, av_frame_get_buffer, (AVFrame *frame, int align), (frame, align)) \
    F(AVFrameSideData *, av_frame_get_side_data, (const AVFrame *frame, enum AVFrameSideDataType type), (frame, type)) \
    F(int, av_frame_make_writable, (AVFrame *frame), (frame)) \
    V(av_frame_unref, (AVFrame *frame), (frame)) \
    V(av_free, (void *p), (p)) \
    V(av_freep, (void *p), (p)) \
    F(int, av_interleaved_write_frame, (AVFormatContext *s, AVPacket *packet), (s, packet)) \
    V(av_log_set_level, (int level), (level)) \
    F(void *, av_malloc, (size_t size), (size)) \
    F(AVPacket *, av_packet_alloc, (void), ()) \
    F(AVPacket *, av_packet_clone, (const AVPacket *src), (src)) \
    V(av_packet_free, (AVPacket **packet), (packet)) \
    F(uint8_t *, av_packet_get_side_data, (const AVPacket *packet, enum AVPacketSideDataType type, size_t *size), \
      (packet, type, size)) \
    V(av_packet_move_ref, (AVPacket *dst, AVPacket *src), (dst, src)) \
    V(av_packet_rescale_ts, (AVPacket *packet, AVRational from, AVRational to), (packet, from, to)) \
    V(av_packet_unref, (AVPacket *packet), (packet)) \
    F(int, av_read_frame, (AVFormatContext *s, AVPacket *packet), (s, packet)) \
    F(int64_t, av_rescale_q, (int64_t a, AVRational bq, AVRational cq), (a, bq, cq)) \
    F(int64_t, av_rescale_q_rnd, (int64_t a, AVRational bq, AVRational cq, enum AVRounding rounding), (a, bq, cq, rounding)) \
    F(int, av_seek_frame, (AVFormatContext *s, int stream, int64_t timestamp, int flags), (s, stream, timestamp, flags)) \
    F(int, av_strerror, (int code, char *buffer, size_t size), (code, buffer, size)) \
    F(int, av_write_trailer, (AVFormatContext *s), (s)) \
    F(AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec)) \
    F(const AVCodec *, avcodec_find_decoder, (enum AVCodecID id), (id)) \
    F(const AVCodec *, avcodec_find_encoder_by_name, (const char *name), (name)) \
    V(avcodec_flush_buffers, (AVCodecContext *context), (context)) \
    V(avcodec_free_context, (AVCodecContext **context), (context)) \
    F(const char *, avcodec_get_name, (enum AVCodecID id), (id)) \
    F(int, avcodec_open2, (AVCodecContext *context, const AVCodec *codec, AVDictionary **options), (context, codec, options)) \
    F(int, avcodec_parameters_copy, (AVCodecParameters *dst, const AVCodecParameters *src), (dst, src)) \
    F(int, avcodec_parameters_from_context, (AVCodecParameters *par, const AVCodecContext *context), (par, context)) \
    F(int, avcodec_parameters_to_context, (AVCodecContext *context, const AVCodecParameters *par), (context, par)) \
    F(int, avcodec_receive_frame, (AVCodecContext *context, AVFrame *frame), (context, frame)) \
    F(int, avcodec_receive_packet, (AVCodecContext *context, AVPacket *packet), (context, packet)) \
    F(int, avcodec_send_frame, (AVCodecContext *context, const AVFrame *frame), (context, frame)) \
    F(int, avcodec_send_packet, (AVCodecContext *context, const AVPacket *packet), (context, packet)) \
    F(int, avformat_alloc_output_context2, (AVFormatContext **s, const AVOutputFormat *format, const char *name, \
      const char *filename), (s, format, name, filename)) \
    V(avformat_close_input, (AVFormatContext **s), (s)) \
    F(int, avformat_find_stream_info, (AVFormatContext *s, AVDictionary **options), (s, options)) \
    V(avformat_free_context, (AVFormatContext *s), (s)) \
    F(AVStream *, avformat_new_stream, (AVFormatContext *s, const AVCodec *codec), (s, codec)) \
    F(int, avformat_open_input, (AVFormatContext **s, const char *url, const AVInputFormat *format, AVDictionary **options), \
      (s, url, format, options)) \
    F(int, avformat_query_codec, (const AVOutputFormat *format, enum AVCodecID id, int compliance), (format, id, compliance)) \
    F(int, avformat_write_header, (AVFormatContext *s, AVDictionary **options), (s, options)) \
    F(AVIOContext *, avio_alloc_context, (unsigned char *buffer, int size, int write_flag, void *opaque, \
      int (*read_packet)(void *, uint8_t *, int), int (*write_packet)(void *, uint8_t *, int), \
      int64_t (*seek)(void *, int64_t, int)), (buffer, size, write_flag, opaque, read_packet, write_packet, seek)) \
    V(avio_context_free, (AVIOContext **s), (s)) \
    V(avio_flush, (AVIOContext *s), (s)) \
    F(int64_t, avio_seek, (AVIOContext *s, int64_t offset, int whence), (s, offset, whence)) \
    F(int64_t, avio_size, (AVIOContext *s), (s)) \
    V(avio_write, (AVIOContext *s, const unsigned char *buffer, int size), (s, buffer, size))

/* The pointers, and the table that fills them. */
#define MX_POINTER(ret, name, params, args) static __typeof__(name) *mx_##name;
#define MX_POINTER_VOID(name, params, args) static __typeof__(name) *mx_##name;
MX_FFMPEG_FUNCTIONS(MX_POINTER, MX_POINTER_VOID)

#define MX_ENTRY(ret, name, params, args) {#name, (void **)&mx_##name},
#define MX_ENTRY_VOID(name, params, args) {#name, (void **)&mx_##name},
static const struct { const char *name; void **pointer; } mx_functions[] = {
    MX_FFMPEG_FUNCTIONS(MX_ENTRY, MX_ENTRY_VOID)
};

/* In the order each needs the one before; each soname a literal of the binary, for the
 * Python package's build to read (python/setup.py). */
#define MX_TEXT(x) #x
#define MX_SONAME(name, major) "lib" name ".so." MX_TEXT(major)
static const struct { const char *name; int major; const char *soname; } mx_libraries[] = {
    {"avutil", LIBAVUTIL_VERSION_MAJOR, MX_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR)},
    {"avcodec", LIBAVCODEC_VERSION_MAJOR, MX_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR)},
    {"avformat", LIBAVFORMAT_VERSION_MAJOR, MX_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR)},
};
#define MX_LIBRARY_COUNT (sizeof mx_libraries / sizeof mx_libraries[0])

static pthread_once_t mx_once = PTHREAD_ONCE_INIT;
static atomic_int mx_loaded;             /* 1 once every pointer is set */
static char mx_failure[512];            /* why not, when the load failed */

/* A library already in the process as lib<name>, then '-' or '.', with ".so.<major>" in its
 * file name: auditwheel grafts libavformat.so.59 into a wheel as libavformat-<hash>.so.59.x. */
typedef struct { const char *name; int major; char path[4096]; } mx_search;

static int mx_matches(const char *file, const mx_search *s) {
    if (!file || strncmp(file, "lib", 3) != 0) return 0;
    size_t length = strlen(s->name);
    if (strncmp(file + 3, s->name, length) != 0 || (file[3 + length] != '-' && file[3 + length] != '.')) return 0;
    char version[32];
    snprintf(version, sizeof version, ".so.%d", s->major);
    const char *at = strstr(file, version);
    return at && (at[strlen(version)] == '\0' || at[strlen(version)] == '.');
}

static int mx_find_loaded(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    mx_search *s = data;
    const char *file = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;
    if (!mx_matches(file ? file + 1 : info->dlpi_name, s)) return 0;
    snprintf(s->path, sizeof s->path, "%s", info->dlpi_name);
    return 1;
}

/* The Python wheel's copies: auditwheel grafts them into mixdown.libs beside the package
 * that holds libmixdown (tools/package), which loads them from there only when a job
 * needs them. Fills s->path; 0 when there are none. */
static int mx_find_beside(mx_search *s) {
    Dl_info self;
    if (!dladdr((void *)mx_matches, &self) || !self.dli_fname) return 0;
    const char *slash = strrchr(self.dli_fname, '/');
    if (!slash) return 0;
    char folder[4096];
    snprintf(folder, sizeof folder, "%.*s/../mixdown.libs", (int)(slash - self.dli_fname), self.dli_fname);
    DIR *dir = opendir(folder);
    if (!dir) return 0;
    int found = 0;
    for (struct dirent *e; !found && (e = readdir(dir));)
        if (mx_matches(e->d_name, s)) found = snprintf(s->path, sizeof s->path, "%s/%s", folder, e->d_name) > 0;
    closedir(dir);
    return found;
}

static void mx_load_once(void) {
    void *handles[MX_LIBRARY_COUNT];
    for (size_t i = 0; i < MX_LIBRARY_COUNT; i++) {
        mx_search search = {mx_libraries[i].name, mx_libraries[i].major, ""};
        const char *soname = mx_libraries[i].soname;
        handles[i] = dl_iterate_phdr(mx_find_loaded, &search) ? dlopen(search.path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) : NULL;
        if (!handles[i] && mx_find_beside(&search)) handles[i] = dlopen(search.path, RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) handles[i] = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const char *why = dlerror();
            snprintf(mx_failure, sizeof mx_failure,
                     "MP4, MOV, M4A, MKV and WebM need FFmpeg's %s, which could not be loaded (Debian: apt-get install "
                     "lib%s%d): %s", soname, search.name, search.major, why ? why : "not found");
            return;
        }
    }
    for (size_t f = 0; f < sizeof mx_functions / sizeof mx_functions[0]; f++) {
        void *address = NULL;
        for (size_t i = MX_LIBRARY_COUNT; i-- > 0 && !address;) address = dlsym(handles[i], mx_functions[f].name);
        if (!address) {
            snprintf(mx_failure, sizeof mx_failure,
                     "FFmpeg's libraries were loaded but have no %s (Mixdown was built against lib%s.so.%d's headers)",
                     mx_functions[f].name, mx_libraries[MX_LIBRARY_COUNT - 1].name, mx_libraries[MX_LIBRARY_COUNT - 1].major);
            return;
        }
        *mx_functions[f].pointer = address;
    }
    atomic_store_explicit(&mx_loaded, 1, memory_order_release);
}

int mx_ffmpeg_load(char *message, size_t size) {
    pthread_once(&mx_once, mx_load_once);
    if (atomic_load_explicit(&mx_loaded, memory_order_acquire)) return 0;
    if (message && size > 0) snprintf(message, size, "%s", mx_failure);
    return -1;
}

/* A call before a successful load is the caller's mistake (every entry point loads first,
 * and reports a failure as an error): it stops here, with the reason, not at a null call. */
static void mx_ffmpeg_required(void) {
    if (__builtin_expect(atomic_load_explicit(&mx_loaded, memory_order_acquire), 1)) return;
    char why[sizeof mx_failure];
    if (mx_ffmpeg_load(why, sizeof why) == 0) return;
    fprintf(stderr, "mixdown: an FFmpeg function was called without FFmpeg: %s\n", why);
    abort();
}

#define MX_WRAPPER(ret, name, params, args) \
    ret name params { mx_ffmpeg_required(); return mx_##name args; }
#define MX_WRAPPER_VOID(name, params, args) \
    void name params { mx_ffmpeg_required(); mx_##name args; }
MX_FFMPEG_FUNCTIONS(MX_WRAPPER, MX_WRAPPER_VOID)

#else
int mx_ffmpeg_load(char *message, size_t size) {
    if (message && size > 0) snprintf(message, size, "this build of Mixdown has no FFmpeg");
    return -1;
}
#endif
#pragma GCC visibility pop
