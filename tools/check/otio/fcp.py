#!/usr/bin/env python3
"""A Final Cut Pro 7 XML sequence (the format Premiere also exports), converted to OTIO by
the real adapter (otio-fcp-adapter in tools/.venv) and rendered by Mixdown end to end.

Usage: fcp.py make DIR     writes DIR/sequence.xml (23.976 fps NTSC, sequence timecode
                           01:00:00:00, one audio track: a clip with an Audio Levels filter at
                           0.5, a gap, a clip at unity), DIR/sequence.otio (read_from_file,
                           write_to_file) and DIR/sequence.json (what the render must hold,
                           computed here with exact fractions)
       fcp.py check DIR    checks DIR/sequence.wav (rendered by mixdown) against sequence.json
The source is index.wav (make_timelines.material writes it: 8 kHz, frame k holds (k mod 65536) - 32768).
"""
import json
import os
import sys
from fractions import Fraction

import numpy as np
import opentimelineio as otio

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_timelines import begin_check, finish, frames, material  # noqa: E402

RATE = Fraction(24000, 1001)
SR = 8000
# (start, end, in, out, level) in sequence frames; None: no Audio Levels filter.
CLIPS = [(0, 96, 240, 336, 0.5), (120, 180, 600, 660, None), (180, 227, 1000, 1047, 0.25)]

RATE_XML = "<rate><timebase>24</timebase><ntsc>TRUE</ntsc></rate>"


def make(work):
    material(work)
    items = []
    for i, (start, end, in_, out, level) in enumerate(CLIPS):
        levels = "" if level is None else f"""
            <filter><effect><name>Audio Levels</name><effectid>audiolevels</effectid>
              <effectcategory>audiolevels</effectcategory><effecttype>audiolevels</effecttype><mediatype>audio</mediatype>
              <parameter><parameterid>level</parameterid><name>Level</name><valuemin>0</valuemin><valuemax>3.98109</valuemax><value>{level}</value></parameter>
            </effect></filter>"""
        media = (f"""<file id="f1"><name>index.wav</name><pathurl>index.wav</pathurl>{RATE_XML}<duration>1438</duration>
              <media><audio><samplecharacteristics><depth>16</depth><samplerate>8000</samplerate></samplecharacteristics>
              <channelcount>1</channelcount></audio></media></file>""" if i == 0 else '<file id="f1"/>')
        items.append(f"""
          <clipitem id="c{i}"><name>index.wav</name><duration>1438</duration>{RATE_XML}
            <start>{start}</start><end>{end}</end><in>{in_}</in><out>{out}</out>
            {media}{levels}
          </clipitem>""")
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE xmeml>
<xmeml version="4">
  <sequence id="seq1"><name>sound</name><duration>{CLIPS[-1][1]}</duration>{RATE_XML}
    <timecode>{RATE_XML}<string>01:00:00:00</string><frame>86400</frame><displayformat>NDF</displayformat></timecode>
    <media><audio><track>{''.join(items)}
    </track></audio></media>
  </sequence>
</xmeml>
"""
    open(os.path.join(work, "sequence.xml"), "w").write(xml)
    timeline = otio.adapters.read_from_file(os.path.join(work, "sequence.xml"))
    otio.adapters.write_to_file(timeline, os.path.join(work, "sequence.otio"))
    clips = [{"out_start": frames(Fraction(a) / RATE, SR), "out_end": frames(Fraction(b) / RATE, SR),
              "source_start": frames(Fraction(i) / RATE, SR), "level": 1.0 if g is None else g} for a, b, i, _, g in CLIPS]
    json.dump({"frames": clips[-1]["out_end"], "clips": clips}, open(os.path.join(work, "sequence.json"), "w"))


def check(work):
    x, e, failures = begin_check(work, "sequence", SR)
    covered = np.zeros(len(x), dtype=bool)
    for n, c in enumerate(e["clips"]):
        k = np.arange(c["out_start"], min(c["out_end"], len(x)))
        want = (((c["source_start"] + (k - c["out_start"])) % 65536) - 32768) * c["level"]
        err = np.abs(x[k] - want).max()
        if err > 0.5 + 1e-9:   # a level of 0.5 or 0.25 lands between 16-bit steps: rounded
            failures.append(f"clip {n}: off by up to {err} steps from level {c['level']} x its source frames")
        covered[k] = True
    if (x[~covered] != 0).any():
        failures.append("the gap is not silent")
    finish(failures, f"{len(e['clips'])} clips, {len(x)} frames")


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](sys.argv[2])
