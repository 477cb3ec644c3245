"""Batches: a manifest's jobs, resumable and sharded."""
from __future__ import annotations

import ctypes as C
from dataclasses import dataclass
from typing import Optional


from . import _native
from ._native import lib as _lib
from ._errors import Error
from ._args import PathLike, Progress, _INT32_MAX, _int, _path
from ._job import _Job


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
