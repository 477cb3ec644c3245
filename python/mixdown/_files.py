"""File jobs: info, plan, stretch and export, and the result they give."""
from __future__ import annotations

import ctypes as C
import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from typing import Optional


from . import _native
from ._native import lib as _lib
from ._errors import Error, SlowStretchWarning, _check
from ._args import Exact, PathLike, Progress, _INT32_MAX, _INT64_MAX, _choice, _exact, _frames_half_away, _int, _int64_pair, _output_options, _path
from ._job import _Job


# ---- Files --------------------------------------------------------------------------------

@dataclass(frozen=True)
class FileInfo:
    """What a file holds. ``frames`` is exact; ``duration`` is ``frames / sample_rate`` seconds."""
    frames: int
    sample_rate: int
    channels: int
    duration: Fraction
    container: str
    sample_format: str
    stream: int
    streams: int


def info(path: PathLike, *, stream: Optional[int] = None) -> FileInfo:
    """Reads `path`'s header (and a container's packet index): any file the engine reads
    (WAV, AIFF, FLAC, Ogg, MP3, CAF, W64, MP4/MOV/M4A, MKV/WebM). `stream`: the container's
    index of an audio stream; None: the first."""
    i = _native.FileInfo()
    _check(_lib.mixdown_file_info_read(_path(path, "path"), -1 if stream is None else stream, C.byref(i)))
    return FileInfo(frames=i.frames, sample_rate=i.sample_rate, channels=i.channels,
                    duration=Fraction(i.duration_num, i.duration_den), container=i.container.decode(),
                    sample_format=i.sample_format.decode(), stream=i.stream, streams=i.stream_count)


@dataclass(frozen=True)
class Result:
    """What a job wrote: ``frames`` exactly, at ``sample_rate``; ``seconds`` of wall time.
    With a loudness target: the written output's ``loudness`` (LUFS), its ``true_peak``
    (dBTP, read 8x) and the ``gain`` applied (dB); None without one."""
    frames: int
    sample_rate: int
    channels: int
    seconds: float
    realtime_factor: float
    loudness: Optional[float] = None
    true_peak: Optional[float] = None
    gain: Optional[float] = None

    @property
    def duration(self) -> Fraction:
        """The output's exact duration in seconds."""
        return Fraction(self.frames, self.sample_rate)


def _result(r: _native.Result) -> Result:
    def value(v: float) -> Optional[float]:
        return None if math.isnan(v) else v
    return Result(frames=r.frames, sample_rate=r.sample_rate, channels=r.channels, seconds=r.seconds,
                  realtime_factor=r.realtime_factor, loudness=value(r.loudness_lufs), true_peak=value(r.true_peak_dbtp),
                  gain=value(r.gain_db))


def _stretch_options(input: PathLike, ratio: Optional[Exact], frames: Optional[int], duration: Optional[Exact],
                     match: Optional[PathLike], algorithm: str, quality: str,
                     stream: Optional[int]) -> _native.StretchOptions:
    targets = [name for name, value in (("ratio", ratio), ("frames", frames), ("duration", duration), ("match", match))
               if value is not None]
    if len(targets) > 1:
        raise Error(f"{' and '.join(targets)}: give one target")
    if not targets:
        raise Error("give one target: ratio=, frames=, duration= or match= (ratio=1 copies the input)")
    o = _native.StretchOptions()
    _lib.mixdown_stretch_options_init(C.byref(o))
    if ratio is not None:
        o.ratio_num, o.ratio_den = _int64_pair(_exact(ratio, "ratio"), "ratio")
    elif frames is not None:
        if isinstance(frames, bool) or not isinstance(frames, int):
            raise TypeError(f"frames={frames!r}: expected an int (frames, not samples)")
        if not 0 < frames <= _INT64_MAX:
            raise Error(f"frames={frames}: must lie between 1 and {_INT64_MAX} (frames, not samples)")
        o.target_frames = frames
    elif duration is not None:
        # Frames at the input's rate, rounded half away from zero (as the command's --to-duration).
        seconds = _exact(duration, "duration")
        if seconds <= 0:
            raise Error(f"duration={seconds}: must be longer than 0")
        source = info(input, stream=stream)
        o.target_frames = _frames_half_away(seconds * source.sample_rate)
        implied = Fraction(o.target_frames, source.frames) if source.frames else None
        if implied is not None and not Fraction(1, 4) <= implied <= 4:
            raise Error(f"duration={seconds}: gives {o.target_frames} frames from {source.frames}, a ratio "
                        f"(output / input) of {float(implied):.6g}; the ratio must lie between 0.25 and 4")
    elif match is not None:
        o.match_path = _path(match, "match")
    o.algorithm = _choice(algorithm, _native.ALGORITHMS, "algorithm")
    o.quality = _choice(quality, _native.QUALITIES, "quality")
    o.stream = -1 if stream is None else _int(stream, "stream", 0, _INT32_MAX)
    return o


@dataclass(frozen=True)
class StretchPlan:
    """What :func:`stretch` will do, known before it starts: the exact ``ratio``, the output's
    ``frames``, the ``algorithm`` that runs ("auto" resolved), a rough ``estimated_seconds``,
    and ``notice``: the text of a :class:`SlowStretchWarning`, or None."""
    ratio: Fraction
    frames: int
    algorithm: str
    estimated_seconds: float
    notice: Optional[str]


