"""A track window that starts before its track, end to end against opentimelineio.

  window.py make DIR    writes DIR/ramp.wav (10 s, mono 48 kHz 32-bit float, sample i =
                        i / 480000: every frame names itself) and, with opentimelineio, one
                        timeline per window: a 24 fps track whose source_range is the window,
                        over a 9-frame clip of ramp.wav from its frame 100 at track time 0:
                        window-7-9.otio (-7, 9), window-7-16.otio (-7, 16), window3-4.otio (3, 4).
  window.py check DIR   reads each window*.wav (Mixdown's render, 32-bit float) and checks
                        every frame against where opentimelineio puts it: for output frame f,
                        track time = the window's start + f / 48000; the track's child there
                        and `transformed_time` into it give the media frame (silence outside
                        the track's children).
Exit status 0 and "ok" when every frame matches.
"""
import struct
import sys
from pathlib import Path

import numpy as np
import opentimelineio as otio

RATE, FPS = 48000, 24
WINDOWS = {"window-7-9": (-7, 9), "window-7-16": (-7, 16), "window3-4": (3, 4)}


def write_ramp(path: Path) -> None:
    samples = (np.arange(10 * RATE) / (10 * RATE)).astype("<f4")
    payload = samples.tobytes()
    fmt = struct.pack("<HHIIHH", 3, 1, RATE, RATE * 4, 4, 32)
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(payload)) + payload
    path.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)


def read_float_wav(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    at, data = 12, None
    while at + 8 <= len(raw):
        tag, size = raw[at:at + 4], struct.unpack("<I", raw[at + 4:at + 8])[0]
        if tag == b"data":
            data = raw[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    assert data is not None, f"{path}: no data chunk"
    return np.frombuffer(data, dtype="<f4")


def make(folder: Path) -> None:
    write_ramp(folder / "ramp.wav")
    for name, (start, duration) in WINDOWS.items():
        media = otio.schema.ExternalReference(
            target_url="ramp.wav",
            available_range=otio.opentime.TimeRange(otio.opentime.RationalTime(0, FPS), otio.opentime.RationalTime(240, FPS)))
        clip = otio.schema.Clip(name="c", media_reference=media, source_range=otio.opentime.TimeRange(
            otio.opentime.RationalTime(100, FPS), otio.opentime.RationalTime(9, FPS)))
        track = otio.schema.Track(name="a", kind=otio.schema.TrackKind.Audio, source_range=otio.opentime.TimeRange(
            otio.opentime.RationalTime(start, FPS), otio.opentime.RationalTime(duration, FPS)))
        track.append(clip)
        timeline = otio.schema.Timeline(name=name)
        timeline.tracks.append(track)
        otio.adapters.write_to_file(timeline, str(folder / f"{name}.otio"))


def check(folder: Path) -> int:
    ramp = read_float_wav(folder / "ramp.wav")
    for name, (start, duration) in WINDOWS.items():
        timeline = otio.adapters.read_from_file(str(folder / f"{name}.otio"))
        [track] = timeline.audio_tracks()
        got = read_float_wav(folder / f"{name}.wav")
        frames = duration * RATE // FPS
        if len(got) != frames:
            print(f"{name}: {len(got)} frames, the window {frames}")
            return 1
        window_start = track.source_range.start_time.rescaled_to(RATE)
        for f in range(frames):
            t = window_start + otio.opentime.RationalTime(f, RATE)
            expected = 0.0
            if 0 <= t.to_seconds() < track.available_range().duration.to_seconds():
                child = track.child_at_time(t)
                if isinstance(child, otio.schema.Clip):
                    media_time = track.transformed_time(t, child)
                    expected = ramp[int(round(media_time.to_seconds() * RATE))]
            if got[f] != expected:
                print(f"{name}: frame {f} is {got[f]}, opentimelineio puts {expected} there")
                return 1
        print(f"{name}: {frames} frames as opentimelineio places them")
    print("ok")
    return 0


if __name__ == "__main__":
    mode, folder = sys.argv[1], Path(sys.argv[2])
    if mode == "make":
        make(folder)
        sys.exit(0)
    sys.exit(check(folder))
