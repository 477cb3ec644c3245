"""Test material: small WAV files written and read here (32-bit float or 16-bit PCM), so
that the checks do not depend on the library under test to read what it wrote."""
from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest


def write_wav(path: Path, data: np.ndarray, rate: int) -> Path:
    """Writes `data` (frames, channels) as a 32-bit float WAV."""
    data = np.ascontiguousarray(data, dtype="<f4")
    frames, channels = data.shape
    payload = data.tobytes()
    fmt = struct.pack("<HHIIHH", 3, channels, rate, rate * channels * 4, channels * 4, 32)
    fact = struct.pack("<I", frames)
    body = b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"fact" + struct.pack("<I", 4) + fact \
        + b"data" + struct.pack("<I", len(payload)) + payload
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    return path


def read_wav(path: Path) -> tuple[np.ndarray, int]:
    """Reads a float32 or 16-bit PCM WAV (a RIFF reader of its own) as (frames, channels) float32."""
    raw = path.read_bytes()
    assert raw[:4] == b"RIFF" and raw[8:12] == b"WAVE", f"{path}: not a RIFF WAVE file"
    at, fmt, data = 12, None, None
    while at + 8 <= len(raw):
        tag, size = raw[at:at + 4], struct.unpack("<I", raw[at + 4:at + 8])[0]
        if tag == b"fmt ":
            fmt = struct.unpack("<HHIIHH", raw[at + 8:at + 24])
            if fmt[0] == 0xFFFE:  # WAVE_FORMAT_EXTENSIBLE: the sub-format's first two bytes
                fmt = (struct.unpack("<H", raw[at + 32:at + 34])[0],) + fmt[1:]
        elif tag == b"data":
            data = raw[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    assert fmt is not None and data is not None, f"{path}: no fmt or data chunk"
    kind, channels, rate, _, _, bits = fmt
    if kind == 3 and bits == 32:
        samples = np.frombuffer(data, dtype="<f4")
    elif kind == 1 and bits == 16:
        samples = np.frombuffer(data, dtype="<i2").astype(np.float32) / 32768
    else:
        raise AssertionError(f"{path}: format {kind} with {bits} bits is not read here")
    return samples.reshape(-1, channels).astype(np.float32), rate


def noise_bursts(seconds: float, rate: int, channels: int, seed: int) -> np.ndarray:
    """Noise in bursts of random length and level with pauses between, like speech: a
    signal with one clear alignment (white noise at one level would have it too, but
    silence-to-loud edges are what recordings have)."""
    rng = np.random.default_rng(seed)
    frames = int(seconds * rate)
    envelope = np.zeros(frames, dtype=np.float32)
    at = 0
    while at < frames:
        length = int(rng.uniform(0.1, 0.6) * rate)
        envelope[at:at + length] = rng.uniform(0.1, 0.5)
        at += length + int(rng.uniform(0.05, 0.4) * rate)
    noise = rng.standard_normal((frames, channels)).astype(np.float32) * 0.3
    return noise * envelope[:, None]


@pytest.fixture
def stereo(tmp_path: Path) -> tuple[Path, np.ndarray]:
    """10 s of stereo noise bursts at 48 kHz as a float WAV, and the samples written."""
    data = noise_bursts(10, 48000, 2, seed=1)
    return write_wav(tmp_path / "stereo.wav", data, 48000), data
