#!/usr/bin/env python3
"""Peaky material for the limiter, built from sources Mixdown does not make: espeak-ng speech
(48 kHz stereo, a slight delay between channels) with, on top,
  noise   - bursts of white noise, 5-50 ms, a few per second (full band)
  noise8k - the same bursts low-passed at 8 kHz
  clicks  - single-sample and 3-sample clicks at full scale
  square  - a 1 kHz square wave at -3 dBFS over the speech, in bursts of 20-60 ms
  plosive - speech with low-frequency thumps (20-80 Hz decaying bursts), as a close mic gets
  speech  - the speech alone
Usage: peaky.py KIND OUT.wav [SECONDS] [SEED]   (tools/.venv: numpy, scipy)"""
import os
import subprocess
import sys
import tempfile

import numpy as np
from scipy import signal
from scipy.io import wavfile

RATE = 48_000


def speech(seconds, rng):
    words = ("the quick brown fox jumps over a lazy dog while seven bright clocks drift apart "
             "measure every moment and keep the sound in sync across hours of tape").split()
    out = []
    total = 0
    with tempfile.TemporaryDirectory() as tmp:
        i = 0
        while total < seconds * RATE:
            text = " ".join(rng.choice(words, size=rng.integers(6, 14)))
            f = os.path.join(tmp, f"{i}.wav")
            subprocess.run(["espeak-ng", "-w", f, "-s", str(rng.integers(140, 185)), "-p", str(rng.integers(30, 70)), text],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            rate, x = wavfile.read(f)
            x = x.astype(np.float64) / 32768
            x = signal.resample_poly(x, RATE, rate)
            out.append(x)
            out.append(np.zeros(int(rng.uniform(0.1, 0.6) * RATE)))
            total += len(x) + len(out[-1])
            i += 1
    x = np.concatenate(out)[: int(seconds * RATE)]
    x = np.pad(x, (0, int(seconds * RATE) - len(x)))
    x *= 10 ** (-20 / 20) / np.sqrt(np.mean(x[np.abs(x) > 1e-4] ** 2))   # about -20 dBFS rms where it speaks
    left = x
    right = np.concatenate([np.zeros(7), x[:-7]]) * 0.9
    return np.stack([left, right], axis=1)


def bursts(n, rng, make):
    y = np.zeros((n, 2))
    t = int(rng.uniform(0.05, 0.4) * RATE)
    while t < n:
        b = make(rng)
        end = min(n, t + len(b))
        y[t:end] += b[: end - t]
        t += int(rng.uniform(0.15, 0.6) * RATE)
    return y


def noise_burst(lowpass):
    def make(rng):
        length = int(rng.uniform(0.005, 0.05) * RATE)
        b = rng.standard_normal((length, 2)) * 10 ** (rng.uniform(-22, -12) / 20)
        if lowpass:
            sos = signal.butter(8, 8000, fs=RATE, output="sos")
            b = signal.sosfilt(sos, b, axis=0)
        return b * np.hanning(length)[:, None] ** 0.25
    return make


def click(rng):
    width = rng.choice([1, 3])
    return np.full((width, 2), rng.choice([-1.0, 1.0]) * rng.uniform(0.8, 1.0))


def square(rng):
    length = int(rng.uniform(0.02, 0.06) * RATE)
    return np.tile((np.sign(np.sin(2 * np.pi * 1000 * np.arange(length) / RATE + 0.1)) * 0.99)[:, None], (1, 2))


def plosive(rng):
    length = int(rng.uniform(0.04, 0.12) * RATE)
    t = np.arange(length) / RATE
    f = rng.uniform(20, 80)
    b = np.sin(2 * np.pi * f * t) * np.exp(-t / 0.03) * rng.uniform(0.5, 0.95)
    return np.stack([b, b * 0.8], axis=1)


def main():
    kind, path = sys.argv[1], sys.argv[2]
    seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    rng = np.random.default_rng(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    x = speech(seconds, rng)
    n = len(x)
    extra = {"noise": lambda: bursts(n, rng, noise_burst(False)), "noise8k": lambda: bursts(n, rng, noise_burst(True)),
             "clicks": lambda: bursts(n, rng, click), "square": lambda: bursts(n, rng, square) * 0.35,
             "plosive": lambda: bursts(n, rng, plosive), "speech": lambda: np.zeros_like(x)}[kind]()
    y = x + extra
    wavfile.write(path, RATE, y.astype(np.float32))


main()
