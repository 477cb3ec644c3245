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
    # A real SIGINT, to a process of its own, as a terminal sends it. The progress callback
    # holds the job for two seconds after it says "running", so the signal lands while the
    # job runs however loaded the machine (the job alone takes about half a second).
    source = write_wav(tmp_path / "long.wav", noise_bursts(600, 48000, 2, seed=3), 48000)
    out = tmp_path / "out.wav"
    script = textwrap.dedent(f"""
        import signal, sys, time, mixdown
        # As at a terminal: a shell that starts a job in the background without job control
        # gives it SIGINT ignored, and Python then raises no KeyboardInterrupt.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        said = False
        def progress(fraction):
            global said
            if fraction > 0 and not said:
                said = True
                print("running", flush=True)
                time.sleep(2)
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


def test_ctrl_c_at_random_times_leaves_a_whole_output_or_none(tmp_path):
    # SIGINT at a random moment of a child's life, from its start (the import) to past the
    # job's end. Whatever the moment: no temporary file, and the output is either absent or
    # complete. A signal early in the job always cancels it (exit 3, nothing).
    source = write_wav(tmp_path / "in.wav", noise_bursts(60, 48000, 2, seed=4), 48000)
    out = tmp_path / "out.wav"
    script = textwrap.dedent(f"""
        import signal, sys, time, mixdown
        signal.signal(signal.SIGINT, signal.default_int_handler)   # as at a terminal (above)
        try:
            # Inside the try: a signal that comes while "started" is written cancels too.
            print("started", flush=True)
            mixdown.stretch({str(source)!r}, {str(out)!r}, ratio="1.1", algorithm="wsola", overwrite=True)
        except KeyboardInterrupt:
            sys.exit(3)
        sys.exit(0)
    """)
    # The job's own length, from "started" to the exit: the fastest run seen, re-timed every
    # 15 trials. "Early" is its first quarter: beside a busy machine a job's length varies
    # twofold, and a run quicker than the one timed first is no lost signal.
    fastest = float("inf")

    def time_one():
        nonlocal fastest
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
        assert child.stdout.readline().strip() == "started"
        begun = time.monotonic()
        assert child.wait(timeout=120) == 0
        fastest = min(fastest, time.monotonic() - begun)

    for _ in range(3):
        time_one()
    expected_size = out.stat().st_size
    rng = __import__("random").Random(11)
    outcomes = {"cancelled": 0, "finished": 0, "other": 0}
    for trial in range(60):
        if trial and trial % 15 == 0:
            time_one()
        out.unlink(missing_ok=True)
        early = trial % 2 == 0
        child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, cwd=tmp_path)
        assert child.stdout.readline().strip() == "started"
        time.sleep(rng.uniform(0, fastest * 0.25) if early else rng.uniform(0, fastest * 1.3))
        child.send_signal(signal.SIGINT)
        code = child.wait(timeout=120)
        names = sorted(p.name for p in tmp_path.iterdir())
        assert [n for n in names if n.startswith(".")] == [], (trial, names)
        if out.exists():
            assert out.stat().st_size == expected_size, trial
        if early:
            assert code == 3 and not out.exists(), (trial, code)
        outcomes["cancelled" if code == 3 else "finished" if code == 0 else "other"] += 1
    print("Ctrl-C outcomes over 60 random times:", outcomes)


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


def test_a_nul_in_a_path_is_refused(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(mixdown.Error, match="output=.*a path cannot hold a NUL character"):
        mixdown.stretch(path, str(tmp_path / "o.wav") + "\0.txt", ratio="1.0001")
    with pytest.raises(mixdown.Error, match="input=.*a path cannot hold a NUL character"):
        mixdown.stretch(str(path) + "\0x", tmp_path / "o.wav", ratio="1.0001")
    assert list(tmp_path.iterdir()) == [] or all(p.name != "o.wav" for p in tmp_path.iterdir())


def test_a_stretch_needs_a_target(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(mixdown.Error, match="give one target: ratio=, frames=, duration= or match="):
        mixdown.stretch(path, tmp_path / "o.wav")
    assert not (tmp_path / "o.wav").exists()


def test_integers_out_of_the_c_range_name_their_bound(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(mixdown.Error, match=f"frames={2**63}: must lie between 1 and {2**63 - 1}"):
        mixdown.stretch(path, tmp_path / "o.wav", frames=2**63)
    with pytest.raises(mixdown.Error, match="stream=4294967296: must lie between 0 and 2147483647"):
        mixdown.stretch(path, tmp_path / "o.wav", ratio=1, stream=2**32)
    with pytest.raises(mixdown.Error, match="threads=3: must lie between 1 and 2"):
        mixdown.stretch(path, tmp_path / "o.wav", ratio=1, threads=3)
    assert not (tmp_path / "o.wav").exists()
