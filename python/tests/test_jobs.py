"""Errors, progress, cancellation by Ctrl-C and by a progress callback, and two renders on
two Python threads at once."""
import signal
import subprocess
import sys
import textwrap
import threading
import time
import ctypes

import pytest

import mixdown
from conftest import noise_bursts, write_wav


def test_a_missing_file_names_itself(tmp_path):
    missing = tmp_path / "nowhere.wav"
    with pytest.raises(mixdown.Error) as caught:
        mixdown.info(missing)
    assert str(caught.value) == f"'{missing}': no such file"
    assert caught.value.status == 4 and "not found" in caught.value.reason


def test_an_existing_output_is_kept_unless_overwrite(stereo, tmp_path):
    path, _ = stereo
    out = tmp_path / "out.wav"
    out.write_bytes(b"keep me")
    with pytest.raises(mixdown.Error, match="already exists \\(pass overwrite=True to replace it\\)") as caught:
        mixdown.stretch(path, out, ratio="1.0001")
    assert caught.value.status == 8 and out.read_bytes() == b"keep me"
    assert mixdown.stretch(path, out, ratio="1.0001", overwrite=True).frames == 480048
    assert out.stat().st_size > 1000


def test_a_bad_document_names_the_fault_and_writes_nothing(stereo, tmp_path):
    path, _ = stereo
    doc = {"version": 1, "tracks": [{"name": "a", "segments": [{"file": str(path), "at": 0.5}]}]}
    with pytest.raises(mixdown.Error, match="at") as caught:
        mixdown.render(doc, tmp_path / "out.wav")
    assert caught.value.status == 6
    assert not (tmp_path / "out.wav").exists()


def test_progress_rises_to_one(stereo, tmp_path):
    path, _ = stereo
    seen = []
    mixdown.stretch(path, tmp_path / "out.wav", ratio="1.0001309", progress=seen.append)
    assert seen and seen == sorted(seen) and seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)


class Stop(Exception):
    pass


@pytest.mark.parametrize("on_main_thread", [True, False])
def test_an_exception_in_progress_cancels_and_leaves_no_file(stereo, tmp_path, on_main_thread):
    path, _ = stereo
    out = tmp_path / "out.wav"
    calls = []

    def progress(fraction):
        calls.append(fraction)
        if fraction > 0:
            raise Stop("enough")

    def job():
        with pytest.raises(Stop, match="enough"):
            mixdown.stretch(path, out, ratio="1.0001309", algorithm="wsola", progress=progress)

    if on_main_thread:
        job()
    else:
        worker = threading.Thread(target=job)
        worker.start()
        worker.join()
    assert calls and calls[-1] < 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["stereo.wav"]


def test_ctrl_c_cancels_a_job_and_leaves_no_file(tmp_path):
    # A real SIGINT, to a process of its own, as a terminal sends it.
    source = write_wav(tmp_path / "long.wav", noise_bursts(600, 48000, 2, seed=3), 48000)
    out = tmp_path / "out.wav"
    script = textwrap.dedent(f"""
        import sys, mixdown
        def progress(fraction):
            if fraction > 0:
                print("running", flush=True)
        try:
            mixdown.stretch({str(source)!r}, {str(out)!r}, ratio="1.1", algorithm="wsola", progress=progress)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        print("finished", flush=True)
    """)
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
    assert child.stdout.readline().strip() == "running"
    child.send_signal(signal.SIGINT)
    rest = child.communicate(timeout=120)[0]
    assert child.returncode == 3, rest
    assert rest.strip().splitlines()[-1] == "interrupted"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["long.wav"]


def test_two_threads_render_at_once(stereo, tmp_path):
    path, data = stereo
    results, errors = {}, []

    def job(name, ratio):
        try:
            results[name] = mixdown.stretch(path, tmp_path / f"{name}.wav", ratio=ratio, algorithm="wsola").frames
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=job, args=(f"t{i}", r)) for i, r in enumerate(["1.25", "0.8"])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert results == {"t0": 600000, "t1": 384000}


def test_a_pull_releases_the_gil(tmp_path):
    # The library is loaded with ctypes.CDLL (not PyDLL), which drops the GIL in each call...
    assert type(mixdown._native.lib) is ctypes.CDLL
    # ...so a Python thread keeps running while one long pull is inside the library: the
    # longest pause between its iterations stays far below the pull's length (with the GIL
    # held it would be the whole pull).
    path = write_wav(tmp_path / "in.wav", noise_bursts(60, 48000, 2, seed=4), 48000)
    stop = threading.Event()
    longest = [0.0]

    def spin():
        last = time.perf_counter()
        while not stop.is_set():
            now = time.perf_counter()
            longest[0] = max(longest[0], now - last)
            last = now

    with mixdown.open(path, ratio="1.25", algorithm="wsola") as r:
        r._CHUNK = r.frames  # one call into the library for the whole read
        spinner = threading.Thread(target=spin)
        spinner.start()
        time.sleep(0.05)
        longest[0] = 0.0
        started = time.perf_counter()
        r.read()
        pull = time.perf_counter() - started
        stop.set()
        spinner.join()
    assert pull > 0.04, f"the pull took {pull:.3f} s: too short to show anything"
    assert longest[0] < pull / 2, f"a Python thread stood still {longest[0]:.3f} s of a {pull:.3f} s pull"
