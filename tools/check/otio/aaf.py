"""AAF clip gain, end to end: an AAF written the way Avid exports audio (pyaaf2), read by
the real AAF adapter (otio-aaf-adapter) into OTIO, rendered by Mixdown, checked here.

  aaf.py make DIR    writes DIR/tone.wav (10 s of a 441 Hz sine, mono 48 kHz 16-bit),
                     DIR/gain.aaf (one sound track at 25 fps: clips inside "Audio Gain"
                     operations, AAF's OperationDef_MonoAudioGain with its Amplitude
                     parameter: a constant 1/2, linear keyframes, constant (held) keyframes,
                     and a clip without gain, with Filler between), and DIR/gain.otio (the
                     adapter's reading of it).
                     Also DIR/fade.aaf and DIR/fade.otio: Avid's fades, a clip between Filler
                     with a Mono Audio Dissolve into it (cut point mid-way) and out of it (cut
                     point at its start).
  aaf.py check DIR   reads DIR/gain.wav and DIR/fade.wav (Mixdown's renders, 32-bit float) and
                     compares every frame with the source frame times the gain the AAF gives
                     it; for the fades, the places opentimelineio gives the clip and the
                     transitions, and Mixdown's equal-power curve (16 linear pieces of sin/cos).
Exit status 0 and "ok" when every frame matches.
"""
import struct
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np

RATE, EDIT_RATE = 48000, 25
PER_EDIT = RATE // EDIT_RATE
# (record start, source start, length) in edit units; gain: a constant, or keyframes
# (time as a fraction of the clip, gain) with their interpolation.
CLIPS = [
    dict(at=0, start=0, length=50, gain="1/2"),
    dict(at=75, start=50, length=50, keys=[("0", "1"), ("1/2", "1/4"), ("1", "1")], interpolation="linear"),
    dict(at=125, start=100, length=25),
    dict(at=150, start=130, length=40, keys=[("0", "1/2"), ("1/4", "2"), ("3/4", "1/8")], interpolation="constant"),
]
AUDIO_GAIN = "9d2ea894-0968-11d3-8a38-0050040ef7d2"   # OperationDef_MonoAudioGain
AMPLITUDE = "e4962321-2267-11d3-8a4c-0050040ef7d2"    # ParameterDef_Amplitude
MONO_AUDIO_DISSOLVE = "0c3bea41-fc05-11d2-8a29-0050040ef7d2"   # OperationDef_MonoAudioDissolve


def tone() -> np.ndarray:
    t = np.arange(10 * RATE)
    return np.round(16384 * np.sin(2 * np.pi * 441 * t / RATE)).astype("<i2")


def linked_master(f, media: Path):
    """A master mob for `media` as Avid links external media: an offline source mob whose
    descriptor's NetworkLocator names the file (the adapter's target_url)."""
    master = f.create.MasterMob("tone")
    f.content.mobs.append(master)
    slot = master.import_audio_essence(str(media), EDIT_RATE, offline=True)
    locator = f.create.NetworkLocator()
    locator["URLString"].value = "file://" + str(media.resolve())
    slot.segment.mob.descriptor["Locator"].append(locator)
    return master, slot


def sound_operation(f, auid: str, name: str, inputs: int):
    """An OperationDef of the sound kind, registered in the file's dictionary."""
    from aaf2.auid import AUID

    operation = f.create.OperationDef(AUID(auid), name)
    operation.media_kind = "sound"
    operation["NumberInputs"].value = inputs
    f.dictionary.register_def(operation)
    return operation


