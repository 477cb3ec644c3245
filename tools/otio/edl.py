#!/usr/bin/env python3
"""A CMX 3600 EDL, converted to OTIO by the real adapter (otio-cmx3600-adapter in
tools/.venv) and rendered by Mixdown end to end.

Usage: edl.py make DIR         writes, for each EDL in EDLS (sound: 23.976 fps, record
                               timecode from 01:00:00:00, two audio channels, cuts and a
                               dissolve; late and frames: sequences from 00:00:00:00 whose
                               audio starts later), DIR/NAME.edl (sources named by
                               "* FROM CLIP:"), DIR/NAME.otio (read_from_file with
                               rate=24000/1001, write_to_file) and DIR/NAME.json (what the
                               render must hold, computed here from the timecodes with exact
                               fractions)
       edl.py check DIR [NAME] checks DIR/NAME.wav (rendered by mixdown; default sound)
                               against NAME.json
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

RATE = Fraction(24000, 1001)   # what 23.976 means; Mixdown reads the adapter's 23.976 as this
SR = 8000


def tc(frames):
    """A non-drop timecode at 24 frames per timecode second (23.976 counts like 24)."""
    f = frames % 24
    s = frames // 24
    return f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}:{f:02d}"


HOUR = 3600 * 24
# Each EDL: (channel, source in, duration, record in) in timecode frames, and an optional
# dissolve (channel, source in, duration, length) from the last event into a new one.
# sound: record from 01:00:00:00; A1: three cuts with a gap; A2 starts 2 s later (its own
#   record in), a cut then a dissolve.
# late: a sequence that starts at 00:00:00:00 and whose audio starts 5 s in, two events of
#   4 s (5-9 s and 9-13 s): the record window reaches into the track (issue 42).
# frames: one event 3 frames after 00:00:00:00.
EDLS = {
    "sound": ([
        ("A", 240, 108, HOUR + 0),
        ("A", 600, 50, HOUR + 108),
        ("A", 1000, 37, HOUR + 200),        # after a 42-frame gap
        ("A2", 300, 72, HOUR + 48),
        ("A2", 900, 60, HOUR + 120),
    ], ("A2", 1200, 48, 12)),
    "late": ([("A", 240, 96, 120), ("A", 600, 96, 216)], None),
    "frames": ([("A", 240, 48, 3)], None),
}


def hour_start(frame):
    """The timecode hour at or before a record frame: where Mixdown starts the render."""
    return frame // HOUR * HOUR


def make(work):
    material(work)
    for name, (events, dissolve) in EDLS.items():
        make_edl(work, name, events, dissolve)


def make_edl(work, name, events, dissolve):
    lines = [f"TITLE: {name.upper()}", "FCM: NON-DROP FRAME", ""]
    n = 1
    for ch, src, dur, rec in events:
        lines += [f"{n:03d}  AX       {ch:<5} C        {tc(src)} {tc(src + dur)} {tc(rec)} {tc(rec + dur)}",
                  "* FROM CLIP NAME: index.wav", "* FROM CLIP: index.wav", ""]
        n += 1
    clips = list(events)
    if dissolve:
        ch, src, dur, length = dissolve
        prev = events[-1]
        rec = prev[3] + prev[2]
        # A dissolve: the outgoing source held for zero length at the cut, then the incoming over `length`.
        lines += [f"{n:03d}  AX       {ch:<5} C        {tc(prev[1] + prev[2])} {tc(prev[1] + prev[2])} {tc(rec)} {tc(rec)}",
                  f"{n:03d}  AX       {ch:<5} D    {length:03d} {tc(src)} {tc(src + dur)} {tc(rec)} {tc(rec + dur)}",
                  "* FROM CLIP NAME: index.wav", "* FROM CLIP: index.wav", ""]
        clips.append((ch, src, dur, rec))
    open(os.path.join(work, f"{name}.edl"), "w").write("\n".join(lines))
    timeline = otio.adapters.read_from_file(os.path.join(work, f"{name}.edl"), rate=24000 / 1001)
    otio.adapters.write_to_file(timeline, os.path.join(work, f"{name}.otio"))

    # Expected: the render starts at the hour of the earliest record in; every event lands at
    # its record timecode, its frames its source frames, away from the dissolve.
    start = hour_start(min(e[3] for e in events))
    out = []
    for ch, src, dur, rec in clips:
        a = Fraction(rec - start) / RATE
        out.append({"channel": ch, "out_start": frames(a, SR), "out_end": frames(a + Fraction(dur) / RATE, SR),
                    "source_start": frames(Fraction(src) / RATE, SR)})
    # CMX 3600: the dissolve starts at the D event's record in and lasts `length` frames (the
    # outgoing source runs on under it).
    window = [0, 0]
    if dissolve:
        cut = Fraction(clips[-1][3] - start) / RATE
        window = [frames(cut, SR), frames(cut + Fraction(dissolve[3]) / RATE, SR)]
    end = max(c["out_end"] for c in out)
    json.dump({"frames": end, "clips": out, "dissolve": window}, open(os.path.join(work, f"{name}.json"), "w"))


def check(work, name="sound"):
    x, e, failures = begin_check(work, name, SR)
    # Two tracks of index.wav mix into one channel: where both play, the frame is their sum.
    want = np.zeros(e["frames"], dtype=np.int64)
    covered = np.zeros(e["frames"], dtype=bool)
    a, b = e["dissolve"]
    for c in e["clips"]:
        k = np.arange(c["out_start"], c["out_end"])
        want[k] += ((c["source_start"] + (k - c["out_start"])) % 65536) - 32768
        covered[k] = True
    exact = covered.copy()
    if b > a:
        exact[a - 8:b + 8] = False
    wrong = np.nonzero((x[:len(want)] != np.clip(want, -32768, 32767)) & exact[:len(x)])[0]
    if len(wrong):
        failures.append(f"{len(wrong)} frames are not their source frames (first at {wrong[0]}: {x[wrong[0]]} for {want[wrong[0]]})")
    if (x[:len(covered)][~covered[:len(x)]] != 0).any():
        failures.append("the gaps are not silent")
    finish(failures, f"{name}: {len(e['clips'])} events, {len(x)} frames")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], *sys.argv[3:])
