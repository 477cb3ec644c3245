#!/usr/bin/env python3
"""Timelines built with the real OpenTimelineIO client (tools/.venv, opentimelineio 0.18.1),
written with otio.adapters.write_to_file, and what Mixdown must render from them, computed
here independently with exact fractions.

Usage: make_timelines.py DIR
Writes the material first: index.wav (8 kHz mono 16-bit, 60 s: frame k holds the sample
(k mod 65536) - 32768, so a rendered frame says which source frame it is), dc25.wav and
dc50.wav (48 kHz mono 16-bit, 10 s, every sample 0.25 and 0.5). Then:
  cuts.otio / cuts.json      2 hours at 24000/1001 (rate 23.976...), 1,000 cuts and gaps from index.wav
  features.otio / features.json
                             gaps, a dissolve, a time warp, clip and track gains, a disabled
                             clip, a video track, a nested stack
  missing.otio               a clip with a MissingReference
"""
import array
import json
import os
import wave
import random
import sys
from fractions import Fraction

import numpy as np
import opentimelineio as otio

RT, TR = otio.opentime.RationalTime, otio.opentime.TimeRange
NTSC = 24000 / 1001


def frames(t, rate):
    """A time (Fraction seconds) to a frame: half away from zero, Mixdown's documented rule."""
    x = t * rate
    f = x.numerator // x.denominator
    rest = x - f
    return f + 1 if rest >= Fraction(1, 2) else f


def finish(failures, summary):
    """Prints each failure and the summary line (ending "ok" or "FAILED"); exits 0 or 1."""
    for f in failures:
        print(f)
    print(f"{summary}, {'ok' if not failures else 'FAILED'}")
    sys.exit(1 if failures else 0)


def begin_check(work, name, rate):
    """NAME.wav (a mono 16-bit render) as int64 samples, NAME.json (what it must hold) and the
    failures found so far: the wrong channels or rate, the wrong length."""
    with wave.open(os.path.join(work, f"{name}.wav")) as w:
        x = np.frombuffer(w.readframes(w.getnframes()), dtype=np.int16).astype(np.int64)
        channels, got = w.getnchannels(), w.getframerate()
    e = json.load(open(os.path.join(work, f"{name}.json")))
    failures = []
    if (channels, got) != (1, rate):
        failures.append(f"{channels} channels at {got} Hz")
    if len(x) != e["frames"]:
        failures.append(f"{len(x)} frames, the timeline {e['frames']}")
    return x, e, failures


def ref(path, frames_, rate):
    return otio.schema.ExternalReference(target_url=path, available_range=TR(RT(0, rate), RT(frames_, rate)))


def cuts(work):
    """1,000 clips (and some gaps) of 24 to 336 frames at 23.976 from a 60 s file: about 2 hours."""
    rng = random.Random(1001)
    rate = Fraction(24000, 1001)
    source_frames = 60 * 8000
    track = otio.schema.Track(name="dialogue", kind=otio.schema.TrackKind.Audio)
    expected, at = [], Fraction(0)
    for i in range(1000):
        if i % 50 == 49:
            gap = rng.randint(1, 48)
            track.append(otio.schema.Gap(source_range=TR(RT(0, NTSC), RT(gap, NTSC))))
            at += gap / rate
        length = rng.randint(24, 336)
        start = rng.randint(0, int(60 * rate) - length - 1)
        clip = otio.schema.Clip(name=f"cut {i}", media_reference=ref("index.wav", source_frames, 8000),
                                source_range=TR(RT(start, NTSC), RT(length, NTSC)))
        track.append(clip)
        s0 = Fraction(start) / rate
        expected.append({"out_start": frames(at, 8000), "out_end": frames(at + length / rate, 8000),
                         "source_start": frames(s0, 8000)})
        at += length / rate
    timeline = otio.schema.Timeline(name="two hours of cuts")
    timeline.tracks.append(track)
    otio.adapters.write_to_file(timeline, os.path.join(work, "cuts.otio"))
    json.dump({"rate": 8000, "frames": frames(at, 8000), "clips": expected}, open(os.path.join(work, "cuts.json"), "w"))


