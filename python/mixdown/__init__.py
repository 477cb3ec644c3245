"""Mixdown: an offline audio render engine, from Python.

Exact drift correction, sync of many recordings, compositions and editors' timelines,
rendered by libmixdown (built into this package; no Swift toolchain needed).

Conventions (those of soundfile and pedalboard):

- Audio is a float32 numpy array of shape (frames, channels).
- Counts are frames, never samples: one frame holds one sample of every channel.
- Every time or ratio Mixdown keeps exact is a :class:`fractions.Fraction` (seconds, or
  output length / input length). Arguments take a Fraction, an int or a decimal string
  such as ``"1.0001309"``; a float is refused, because it is not the number it was typed as.
- Errors raise :class:`mixdown.Error`, with the library's message, which names the file,
  option or time at fault.
- Outputs are atomic: complete, or absent. Ctrl-C (KeyboardInterrupt) or an exception
  raised by a ``progress`` callback cancels a running job, which then writes nothing.
- Every call releases the GIL: two Python threads render at once.
"""
from __future__ import annotations

import ctypes as C
import json
import math
import os
import threading
import warnings
import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Iterator, Mapping, Optional, Sequence, Union

import numpy as np

from . import _native
from ._native import lib as _lib

__all__ = ["Error", "SlowStretchWarning", "FileInfo", "Result", "Loudness", "StretchPlan", "SyncEstimate", "SyncReport",
           "BatchSummary", "Render", "info", "loudness", "plan", "stretch", "export", "render", "sync", "batch", "open",
           "version", "__version__"]

Exact = Union[Fraction, int, str, Decimal]
"""A number kept exact: a Fraction, an int, a Decimal or a decimal string ("1.0001309", "10001309/10000000")."""

PathLike = Union[str, "os.PathLike[str]"]
Document = Union[PathLike, Mapping[str, Any]]
"""A composition document: a path (.json, .otio), a JSON string, or a dict."""

Progress = Callable[[float], Any]
"""Called with the fraction done (0..1, never decreasing). An exception it raises cancels the job and is re-raised."""


class Error(Exception):
    """A call the library refused or failed. ``str(error)`` is the library's message; ``status``
    is the C API's status code and ``reason`` its short name ("file not found"). The
    package's own checks of its arguments carry the status the C API gives the same
    mistake (``MIXDOWN_ERROR_INVALID_ARGUMENT``, 2); never ``MIXDOWN_OK``."""

    def __init__(self, message: str, status: int = _native.ERROR_INVALID_ARGUMENT) -> None:
        super().__init__(message)
        self.status = status
        self.reason = _lib.mixdown_strerror(status).decode()


class SlowStretchWarning(UserWarning):
    """Given before a stretch starts when ``algorithm="auto"`` chose a pitch-keeping algorithm
    that will take long (10 s or more, estimated): what it chose, why, about how long, and the
    faster choices. ``warnings.simplefilter("ignore", mixdown.SlowStretchWarning)`` silences it."""


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.mixdown_version().decode()


__version__ = version()


# ---- Exact numbers ------------------------------------------------------------------------

_INT64_MAX = (1 << 63) - 1


def _exact(value: Exact, name: str) -> Fraction:
    """`value` as a Fraction, exactly; a float or anything else inexact is refused."""
    if isinstance(value, bool):
        raise TypeError(f"{name}={value!r}: a bool is not a number")
    if isinstance(value, (Fraction, int, Decimal)):
        return Fraction(value)
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError):
            raise Error(f"{name}={value!r}: is not a number (use '1.0001309', '10001309/10000000' or a Fraction)") from None
    if isinstance(value, float):
        raise TypeError(f"{name}={value!r}: a float is not exact; pass the string {repr(value)!r} "
                        f"or a fractions.Fraction")
    raise TypeError(f"{name}={value!r}: expected a Fraction, an int or a decimal string, not {type(value).__name__}")


def _int64_pair(value: Fraction, name: str) -> tuple[int, int]:
    """Numerator and denominator of `value`, which must fit the C API's 64-bit integers."""
    if abs(value.numerator) > _INT64_MAX or value.denominator > _INT64_MAX:
        raise Error(f"{name}={value}: needs more than 64-bit integers to be exact")
    return value.numerator, value.denominator


def _frames_half_away(value: Fraction) -> int:
    """`value` rounded to a whole frame, half away from zero (the library's rule)."""
    whole, rest = divmod(abs(value.numerator), value.denominator)
    if 2 * rest >= value.denominator:
        whole += 1
    return whole if value >= 0 else -whole


