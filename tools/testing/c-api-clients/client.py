#!/usr/bin/env python3
"""A Python client of libmixdown through ctypes (standard library only; numpy is used
when it is importable, a list of floats otherwise).

Usage: client.py LIBMIXDOWN.so DIR
DIR holds what tools/testing/c-api made: in.wav, doc.json, and the CLI's outputs
cli-stretch.wav and cli-doc.wav (32-bit float WAV). The client stretches in.wav through
mixdown_stretch, streams the document's render through mixdown_render_pull, and checks
frame counts and every sample against the CLI's files (read here with a small RIFF
reader), then a bad call's status and message. Exit status 0 when every check passes.
"""
import array
import ctypes as C
import os
import struct
import sys

try:
    import numpy
    if os.environ.get("MIXDOWN_CLIENT_LISTS"):  # the lists path, also where numpy is installed
        numpy = None
except ImportError:
    numpy = None

MIXDOWN_OK = 0
MIXDOWN_ERROR_INVALID_ARGUMENT = 2
MIXDOWN_ERROR_FILE_NOT_FOUND = 4


class StretchOptions(C.Structure):
    _fields_ = [("ratio_num", C.c_int64), ("ratio_den", C.c_int64), ("target_frames", C.c_int64),
                ("match_path", C.c_char_p), ("algorithm", C.c_int), ("quality", C.c_int), ("stream", C.c_int)]


class OutputOptions(C.Structure):
    _fields_ = [("type", C.c_char_p), ("sample_format", C.c_char_p), ("overwrite", C.c_int), ("threads", C.c_int),
                ("loudness", C.c_double), ("true_peak", C.c_double), ("limit", C.c_int), ("sample_rate", C.c_int32)]


class Result(C.Structure):
    _fields_ = [("frames", C.c_int64), ("sample_rate", C.c_int32), ("channels", C.c_int32),
                ("seconds", C.c_double), ("realtime_factor", C.c_double),
                ("loudness_lufs", C.c_double), ("true_peak_dbtp", C.c_double), ("gain_db", C.c_double)]


PROGRESS = C.CFUNCTYPE(C.c_int, C.c_double, C.c_void_p)


class Mixdown:
    """The few calls this client needs, with their C signatures."""

    def __init__(self, path):
        lib = C.CDLL(path)
        lib.mixdown_version.restype = C.c_char_p
        lib.mixdown_last_error.restype = C.c_char_p
        lib.mixdown_render_error.restype = C.c_char_p
        lib.mixdown_render_error.argtypes = [C.c_void_p]
        lib.mixdown_stretch_options_init.argtypes = [C.POINTER(StretchOptions)]
        lib.mixdown_output_options_init.argtypes = [C.POINTER(OutputOptions)]
        lib.mixdown_stretch.argtypes = [C.c_char_p, C.c_char_p, C.POINTER(StretchOptions), C.POINTER(OutputOptions),
                                        PROGRESS, C.c_void_p, C.POINTER(Result)]
        lib.mixdown_render_open_document.argtypes = [C.POINTER(C.c_void_p), C.c_char_p, C.c_char_p, C.c_char_p]
        lib.mixdown_render_open_stretch.argtypes = [C.POINTER(C.c_void_p), C.c_char_p, C.POINTER(StretchOptions)]
        lib.mixdown_render_format.argtypes = [C.c_void_p, C.POINTER(C.c_int32), C.POINTER(C.c_int32), C.POINTER(C.c_int64)]
        lib.mixdown_render_pull.argtypes = [C.c_void_p, C.POINTER(C.POINTER(C.c_float)), C.c_int64,
                                            C.POINTER(C.c_int64), C.POINTER(C.c_int)]
        lib.mixdown_render_seek.argtypes = [C.c_void_p, C.c_int64]
        lib.mixdown_render_free.argtypes = [C.c_void_p]
        self.lib = lib

    def error(self):
        return self.lib.mixdown_last_error().decode()

    def stretch(self, src, dst, num, den, sample_format=b"f32", progress=None):
        o = StretchOptions()
        self.lib.mixdown_stretch_options_init(C.byref(o))
        o.ratio_num, o.ratio_den = num, den
        out = OutputOptions()
        self.lib.mixdown_output_options_init(C.byref(out))
        out.sample_format, out.overwrite = sample_format, 1
        r = Result()
        callback = PROGRESS(progress or (lambda f, u: 0))
        status = self.lib.mixdown_stretch(src.encode(), dst.encode(), C.byref(o), C.byref(out), callback, None, C.byref(r))
        return status, r

    def stream_document(self, doc, block=1000):
        """Pulls the document's whole render, block by block: one list (or numpy array) per channel."""
        h = C.c_void_p()
        status = self.lib.mixdown_render_open_document(C.byref(h), None, None, doc.encode())
        if status != MIXDOWN_OK:
            raise RuntimeError(self.error())
        try:
            rate, channels, frames = C.c_int32(), C.c_int32(), C.c_int64()
            self.lib.mixdown_render_format(h, C.byref(rate), C.byref(channels), C.byref(frames))
            n = channels.value
            if numpy is not None:
                out = numpy.zeros((n, frames.value), dtype=numpy.float32)
            else:
                out = [array.array("f", bytes(4 * frames.value)) for _ in range(n)]
            blocks = [(C.c_float * block)() for _ in range(n)]
            pointers = (C.POINTER(C.c_float) * n)(*[C.cast(b, C.POINTER(C.c_float)) for b in blocks])
            done, ended = 0, C.c_int(0)
            written = C.c_int64()
            while not ended.value:
                status = self.lib.mixdown_render_pull(h, pointers, block, C.byref(written), C.byref(ended))
                if status != MIXDOWN_OK:
                    raise RuntimeError(self.lib.mixdown_render_error(h).decode())
                w = written.value
                for c in range(n):
                    if numpy is not None:
                        out[c, done:done + w] = numpy.ctypeslib.as_array(blocks[c])[:w]
                    else:
                        out[c][done:done + w] = array.array("f", bytes(blocks[c])[:4 * w])
                done += w
            return rate.value, out, done
        finally:
            self.lib.mixdown_render_free(h)