def make(folder: Path) -> None:
    import aaf2
    import opentimelineio as otio
    from aaf2.auid import AUID

    media = folder / "tone.wav"
    payload = tone().tobytes()
    fmt = struct.pack("<HHIIHH", 1, 1, RATE, RATE * 2, 2, 16)
    body = b"WAVEfmt " + struct.pack("<I", len(fmt)) + fmt + b"data" + struct.pack("<I", len(payload)) + payload
    media.write_bytes(b"RIFF" + struct.pack("<I", len(body)) + body)
    with aaf2.open(str(folder / "gain.aaf"), "w") as f:
        master, slot = linked_master(f, media)
        opdef = sound_operation(f, AUDIO_GAIN, "Audio Gain", inputs=1)
        paramdef = f.create.ParameterDef(AUID(AMPLITUDE), "Amplitude", "Amplitude", f.dictionary.lookup_typedef("Rational"))
        f.dictionary.register_def(paramdef)
        for auid, name in (("5b6c85a4-0ede-11d3-80a9-006008143e6f", "LinearInterp"),
                           ("5b6c85a5-0ede-11d3-80a9-006008143e6f", "ConstantInterp")):
            f.dictionary.register_def(f.create.InterpolationDef(AUID(auid), name, name))
        comp = f.create.CompositionMob("gain")
        f.content.mobs.append(comp)
        track = comp.create_sound_slot(edit_rate=EDIT_RATE)
        sequence = f.create.Sequence(media_kind="sound")
        track.segment = sequence
        position = 0
        for c in CLIPS:
            if c["at"] > position:
                sequence.components.append(f.create.Filler("sound", c["at"] - position))
            clip = master.create_source_clip(slot_id=slot.slot_id, start=c["start"], length=c["length"])
            if "gain" in c or "keys" in c:
                group = f.create.OperationGroup(opdef, length=c["length"], media_kind="sound")
                group.segments.append(clip)
                if "keys" in c:
                    interpolation = {"linear": "LinearInterp", "constant": "ConstantInterp"}[c["interpolation"]]
                    varying = f.create.VaryingValue(paramdef, interpolation)
                    for time, value in c["keys"]:
                        varying.add_keyframe(Fraction(time), Fraction(value))
                    group.parameters.append(varying)
                else:
                    group.parameters.append(f.create.ConstantValue(paramdef, Fraction(c["gain"])))
                clip = group
            sequence.components.append(clip)
            position = c["at"] + c["length"]
    timeline = otio.adapters.read_from_file(str(folder / "gain.aaf"))
    otio.adapters.write_to_file(timeline, str(folder / "gain.otio"))

    with aaf2.open(str(folder / "fade.aaf"), "w") as f:
        master, slot = linked_master(f, media)
        dissolve = sound_operation(f, MONO_AUDIO_DISSOLVE, "Mono Audio Dissolve", inputs=2)
        comp = f.create.CompositionMob("fades")
        f.content.mobs.append(comp)
        track = comp.create_sound_slot(edit_rate=EDIT_RATE)
        sequence = f.create.Sequence(media_kind="sound")
        track.segment = sequence

        def transition(length: int, cut: int):
            t = f.create.Transition("sound", length)
            t["CutPoint"].value = cut
            t["OperationGroup"].value = f.create.OperationGroup(dissolve, length=length, media_kind="sound")
            return t

        # AAF's transitions overlap their neighbours: the clip sounds from 13 to 63.
        sequence.components.append(f.create.Filler("sound", 25))
        sequence.components.append(transition(12, 6))
        sequence.components.append(master.create_source_clip(slot_id=slot.slot_id, start=20, length=50))
        sequence.components.append(transition(10, 0))
        sequence.components.append(f.create.Filler("sound", 25))
    timeline = otio.adapters.read_from_file(str(folder / "fade.aaf"))
    otio.adapters.write_to_file(timeline, str(folder / "fade.otio"))


def gain_curve(c: dict) -> np.ndarray:
    """The clip's gain at each of its frames, from the AAF's own numbers (exact fractions)."""
    n = c["length"] * PER_EDIT
    if "gain" in c:
        return np.full(n, float(Fraction(c["gain"])))
    if "keys" not in c:
        return np.ones(n)
    keys = [(Fraction(t) * n, Fraction(v)) for t, v in c["keys"]]
    frames = np.arange(n)
    if c["interpolation"] == "linear":
        return np.interp(frames, [float(t) for t, _ in keys], [float(v) for _, v in keys])
    held = np.full(n, float(keys[0][1]))
    for t, v in keys[1:]:
        held[int(t):] = float(v)
    return held


