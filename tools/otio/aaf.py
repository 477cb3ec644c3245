"""AAF clip gain, end to end: an AAF written the way Avid exports audio (pyaaf2), read by
the real AAF adapter (otio-aaf-adapter) into OTIO, rendered by Mixdown, checked here.

  aaf.py make DIR    writes DIR/tone.wav (10 s of a 441 Hz sine, mono 48 kHz 16-bit),
                     DIR/gain.aaf (one sound track at 25 fps: clips inside "Audio Gain"
                     operations, AAF's OperationDef_MonoAudioGain with its Amplitude
                     parameter: a constant 1/2, linear keyframes, constant (held) keyframes,
                     and a clip without gain, with Filler between), and DIR/gain.otio (the
                     adapter's reading of it).
  aaf.py check DIR   reads DIR/gain.wav (Mixdown's render, 32-bit float) and compares every
                     frame with the source frame times the gain the AAF gives it.
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


def tone() -> np.ndarray:
    t = np.arange(10 * RATE)
    return np.round(16384 * np.sin(2 * np.pi * 441 * t / RATE)).astype("<i2")


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
        master = f.create.MasterMob("tone")
        f.content.mobs.append(master)
        slot = master.import_audio_essence(str(media), EDIT_RATE, offline=True)
        locator = f.create.NetworkLocator()
        locator["URLString"].value = "file://" + str(media.resolve())
        slot.segment.mob.descriptor["Locator"].append(locator)
        opdef = f.create.OperationDef(AUID(AUDIO_GAIN), "Audio Gain")
        opdef.media_kind = "sound"
        opdef["NumberInputs"].value = 1
        f.dictionary.register_def(opdef)
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


def check(folder: Path) -> int:
    got = read_float_wav(folder / "gain.wav")
    source = tone().astype(np.float64) / 32768
    end = (CLIPS[-1]["at"] + CLIPS[-1]["length"]) * PER_EDIT
    expected = np.zeros(end)
    for c in CLIPS:
        a, s, n = c["at"] * PER_EDIT, c["start"] * PER_EDIT, c["length"] * PER_EDIT
        expected[a:a + n] = source[s:s + n] * gain_curve(c)
    if len(got) != end:
        print(f"gain.wav has {len(got)} frames, the timeline {end}")
        return 1
    worst = np.abs(got - expected)
    frame = int(np.argmax(worst))
    if worst[frame] > 2e-6:
        print(f"frame {frame}: {got[frame]} where the AAF gives {expected[frame]} (error {worst[frame]:.3g})")
        return 1
    print(f"{end} frames, worst error {worst[frame]:.3g}: ok")
    return 0


if __name__ == "__main__":
    mode, folder = sys.argv[1], Path(sys.argv[2])
    if mode == "make":
        make(folder)
        sys.exit(0)
    sys.exit(check(folder))
