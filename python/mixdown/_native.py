"""The C API of libmixdown (include/mixdown.h) as ctypes declarations.

The library is loaded with ctypes.CDLL, which releases the GIL for the length of every
call: renders, pulls and estimates on different Python threads run at once.
"""
from __future__ import annotations

import ctypes as C
import os
from pathlib import Path

OK = 0
ERROR_INVALID_ARGUMENT = 2
ERROR_INVALID_HANDLE = 3
ERROR_OUTPUT_EXISTS = 8
ERROR_CANCELLED = 10
ERROR_NO_ALIGNMENT = 11
ERROR_BATCH = 14

ALGORITHMS = {"auto": 0, "varispeed": 1, "wsola": 2, "rubberband": 3, "spectral": 4, "splice": 5}
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


class StretchPlan(C.Structure):
    _fields_ = [("ratio_num", C.c_int64), ("ratio_den", C.c_int64), ("output_frames", C.c_int64),
                ("algorithm", C.c_int), ("estimated_seconds", C.c_double), ("notice", C.c_char * 512)]


StringList = C.POINTER(C.c_char_p)


class MediaOptions(C.Structure):
    _fields_ = [("directories", StringList), ("relink", StringList)]


class SyncOptions(C.Structure):
    _fields_ = [("max_offset_num", C.c_int64), ("max_offset_den", C.c_int64), ("max_drift_ppm", C.c_double),
                ("window_spacing", C.c_double), ("min_confidence", C.c_double), ("piecewise", C.c_int),
                ("devices", StringList), ("plot_path", C.c_char_p), ("document_path", C.c_char_p),
                ("otio_path", C.c_char_p), ("otio_rate", C.c_char_p), ("stems_dir", C.c_char_p),
                ("stems_type", C.c_char_p), ("keep_polarity", C.c_int), ("keep_going", C.c_int), ("overwrite", C.c_int),
                ("require_one_line", C.c_int)]


class SyncResult(C.Structure):
    _fields_ = [("recordings", C.c_int32), ("placed", C.c_int32), ("stem_frames", C.c_int64), ("seconds", C.c_double)]


class BatchOptions(C.Structure):
    _fields_ = [("jobs", C.c_int32), ("shard_index", C.c_int32), ("shard_count", C.c_int32),
                ("results_path", C.c_char_p), ("keep_going", C.c_int)]


class BatchResult(C.Structure):
    _fields_ = [("total", C.c_int32), ("done", C.c_int32), ("skipped", C.c_int32), ("failed", C.c_int32),
                ("not_run", C.c_int32), ("frames", C.c_int64), ("seconds", C.c_double)]


def string_list(values: "list[bytes] | None") -> "C.Array | None":
    """A NULL-ended C array of the strings, or None for none."""
    if not values:
        return None
    return (C.c_char_p * (len(values) + 1))(*values, None)


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
        "mixdown_render_open_timeline": ([C.POINTER(C.c_void_p), p, C.POINTER(MediaOptions)], C.c_int),
        "mixdown_render_timeline": ([p, C.POINTER(MediaOptions), p, C.POINTER(OutputOptions), PROGRESS, C.c_void_p,
                                     C.POINTER(Result)], C.c_int),
        "mixdown_stretch_plan_read": ([p, C.POINTER(StretchOptions), C.POINTER(StretchPlan)], C.c_int),
        "mixdown_sync_options_init": ([C.POINTER(SyncOptions)], None),
        "mixdown_sync": ([p, StringList, i32, C.POINTER(SyncOptions), PROGRESS, C.c_void_p, C.POINTER(SyncResult),
                          C.POINTER(C.c_char_p)], C.c_int),
        "mixdown_batch_options_init": ([C.POINTER(BatchOptions)], None),
        "mixdown_batch_run": ([p, C.POINTER(BatchOptions), PROGRESS, C.c_void_p, C.POINTER(BatchResult)], C.c_int),
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
