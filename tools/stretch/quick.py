#!/usr/bin/env python3
"""A 30-second loop for tuning a stretcher: one espeak-ng sentence's round-trip PESQ-WB and a
997 Hz sine's pitch error (cents) at five ratios. Usage (the venv of tools/bench-stretch-quality):
    tools/stretch/.venv/bin/python tools/stretch/quick.py MIXDOWN [ALGORITHM,...]
"""
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np
from pesq import pesq
from scipy.signal import resample_poly

MX = sys.argv[1]
ALGORITHMS = sys.argv[2].split(",") if len(sys.argv) > 2 else ["spectral", "wsola"]
WORK = tempfile.mkdtemp(prefix="stretch-quick-")


def read(path):
    with wave.open(path) as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").reshape(-1, w.getnchannels())[:, 0] / 32768


def stretch(algorithm, source, out, ratio=None, frames=None):
    target = ["--to-frames", str(frames)] if frames else ["--ratio", str(ratio)]
    subprocess.run([MX, "stretch", source, out, *target, "--algorithm", algorithm, "--overwrite", "--quiet", "--format", "s16"], check=True)


def pitch(x, rate=48000):
    seg = x[len(x) // 4: 3 * len(x) // 4]
    spectrum = np.abs(np.fft.rfft(seg * np.hanning(len(seg)), 1 << 20))
    k = int(np.argmax(spectrum))
    a, b, c = np.log(spectrum[k - 1:k + 2])
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * rate / (1 << 20)


speech, sine = f"{WORK}/speech.wav", f"{WORK}/sine.wav"
subprocess.run(["espeak-ng", "-w", f"{WORK}/raw.wav", "The quick brown fox jumps over the lazy dog. Mixdown renders audio offline, exactly on time."], check=True)
subprocess.run(["sox", f"{WORK}/raw.wav", "-r", "48000", speech], check=True)
subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", sine, "synth", "5", "sine", "997", "vol", "0.5"], check=True)
reference = read(speech)
for algorithm in ALGORITHMS:
    cells = []
    for r in [0.5, 0.8, 1.25, 1.5, 2.0]:
        stretch(algorithm, speech, f"{WORK}/a.wav", ratio=r)
        stretch(algorithm, f"{WORK}/a.wav", f"{WORK}/b.wav", frames=len(reference))
        back = read(f"{WORK}/b.wav")
        score = pesq(16000, resample_poly(reference, 1, 3), resample_poly(back, 1, 3), "wb")
        stretch(algorithm, sine, f"{WORK}/s.wav", ratio=r)
        cents = 1200 * np.log2(pitch(read(f"{WORK}/s.wav")) / 997)
        cells.append(f"{r}: PESQ {score:.2f}, {cents:+.2f} cents")
    print(f"{algorithm}: " + "; ".join(cells))
