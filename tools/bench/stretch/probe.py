#!/usr/bin/env python3
"""Probes of what the bench's scores hide (docs/spectral.md, eighth session): each prints
Mixdown's spectral stretch beside Bungee on one signal, in dB. The venv of
tools/bench/stretch-quality. Usage:
    tools/bench/stretch/.venv/bin/python tools/bench/stretch/probe.py MIXDOWN harmonics RATIO [F0 [VIBRATO]]
        a tone of F0 (110) Hz harmonics with a VIBRATO (0; 0.05 is 5 %) stretched by RATIO and
        back: each harmonic's level from 600 to 1600 Hz (the short frame's band);
    ... probe.py MIXDOWN sawtooth RATIO [F0]
        a steady sawtooth of F0 (55) Hz stretched by RATIO once, beside Signalsmith too: each
        harmonic's amplitude fitted at its exact frequency over the output's middle second,
        against the input's, mean and lowest per band of harmonics (dB). A harmonic whose
        phase wanders or whose level beats reads low; at 55 Hz (2.35 bins of the 43 ms
        frame) the thirty-sixth session read ours 1.3 to 2.0 dB low at 1.003, Signalsmith
        within 0.01 (docs/spectral.md, "Every neighbour in reach");
    ... probe.py MIXDOWN attack
        a chord starting after silence, stretched by 0.5 to 2: its level over 0-3, 3-6, 6-12
        and 12-24 ms after where the time map puts the attack, and the 2 ms before it;
    ... probe.py MIXDOWN end
        a voice-like tone (110 Hz harmonics, 3 % vibrato) that stops dead, stretched by 0.5 to
        2: the level 12-18 and 18-24 ms after its end, against its last 10 ms;
    ... probe.py MIXDOWN pauses CLIP RATIO
        a clip (a sentence of the bench's material) stretched by RATIO: the level over 0-3,
        3-6 and 6-12 ms after each pause (12 ms or more under 1e-4) and 12-18 and 18-24 ms
        into it, each against the input's, averaged over the pauses.
"""
import os
import sys
import tempfile
from types import SimpleNamespace

import numpy as np
from scipy.signal import stft

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import quality as q  # noqa: E402

q.ARGS = SimpleNamespace(mixdown=sys.argv[1], baseline=None)
R = q.RATE
WORK = tempfile.mkdtemp(prefix="stretch-probe-")
ENGINES = ("mixdown-spectral", "bungee")
RATIOS = (0.5, 0.8, 0.95, 1.05, 1.25, 1.5, 2.0)


def stretch(e, x, r):
    """Engine e's stretch of x (channels x frames) by r, to round(frames x r) frames."""
    frames = int(round(x.shape[1] * r))
    return q.fit(q.ENGINES[e](x, r, WORK, frames), frames).mean(axis=0).astype(np.float64)


def db(a, b):
    return 10 * np.log10(np.mean(a ** 2) / np.mean(b ** 2) + 1e-30)


def harmonic_tone(f0, vibrato, seconds, frames=None):
    t = np.arange(frames or int(seconds * R)) / R
    phase = 2 * np.pi * np.cumsum(f0 * (1 + vibrato * np.sin(2 * np.pi * 1.3 * t))) / R
    return sum(0.05 * np.sin(k * phase + k * k) for k in range(1, int(4000 / f0)))


def harmonics(r, f0=110.0, vibrato=0.0):
    x = np.vstack([harmonic_tone(f0, vibrato, 3)] * 2).astype(np.float32)
    f, _, X = stft(x.mean(axis=0), R, nperseg=2048)
    for e in ENGINES:
        _, _, Y = stft(q.round_trip(e, x, r, WORK).mean(axis=0), R, nperseg=2048)
        cells = []
        for h in range(max(1, int(600 / f0)), int(1600 / f0) + 1):
            m = (f >= h * f0 * (1 - 1.2 * vibrato) - 30) & (f < h * f0 * (1 + 1.2 * vibrato) + 30)
            level = 10 * np.log10(np.sum(np.abs(Y[m, 4:-4]) ** 2) / np.sum(np.abs(X[m, 4:-4]) ** 2))
            cells.append(f"{h * f0:.0f}:{level:+.2f}")
        print(f"{e:17} " + " ".join(cells))


