#!/usr/bin/env python3
"""A reference true peak: each channel oversampled 16x by scipy's polyphase resampler with its
default filter (a Kaiser-windowed sinc, beta 5, of 10 zero crossings per side at the input
rate), in pieces of 2^18 frames with 64 frames of overlap. Prints dBTP.
Usage: true_peak_reference.py FILE [FACTOR]   (tools/.venv: numpy, scipy; ffmpeg decodes)"""
import subprocess
import sys

import numpy as np
from scipy import signal


def read(path):
    """Any file ffmpeg decodes, as float32 at its own rate."""
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "a:0", "-show_entries", "stream=channels",
                            "-of", "csv=p=0", path], check=True, capture_output=True, text=True).stdout.split()
    channels = int(probe[0])
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", path, "-f", "f32le", "-"], check=True, capture_output=True).stdout
    return np.frombuffer(raw, dtype=np.float32).reshape(-1, channels).astype(np.float64)


def true_peak(x, factor=16):
    half = 10 * factor
    h = signal.firwin(2 * half + 1, 1.0 / factor, window=("kaiser", 5.0))  # resample_poly scales by the factor itself
    peak = 0.0
    piece, overlap = 1 << 18, 64
    padded = np.concatenate([np.zeros((overlap, x.shape[1])), x, np.zeros((overlap, x.shape[1]))])
    for start in range(0, len(x), piece):
        seg = padded[start:start + piece + 2 * overlap]
        y = signal.resample_poly(seg, factor, 1, axis=0, window=h)
        y = y[overlap * factor: (len(seg) - overlap) * factor]
        peak = max(peak, float(np.max(np.abs(y))) if len(y) else 0.0)
    return 20 * np.log10(peak) if peak > 0 else float("-inf")


if __name__ == "__main__":
    print(f"{true_peak(read(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 16):.3f}")