def _path(value: PathLike, name: str) -> bytes:
    try:
        encoded = os.fsencode(value)
    except TypeError:
        raise TypeError(f"{name}={value!r}: expected a path") from None
    # A C string ends at its first NUL: the library would see (and write) a shorter path.
    if b"\0" in encoded:
        raise Error(f"{name}={value!r}: a path cannot hold a NUL character")
    return encoded


_INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1


def _int(value: Any, name: str, low: int, high: int) -> int:
    """An int argument checked against the C field it goes into (ctypes would wrap it)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name}={value!r}: expected an int")
    if not low <= value <= high:
        raise Error(f"{name}={value}: must lie between {low} and {high}")
    return value


# ---- Calls and errors ---------------------------------------------------------------------

# The library names the command's options in its messages; a Python call names its own
# arguments instead. Shared by every call: each option has one Python name.
_ARGUMENT_NAMES = {
    "--ratio": "ratio", "--to-frames": "frames", "--to-duration": "duration", "--match": "match",
    "--algorithm": "algorithm", "--quality": "quality", "--stream": "stream", "--type": "format",
    "--format": "sample_format", "--overwrite": "overwrite", "--threads": "threads", "--loudness": "loudness",
    "--true-peak": "true_peak", "--limit": "limit", "--rate": "rate", "--start": "start",
    "--duration": "duration", "--fade-in": "fade_in", "--fade-out": "fade_out", "--max-offset": "max_offset",
    "--max-drift": "max_drift_ppm", "--spacing": "window_spacing", "--min-confidence": "min_confidence",
    "--stems": "stems", "--doc": "doc", "--otio": "otio", "--media": "media", "--relink": "relink",
}
_OPTION = re.compile(r"--([a-z][a-z-]*)( (?=[-+0-9'\"./(]))?")


def _python_names(message: str) -> str:
    """`message` with each option the library named as the Python argument: "--ratio 5: ..."
    becomes "ratio=5: ...", "pass --overwrite" becomes "pass overwrite=True"."""
    message = message.replace("pass --overwrite", "pass overwrite=True")

    def name(m: "re.Match[str]") -> str:
        python = _ARGUMENT_NAMES.get("--" + m.group(1))
        if python is None:
            return m.group(0)
        return python + ("=" if m.group(2) else "")
    return _OPTION.sub(name, message)


def _message(status: int) -> str:
    message = _lib.mixdown_last_error().decode(errors="replace")
    return _python_names(message) or _lib.mixdown_strerror(status).decode()


def _check(status: int) -> None:
    if status != _native.OK:
        raise Error(_message(status), status)


class _Job:
    """One library call with a progress callback, run so that Ctrl-C and a callback's
    exception cancel it. On the main thread the call runs on a helper thread while the main
    thread waits, interruptibly: KeyboardInterrupt asks the job to stop at its next block,
    waits for it (its output removed), and propagates. Elsewhere it runs on the caller's
    thread (signals reach the main thread only)."""

    def __init__(self, progress: Optional[Progress]) -> None:
        self.user_progress = progress
        self.stop = threading.Event()
        self.error: Optional[BaseException] = None
        self.callback = _native.PROGRESS(self._progress)

    def _progress(self, fraction: float, _user: Optional[int]) -> int:
        if self.stop.is_set():
            return 1
        if self.user_progress is not None:
            try:
                self.user_progress(fraction)
            except BaseException as error:  # noqa: B036 - re-raised on the calling thread
                self.error = error
                self.stop.set()
                return 1
        return 0

    def run(self, call: Callable[[Any], int], cancellable: bool = True) -> None:
        outcome: list[tuple[int, str]] = []
        finished = threading.Event()

        def work() -> None:
            try:
                status = call(self.callback)
                # The message is the calling thread's: read it on the thread that called.
                outcome.append((status, _message(status) if status != _native.OK else ""))
            finally:
                finished.set()

        if threading.current_thread() is threading.main_thread():
            # An Event, not Thread.join: a join that KeyboardInterrupt broke returns at once
            # when called again (Python 3.11), which would not wait for the cancelled job.
            # The start is inside the try: a KeyboardInterrupt that lands just after the
            # thread started must still stop the job and wait for it, or the interpreter
            # could exit under a job still writing.
            helper = threading.Thread(target=work, name="mixdown job", daemon=True)
            try:
                helper.start()
                while not finished.wait(0.05):
                    pass
            except KeyboardInterrupt:
                self.stop.set()
                if cancellable and helper.ident is not None:
                    finished.wait()
                raise
        else:
            work()
        if self.error is not None:
            raise self.error
        status, message = outcome[0]
        if status != _native.OK:
            raise Error(message, status)


def _output_options(format: Optional[str], sample_format: Optional[str], overwrite: bool,
                    threads: Optional[int], loudness: Optional[float] = None, true_peak: Optional[float] = None,
                    limit: bool = False, rate: Optional[int] = None) -> _native.OutputOptions:
    o = _native.OutputOptions()
    _lib.mixdown_output_options_init(C.byref(o))
    o.type = format.encode() if format else None
    o.sample_format = sample_format.encode() if sample_format else None
    o.overwrite = 1 if overwrite else 0
    o.threads = 0 if threads is None else _int(threads, "threads", 1, 2)
    if loudness is None and (true_peak is not None or limit):
        raise Error("true_peak and limit go with loudness")
    if loudness is not None:
        if not -60 <= float(loudness) < 0:
            raise Error(f"loudness={loudness}: must be a loudness from -60 to below 0 LUFS")
        o.loudness = float(loudness)
        o.true_peak = -1.0 if true_peak is None else float(true_peak)
        o.limit = 1 if limit else 0
    if rate is not None:
        o.sample_rate = _int(rate, "rate", 1, _INT32_MAX)
    return o


def _choice(value: str, choices: Mapping[str, int], name: str) -> int:
    try:
        return choices[value]
    except KeyError:
        raise Error(f"{name}={value!r}: must be one of {', '.join(choices)}") from None


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

    ``algorithm``: "auto" (varispeed for a change under 0.29 %, else "spectral"), "varispeed",
    "wsola", "rubberband", "spectral". ``quality``: "best", "medium", "fastest". ``format``: the output's type
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


def _document(document: Document, base_dir: Optional[PathLike]) -> tuple[Optional[bytes], Optional[bytes], Optional[bytes]]:
    """(json, base_dir, path) for the C API: a dict or a JSON string is given as JSON, with
    relative paths from `base_dir` (default: the working directory); anything else is a path."""
    if isinstance(document, Mapping):
        text = json.dumps(document)
    elif isinstance(document, str) and document.lstrip().startswith("{"):
        text = document
    else:
        return None, None, _path(document, "document")
    return text.encode(), _path(base_dir, "base_dir") if base_dir is not None else None, None


def _media(document: Document, media: Optional[Sequence[PathLike]], relink: Optional[Mapping[str, str]]
           ) -> Optional[tuple[bytes, _native.MediaOptions, list[Any]]]:
    """(path, options, what keeps the C arrays alive) for a timeline file with moved media; None without."""
    if not media and not relink:
        return None
    if isinstance(document, Mapping) or (isinstance(document, str) and document.lstrip().startswith("{")):
        raise Error("media and relink apply to a timeline file, not to a dict or a JSON string")
    if isinstance(media, (str, bytes, os.PathLike)):
        media = [media]
    dirs = [_path(d, "media") for d in (media or [])]
    rules = []
    for old, new in (relink or {}).items():
        rules.append(_path(old, "relink") + b"=" + _path(new, "relink"))
    keep = [_native.string_list(dirs), _native.string_list(rules)]
    return _path(document, "document"), _native.MediaOptions(keep[0], keep[1]), keep


def render(document: Document, output: PathLike, *, base_dir: Optional[PathLike] = None,
           format: Optional[str] = None, sample_format: Optional[str] = None, overwrite: bool = False,
           threads: Optional[int] = None, loudness: Optional[float] = None, true_peak: Optional[float] = None,
           limit: bool = False, media: Optional[Sequence[PathLike]] = None, relink: Optional[Mapping[str, str]] = None,
           progress: Optional[Progress] = None) -> Result:
    """Renders a composition document (docs/composition.md) or an OpenTimelineIO timeline to
    `output`. `document` is a path, a JSON string or a dict; relative media paths in a string
    or a dict are relative to `base_dir` (default: the working directory), in a file to its
    folder. The document's own output settings apply; the arguments override them where given
    (``loudness``, ``true_peak``, ``limit`` as :func:`stretch`).

    An editor's timeline whose media moved (``mixdown render --media --relink``): ``media``
    lists directories where a clip's file is looked for by its file name, then by its clip
    name; ``relink`` maps an old path prefix to a new one (``{"/Volumes/Media": "/srv/media"}``).
    """
    out = _output_options(format, sample_format, overwrite, threads, loudness, true_peak, limit)
    r = _native.Result()
    dst = _path(output, "output")
    moved = _media(document, media, relink)
    if moved is not None:
        path, m, _keep = moved
        _Job(progress).run(lambda cb: _lib.mixdown_render_timeline(path, C.byref(m), dst, C.byref(out), cb, None,
                                                                     C.byref(r)))
        return _result(r)
    text, base, path = _document(document, base_dir)
    _Job(progress).run(lambda cb: _lib.mixdown_render_document(text, base, path, dst, C.byref(out), cb, None,
                                                                 C.byref(r)))
    return _result(r)


# ---- Sync ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class SyncEstimate:
    """Where a recording lies on the reference's clock:
    ``reference_time = offset + ratio * recording_time`` (seconds).

    ``offset`` is exact to the microsecond; ``ratio`` is the estimate's exact binary value as
    a Fraction (pass it to :func:`stretch` to correct the drift); ``ppm`` is ``(ratio - 1) * 1e6``;
    ``confidence`` (0..1) the share of analysis windows that agree; ``windows`` the windows
    used, ``windows_rejected`` those that did not agree. ``device`` names the device a clip
    belongs to; ``placed_via`` the recordings it was placed through (empty: directly against
    the reference); ``inverted`` whether its polarity is turned over against the reference's.
    A recording that could not be placed (only with ``keep_going=True``) has ``error`` set and
    None for the numbers.
    """
    recording: str
    offset: Optional[Fraction]
    ratio: Optional[Fraction]
    ppm: Optional[float]
    confidence: Optional[float]
    windows: Optional[int]
    windows_rejected: Optional[int]
    residual_rms_ms: Optional[float]
    residual_max_ms: Optional[float]
    device: Optional[str] = None
    placed_via: tuple[str, ...] = ()
    inverted: bool = False
    error: Optional[str] = None

    @property
    def placed(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class SyncReport:
    """What :func:`sync` did besides the estimates: ``stem_frames`` written to the stems (all
    together) and the wall ``seconds``."""
    stem_frames: int
    seconds: float


def _estimate(item: Mapping[str, Any]) -> SyncEstimate:
    via = item.get("placed_via")
    common = dict(recording=item["recording"], device=item.get("device"),
                  placed_via=tuple(via.split(" > ")) if via and via != "reference" else ())
    if "offset_seconds" not in item:
        return SyncEstimate(offset=None, ratio=None, ppm=None, confidence=None, windows=None, windows_rejected=None,
                            residual_rms_ms=None, residual_max_ms=None, error=item.get("error") or "not placed", **common)
    return SyncEstimate(offset=Fraction(round(item["offset_seconds"] * 1_000_000), 1_000_000),
                        ratio=Fraction(item["ratio"]), ppm=item["ppm"], confidence=item["confidence"],
                        windows=item["windows_used"], windows_rejected=item["windows_rejected"],
                        residual_rms_ms=item["residual_rms_milliseconds"], residual_max_ms=item["residual_max_milliseconds"],
                        inverted=item.get("polarity", 1) < 0, **common)


def sync(reference: PathLike, *recordings: PathLike, max_offset: Optional[Exact] = None,
         max_drift_ppm: Exact = 1000, window_spacing: Exact = 10, min_confidence: Exact = "0.5",
         devices: Optional[Mapping[str, Sequence[PathLike]]] = None, stems: Optional[PathLike] = None,
         stems_format: Optional[str] = None, doc: Optional[PathLike] = None, otio: Optional[PathLike] = None,
         otio_rate: Optional[str] = None, plot: Optional[PathLike] = None, keep_polarity: bool = False,
         keep_going: bool = False, overwrite: bool = False, progress: Optional[Progress] = None,
         report: Optional[list] = None) -> list[SyncEstimate]:
    """Places each recording on `reference`'s clock (``mixdown sync``): one :class:`SyncEstimate`
    per recording, in order, then the devices' clips. With more than one recording, a
    recording is placed through another when that is how it overlaps the reference.

    ``max_offset``: the search range for the offset in seconds (None: 60 s for one recording,
    any overlap for more); ``max_drift_ppm``: the largest drift searched; ``window_spacing``:
    seconds between analysis windows; ``min_confidence``: below it a recording is not placed.
    ``devices``: ``{"NAME": [clip, ...]}``, clips of one device that share one clock.

    Outputs, as the command's options: ``stems`` (a directory: every recording aligned and
    drift-corrected, the reference's length; ``stems_format`` its type, default "wav";
    ``keep_polarity`` keeps an inverted recording as recorded), ``doc`` (a composition
    document of the event), ``otio`` (an OpenTimelineIO timeline; ``otio_rate`` an edit rate
    such as "24" or "30000/1001"), ``plot`` (an SVG of every window). ``overwrite`` replaces them.

    Raises :class:`Error` (status "no trustworthy alignment") for a recording that could not be
    placed, unless ``keep_going`` (its estimate then has ``error`` set; the others' outputs are
    written); and, when no output is asked for, for one that a single offset and ratio do not
    describe (a clock that wanders, a recorder that paused: the message says which; ``doc`` or
    ``stems`` follow it). A list passed as ``report`` receives a :class:`SyncReport`.
    """
    if not recordings and not devices:
        raise Error("sync: give at least one recording besides the reference")
    o = _native.SyncOptions()
    _lib.mixdown_sync_options_init(C.byref(o))
    if max_offset is not None:
        o.max_offset_num, o.max_offset_den = _int64_pair(_exact(max_offset, "max_offset"), "max_offset")
        if o.max_offset_num == 0:
            raise Error("max_offset=0: must be longer than 0 (None: the default)")
    o.max_drift_ppm = float(_exact(max_drift_ppm, "max_drift_ppm"))
    o.window_spacing = float(_exact(window_spacing, "window_spacing"))
    o.min_confidence = float(_exact(min_confidence, "min_confidence"))
    device_texts = []
    for name, clips in (devices or {}).items():
        if isinstance(clips, (str, bytes, os.PathLike)):
            raise TypeError(f"devices[{name!r}]: expected a list of clips, not one path")
        device_texts.append(name.encode() + b"=" + b",".join(_path(c, f"devices[{name!r}]") for c in clips))
    keep = [_native.string_list(device_texts)]
    o.devices = keep[0]
    o.stems_dir = _path(stems, "stems") if stems is not None else None
    o.stems_type = stems_format.encode() if stems_format else None
    o.document_path = _path(doc, "doc") if doc is not None else None
    o.otio_path = _path(otio, "otio") if otio is not None else None
    o.otio_rate = otio_rate.encode() if otio_rate is not None else None
    o.plot_path = _path(plot, "plot") if plot is not None else None
    o.keep_polarity = 1 if keep_polarity else 0
    o.keep_going = 1 if keep_going else 0
    o.overwrite = 1 if overwrite else 0
    o.require_one_line = 0 if (stems is not None or doc is not None or otio is not None) else 1
    ref = _path(reference, "reference")
    recs = [_path(r, "recording") for r in recordings]
    array = (C.c_char_p * max(len(recs), 1))(*recs)
    result = _native.SyncResult()
    report_json: list[Optional[bytes]] = []

    def call(callback: Any) -> int:
        text = C.c_char_p()
        status = _lib.mixdown_sync(ref, array, len(recs), C.byref(o), callback, None, C.byref(result), C.byref(text))
        # The library's string is the calling thread's, freed when that thread ends: copied here.
        report_json.append(text.value)
        return status
    try:
        _Job(progress).run(call)
    except Error as error:
        # keep_going: the recordings placed are returned, the others with their error.
        if not (keep_going and error.status == _native.ERROR_NO_ALIGNMENT and report_json and report_json[0]):
            raise
    estimates = [_estimate(item) for item in json.loads(report_json[0].decode())]
    if report is not None:
        report.append(SyncReport(stem_frames=result.stem_frames, seconds=result.seconds))
    return estimates


# ---- Batches ------------------------------------------------------------------------------

@dataclass(frozen=True)
class BatchSummary:
    """What :func:`batch` did: the shard's ``total`` jobs, those ``done`` now, ``skipped`` (done
    by an earlier run and unchanged), ``failed``, ``not_run``; ``frames`` written; ``seconds``."""
    total: int
    done: int
    skipped: int
    failed: int
    not_run: int
    frames: int
    seconds: float


def batch(manifest: PathLike, *, jobs: Optional[int] = None, shard: Optional[tuple[int, int]] = None,
          results: Optional[PathLike] = None, keep_going: bool = False,
          progress: Optional[Progress] = None) -> BatchSummary:
    """Runs a batch manifest (JSON Lines of ``{"args": ["stretch", ...], "id": ...}``;
    docs/batch.md) as ``mixdown batch`` does: every line checked first, ``jobs`` at once (None:
    one per core), resumable (a rerun skips what is done). ``shard=(i, n)`` runs the jobs whose
    index is i mod n; ``results`` is the results file (None: beside the manifest). A failed job
    raises :class:`Error` (status "batch") after the others ran (``keep_going``) or were not
    started; the message names the first failure, and the error's ``summary`` is the
    :class:`BatchSummary`."""
    o = _native.BatchOptions()
    _lib.mixdown_batch_options_init(C.byref(o))
    if jobs is not None:
        o.jobs = _int(jobs, "jobs", 1, 1024)
    if shard is not None:
        index, count = shard
        o.shard_count = _int(count, "shard count", 1, _INT32_MAX)
        o.shard_index = _int(index, "shard index", 0, _INT32_MAX)
    o.results_path = _path(results, "results") if results is not None else None
    o.keep_going = 1 if keep_going else 0
    r = _native.BatchResult()
    path = _path(manifest, "manifest")

    def summary() -> BatchSummary:
        return BatchSummary(total=r.total, done=r.done, skipped=r.skipped, failed=r.failed, not_run=r.not_run,
                            frames=r.frames, seconds=r.seconds)
    try:
        _Job(progress).run(lambda cb: _lib.mixdown_batch_run(path, C.byref(o), cb, None, C.byref(r)))
    except Error as error:
        error.summary = summary() if error.status == _native.ERROR_BATCH else None
        raise
    return summary()


# ---- Pull rendering -----------------------------------------------------------------------

_DOCUMENT_SUFFIXES = (".json", ".otio")


class Render:
    """A render pulled into numpy arrays: a composition document, a timeline, or a file
    (stretched or not). Frame-identical to the file render of the same job. Use it as a
    context manager (``with mixdown.open(...) as r:``) or call :meth:`close`. One thread at a
    time per Render."""

    _CHUNK = 1 << 16  # frames per call into the library (Ctrl-C is seen between calls)

    def __init__(self, handle: C.c_void_p) -> None:
        self._handle = handle
        rate, channels, frames = C.c_int32(), C.c_int32(), C.c_int64()
        self._call(_lib.mixdown_render_format(handle, C.byref(rate), C.byref(channels), C.byref(frames)))
        self.sample_rate: int = rate.value
        """Frames per second."""
        self.channels: int = channels.value
        self.frames: int = frames.value
        """The render's exact length, in frames."""
        self._written, self._ended = C.c_int64(), C.c_int()
        self._written_ref, self._ended_ref = C.byref(self._written), C.byref(self._ended)

    @property
    def duration(self) -> Fraction:
        """The render's exact duration in seconds."""
        return Fraction(self.frames, self.sample_rate)

    def _call(self, status: int) -> None:
        if status != _native.OK:
            message = _lib.mixdown_render_error(self._handle).decode(errors="replace") or _message(status)
            raise Error(message, status)

    def _live(self) -> C.c_void_p:
        if self._handle is None:
            raise Error("the render is closed", _native.ERROR_INVALID_HANDLE)
        return self._handle

    def read(self, frames: int = -1, *, out: Optional[np.ndarray] = None) -> np.ndarray:
        """Reads `frames` frames from the current position (-1: to the end) as a float32
        array of shape (frames, channels). Fewer frames come back only at the end; after it,
        an array of 0 frames. `out`: a C-contiguous float32 array of shape (n, channels) to
        fill instead (frames defaults to n); the part filled is returned."""
        handle = self._live()
        if out is not None:
            if out.dtype != np.float32 or out.ndim != 2 or out.shape[1] != self.channels or not out.flags.c_contiguous:
                raise Error(f"out: needs a C-contiguous float32 array of shape (frames, {self.channels}), "
                            f"not {out.dtype} {out.shape}")
            frames = len(out) if frames < 0 else min(frames, len(out))
        else:
            if frames < -1:
                raise Error(f"frames={frames}: must be 0 or more (-1: to the end)")
            # Never more than the render has left: the array is allocated whole.
            left = self.frames - self.tell()
            frames = left if frames == -1 else min(frames, left)
            out = np.empty((frames, self.channels), dtype=np.float32)
        # The library writes the frames interleaved, straight into the array's memory.
        base, step, chunk = out.ctypes.data, 4 * self.channels, self._CHUNK
        pull, written, ended = _lib.mixdown_render_pull_interleaved, self._written, self._ended
        done = 0
        while done < frames:
            status = pull(handle, base + done * step, min(chunk, frames - done), self._written_ref, self._ended_ref)
            if status != _native.OK:
                self._call(status)
            done += written.value
            if ended.value:
                break
        return out if done == len(out) else out[:done]

    def blocks(self, blocksize: int, *, out: Optional[np.ndarray] = None) -> Iterator[np.ndarray]:
        """Yields blocks of `blocksize` frames from the current position to the end (the last
        one shorter when the length is not a multiple). With `out` (shape (blocksize,
        channels)), every block is a view of it, overwritten by the next."""
        if blocksize <= 0:
            raise Error(f"blocksize={blocksize}: must be more than 0")
        while True:
            block = self.read(blocksize, out=out)
            if len(block) == 0:
                return
            yield block
            if len(block) < blocksize:
                return

    def seek(self, frame: int) -> int:
        """Moves to `frame` (0 ... frames): the next read begins with exactly that frame."""
        self._call(_lib.mixdown_render_seek(self._live(), _int(frame, "frame", 0, _INT64_MAX)))
        return frame

    def tell(self) -> int:
        """The frame the next read begins with."""
        position = C.c_int64()
        self._call(_lib.mixdown_render_position(self._live(), C.byref(position)))
        return position.value

    def close(self) -> None:
        """Releases the render (closing twice is harmless)."""
        if self._handle is not None:
            _lib.mixdown_render_free(self._handle)
            self._handle = None

    def __enter__(self) -> "Render":
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        if getattr(self, "_handle", None) is not None:
            self.close()

    def __repr__(self) -> str:
        return (f"<mixdown.Render {self.frames} frames, {self.sample_rate} Hz, {self.channels} channels"
                f"{', closed' if self._handle is None else ''}>")