def read_float_wav(path: Path) -> np.ndarray:
    raw = path.read_bytes()
    at, fmt, data = 12, None, None
    while at + 8 <= len(raw):
        tag, size = raw[at:at + 4], struct.unpack("<I", raw[at + 4:at + 8])[0]
        if tag == b"fmt ":
            fmt = struct.unpack("<HHIIHH", raw[at + 8:at + 24])
        elif tag == b"data":
            data = raw[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    assert fmt is not None and data is not None and fmt[1] == 1 and fmt[5] == 32, f"{path}: not a mono 32-bit WAV ({fmt})"
    return np.frombuffer(data, dtype="<f4").astype(np.float64)


def fade_curve(frames: int, rising: bool) -> np.ndarray:
    """Mixdown's equal-power fade over `frames` frames: 16 linear ramps between the values
    of sin (rising) or cos (falling) at 16 equal steps (frames divisible by 16 here)."""
    piece = frames // 16
    assert piece * 16 == frames
    steps = np.array([np.sin(np.pi / 2 * i / 16) if rising else np.cos(np.pi / 2 * i / 16) for i in range(17)])
    f = np.arange(frames)
    k = f // piece
    return steps[k] + (steps[k + 1] - steps[k]) * (f - k * piece) / piece


def expected_fades(folder: Path, source: np.ndarray) -> np.ndarray:
    """The fade timeline's render from opentimelineio's reading: the clip's place, its
    media under the transitions beside it, and the fades over the transitions' ranges."""
    import opentimelineio as otio

    timeline = otio.adapters.read_from_file(str(folder / "fade.otio"))
    [track] = timeline.audio_tracks()
    items = list(track)
    out = np.zeros(int(round(track.duration().to_seconds() * RATE)))
    for i, item in enumerate(items):
        if not isinstance(item, otio.schema.Clip):
            continue
        placed = item.range_in_parent()
        start = int(round(placed.start_time.to_seconds() * RATE))
        end = int(round(placed.end_time_exclusive().to_seconds() * RATE))
        media = int(round(item.source_range.start_time.to_seconds() * RATE))
        before = items[i - 1] if i > 0 and isinstance(items[i - 1], otio.schema.Transition) else None
        after = items[i + 1] if i + 1 < len(items) and isinstance(items[i + 1], otio.schema.Transition) else None
        a = start - (int(round(before.in_offset.to_seconds() * RATE)) if before else 0)
        b = end + (int(round(after.out_offset.to_seconds() * RATE)) if after else 0)
        gain = np.ones(b - a)
        if before:
            n = int(round((before.in_offset + before.out_offset).to_seconds() * RATE))
            gain[:n] = fade_curve(n, rising=True)
        if after:
            n = int(round((after.in_offset + after.out_offset).to_seconds() * RATE))
            gain[len(gain) - n:] = fade_curve(n, rising=False)
        out[a:b] = source[media - (start - a):media + (b - start)] * gain
    return out


def compare(name: str, got: np.ndarray, expected: np.ndarray) -> int:
    if len(got) != len(expected):
        print(f"{name}: {len(got)} frames, the timeline {len(expected)}")
        return 1
    worst = np.abs(got - expected)
    frame = int(np.argmax(worst))
    if worst[frame] > 2e-6:
        print(f"{name}: frame {frame}: {got[frame]} where the AAF gives {expected[frame]} (error {worst[frame]:.3g})")
        return 1
    print(f"{name}: {len(got)} frames, worst error {worst[frame]:.3g}")
    return 0


def check(folder: Path) -> int:
    source = tone().astype(np.float64) / 32768
    failed = compare("fade.wav", read_float_wav(folder / "fade.wav"), expected_fades(folder, source))
    got = read_float_wav(folder / "gain.wav")
    end = (CLIPS[-1]["at"] + CLIPS[-1]["length"]) * PER_EDIT
    expected = np.zeros(end)
    for c in CLIPS:
        a, s, n = c["at"] * PER_EDIT, c["start"] * PER_EDIT, c["length"] * PER_EDIT
        expected[a:a + n] = source[s:s + n] * gain_curve(c)
    failed += compare("gain.wav", got, expected)
    if failed:
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    mode, folder = sys.argv[1], Path(sys.argv[2])
    if mode == "make":
        make(folder)
        sys.exit(0)
    sys.exit(check(folder))
