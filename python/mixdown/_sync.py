"""Sync: where each recording lies on the reference's clock, and its stems, document and
timeline."""
from __future__ import annotations

import ctypes as C
import json
import os
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Mapping, Optional, Sequence


from . import _native
from ._native import lib as _lib
from ._errors import Error
from ._args import Exact, PathLike, Progress, _exact, _int64_pair, _path
from ._job import _Job


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
