#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/channel_layout.h>
#include <libavutil/dict.h>
#include <libavutil/opt.h>
#include <libavutil/samplefmt.h>
#include <errno.h>

/* Macros Swift cannot import, as functions. */
static inline int mx_averror_eagain(void) { return AVERROR(EAGAIN); }
static inline int mx_averror_eof(void) { return AVERROR_EOF; }
static inline int64_t mx_av_nopts(void) { return AV_NOPTS_VALUE; }
static inline const char *mx_av_strerror(int code, char *buffer, size_t size) {
    av_strerror(code, buffer, size);
    return buffer;
}
