#!/usr/bin/env python3
"""The stretch quality benchmark (run by tools/bench/stretch-quality; see its header)."""
import argparse
import hashlib
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import wave

import numpy as np
from scipy.signal import resample_poly

RATE = 48000
SENTENCES = [
    "The quick brown fox jumps over the lazy dog.", "She sells sea shells by the sea shore.",
    "A stitch in time saves nine, and the clock keeps running.", "Please call Stella and ask her to bring these things.",
    "The museum opens at nine on weekdays and at ten on Sundays.", "Seven silver spoons were found beneath the old kitchen floor.",
    "How much wood would a woodchuck chuck if it could chuck wood?", "The rain in Spain stays mainly in the plain.",
    "Pack my box with five dozen liquor jugs.", "We will meet at the station just before the last train leaves.",
    "Every morning the baker lights the ovens before dawn.", "Thunder rolled across the valley as the storm drew near.",
    "The committee postponed its decision until next Thursday.", "Bright lanterns swayed gently above the crowded market.",
    "My grandmother kept her recipes in a battered tin box.", "Turn left at the church and follow the river for a mile.",
    "The violinist tuned her instrument while the audience settled.", "Quiet footsteps echoed down the long marble corridor.",
    "Fresh coffee and warm bread filled the cafe with comfort.", "The satellite passed overhead twice before midnight.",
]
VOICES = ["en", "en-us", "en+f3", "en+m3", "en-gb-x-rp"]


def write(path, x, rate=RATE):
    """16-bit WAV, x scaled by 32768 and clipped (libsndfile's and Mixdown's convention, the
    inverse of read(): a sample read from a 16-bit file is written back to the same bits)."""
    x = np.atleast_2d(x)
    with wave.open(path, "wb") as w:
        w.setnchannels(x.shape[0])
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(np.clip((x.T * 32768).round(), -32768, 32767).astype("<i2").tobytes())


def write_float(path, x, rate=RATE):
    """32-bit float WAV: what Mixdown is given, so it reads the samples the in-process peers
    are given (float32), not a 16-bit rounding of them."""
    from scipy.io import wavfile
    wavfile.write(path, rate, np.ascontiguousarray(np.atleast_2d(x).T, dtype=np.float32))


def read_float(path):
    import warnings
    from scipy.io import wavfile
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", wavfile.WavFileWarning)   # a PEAK or fact chunk
        _, y = wavfile.read(path)
    return np.atleast_2d(np.asarray(y, dtype=np.float64).T)


def read(path):
    with wave.open(path) as w:
        ch, n = w.getnchannels(), w.getnframes()
        return (np.frombuffer(w.readframes(n), dtype="<i2").astype(np.float64) / 32768).reshape(n, ch).T


