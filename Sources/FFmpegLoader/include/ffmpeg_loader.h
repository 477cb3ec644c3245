/* FFmpeg's libraries, loaded when a job first needs them, not when Mixdown starts.
 *
 * Linked at start, libavformat, libavcodec and libavutil and the 130 libraries they
 * pull in made 28 MB of a 47 MB start and 28 ms of its CPU time, for every job, though
 * only MP4, MOV, M4A, MKV and WebM use them. So nothing links them: ffmpeg_loader.c
 * defines each FFmpeg function Mixdown calls (the same name and prototype, hidden in
 * the binary that holds it) as a call through a pointer that mx_ffmpeg_load fills from
 * the libraries whose major versions the headers name. */
#ifndef MIXDOWN_FFMPEG_LOADER_H
#define MIXDOWN_FFMPEG_LOADER_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Loads libavutil, libavcodec and libavformat once per process (thread-safe; later calls
 * return the first call's result). Libraries already in the process under any file name
 * with the right major version are used as they are; then copies in mixdown.libs beside
 * the folder of the binary that holds this (the Python wheel's, grafted by auditwheel);
 * then each is opened by its soname (libavformat.so.59 for FFmpeg 5.1's headers). Returns 0,
 * or -1 with a sentence in `message` (size bytes, NUL-terminated, truncated to fit) that
 * names the library missing and the Debian package that holds it. */
int mx_ffmpeg_load(char *message, size_t size);

#ifdef __cplusplus
}
#endif

#endif