def open(source: Document, *, ratio: Optional[Exact] = None, frames: Optional[int] = None,
         duration: Optional[Exact] = None, match: Optional[PathLike] = None, algorithm: str = "auto",
         quality: str = "best", stream: Optional[int] = None, base_dir: Optional[PathLike] = None,
         media: Optional[Sequence[PathLike]] = None, relink: Optional[Mapping[str, str]] = None) -> Render:
    """Opens a render to read into numpy arrays.

    `source` is a composition document or timeline (a dict, a JSON string, or a path ending
    in .json or .otio), or an audio file. A file is read as it is, or stretched when a target
    is given (``ratio``, ``frames``, ``duration``, ``match``, as :func:`stretch`). ``media``
    and ``relink`` find a timeline's moved media, as :func:`render`.
    """
    handle = C.c_void_p()
    moved = _media(source, media, relink)
    if moved is not None:
        path, m, _keep = moved
        _check(_lib.mixdown_render_open_timeline(C.byref(handle), path, C.byref(m)))
        return Render(handle)
    if isinstance(source, Mapping) or (isinstance(source, str) and source.lstrip().startswith("{")) \
            or os.fsdecode(source).lower().endswith(_DOCUMENT_SUFFIXES):
        if any(v is not None for v in (ratio, frames, duration, match, stream)):
            raise Error("ratio, frames, duration, match and stream apply to a file, not to a document")
        text, base, path = _document(source, base_dir)
        _check(_lib.mixdown_render_open_document(C.byref(handle), text, base, path))
    elif all(v is None for v in (ratio, frames, duration, match)):
        # The file as it is: a composition of the file alone, which passes its samples
        # unchanged (a stretch by 1 would run them through the resampler's filter).
        segment: dict[str, Any] = {"file": os.path.abspath(os.fsdecode(source)), "at": "0"}
        if stream is not None:
            segment["stream"] = stream
        text = json.dumps({"version": 1, "tracks": [{"name": "file", "segments": [segment]}]}).encode()
        _check(_lib.mixdown_render_open_document(C.byref(handle), text, None, None))
    else:
        path = _path(source, "source")
        o = _stretch_options(source, ratio, frames, duration, match, algorithm, quality, stream)
        _check(_lib.mixdown_render_open_stretch(C.byref(handle), path, C.byref(o)))
    return Render(handle)
