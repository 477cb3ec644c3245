"""The C API of libmixdown (include/mixdown.h) as ctypes declarations.

The library is loaded with ctypes.CDLL, which releases the GIL for the length of every
call: renders, pulls and estimates on different Python threads run at once.
"""
from __future__ import annotations

import ctypes as C
import os
from pathlib import Path

OK = 0
ERROR_OUTPUT_EXISTS = 8
ERROR_CANCELLED = 10

ALGORITHMS = {"auto": 0, "varispeed": 1, "wsola": 2, "rubberband": 3, "spectral": 4}
QUALITIES = {"best": 0, "medium": 1, "fastest": 2}


class FileInfo(C.Structure):
    _fields_ = [("frames", C.c_int64), ("sample_rate", C.c_int32), ("channels", C.c_int32),
                ("stream", C.c_int32), ("stream_count", C.c_int32),
                ("duration_num", C.c_int64), ("duration_den", C.c_int64), ("duration_seconds", C.c_double),
                ("container", C.c_char * 16), ("sample_format", C.c_char * 16)]


class OutputOptions(C.Structure):
    _fields_ = [("type", C.c_char_p), ("sample_format", C.c_char_p), ("overwrite", C.c_int), ("threads", C.c_int),
                ("loudness", C.c_double), ("true_peak", C.c_double), ("limit", C.c_int), ("sample_rate", C.c_int32)]


class StretchOptions(C.Structure):
    _fields_ = [("ratio_num", C.c_int64), ("ratio_den", C.c_int64), ("target_frames", C.c_int64),
                ("match_path", C.c_char_p), ("algorithm", C.c_int), ("quality", C.c_int), ("stream", C.c_int)]


class ExportOptions(C.Structure):
    _fields_ = [("start_num", C.c_int64), ("start_den", C.c_int64),
                ("duration_num", C.c_int64), ("duration_den", C.c_int64),
                ("fade_in_num", C.c_int64), ("fade_in_den", C.c_int64),
                ("fade_out_num", C.c_int64), ("fade_out_den", C.c_int64),
                ("stream", C.c_int)]


class Result(C.Structure):
    _fields_ = [("frames", C.c_int64), ("sample_rate", C.c_int32), ("channels", C.c_int32),
                ("seconds", C.c_double), ("realtime_factor", C.c_double),
                ("loudness_lufs", C.c_double), ("true_peak_dbtp", C.c_double), ("gain_db", C.c_double)]


class Loudness(C.Structure):
    _fields_ = [("integrated_lufs", C.c_double), ("range_lu", C.c_double), ("true_peak_dbtp", C.c_double),
                ("true_peak_fine_dbtp", C.c_double), ("sample_peak_dbfs", C.c_double),
                ("max_momentary_lufs", C.c_double), ("max_short_term_lufs", C.c_double),
                ("frames", C.c_int64), ("sample_rate", C.c_int32), ("channels", C.c_int32)]


class DriftOptions(C.Structure):
    _fields_ = [("max_offset_seconds", C.c_double), ("max_drift_ppm", C.c_double),
                ("window_spacing", C.c_double), ("min_confidence", C.c_double)]


class Drift(C.Structure):
    _fields_ = [("offset_num", C.c_int64), ("offset_den", C.c_int64), ("offset_seconds", C.c_double),
                ("ratio", C.c_double), ("ppm", C.c_double), ("confidence", C.c_double),
                ("windows_used", C.c_int32), ("windows_rejected", C.c_int32),
                ("residual_rms_ms", C.c_double), ("residual_max_ms", C.c_double), ("seconds", C.c_double)]


PROGRESS = C.CFUNCTYPE(C.c_int, C.c_double, C.c_void_p)
FloatPointer = C.POINTER(C.c_float)


def _load() -> C.CDLL:
    # The library built into the package (python/setup.py); MIXDOWN_LIBRARY overrides it,
    # for a library under development.
    path = os.environ.get("MIXDOWN_LIBRARY") or str(Path(__file__).with_name("libmixdown.so"))
    lib = C.CDLL(path)
    p, i32, i64 = C.c_char_p, C.c_int32, C.c_int64
    signatures = {
        "mixdown_version": ([], p),
        "mixdown_version_number": ([], C.c_int),
        "mixdown_strerror": ([C.c_int], p),
        "mixdown_last_error": ([], p),
        "mixdown_file_info_read": ([p, C.c_int, C.POINTER(FileInfo)], C.c_int),
        "mixdown_output_options_init": ([C.POINTER(OutputOptions)], None),
        "mixdown_stretch_options_init": ([C.POINTER(StretchOptions)], None),
        "mixdown_export_options_init": ([C.POINTER(ExportOptions)], None),
        "mixdown_drift_options_init": ([C.POINTER(DriftOptions)], None),
        "mixdown_stretch": ([p, p, C.POINTER(StretchOptions), C.POINTER(OutputOptions), PROGRESS, C.c_void_p,
                             C.POINTER(Result)], C.c_int),
        "mixdown_export": ([p, p, C.POINTER(ExportOptions), C.POINTER(OutputOptions), PROGRESS, C.c_void_p,
                            C.POINTER(Result)], C.c_int),
        "mixdown_render_document": ([p, p, p, p, C.POINTER(OutputOptions), PROGRESS, C.c_void_p,
                                     C.POINTER(Result)], C.c_int),
        "mixdown_estimate_drift": ([p, p, C.POINTER(DriftOptions), C.POINTER(Drift)], C.c_int),
        "mixdown_loudness_measure": ([p, C.c_int, PROGRESS, C.c_void_p, C.POINTER(Loudness)], C.c_int),
        "mixdown_render_open_document": ([C.POINTER(C.c_void_p), p, p, p], C.c_int),
        "mixdown_render_open_stretch": ([C.POINTER(C.c_void_p), p, C.POINTER(StretchOptions)], C.c_int),
        "mixdown_render_format": ([C.c_void_p, C.POINTER(i32), C.POINTER(i32), C.POINTER(i64)], C.c_int),
        "mixdown_render_pull": ([C.c_void_p, C.POINTER(FloatPointer), i64, C.POINTER(i64), C.POINTER(C.c_int)],
                                C.c_int),
        "mixdown_render_pull_interleaved": ([C.c_void_p, C.c_void_p, i64, C.POINTER(i64), C.POINTER(C.c_int)],
                                            C.c_int),
        "mixdown_render_seek": ([C.c_void_p, i64], C.c_int),
        "mixdown_render_position": ([C.c_void_p, C.POINTER(i64)], C.c_int),
        "mixdown_render_error": ([C.c_void_p], p),
        "mixdown_render_free": ([C.c_void_p], None),
    }
    for name, (argtypes, restype) in signatures.items():
        function = getattr(lib, name)
        function.argtypes = argtypes
        function.restype = restype
    return lib


lib = _load()
