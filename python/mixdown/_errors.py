"""Errors: the package's exception and warning, and the library's messages in Python's words
(each option the library names becomes the Python argument)."""
from __future__ import annotations

import re


from . import _native
from ._native import lib as _lib


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
