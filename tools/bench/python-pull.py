"""Pulls a composition document's whole render into numpy through the Python package, in
blocks into one buffer, and sums every sample: the Python side of tools/bench/python's
comparison with the C client's pull loop (tools/bench/c-api-pull.c).
Usage: bench_pull.py DOC.json [BLOCK]
Prints frames, block, seconds, x real time and the sum of every sample.
"""
import sys
import time

import numpy as np

import mixdown


def main() -> int:
    doc = sys.argv[1]
    block = int(sys.argv[2]) if len(sys.argv) > 2 else 4096
    started = time.perf_counter()
    total = 0.0
    done = 0
    with mixdown.open(doc) as render:
        buffer = np.empty((block, render.channels), np.float32)
        for frames in render.blocks(block, out=buffer):
            total += float(frames.sum(dtype=np.float64))
            done += len(frames)
        expected, rate = render.frames, render.sample_rate
    seconds = time.perf_counter() - started
    print(f"pulled {done} frames in blocks of {block} in {seconds:.2f} s ({done / rate / seconds:.0f}x real time); "
          f"checksum {total:.17g}")
    return 0 if done == expected else 1


if __name__ == "__main__":
    sys.exit(main())
