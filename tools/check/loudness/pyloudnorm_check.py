#!/usr/bin/env python3
"""Integrated loudness of WAV files by pyloudnorm (an independent BS.1770 meter), one
line per file: PATH<TAB>LUFS. For the loudness tests (tools/.venv, tools/check/otio/setup)."""
import sys

import numpy as np
import pyloudnorm
from scipy.io import wavfile

for path in sys.argv[1:]:
    rate, data = wavfile.read(path)
    if data.dtype.kind == "i":
        data = data / float(np.iinfo(data.dtype).max + 1)
    meter = pyloudnorm.Meter(rate)
    print(f"{path}\t{meter.integrated_loudness(data.astype(np.float64)):.4f}")
