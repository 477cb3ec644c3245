"""Seamless joins of a parallel encode, measured: the error of each 1024-frame block of a
decode against the render it encodes (the reference), for a serial and a parallel encode of
the same audio, decoded by FFmpeg and by an independent decoder (faad for AAC, opusdec for
Opus).

Usage: joins.py REFERENCE.wav CHUNK_FRAMES SERIAL.wav PARALLEL.wav [SERIAL2.wav PARALLEL2.wav ...]
REFERENCE: the render (any WAV numpy reads here: 16-bit or 32-bit float); each decode is
aligned to it by the lag (within +-8192 frames) that best matches its first seconds, so a
decoder that keeps the priming is compared at the right place. CHUNK_FRAMES: the parallel
encode's chunk length in frames (its joins lie at its multiples).

Prints, per pair: the median block error (dB below the reference's RMS), the worst block
anywhere, and the worst block within two blocks of a join, serial beside parallel (the first
and last three blocks, where decoders differ at the file's edges, left out); exits 1
when a parallel decode's worst block near a join is worse than the serial decode's worst
block anywhere (+0.5 dB), or its median is more than 6 % (0.5 dB) worse than the serial's.
(Which worker's encoder, with its settled rate control, codes which chunk once depended on
the threads' timing, and the parallel median moved by a few tenths of a dB from run to run:
0.41 dB, then 0.57 dB on a loaded machine, each time with the worst block near a join equal
to the serial's. Chunk k now goes to worker k mod n, so a parallel encode is the same
packets every run.)
"""
import struct
import sys

import numpy as np

BLOCK = 1024


def read_wav(path: str) -> np.ndarray:
    raw = open(path, "rb").read()
    at, fmt, data = 12, None, None
    while at + 8 <= len(raw):
        tag, size = raw[at:at + 4], struct.unpack("<I", raw[at + 4:at + 8])[0]
        if size == 0xFFFFFFFF or at + 8 + size > len(raw):  # a streamed WAV: data to the end
            size = len(raw) - at - 8
        if tag == b"fmt ":
            fmt = struct.unpack("<HHIIHH", raw[at + 8:at + 24])
            if fmt[0] == 0xFFFE:
                fmt = (struct.unpack("<H", raw[at + 32:at + 34])[0],) + fmt[1:]
        elif tag == b"data":
            data = raw[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    kind, channels, _, _, _, bits = fmt
    if kind == 3 and bits == 32:
        x = np.frombuffer(data[:len(data) // 4 * 4], dtype="<f4").astype(np.float64)
    elif kind == 1 and bits == 16:
        x = np.frombuffer(data[:len(data) // 2 * 2], dtype="<i2").astype(np.float64) / 32768
    elif kind == 1 and bits == 24:
        b = np.frombuffer(data[:len(data) // 3 * 3], dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        x = ((b[:, 0] | (b[:, 1] << 8) | (b[:, 2] << 16)) << 8 >> 8).astype(np.float64) / 8388608
    else:
        raise SystemExit(f"{path}: format {kind}/{bits} not read here")
    return x[:len(x) // channels * channels].reshape(-1, channels)


def align(reference: np.ndarray, decoded: np.ndarray) -> np.ndarray:
    """`decoded` shifted so that its frame 0 is the reference's: the lag (within +-8192
    frames) at the peak of their cross-correlation over the first 5 s (by FFT)."""
    span = min(len(reference), len(decoded), 5 * 48000)
    r, d = reference[:span, 0], decoded[:span + 8192, 0]
    size = 1 << int(np.ceil(np.log2(len(r) + len(d))))
    corr = np.fft.irfft(np.fft.rfft(d, size) * np.conj(np.fft.rfft(r, size)), size)
    lags = np.concatenate([np.arange(0, 8193), np.arange(-8192, 0)])
    values = np.concatenate([corr[:8193], corr[-8192:]])
    lag = int(lags[int(np.argmax(values))])
    if lag >= 0:
        out = decoded[lag:]
    else:
        out = np.concatenate([np.zeros((-lag, decoded.shape[1])), decoded])
    n = min(len(out), len(reference))
    return out[:n]


def block_errors(reference: np.ndarray, decoded: np.ndarray) -> np.ndarray:
    n = min(len(reference), len(decoded)) // BLOCK * BLOCK
    level = np.sqrt(np.mean(reference[:n] ** 2)) + 1e-12
    diff = (decoded[:n] - reference[:n]).reshape(-1, BLOCK, reference.shape[1])
    rms = np.sqrt(np.mean(diff ** 2, axis=(1, 2))) + 1e-12
    return 20 * np.log10(rms / level)


def main() -> int:
    reference = read_wav(sys.argv[1])
    chunk = int(sys.argv[2])
    pairs = sys.argv[3:]
    failed = False
    for serial_path, parallel_path in zip(pairs[::2], pairs[1::2]):
        serial = block_errors(reference, align(reference, read_wav(serial_path)))
        parallel = block_errors(reference, align(reference, read_wav(parallel_path)))
        n = min(len(serial), len(parallel))
        # The block each join falls in; the first and last blocks (the decoders' edges) are
        # left out of every figure.
        joins = [k * chunk // BLOCK for k in range(1, n * BLOCK // chunk + 1) if k * chunk // BLOCK < n - 3]
        near = sorted({b for j in joins for b in range(j - 2, j + 2) if 3 <= b < n - 3})
        body = slice(3, n - 3)
        s_med, p_med = float(np.median(serial[body])), float(np.median(parallel[body]))
        s_worst, p_worst = float(serial[body].max()), float(parallel[body].max())
        s_near = float(serial[near].max()) if near else float("-inf")
        p_near = float(parallel[near].max()) if near else float("-inf")
        print(f"{parallel_path}: {len(joins)} joins; median {s_med:.2f} / {p_med:.2f} dB; worst {s_worst:.2f} / {p_worst:.2f} dB; "
              f"worst near a join {s_near:.2f} / {p_near:.2f} dB (serial / parallel)")
        if p_near > s_worst + 0.5 or p_med > s_med + 0.5:
            print(f"{parallel_path}: a join is audible (worse than the serial encode)")
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
