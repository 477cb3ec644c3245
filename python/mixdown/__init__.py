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

from ._args import Document, Exact, PathLike, Progress  # noqa: F401 (the documented type aliases)
from ._batch import BatchSummary, batch
from ._errors import Error, SlowStretchWarning
from ._files import FileInfo, Result, StretchPlan, export, info, plan, stretch
from ._loudness import Loudness, loudness
from ._native import lib as _lib
from ._render import Render, open, render
from ._sync import SyncEstimate, SyncReport, sync

__all__ = ["Error", "SlowStretchWarning", "FileInfo", "Result", "Loudness", "StretchPlan", "SyncEstimate", "SyncReport",
           "BatchSummary", "Render", "info", "loudness", "plan", "stretch", "export", "render", "sync", "batch", "open",
           "version", "__version__"]


def version() -> str:
    """The library's version, "MAJOR.MINOR.PATCH"."""
    return _lib.mixdown_version().decode()


__version__ = version()

# Each public name says it is mixdown's (help(), reprs and tracebacks name mixdown.Error, not
# the module it is written in).
for _name in __all__:
    _value = globals()[_name]
    if hasattr(_value, "__module__"):
        _value.__module__ = __name__
del _name, _value
