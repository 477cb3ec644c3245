#!/usr/bin/env python3
"""A quick A/B of one mixdown binary's spectral stretch: round-trip ViSQOL and PESQ means on
the bench's first sentences and three of its pieces (material written by
tools/bench/stretch-quality --out DIR), and each band's level and error against the input
with Bungee beside it (a round trip's 50 Hz bands, to find where a change loses).
Usage (the venv of tools/bench/stretch-quality):
    tools/bench/stretch/.venv/bin/python tools/bench/stretch/sweep.py MIXDOWN DIR RATIOS [SENTENCES]
    tools/bench/stretch/.venv/bin/python tools/bench/stretch/sweep.py MIXDOWN DIR --bands RATIO CLIP [LO HI]
RATIOS: comma-separated; SENTENCES: how many (6). CLIP: a clip's name in DIR (speech-0).
"""
import os
import sys
from multiprocessing import Pool
from types import SimpleNamespace

import numpy as np
from scipy.signal import stft

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality as q  # noqa: E402

q.ARGS = SimpleNamespace(mixdown=sys.argv[1], baseline=None)
DIR = sys.argv[2]


def job(args):
    clip, r = args
    work = f"{DIR}/sweep-{os.getpid()}"
    os.makedirs(work, exist_ok=True)
    x = q.read(f"{DIR}/{clip}.wav")
    back = q.round_trip("mixdown-spectral", x, r, work)
    return clip, r, q.visqol_audio(x, back, work), q.pesq_wb(x, back) if clip.startswith("speech") else np.nan


def sweep(ratios, sentences):
    clips = [f"speech-{i}" for i in range(sentences)] + ["music-drums-piano", "music-strings", "music-band"]
    # A --quick bench's material has no music-band: the clips present serve.
    clips = [c for c in clips if os.path.exists(f"{DIR}/{c}.wav")]
    with Pool(2) as pool:
        rows = pool.map(job, [(c, r) for r in ratios for c in clips])
    for r in ratios:
        v = [row[2] for row in rows if row[1] == r]
        p = [row[3] for row in rows if row[1] == r and not np.isnan(row[3])]
        print(f"r={r} ViSQOL mean {np.mean(v):.4f} (speech {np.mean(v[:len(p)]):.4f}, music {np.mean(v[len(p):]):.4f}) "
              f"PESQ {np.mean(p):.4f}", flush=True)


def bands(r, clip, lo, hi):
    work = f"{DIR}/sweep-{os.getpid()}"
    os.makedirs(work, exist_ok=True)
    x = q.read(f"{DIR}/{clip}.wav")
    edges = list(range(lo, hi + 1, 50))
    f, _, X = stft(x.mean(axis=0), q.RATE, nperseg=2048)
    for engine in ("mixdown-spectral", "bungee"):
        _, _, B = stft(q.round_trip(engine, x, r, work).mean(axis=0), q.RATE, nperseg=2048)
        cells = []
        for a, b in zip(edges[:-1], edges[1:]):
            m = (f >= a) & (f < b)
            signal = np.sum(np.abs(X[m]) ** 2)
            level = 10 * np.log10(np.sum(np.abs(B[m]) ** 2) / signal)
            error = 10 * np.log10(np.sum((np.abs(X[m]) - np.abs(B[m])) ** 2) / signal)
            cells.append(f"{a}:{level:+.1f}/{error:.0f}")
        print(engine, " ".join(cells))
    print("(each band: its level against the input's, then its magnitude error, dB)")


if __name__ == "__main__":
    if sys.argv[3] == "--bands":
        extra = [int(v) for v in sys.argv[6:8]]
        bands(float(sys.argv[4]), sys.argv[5], *(extra or [500, 1300]))
    else:
        sweep([float(v) for v in sys.argv[3].split(",")], int(sys.argv[4]) if len(sys.argv) > 4 else 6)