def read_float_wav(path):
    """A 32-bit float WAV (format 3, or extensible with the float GUID): rate and planar channels."""
    data = open(path, "rb").read()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE", f"{path}: not a WAV"
    at, fmt, samples = 12, None, None
    while at + 8 <= len(data):
        cid, size = data[at:at + 4], struct.unpack("<I", data[at + 4:at + 8])[0]
        body = data[at + 8:at + 8 + size]
        if cid == b"fmt ":
            fmt = struct.unpack("<HHIIHH", body[:16])
        elif cid == b"data":
            samples = array.array("f", body)
        at += 8 + size + (size & 1)
    tag, channels, rate, _, _, bits = fmt
    assert bits == 32 and tag in (3, 0xFFFE), f"{path}: not 32-bit float"
    return rate, [samples[c::channels] for c in range(channels)]


def main():
    lib_path, work = sys.argv[1], sys.argv[2]
    md = Mixdown(lib_path)
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)
            print("FAIL", what, file=sys.stderr)

    # A stretch through the C API: the CLI's file, frame for frame.
    seen = []
    status, r = md.stretch(os.path.join(work, "in.wav"), os.path.join(work, "py-stretch.wav"), 10001309, 10000000,
                           progress=lambda f, u: seen.append(f) or 0)
    check(status == MIXDOWN_OK, f"stretch: {status} {md.error()}")
    rate, cli = read_float_wav(os.path.join(work, "cli-stretch.wav"))
    _, mine = read_float_wav(os.path.join(work, "py-stretch.wav"))
    check(r.frames == len(cli[0]), f"stretch: {r.frames} frames, the CLI's file has {len(cli[0])}")
    check(mine == cli, "the stretch differs from the CLI's")
    check(seen and seen[-1] == 1.0 and seen == sorted(seen), f"progress {seen[:3]}...{seen[-3:]}")

    # The document's render streamed into Python: the CLI's file, frame for frame.
    rate, out, frames = md.stream_document(os.path.join(work, "doc.json"), block=1000)
    cli_rate, cli_doc = read_float_wav(os.path.join(work, "cli-doc.wav"))
    check(rate == cli_rate and frames == len(cli_doc[0]), f"render: {frames} frames at {rate} Hz, the CLI's {len(cli_doc[0])}")
    for c, channel in enumerate(cli_doc):
        pulled = out[c].tolist() if numpy is not None else list(out[c])
        check(pulled == list(channel), f"channel {c} of the streamed render differs from the CLI's file")

    # A bad call: a status and a message naming the file, nothing written.
    status, _ = md.stretch(os.path.join(work, "missing.wav"), os.path.join(work, "py-missing.wav"), 1, 1)
    check(status == MIXDOWN_ERROR_FILE_NOT_FOUND and "missing.wav" in md.error(), f"missing file: {status} {md.error()}")
    check(not os.path.exists(os.path.join(work, "py-missing.wav")), "a failed stretch left a file")
    status, _ = md.stretch(os.path.join(work, "in.wav"), os.path.join(work, "py-zero.wav"), 0, 0)
    check(status == MIXDOWN_ERROR_INVALID_ARGUMENT and "0/0" in md.error(), f"0/0: {status} {md.error()}")

    if failures:
        print(f"client.py: {len(failures)} checks failed", file=sys.stderr)
        sys.exit(1)
    print(f"client.py: every check passed (libmixdown {md.lib.mixdown_version().decode()}; stretch {r.frames} frames, "
          f"document {frames} frames streamed into {'numpy' if numpy is not None else 'lists'})")


if __name__ == "__main__":
    main()