def sawtooth(r, f0=55.0):
    t = np.arange(10 * R) / R
    top = int(20000 / f0 / 1.03)
    x = np.vstack([0.2 * sum(np.sin(2 * np.pi * k * f0 * t) / k for k in range(1, top))] * 2).astype(np.float32)
    bands = [(lo, min(hi, top)) for lo, hi in ((1, 5), (5, 20), (20, 60), (60, 150), (150, top)) if lo < top]
    print("dB against the input, mean / lowest, harmonics " + " | ".join(f"{lo}-{hi - 1}" for lo, hi in bands))
    for e in ENGINES + ("signalsmith",):
        y = stretch(e, x, r)
        middle = y[len(y) // 2 - R // 2:len(y) // 2 + R // 2]
        s = np.arange(len(middle)) / R
        level = []
        for k in range(1, top):
            basis = np.c_[np.cos(2 * np.pi * k * f0 * s), np.sin(2 * np.pi * k * f0 * s)]
            c = np.linalg.lstsq(basis, middle, rcond=None)[0]
            level.append(20 * np.log10(np.hypot(*c) / (0.2 / k)))
        level = np.array(level)
        print(f"{e:17} " + " | ".join(f"{level[lo - 1:hi - 1].mean():+.3f} / {level[lo - 1:hi - 1].min():+.2f}" for lo, hi in bands))


def attack():
    at, hz = 24000, (220.0, 700, 1500, 3100)
    t = np.arange(R - at) / R
    x = np.concatenate([np.zeros(at), sum(0.3 * np.sin(2 * np.pi * f * t) for f in hz) / 8])
    steady = x[at:]
    print("dB against the chord: 2 ms before | 0-3, 3-6, 6-12, 12-24 ms after")
    for e in ENGINES:
        for r in RATIOS:
            y, o = stretch(e, x[None, :].astype(np.float32), r), int(round(at * r))
            cells = [db(y[o + a:o + b], steady) for a, b in ((0, 144), (144, 288), (288, 576), (576, 1152))]
            print(f"{e:17} {r:4}: {db(y[o - 96:o], steady):+6.1f} | " + " ".join(f"{c:+5.1f}" for c in cells))


def end():
    stop = 30000
    x = harmonic_tone(110, 0.03, 1)
    x[stop:] = 0
    print("dB against the last 10 ms: 12-18, 18-24 ms after the end")
    for e in ENGINES:
        cells = []
        for r in RATIOS:
            y, o = stretch(e, x[None, :].astype(np.float32), r), int(round(stop * r))
            last = x[stop - 480:stop]
            cells.append(f"{r}: {db(y[o + 576:o + 864], last):.0f}/{db(y[o + 864:o + 1152], last):.0f}")
        print(f"{e:17} " + "  ".join(cells))


def pauses(clip, r):
    x = q.read(clip)
    m = x.mean(axis=0).astype(np.float64)
    runs, start = [], None
    for i, quiet in enumerate(np.abs(m) < 1e-4):
        if quiet and start is None:
            start = i
        if not quiet and start is not None:
            if i - start > 0.012 * R:
                runs.append((start, i))
            start = None
    ms = R // 1000
    print(f"{len(runs)} pauses; dB against the input: after each, 0-3, 3-6, 6-12 ms | into each (against"
          " the sound's last 10 ms), 12-18, 18-24 ms")
    for e in ENGINES:
        y = stretch(e, x, r)
        onsets = np.mean([[db(y[int(round(b * r)) + a * ms:int(round(b * r)) + c * ms], m[b + a * ms:b + c * ms])
                           for a, c in ((0, 3), (3, 6), (6, 12))] for _, b in runs], axis=0)
        ends = np.mean([[db(y[int(round(a * r)) + s * ms:int(round(a * r)) + u * ms], m[a - 10 * ms:a])
                         for s, u in ((12, 18), (18, 24))] for a, _ in runs], axis=0)
        print(f"{e:17} " + " ".join(f"{v:+5.1f}" for v in onsets) + " | " + " ".join(f"{v:+5.1f}" for v in ends))


if __name__ == "__main__":
    what = sys.argv[2]
    if what == "harmonics":
        harmonics(float(sys.argv[3]), *(float(a) for a in sys.argv[4:6]))
    elif what == "sawtooth":
        sawtooth(float(sys.argv[3]), *(float(a) for a in sys.argv[4:5]))
    elif what == "attack":
        attack()
    elif what == "end":
        end()
    elif what == "pauses":
        pauses(sys.argv[3], float(sys.argv[4]))
    else:
        sys.exit(__doc__)
