#!/usr/bin/env python3
"""CPU seconds to stretch 60 s of stereo 48 kHz by a ratio, one core, each engine on the same
input in the same run (the venv of tools/bench/stretch-quality). Usage:
    tools/bench/stretch/.venv/bin/python tools/bench/stretch/speed.py MIXDOWN [RATIO] [ROUNDS]
Mixdown and the rubberband CLI are timed as child processes (user + system, whole runs,
decoding and encoding WAV included); the Python peers in process (time.process_time, the
call alone). The engines run in turn within each round; the median of ROUNDS (3) is printed,
and each engine's per-round ratio to Bungee's time (median, lowest, highest).
"""
import os
import resource
import subprocess
import sys
import tempfile
import time
import wave

import numpy as np

MX = sys.argv[1]
RATIO = float(sys.argv[2]) if len(sys.argv) > 2 else 1.25
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
RATE, SECONDS = 48000, 60
WORK = tempfile.mkdtemp(prefix="stretch-speed-")

# Music-like material: a chord whose notes change every second, in pink noise 30 dB down.
t = np.arange(RATE * SECONDS) / RATE
rng = np.random.default_rng(7)
x = np.zeros((2, t.size))
for second in range(SECONDS):
    s = slice(second * RATE, (second + 1) * RATE)
    for f in 220 * 2 ** (rng.integers(0, 24, 3) / 12):
        x[0, s] += 0.1 * np.sin(2 * np.pi * f * t[s])
        x[1, s] += 0.1 * np.sin(2 * np.pi * f * t[s] + 0.3)
white = rng.standard_normal((2, t.size))
pink = np.cumsum(white, axis=1) / np.sqrt(RATE)
x += 0.03 * (pink - pink.mean(axis=1, keepdims=True)) / np.abs(pink).max()
source = f"{WORK}/in.wav"
with wave.open(source, "wb") as w:
    w.setnchannels(2)
    w.setsampwidth(2)
    w.setframerate(RATE)
    w.writeframes((np.clip(x.T, -1, 1) * 32767).astype("<i2").tobytes())
frames = round(t.size * RATIO)


def child(args):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(args, check=True, capture_output=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def in_process(call):
    start = time.process_time()
    call()
    return time.process_time() - start


def mixdown(algorithm):
    return lambda: child([MX, "stretch", source, f"{WORK}/out.wav", "--to-frames", str(frames), "--algorithm", algorithm,
                          "--threads", "1", "--overwrite", "--quiet"])


def rubberband(engine):
    return lambda: child(["rubberband", "-q", "-D", f"{frames / RATE:.9f}", engine, source, f"{WORK}/out.wav"])


def bungee():
    from bungee_python import bungee as b
    data = np.ascontiguousarray(x.T, dtype=np.float32)
    return in_process(lambda: b.Bungee(RATE, 2, speed=1.0).time_stretch(data, RATIO))


def signalsmith():
    import python_stretch as ps
    data = np.ascontiguousarray(x, dtype=np.float32)
    def run():
        s = ps.Signalsmith.Stretch()
        s.preset(2, RATE)
        s.setTimeFactor(1 / RATIO)
        s.process(data)
    return in_process(run)


def pedalboard_r3():
    import pedalboard
    data = np.ascontiguousarray(x, dtype=np.float32)
    return in_process(lambda: pedalboard.time_stretch(data, RATE, stretch_factor=1 / RATIO))


ENGINES = [("Mixdown spectral", mixdown("spectral")), ("Mixdown auto", mixdown("auto")), ("Bungee", bungee), ("Signalsmith", signalsmith),
           ("pedalboard R3", pedalboard_r3), ("rubberband CLI R3", rubberband("--fine")),
           ("Mixdown WSOLA", mixdown("wsola"))]
only = os.environ.get("ENGINES")
chosen = [(name, run) for name, run in ENGINES if not only or name in only.split(",")]
print(f"{SECONDS} s stereo {RATE} Hz by {RATIO}, CPU seconds, median of {ROUNDS} rounds (the engines in turn "
      f"within each round, so a machine that slows down slows them alike); against Bungee: each round's "
      f"ratio, median [lowest, highest]:")
times = {name: [] for name, _ in chosen}
for _ in range(ROUNDS):
    for name, run in chosen:
        times[name].append(run())
for name, _ in chosen:
    cell = f"| {name} | {sorted(times[name])[ROUNDS // 2]:.2f} |"
    if "Bungee" in times and name != "Bungee":
        ratios = sorted(a / b for a, b in zip(times[name], times["Bungee"]))
        cell += f" {ratios[ROUNDS // 2]:.2f} [{ratios[0]:.2f}, {ratios[-1]:.2f}] |"
    print(cell, flush=True)