def features(work):
    """48 kHz, timeline rate 24: a 1 s gap; dc25 for 2 s at gain 0.5; a 12-frame dissolve
    (6 before and 6 after the cut) into dc50 for 2 s; a disabled clip (silence) of 1 s;
    dc25 warped by 2 (1 s of media played over 0.5 s); a nested stack holding dc50 for
    1 s. Track gain 0.8. A video track that must be ignored."""
    rate = 24
    a = otio.schema.Track(name="audio", kind=otio.schema.TrackKind.Audio)
    a.metadata["mixdown"] = {"volume": 0.8}
    a.append(otio.schema.Gap(source_range=TR(RT(0, rate), RT(24, rate))))
    c1 = otio.schema.Clip(name="dc25", media_reference=ref("dc25.wav", 10 * 48000, 48000), source_range=TR(RT(48, rate), RT(48, rate)))
    c1.metadata["mixdown"] = {"volume": 0.5}
    a.append(c1)
    a.append(otio.schema.Transition(transition_type=otio.schema.TransitionTypes.SMPTE_Dissolve, in_offset=RT(6, rate), out_offset=RT(6, rate)))
    a.append(otio.schema.Clip(name="dc50", media_reference=ref("dc50.wav", 10 * 48000, 48000), source_range=TR(RT(48, rate), RT(48, rate))))
    off = otio.schema.Clip(name="off", media_reference=ref("dc50.wav", 10 * 48000, 48000), source_range=TR(RT(0, rate), RT(24, rate)))
    off.enabled = False
    a.append(off)
    warped = otio.schema.Clip(name="warp", media_reference=ref("dc25.wav", 10 * 48000, 48000), source_range=TR(RT(24, rate), RT(12, rate)))
    warped.effects.append(otio.schema.LinearTimeWarp(time_scalar=2.0))
    a.append(warped)
    nested = otio.schema.Stack(name="compound")
    inner = otio.schema.Track(name="inner", kind=otio.schema.TrackKind.Audio)
    inner.append(otio.schema.Clip(name="inner dc50", media_reference=ref("dc50.wav", 10 * 48000, 48000), source_range=TR(RT(0, rate), RT(24, rate))))
    nested.append(inner)
    a.append(nested)
    video = otio.schema.Track(name="picture", kind=otio.schema.TrackKind.Video)
    video.append(otio.schema.Gap(source_range=TR(RT(0, rate), RT(240, rate))))
    timeline = otio.schema.Timeline(name="features")
    timeline.tracks.append(video)
    timeline.tracks.append(a)
    otio.adapters.write_to_file(timeline, os.path.join(work, "features.otio"))
    f = lambda seconds: frames(Fraction(seconds), 48000)
    # (first frame, end frame, value) of the constant stretches, away from the dissolve's ramps.
    spans = [
        (0, f(1), 0.0),                      # the gap
        (f(1), f(3) - f(Fraction(6, 24)), 0.8 * 0.5 * 0.25),   # dc25 at clip gain 0.5, before the dissolve
        (f(3) + f(Fraction(6, 24)), f(5), 0.8 * 0.5),          # dc50 after it
        (f(5), f(6), 0.0),                   # the disabled clip
        (f(6), f(6.5), 0.8 * 0.25),          # the warp: 0.5 s
        (f(6.5), f(7.5), 0.8 * 0.5),         # the nested stack
    ]
    # The dissolve's middle (the cut at 3 s): equal power, 0.8 (0.125 cos + 0.5 sin) at 45 degrees.
    middle = 0.8 * (0.5 * 0.25 + 0.5) * (0.5 ** 0.5)
    json.dump({"frames": f(7.5), "spans": spans, "cut": f(3), "middle": middle}, open(os.path.join(work, "features.json"), "w"))


def missing(work):
    track = otio.schema.Track(name="audio", kind=otio.schema.TrackKind.Audio)
    track.append(otio.schema.Clip(name="interview take 3", media_reference=otio.schema.MissingReference(),
                                  source_range=TR(RT(0, 24), RT(48, 24))))
    timeline = otio.schema.Timeline(name="missing")
    timeline.tracks.append(track)
    otio.adapters.write_to_file(timeline, os.path.join(work, "missing.otio"))


def material(work):
    def write(name, rate, samples):
        with wave.open(os.path.join(work, name), "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(rate)
            w.writeframes(array.array("h", samples).tobytes())
    write("index.wav", 8000, [(k % 65536) - 32768 for k in range(60 * 8000)])
    write("dc25.wav", 48000, [8192] * (10 * 48000))
    write("dc50.wav", 48000, [16384] * (10 * 48000))


if __name__ == "__main__":
    work = sys.argv[1]
    material(work)
    cuts(work)
    features(work)
    missing(work)
