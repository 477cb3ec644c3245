"""One library call with a progress callback, cancellable by Ctrl-C or by the callback."""
from __future__ import annotations

import signal
import threading
from typing import Any, Callable, Optional


from . import _native
from ._errors import Error, _message
from ._args import Progress


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
            def helper_work() -> None:
                # Ctrl-C for the main thread only: delivered to the helper (or to a thread the
                # library starts from it), it woke nothing, and the main thread saw it at its
                # next wait's end; a job shorter than that finished, output and all, though
                # Ctrl-C came early (test_ctrl_c_at_random_times: 7 runs in 58 failed).
                if hasattr(signal, "pthread_sigmask"):
                    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                work()

            helper = threading.Thread(target=helper_work, name="mixdown job", daemon=True)
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
