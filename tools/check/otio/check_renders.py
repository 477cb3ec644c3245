#!/usr/bin/env python3
"""Checks Mixdown's renders of make_timelines.py's timelines against the expectations it
computed: every frame of every cut (index.wav's frames say which source frame they are),
and the gains of features.otio. Usage: check_renders.py DIR (cuts.wav and features.wav
rendered there). Exit status 0 when every check passes; each failure is printed."""
import json
import sys
import wave

import numpy as np

work = sys.argv[1]
failures = []


def read(name):
    with wave.open(f"{work}/{name}") as w:
        return np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.int64)


cuts, expected = read("cuts.wav"), json.load(open(f"{work}/cuts.json"))
if len(cuts) != expected["frames"]:
    failures.append(f"cuts.wav has {len(cuts)} frames, the timeline {expected['frames']}")
covered = np.zeros(len(cuts), dtype=bool)
for i, c in enumerate(expected["clips"]):
    k = np.arange(c["out_start"], min(c["out_end"], len(cuts)))
    want = ((c["source_start"] + (k - c["out_start"])) % 65536) - 32768
    wrong = int((cuts[k] != want).sum())
    if wrong:
        failures.append(f"cut {i}: {wrong} of {len(k)} frames are not source frames {c['source_start']}... at {c['out_start']}")
    covered[k] = True
if (cuts[~covered] != 0).any():
    failures.append("the gaps are not silent")

features, f = read("features.wav") / 32768, json.load(open(f"{work}/features.json"))
if len(features) != f["frames"]:
    failures.append(f"features.wav has {len(features)} frames, the timeline {f['frames']}")
for a, b, value in f["spans"]:
    inner = features[a + 2000:b - 2000]   # away from the resampler's and stretcher's edges
    error = float(np.abs(inner - value).max())
    if error > 2e-3:
        failures.append(f"frames {a}..{b}: {inner.min():.5f}..{inner.max():.5f}, expected {value:.5f}")
if abs(features[f["cut"]] - f["middle"]) > 2e-3:
    failures.append(f"the dissolve's middle is {features[f['cut']]:.5f}, equal power gives {f['middle']:.5f}")

for line in failures:
    print("FAIL", line, file=sys.stderr)
print(f"check_renders: {len(expected['clips'])} cuts over {len(cuts)} frames; {len(failures)} failures")
sys.exit(1 if failures else 0)