def plan(input: PathLike, *, ratio: Optional[Exact] = None, frames: Optional[int] = None,
         duration: Optional[Exact] = None, match: Optional[PathLike] = None, algorithm: str = "auto",
         quality: str = "best", stream: Optional[int] = None) -> StretchPlan:
    """Says what :func:`stretch` with the same arguments will do, rendering nothing."""
    o = _stretch_options(input, ratio, frames, duration, match, algorithm, quality, stream)
    p = _native.StretchPlan()
    src = _path(input, "input")
    _Job(None).run(lambda _cb: _lib.mixdown_stretch_plan_read(src, C.byref(o), C.byref(p)), cancellable=False)
    names = {v: k for k, v in _native.ALGORITHMS.items()}
    return StretchPlan(ratio=Fraction(p.ratio_num, p.ratio_den), frames=p.output_frames, algorithm=names[p.algorithm],
                       estimated_seconds=p.estimated_seconds, notice=p.notice.decode() or None)


def stretch(input: PathLike, output: PathLike, *, ratio: Optional[Exact] = None, frames: Optional[int] = None,
            duration: Optional[Exact] = None, match: Optional[PathLike] = None, algorithm: str = "auto",
            quality: str = "best", stream: Optional[int] = None, format: Optional[str] = None,
            sample_format: Optional[str] = None, overwrite: bool = False, threads: Optional[int] = None,
            loudness: Optional[float] = None, true_peak: Optional[float] = None, limit: bool = False,
            rate: Optional[int] = None, progress: Optional[Progress] = None) -> Result:
    """Stretches the whole of `input` to an exact length and writes `output`.

    Give one target:

    - ``ratio``: output length / input length, exact (``"1.0001309"``, ``Fraction(10001309, 10000000)``);
      the output has ``round(frames * ratio)`` frames, half away from zero;
    - ``frames``: exactly this many output frames;
    - ``duration``: exact seconds, rounded to frames at the input's rate, half away from zero;
    - ``match``: the exact duration of another file.

    ``algorithm``: "auto" (varispeed for a change under 0.29 %, else "spectral"),
    "varispeed", "wsola", "rubberband", "spectral", "splice". ``quality``: "best", "medium", "fastest". ``format``: the output's type
    ("wav", "flac", "m4a", ...; None: from its extension); ``sample_format``: "s16", "s24", "f32"
    (None: the input's precision). ``threads``: 1 or 2 (None: both cores).

    ``loudness``: bring the output to this integrated loudness in LUFS under the true-peak
    ceiling ``true_peak`` dBTP (default -1); with ``limit`` a true-peak limiter holds the ceiling
    and the target is reached, else the gain is lowered to it. An output that misses raises
    :class:`Error` with status "loudness target or true-peak ceiling not met", nothing written.
    ``rate``: write at this sample rate (None: the input's; Opus outputs of a rate Opus does not
    take are written at 48000).

    With ``algorithm="auto"``, a :class:`SlowStretchWarning` is given before a long render
    starts when auto chose a slow pitch-keeping algorithm (see :func:`plan`).
    """
    o = _stretch_options(input, ratio, frames, duration, match, algorithm, quality, stream)
    out = _output_options(format, sample_format, overwrite, threads, loudness, true_peak, limit, rate)
    r = _native.Result()
    src, dst = _path(input, "input"), _path(output, "output")
    if algorithm == "auto":
        notice = plan(input, ratio=ratio, frames=frames, duration=duration, match=match, quality=quality,
                      stream=stream).notice
        if notice:
            warnings.warn(notice, SlowStretchWarning, stacklevel=2)
    _Job(progress).run(lambda cb: _lib.mixdown_stretch(src, dst, C.byref(o), C.byref(out), cb, None, C.byref(r)))
    return _result(r)


def export(input: PathLike, output: PathLike, *, start: Exact = 0, duration: Optional[Exact] = None,
           fade_in: Exact = 0, fade_out: Exact = 0, stream: Optional[int] = None, format: Optional[str] = None,
           sample_format: Optional[str] = None, overwrite: bool = False, threads: Optional[int] = None,
           loudness: Optional[float] = None, true_peak: Optional[float] = None, limit: bool = False,
           rate: Optional[int] = None, progress: Optional[Progress] = None) -> Result:
    """Exports a time range of `input` to `output`, with linear fades (the gain rises from 0 to 1, falls from 1 to exactly 0).

    Times are exact seconds: ``start`` (0: the file's start), ``duration`` (None: to the
    file's end), ``fade_in`` and ``fade_out`` (0: none). Output options, ``loudness``,
    ``true_peak``, ``limit`` and ``rate`` as :func:`stretch`.
    """
    o = _native.ExportOptions()
    _lib.mixdown_export_options_init(C.byref(o))
    o.start_num, o.start_den = _int64_pair(_exact(start, "start"), "start")
    if duration is not None:
        length = _exact(duration, "duration")
        if length <= 0:
            raise Error(f"duration={length}: must be longer than 0 (None: to the file's end)")
        o.duration_num, o.duration_den = _int64_pair(length, "duration")
    o.fade_in_num, o.fade_in_den = _int64_pair(_exact(fade_in, "fade_in"), "fade_in")
    o.fade_out_num, o.fade_out_den = _int64_pair(_exact(fade_out, "fade_out"), "fade_out")
    o.stream = -1 if stream is None else _int(stream, "stream", 0, _INT32_MAX)
    out = _output_options(format, sample_format, overwrite, threads, loudness, true_peak, limit, rate)
    r = _native.Result()
    src, dst = _path(input, "input"), _path(output, "output")
    _Job(progress).run(lambda cb: _lib.mixdown_export(src, dst, C.byref(o), C.byref(out), cb, None, C.byref(r)))
    return _result(r)
