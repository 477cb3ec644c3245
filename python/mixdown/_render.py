"""Compositions and timelines: rendered to a file (render), or pulled into numpy arrays
(open, Render)."""
from __future__ import annotations

import ctypes as C
import json
import os
from fractions import Fraction
from typing import Any, Iterator, Mapping, Optional, Sequence

import numpy as np

from . import _native
from ._native import lib as _lib
from ._errors import Error, _check, _message
from ._args import Document, Exact, PathLike, Progress, _INT64_MAX, _int, _output_options, _path
from ._job import _Job
from ._files import _result, _stretch_options, Result


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
