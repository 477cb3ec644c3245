#!/usr/bin/env python3
"""How much the true-peak limiter changed a file: IN is the input, OUT the output of a
`--loudness ... --limit` job, GAIN_DB its reported gain_db. Prints the share of frames the
limiter touched, its deepest gain reduction, and the energy of its change against the
signal's (tools/.venv: numpy, scipy)."""
import sys

import numpy as np
from scipy.io import wavfile


def read(path):
    rate, data = wavfile.read(path)
    if data.dtype.kind == "i":
        data = data / float(np.iinfo(data.dtype).max + 1)
    return data.astype(np.float64).reshape(len(data), -1)


x, y, gain = read(sys.argv[1]), read(sys.argv[2]), 10 ** (float(sys.argv[3]) / 20)
linear = x * gain
change = y - linear
big = np.abs(linear) > 1e-4
ratio = np.ones_like(linear)
ratio[big] = y[big] / linear[big]
touched = np.any(np.abs(change) > 1e-5 + 1e-4 * np.abs(linear), axis=1)
print(f"frames touched: {100 * touched.mean():.2f} %")
print(f"deepest gain reduction: {20 * np.log10(max(ratio[big].min(), 1e-9)):.2f} dB")
print(f"change energy vs signal: {10 * np.log10(np.sum(change ** 2) / np.sum(linear ** 2)):.1f} dB")
