"""Loudness measured by EBU R 128 (ITU-R BS.1770)."""
from __future__ import annotations

import ctypes as C
from dataclasses import dataclass
from typing import Optional


from . import _native
from ._native import lib as _lib
from ._args import PathLike, Progress, _INT32_MAX, _int, _path
from ._job import _Job


@dataclass(frozen=True)
class Loudness:
    """A file's loudness to EBU R128 (docs/loudness.md). ``-inf`` where there is nothing to
    measure (a silent file; maxima of a file shorter than their window)."""
    integrated: float
    """Integrated (programme) loudness, LUFS."""
    range: float
    """Loudness range, LU."""
    true_peak: float
    """True peak, dBTP: BS.1770's 4x reading."""
    true_peak_fine: float
    """The 8x reading the limiter holds, dBTP."""
    sample_peak: float
    """dBFS."""
    max_momentary: float
    """The loudest 400 ms window, read every 1 ms, LUFS."""
    max_short_term: float
    """The loudest 3 s window, read every 1 ms, LUFS."""
    frames: int
    sample_rate: int
    channels: int


def loudness(path: PathLike, *, stream: Optional[int] = None, progress: Optional[Progress] = None) -> Loudness:
    """Measures `path`'s loudness (any file the engine reads; ``stream``: a container's audio
    stream, None: the first)."""
    m = _native.Loudness()
    src = _path(path, "path")
    index = -1 if stream is None else _int(stream, "stream", 0, _INT32_MAX)
    _Job(progress).run(lambda cb: _lib.mixdown_loudness_measure(src, index, cb, None, C.byref(m)))
    return Loudness(integrated=m.integrated_lufs, range=m.range_lu, true_peak=m.true_peak_dbtp,
                    true_peak_fine=m.true_peak_fine_dbtp, sample_peak=m.sample_peak_dbfs,
                    max_momentary=m.max_momentary_lufs, max_short_term=m.max_short_term_lufs,
                    frames=m.frames, sample_rate=m.sample_rate, channels=m.channels)