def midi(path, tracks, tempo=120):
    """A type-1 standard MIDI file: tracks of (program, channel, [(beat, beats, note, velocity)])."""
    def vlq(v):
        out = [v & 0x7F]
        v >>= 7
        while v:
            out.insert(0, (v & 0x7F) | 0x80)
            v >>= 7
        return bytes(out)
    chunks = []
    for program, channel, notes in tracks:
        events = []
        for beat, length, note, vel in notes:
            events.append((int(beat * 480), bytes([0x90 | channel, note, vel])))
            events.append((int((beat + length) * 480), bytes([0x80 | channel, note, 0])))
        events.sort(key=lambda e: (e[0], e[1][0] & 0xF0 == 0x90))
        data = bytearray(vlq(0) + bytes([0xFF, 0x51, 3]) + (60_000_000 // tempo).to_bytes(3, "big"))
        if channel != 9:
            data += vlq(0) + bytes([0xC0 | channel, program])
        t = 0
        for when, msg in events:
            data += vlq(when - t) + msg
            t = when
        data += vlq(0) + bytes([0xFF, 0x2F, 0])
        chunks.append(b"MTrk" + len(data).to_bytes(4, "big") + bytes(data))
    with open(path, "wb") as f:
        f.write(b"MThd" + (6).to_bytes(4, "big") + (1).to_bytes(2, "big") + len(chunks).to_bytes(2, "big") + (480).to_bytes(2, "big"))
        for c in chunks:
            f.write(c)


def pieces():
    """Five short pieces: drums with piano, strings, a synth lead, a sung lead (choir aahs), a band."""
    prog = [0, 4, 5, 7, 9, 11, 12]
    def scale(root, steps):
        return [root + [0, 2, 4, 5, 7, 9, 11][s % 7] + 12 * (s // 7) for s in steps]
    drums = (0, 9, [(b * 0.5, 0.25, 42, 80) for b in range(16)] + [(b, 0.25, 36, 110) for b in range(0, 8, 2)]
             + [(b, 0.25, 38, 100) for b in range(1, 8, 2)])
    piano = (0, 0, [(b, 0.9, n, 90) for b, n in enumerate(scale(60, [0, 2, 4, 5, 4, 2, 0, 4]))]
             + [(b, 1.8, n, 70) for b, n in zip(range(0, 8, 2), [48, 53, 55, 48])])
    strings = (48, 1, [(0, 4, 60, 80), (0, 4, 64, 80), (0, 4, 67, 80), (4, 4, 62, 80), (4, 4, 65, 80), (4, 4, 69, 80)])
    lead = (81, 2, [(b * 0.5, 0.45, n, 100) for b, n in enumerate(scale(72, [0, 4, 7, 4, 2, 5, 9, 5, 0, 4, 7, 11, 7, 4, 2, 0]))])
    choir = (52, 3, [(b, 0.95, n, 95) for b, n in enumerate(scale(64, [0, 1, 2, 4, 3, 2, 1, 0]))])
    bass = (33, 4, [(b, 0.9, n, 100) for b, n in enumerate([36, 36, 41, 41, 43, 43, 36, 36])])
    return [("drums-piano", [drums, piano]), ("strings", [strings, bass]), ("synth-lead", [lead, drums]),
            ("choir", [choir, strings]), ("band", [drums, piano, bass, lead])]


def material(work, quick):
    clips = []
    sentences = SENTENCES[:6] if quick else SENTENCES
    for i, s in enumerate(sentences):
        raw, out = f"{work}/s{i}-raw.wav", f"{work}/speech-{i}.wav"
        subprocess.run(["espeak-ng", "-v", VOICES[i % len(VOICES)], "-w", raw, s], check=True)
        subprocess.run(["sox", "-R", raw, "-r", str(RATE), "-c", "2", out, "norm", "-3"], check=True)
        clips.append(("speech", out))
    sf2 = "/usr/share/sounds/sf2/FluidR3_GM.sf2"
    for name, tracks in (pieces()[:2] if quick else pieces()):
        mid, raw, out = f"{work}/{name}.mid", f"{work}/{name}-raw.wav", f"{work}/music-{name}.wav"
        midi(mid, tracks)
        subprocess.run(["fluidsynth", "-ni", "-q", "-F", raw, "-r", str(RATE), sf2, mid], check=True, capture_output=True)
        subprocess.run(["sox", "-R", raw, out, "trim", "0", "4", "norm", "-3"], check=True)
        clips.append(("music", out))
    t = np.arange(4 * RATE) / RATE
    synth = {
        "clicks": np.where((np.arange(4 * RATE) % (RATE // 2)) < 48, np.exp(-(np.arange(4 * RATE) % (RATE // 2)) / 8.0), 0) * 0.8,
        "sweep": 0.4 * np.sin(2 * np.pi * (50 * t + (8000 - 50) / 8 * t * t)),
        "chord": sum(0.2 * np.sin(2 * np.pi * f * t) for f in (261.63, 329.63, 392.0, 523.25)),
        "castanets": np.random.default_rng(7).standard_normal(4 * RATE) * 0.5 * (np.exp(-((np.arange(4 * RATE) % 9600) / 300.0))),
    }
    for name, x in synth.items():
        out = f"{work}/synth-{name}.wav"
        write(out, np.vstack([x, x]))
        clips.append(("synth", out))
    return clips + recorded(work, quick)


# Recorded material that Debian packages carry (tools/bench/stretch-quality installs them):
# children's words spoken by people in several languages (ktuberling-data), and orchestral
# game music (wesnoth-1.16-music).
KTUBERLING = "/usr/share/ktuberling/sounds"
WESNOTH = "/usr/share/games/wesnoth/1.16/data/core/music"
LANGUAGES = ["en", "de", "fr", "ru", "el", "da", "ca", "uk"]
PIECES = ["battle-epic", "breaking_the_chains", "casualties_of_war", "elvish-theme", "frantic"]


def decoded(path, work, seconds=None, start=0.0):
    """A file decoded by ffmpeg to RATE Hz stereo, 16-bit (what read() takes), as float (channels x frames)."""
    out = f"{work}/decoded.wav"
    cut = (["-ss", str(start), "-t", str(seconds)] if seconds else [])
    subprocess.run(["ffmpeg", "-v", "error", "-y", *cut, "-i", path, "-ar", str(RATE), "-ac", "2", "-c:a", "pcm_s16le", out], check=True)
    return read(out)


def normalised(x, peak_db=-3.0):
    return x * (10 ** (peak_db / 20) / max(1e-9, np.max(np.abs(x))))


def recorded(work, quick):
    for d, package in ((KTUBERLING, "ktuberling-data"), (WESNOTH, "wesnoth-1.16-music")):
        if not os.path.isdir(d):
            sys.exit(f"quality.py: {d} is missing: install {package} (tools/bench/stretch-quality does)")
    clips = []
    for lang in LANGUAGES[:4] if quick else LANGUAGES:
        # Six words of one speaker, a quarter second apart: a clip of 3 to 6 s.
        words = sorted(f for f in os.listdir(f"{KTUBERLING}/{lang}") if f.endswith((".ogg", ".wav")))[:6]
        gap = np.zeros((2, RATE // 4), dtype=np.float32)
        parts = []
        for w in words:
            parts += [decoded(f"{KTUBERLING}/{lang}/{w}", work), gap]
        out = f"{work}/speech-recorded-{lang}.wav"
        write(out, normalised(np.concatenate(parts, axis=1)[:, :6 * RATE]))
        clips.append(("speech", out))
    for name in PIECES[:2] if quick else PIECES:
        out = f"{work}/music-recorded-{name}.wav"
        write(out, normalised(decoded(f"{WESNOTH}/{name}.ogg", work, seconds=4, start=20)))
        clips.append(("music", out))
    return clips


# ---- Stretchers: each returns the output (channels x frames) for ratio R = output/input.

def mixdown(algorithm, baseline=False):
    # Through 32-bit float files both ways, as the peers run in process on float32: Mixdown
    # writes its input's precision, so its output is not rounded to 16 bits either (through
    # 16-bit files, a 32767/32768 scaling left every level 0.00027 dB low, and the rounding
    # noise moved phases and pitches by 1e-4 degrees and 1e-3 cents).
    def run(x, r, work, frames):
        i, o = f"{work}/in.wav", f"{work}/out.wav"
        write_float(i, x)
        subprocess.run([ARGS.baseline if baseline else ARGS.mixdown, "stretch", i, o, "--to-frames", str(frames),
                        "--algorithm", ARGS.baseline_algorithm if baseline else algorithm,
                        "--overwrite", "--quiet"], check=True)
        return read_float(o)
    return run


def bungee(x, r, work, frames):
    from bungee_python import bungee as b
    s = b.Bungee(RATE, x.shape[0], speed=1.0)
    return s.time_stretch(np.ascontiguousarray(x.T, dtype=np.float32), r).T.astype(np.float64)


def signalsmith(x, r, work, frames):
    import python_stretch as ps
    s = ps.Signalsmith.Stretch()
    s.preset(x.shape[0], RATE)
    s.setTimeFactor(1 / r)
    # C order (channels, frames): a transposed view passed as it is reads as interleaved.
    return np.asarray(s.process(np.ascontiguousarray(x, dtype=np.float32)), dtype=np.float64)


def pedalboard_r3(x, r, work, frames):
    import pedalboard
    return np.asarray(pedalboard.time_stretch(np.ascontiguousarray(x, dtype=np.float32), RATE, stretch_factor=1 / r), dtype=np.float64)


def rubberband_cli(engine):
    def run(x, r, work, frames):
        i, o = f"{work}/in.wav", f"{work}/out.wav"
        write_float(i, x)
        subprocess.run(["rubberband", "-q", "-D", f"{frames / RATE:.9f}", engine, i, o], check=True, capture_output=True)
        return read_float(o)
    return run


ENGINES = {
    "mixdown-spectral": mixdown("spectral"), "bungee": bungee, "signalsmith": signalsmith,
    "pedalboard-r3": pedalboard_r3, "rubberband-r2": rubberband_cli("--fast"), "rubberband-r3": rubberband_cli("--fine"),
    "mixdown-wsola": mixdown("wsola"), "mixdown-splice": mixdown("splice"), "mixdown-auto": mixdown("auto"),
    # Another build's stretch (--baseline PATH; spectral, or --baseline-algorithm): a change
    # measured against what it changes.
    "mixdown-baseline": mixdown("spectral", baseline=True),
}


def fit(y, frames):
    """Trimmed or padded to `frames` (a peer that misses the length is measured on it)."""
    y = np.atleast_2d(y)
    if y.shape[1] >= frames:
        return y[:, :frames]
    return np.pad(y, ((0, 0), (0, frames - y.shape[1])))


def pesq_wb(ref, deg):
    from pesq import pesq
    a, b = resample_poly(ref.mean(axis=0), 1, 3), resample_poly(deg.mean(axis=0), 1, 3)
    return pesq(16000, a, b, "wb")


VISQOL = None


def visqol_audio(ref, deg, work):
    global VISQOL
    from visqol.api import VisqolApi
    if VISQOL is None:
        VISQOL = VisqolApi()
        VISQOL.create(mode="audio")
    a, b = f"{work}/vref.wav", f"{work}/vdeg.wav"
    write(a, ref.mean(axis=0))
    write(b, deg.mean(axis=0))
    return float(VISQOL.measure(a, b).moslqo)


def bootstrap(d, rng):
    d = np.asarray(d)
    means = [rng.choice(d, len(d)).mean() for _ in range(2000)]
    return d.mean(), np.percentile(means, 2.5), np.percentile(means, 97.5)


# ---- Single pass: signals whose right answer is known, measured on one stretch by r.

SINE_HZ = 997.0
CHORD_HZ = (261.63, 329.63, 392.0, 523.25)
# A stereo mix of partials, each with its own phase between the channels (degrees).
STEREO = ((300.0, 0.0), (470.0, 30.0), (710.0, 60.0), (1130.0, 90.0), (1900.0, 120.0), (3100.0, 150.0))
# Clicks: frames of each click's start, off any hop grid (4 s of input).
CLICKS = [int(0.25 * RATE) + k * (RATE // 2) + 37 * k for k in range(7)]
# Attacks after silence (tools/bench/stretch/probe.py's, as items): a chord starting at
# ATTACK_AT (off any hop grid) after silence, one per set of partials.
ATTACK_AT = 24_000 + 77
ATTACK_CHORDS = ((220.0, 700.0, 1500.0, 3100.0), (130.8, 523.3, 1046.5, 2093.0), (311.1, 466.2, 932.3, 1864.7),
                 (98.0, 392.0, 1174.7, 4186.0))
# Ends: a voice-like tone (harmonics, 3 % vibrato) that stops dead at END_AT, one per pitch.
END_AT = 30_000 + 41
END_F0 = (110.0, 146.8, 196.0, 261.6)


def single_signals():
    t = np.arange(4 * RATE) / RATE
    sine = 0.5 * np.sin(2 * np.pi * SINE_HZ * t)
    chord = sum(0.2 * np.sin(2 * np.pi * f * t) for f in CHORD_HZ)
    clicks = np.zeros(4 * RATE)
    for c in CLICKS:
        clicks[c:c + 48] = 0.8 * np.exp(-np.arange(48) / 8.0)
    left = sum(0.12 * np.sin(2 * np.pi * f * t) for f, _ in STEREO)
    right = sum(0.12 * np.sin(2 * np.pi * f * t + np.radians(p)) for f, p in STEREO)
    signals = {"sine": np.vstack([sine, sine]), "chord": np.vstack([chord, chord]),
               "click": np.vstack([clicks, clicks]), "stereo": np.vstack([left, right])}
    for k, hz in enumerate(ATTACK_CHORDS):
        u = np.arange(2 * RATE - ATTACK_AT) / RATE
        x = np.concatenate([np.zeros(ATTACK_AT), sum(0.3 * np.sin(2 * np.pi * f * u + f) for f in hz) / 4])
        signals[f"attack-{k}"] = np.vstack([x, x])
    for k, f0 in enumerate(END_F0):
        u = np.arange(RATE) / RATE
        phase = 2 * np.pi * np.cumsum(f0 * (1 + 0.03 * np.sin(2 * np.pi * 1.3 * u))) / RATE
        x = sum(0.05 * np.sin(h * phase + h * h) for h in range(1, int(4000 / f0)))
        x[END_AT:] = 0
        signals[f"end-{k}"] = np.vstack([x, x])
    return signals


def middle(y, seconds=1.0):
    n = y.shape[-1]
    w = int(seconds * RATE)
    return y[..., (n - w) // 2:(n - w) // 2 + w]


def peak_hz(x, near):
    """The frequency of the strongest peak within 50 cents of `near` (Hann, 8x zero padding,
    a parabola on the log magnitude)."""
    size = 8 * len(x)
    spectrum = np.abs(np.fft.rfft(x * np.hanning(len(x)), size)) + 1e-20
    lo, hi = int(near * 2 ** (-50 / 1200) * size / RATE), int(near * 2 ** (50 / 1200) * size / RATE) + 1
    k = lo + int(np.argmax(spectrum[lo:hi]))
    a, b, c = np.log(spectrum[k - 1:k + 2])
    return (k + 0.5 * (a - c) / (a - 2 * b + c)) * RATE / size


def partial_hz(x, partials, passes=6):
    """The frequencies of the partials near `partials` (Hz), fitted jointly: every partial's
    cos and sin least-squares under a Hann weight, and Gauss-Newton steps in frequency, from
    each one's strongest peak (peak_hz). peak_hz alone reads each partial through the others'
    sidelobes: an exact output of the chord (the notes synthesised at the stretched length)
    read 4e-7 to 3.8e-5 cents off, as much as the differences the cells near 1 are about;
    this fit reads it under 1e-12."""
    n = len(x)
    t = (np.arange(n) - n / 2) / RATE
    w = np.hanning(n)
    f = np.array([peak_hz(x, near) for near in partials])
    for _ in range(passes):
        basis = np.concatenate([[np.cos(2 * np.pi * g * t), np.sin(2 * np.pi * g * t)] for g in f]).T
        ab = np.linalg.lstsq(basis * w[:, None], x * w, rcond=None)[0]
        slopes = np.array([2 * np.pi * t * (ab[2 * i + 1] * basis[:, 2 * i] - ab[2 * i] * basis[:, 2 * i + 1])
                           for i in range(len(f))]).T
        step = np.linalg.lstsq(np.hstack([basis, slopes]) * w[:, None], (x - basis @ ab) * w, rcond=None)[0]
        f = f + step[len(ab):]
    return f


def amplitude(x, hz):
    """The complex amplitude of `hz` in x (Hann-weighted correlation)."""
    w = np.hanning(len(x))
    return np.sum(x * w * np.exp(-2j * np.pi * hz * np.arange(len(x)) / RATE)) / np.sum(w) * 2


def level_db(a, b):
    """The level of a against b, dB (mean squares)."""
    return float(10 * np.log10(np.mean(np.square(a)) / np.mean(np.square(b)) + 1e-30))


def log_spectral_distance(ref, deg):
    """Round-trip log-spectral distance, dB (lower is better): per 2048-frame Hann window at
    a 512-frame hop, the RMS over bins of the difference of the two power spectra in dB
    (both floored 80 dB under the reference's loudest bin), averaged over the windows where
    the reference sounds (within 60 dB of its loudest window)."""
    from scipy.signal import stft
    _, _, a = stft(ref.mean(axis=0), RATE, nperseg=2048, noverlap=1536)
    _, _, b = stft(deg.mean(axis=0), RATE, nperseg=2048, noverlap=1536)
    pa, pb = np.abs(a) ** 2, np.abs(b) ** 2
    floor = pa.max() * 1e-8
    d = 10 * np.log10(pa + floor) - 10 * np.log10(pb + floor)
    per_frame = np.sqrt(np.mean(d ** 2, axis=0))
    energy = pa.sum(axis=0)
    sounding = energy > energy.max() * 1e-6
    return float(per_frame[sounding].mean())


def single_metrics(name, x, y, r):
    """(metric, item, value) for one stretched signal; every value is an error: lower is better."""
    out = []
    if name in ("sine", "chord"):
        mono = middle(y).mean(axis=0)
        partials = (SINE_HZ,) if name == "sine" else CHORD_HZ
        for f, found in zip(partials, partial_hz(mono, partials)):
            out.append(("pitch error (cents)", f"{name}-{f}", abs(1200 * np.log2(found / f))))
    elif name == "click":
        mono = y.mean(axis=0)
        ms = RATE // 1000
        for k, c in enumerate(CLICKS):
            # Where the time map puts the click (every engine is meant to keep sync), with
            # 1 ms of grace for a window's edge.
            p = int(round(c * r))
            before = np.sum(mono[p - 21 * ms:p - ms] ** 2)
            click = np.sum(mono[p - ms:p + 20 * ms] ** 2)
            # Between -120 dB and +20 dB (a click dropped altogether counts as +20).
            value = 10 * np.log10(before / click + 1e-12) if click > 0 else 20.0
            out.append(("pre-echo (dB)", f"click-{k}", float(np.clip(value, -120.0, 20.0))))
    elif name.startswith("attack-"):
        # Where the time map puts the attack: its first 3 ms against the input's (0 dB is
        # ideal; the error is the distance from 0), and the energy 20-2 ms before it
        # against the chord's steady level (lower is better).
        mono, ms = y.mean(axis=0), RATE // 1000
        o, steady = int(round(ATTACK_AT * r)), x[0, ATTACK_AT + 24 * ms:]
        out.append(("attack: first 3 ms level error (dB)", name, abs(level_db(mono[o:o + 3 * ms], x[0, ATTACK_AT:ATTACK_AT + 3 * ms]))))
        out.append(("attack: energy 20-2 ms before (dB)", name, max(-120.0, level_db(mono[o - 20 * ms:o - 2 * ms], steady))))
    elif name.startswith("end-"):
        # Ringing after a tone that stops: 12-18 ms after where the time map puts its end,
        # against its last 10 ms (lower is better).
        mono, ms = y.mean(axis=0), RATE // 1000
        o = int(round(END_AT * r))
        out.append(("end: level 12-18 ms after (dB)", name,
                    max(-120.0, level_db(mono[o + 12 * ms:o + 18 * ms], x[0, END_AT - 10 * ms:END_AT]))))
    elif name == "stereo":
        a, b = middle(x), middle(y)
        for f, degrees in STEREO:
            la, ra = amplitude(b[0], f), amplitude(b[1], f)
            error = np.degrees(np.angle(ra / la)) - degrees
            out.append(("inter-channel phase error (deg)", f"stereo-{f}", abs((error + 180) % 360 - 180)))
            sum_in = abs(amplitude(a[0] + a[1], f))
            sum_out = abs(amplitude(b[0] + b[1], f))
            out.append(("mono sum level error (dB)", f"stereo-{f}", abs(20 * np.log10(sum_out / sum_in))))
    return out


# Part of the cache's keys: raised when an engine's rows gain a metric or are measured
# differently (3: Mixdown and the rubberband CLI through float files, and write() the inverse of read()).
METRICS_VERSION = 3
# The single-pass signals' own (4: pitch by partial_hz, not peak_hz).
SINGLE_METRICS_VERSION = 4
HIGHER_IS_BETTER = {"PESQ-WB round trip", "ViSQOL round trip"}
METRICS = ["PESQ-WB round trip", "ViSQOL round trip", "log-spectral distance, speech round trip (dB)",
           "log-spectral distance, music round trip (dB)", "log-spectral distance, synth round trip (dB)",
           "pitch error (cents)", "pre-echo (dB)", "attack: first 3 ms level error (dB)",
           "attack: energy 20-2 ms before (dB)", "end: level 12-18 ms after (dB)",
           "inter-channel phase error (deg)", "mono sum level error (dB)", "length error (frames)"]


def engine_id(e):
    """What an engine's results depend on besides the clip and the ratio: a mixdown engine's
    binary (its SHA-256), or a peer's name (its version is pinned in tools/bench/stretch-quality)."""
    if e.startswith("mixdown-"):
        binary = ARGS.baseline if e == "mixdown-baseline" else ARGS.mixdown
        name = f"{e}-{ARGS.baseline_algorithm}" if e == "mixdown-baseline" else e
        with open(binary, "rb") as f:
            return f"{name}-{hashlib.sha256(f.read()).hexdigest()[:16]}"
    return e


def back_again(e, y, r, n, work):
    """y, engine e's stretch by r of n frames, stretched back to n frames by the same engine."""
    return fit(ENGINES[e](fit(y, int(round(n * r))), 1 / r, work, n), n)


def round_trip(e, x, r, work):
    """x stretched by r with engine e, then back to its length with the same engine."""
    return back_again(e, ENGINES[e](x, r, work, int(round(x.shape[1] * r))), r, x.shape[1], work)


def run_engine(e, kind, name, x, r, work):
    """[(metric, item, value)] for one engine on one clip or signal at one ratio."""
    n = x.shape[1]
    frames = int(round(n * r))
    item = os.path.basename(name)
    y = ENGINES[e](x, r, work, frames)
    rows = [("length error (frames)", item, abs(np.atleast_2d(y).shape[1] - frames))]
    if kind == "single":
        rows += single_metrics(name, x, fit(y, frames), r)
    else:
        back = back_again(e, y, r, n, work)
        if kind == "speech":
            rows.append(("PESQ-WB round trip", item, pesq_wb(x, back)))
        rows.append(("ViSQOL round trip", item, visqol_audio(x, back, work)))
        rows.append((f"log-spectral distance, {kind} round trip (dB)", item, log_spectral_distance(x, back)))
    return rows


def task(job):
    """One clip (or single-pass signal) at one ratio through every engine: [(metric, r, engine, item, value)].
    With --cache, each engine's rows are kept under a key of the engine (a mixdown binary's hash),
    the input's samples and the ratio, so a later run recomputes only what changed."""
    kind, name, r = job
    work = tempfile.mkdtemp(dir=WORK)
    x = SIGNALS[name] if kind == "single" else read(name)
    content = hashlib.sha256(x.tobytes()).hexdigest()[:16]
    rows = []
    for e in ENGINE_LIST:
        path = None
        if ARGS.cache:
            version = SINGLE_METRICS_VERSION if kind == "single" else METRICS_VERSION
            key = f"{ENGINE_IDS[e]}-{os.path.basename(name)}-{content}-{r:g}-m{version}"
            path = os.path.join(ARGS.cache, key + ".json")
        if path and os.path.exists(path):
            with open(path) as f:
                found = json.load(f)
        else:
            try:
                found = run_engine(e, kind, name, x, r, work)
            except Exception as error:   # a peer that fails is reported, not fatal (nor cached)
                print(f"{e} failed on {os.path.basename(name)} at {r}: {error}", file=sys.stderr)
                continue
            if path:
                with open(path + ".part", "w") as f:
                    json.dump([[m, item, float(v)] for m, item, v in found], f)
                os.replace(path + ".part", path)
        rows += [(m, r, e, item, v) for m, item, v in found]
    print(f"{os.path.basename(name)} at {r} done", file=sys.stderr, flush=True)
    return rows


def main():
    global ARGS, WORK, SIGNALS, ENGINE_LIST, ENGINE_IDS
    p = argparse.ArgumentParser()
    p.add_argument("--mixdown", required=True)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--out", default=None)
    p.add_argument("--engines", default=",".join(e for e in ENGINES if e != "mixdown-baseline"))
    p.add_argument("--baseline", default=None, help="another mixdown binary, as the engine mixdown-baseline")
    p.add_argument("--baseline-algorithm", default="spectral", help="the baseline's --algorithm (default spectral)")
    p.add_argument("--ratios", default=None, help="comma-separated (default: thirteen from 0.5 to 2, five of them from 0.95 to 1.05; --quick: seven)")
    p.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--reference", default="mixdown-spectral", help="the engine every other is compared with")
    p.add_argument("--cache", default=None, help="a directory of results kept between runs (peers once; mixdown per binary)")
    ARGS = p.parse_args()
    if ARGS.ratios:
        ratios = [float(v) for v in ARGS.ratios.split(",")]
    else:
        ratios = ([0.5, 0.8, 0.99, 1.003, 1.01, 1.25, 2.0] if ARGS.quick
                  else [0.5, 0.67, 0.8, 0.9, 0.95, 0.99, 1.003, 1.01, 1.05, 1.1, 1.25, 1.5, 2.0])
    ENGINE_LIST = ARGS.engines.split(",")
    ENGINE_IDS = {e: engine_id(e) for e in ENGINE_LIST}
    if ARGS.cache:
        os.makedirs(ARGS.cache, exist_ok=True)
    WORK = ARGS.out or tempfile.mkdtemp(prefix="stretch-quality-")
    os.makedirs(WORK, exist_ok=True)
    clips = material(WORK, ARGS.quick)
    SIGNALS = single_signals()
    jobs = [(kind, path, r) for kind, path in clips for r in ratios] + [("single", s, r) for s in SIGNALS for r in ratios]
    scores = {}   # (metric, ratio, engine) -> {item: score}
    # Forked workers (each with its own ViSQOL): the clips are independent.
    with multiprocessing.get_context("fork").Pool(ARGS.jobs) as pool:
        for rows in pool.imap_unordered(task, jobs):
            for metric, r, e, item, v in rows:
                scores.setdefault((metric, r, e), {})[item] = v
    rng = np.random.default_rng(1)
    print("| metric | ratio | " + " | ".join(ENGINE_LIST) + " |")
    print("|---|---|" + "---|" * len(ENGINE_LIST))
    for metric in METRICS:
        for r in ratios:
            row = []
            for e in ENGINE_LIST:
                s = scores.get((metric, r, e))
                if not s:
                    row.append("-")
                    continue
                cell = f"{np.mean(list(s.values())):.2f}"
                base = scores.get((metric, r, ARGS.reference))
                items = sorted(set(s) & set(base or {}))
                if e != ARGS.reference and len(items) > 1 and metric != "length error (frames)":
                    d = np.array([base[i] - s[i] for i in items])
                    m, lo, hi = bootstrap(d if metric in HIGHER_IS_BETTER else -d, rng)
                    cell += f" ({m:+.2f} [{lo:+.2f}, {hi:+.2f}])"
                row.append(cell)
            print(f"| {metric} | {r} | " + " | ".join(row) + " |")
    print(f"\n(Each other engine's cell: its mean, then how much better {ARGS.reference} is, per item, paired, with a "
          f"bootstrap 95 % interval: above 0 means Mixdown is better, for scores (higher is better) and errors "
          f"(lower is better) alike. Round trip: {sum(k == 'speech' for k, _ in clips)} speech, "
          f"{sum(k == 'music' for k, _ in clips)} music, {sum(k == 'synth' for k, _ in clips)} synthesised clips. "
          f"Single pass: a {SINE_HZ:g} Hz sine and a 4-note chord (pitch), {len(CLICKS)} clicks (energy from 21 to 1 ms "
          f"before where the time map puts each, against the 21 ms from there), {len(STEREO)} partials of a stereo mix with their own "
          f"inter-channel phases (phase, and the level of the channels' sum). Work in {WORK}.)")


if __name__ == "__main__":
    main()
