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
       edl.py check-stereo DIR checks DIR/stereo.wav.out.wav (mixdown's render of stereo.otio,
                               16-bit: an AA event of a stereo source at 00:59:53:11): no
                               lead, channel 1 left and 2 right exactly, nothing clipped
The source is index.wav (make_timelines.material writes it: 8 kHz, frame k holds (k mod 65536) - 32768).
"""
import json
import wave
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
    """Where Mixdown starts the render: the timecode hour at or before the first record
    frame when it lies within a minute of it, else the first record frame itself."""
    hour = frame // HOUR * HOUR
    return hour if frame - hour <= 60 * 24 else frame


# stereo: one `AA` event (A1 and A2 hold it: channels 1 and 2 of the source) with an
# `AUD 3` line, as otio-cmx3600-adapter's multi_audio.edl, recorded at 00:59:53:11: the
# render starts there (no hour of silence), channel 1 of the source on the left and 2 on
# the right, each at its own level.
STEREO_RECORD = (59 * 60 + 53) * 24 + 11


def stereo_sample(k, channel):
    """Frame k of stereo.wav's channel (1 or 2): 0.25 and 0.125 of full scale plus a ramp."""
    return (8192 + k % 4096) if channel == 1 else -(4096 + k % 2048)


def make_stereo(work):
    n = 60 * SR
    with wave.open(os.path.join(work, "stereo.wav"), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(2)
        w.setframerate(SR)
        w.writeframes(np.array([[stereo_sample(k, 1), stereo_sample(k, 2)] for k in range(n)], dtype="<i2").tobytes())
    src, dur = 240, 96
    lines = ["TITLE: STEREO", "FCM: NON-DROP FRAME", "",
             f"001  AX       AA    C        {tc(src)} {tc(src + dur)} {tc(STEREO_RECORD)} {tc(STEREO_RECORD + dur)}",
             "* FROM CLIP NAME: stereo.wav", "* FROM CLIP: stereo.wav", "AUD  3", ""]
    open(os.path.join(work, "stereo.edl"), "w").write("\n".join(lines))
    timeline = otio.adapters.read_from_file(os.path.join(work, "stereo.edl"), rate=24000 / 1001)
    otio.adapters.write_to_file(timeline, os.path.join(work, "stereo.otio"))
    json.dump({"frames": frames(Fraction(dur) / RATE, SR), "source_start": frames(Fraction(src) / RATE, SR)},
              open(os.path.join(work, "stereo.json"), "w"))


def check_stereo(work):
    with wave.open(os.path.join(work, "stereo.wav.out.wav")) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int64).reshape(-1, w.getnchannels())
    e = json.load(open(os.path.join(work, "stereo.json")))
    failures = []
    if x.shape[1] != 2:
        failures.append(f"{x.shape[1]} channels, not 2")
    if len(x) != e["frames"]:
        failures.append(f"{len(x)} frames, the event {e['frames']} (a lead of silence?)")
    k = np.arange(min(len(x), e["frames"])) + e["source_start"]
    for c in (1, 2):
        want = np.array([stereo_sample(i, c) for i in k])
        bad = int((x[:len(k), c - 1] != want).sum()) if x.shape[1] >= c else len(k)
        if bad:
            failures.append(f"channel {c}: {bad} of {len(k)} frames are not the source's channel {c}")
    if (np.abs(x) >= 32767).any():
        failures.append("clipped samples")
    finish(failures, f"stereo: {len(x)} frames, peaks {np.abs(x).max(axis=0).tolist()}")


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
        make_stereo(sys.argv[2])
    elif sys.argv[1] == "check-stereo":
        check_stereo(sys.argv[2])
    else:
        check(sys.argv[2], *sys.argv[3:])
