#!/usr/bin/env python3
"""A one-minute loop for tuning a stretcher: the mean round-trip PESQ-WB of three espeak-ng
sentences (three voices) and a 997 Hz sine's pitch error (cents) at five ratios. Usage (the venv of tools/bench/stretch-quality):
    tools/bench/stretch/.venv/bin/python tools/bench/stretch/quick.py MIXDOWN [ALGORITHM,...]
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


SENTENCES = [("en", "The quick brown fox jumps over the lazy dog. Mixdown renders audio offline, exactly on time."),
             ("en-us+f3", "She sells sea shells by the sea shore, and the shells she sells are surely seashells."),
             ("en-gb+m3", "Peter Piper picked a peck of pickled peppers; how many pickled peppers did he pick?")]
speeches = []
for i, (voice, text) in enumerate(SENTENCES):
    subprocess.run(["espeak-ng", "-v", voice, "-w", f"{WORK}/raw{i}.wav", text], check=True)
    subprocess.run(["sox", f"{WORK}/raw{i}.wav", "-r", "48000", f"{WORK}/speech{i}.wav"], check=True)
    speeches.append(f"{WORK}/speech{i}.wav")
sine = f"{WORK}/sine.wav"
subprocess.run(["sox", "-n", "-r", "48000", "-c", "1", sine, "synth", "5", "sine", "997", "vol", "0.5"], check=True)
for algorithm in ALGORITHMS:
    cells = []
    for r in [0.5, 0.8, 1.25, 1.5, 2.0]:
        scores = []
        for speech in speeches:
            reference = read(speech)
            stretch(algorithm, speech, f"{WORK}/a.wav", ratio=r)
            stretch(algorithm, f"{WORK}/a.wav", f"{WORK}/b.wav", frames=len(reference))
            back = read(f"{WORK}/b.wav")
            scores.append(pesq(16000, resample_poly(reference, 1, 3), resample_poly(back, 1, 3), "wb"))
        stretch(algorithm, sine, f"{WORK}/s.wav", ratio=r)
        cents = 1200 * np.log2(pitch(read(f"{WORK}/s.wav")) / 997)
        cells.append(f"{r}: PESQ {np.mean(scores):.3f} ({' '.join(f'{x:.2f}' for x in scores)}), {cents:+.2f} cents")
    print(f"{algorithm}:\n  " + "\n  ".join(cells))
