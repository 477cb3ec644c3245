#!/usr/bin/env python3
"""Renders every editor's timeline under the given directories (OTIO, CMX 3600 EDL, FCP 7
XML, AAF: read by opentimelineio and its adapters) with media made for each clip, and checks
every unmodified sample.

Usage: sweep.py MIXDOWN WORK DIR... [--json] [--all-tracks-as-audio] [--channels N] [--aaf-simplify-false]

--channels N gives every stand-in N channels whose values differ (channel c of frame n holds
(c + 1) x 2048 + ((n + seed) mod 2048), 16-bit), renders in float, and checks the mix of all
tracks at once: every output channel of every frame that plain clips alone cover must be the
sum the editor's routing gives (below), so a channel played twice, swapped or summed whole on
tracks that each hold one channel shows. The routing expected (docs/otio.md): a Final Cut 7
track of an exploded pair plays the whole file, a clip's sourcetrack.trackindex its channel on
the track's outputchannelindex; a Resolve clip's single Source Channel ID; a track named A<n>
(CMX 3600) channel n; tracks that play one multi-channel file in sync and overlapping with
nothing said: their channels in track order; else the whole file (equal channel counts one to
one, mono to every channel, N to mono their mean). A routed channel lands at its own place (a
mono file's on every channel), folded odd left, even right past the output's channels.
--aaf-simplify-false converts AAFs with simplify=False (the master clip's channels kept).

--all-tracks-as-audio reads every track as audio (most sample EDLs and XMLs are picture
alone; their cuts, dissolves and record windows are placed as an audio track's would be).

For each timeline: each clip's media is replaced by a 48 kHz mono 16-bit file whose frame n
holds ((n + seed) mod 65536) - 32768 (a seed per file), long enough for every clip that cuts
it; the timeline is written as OTIO and rendered by `MIXDOWN render T.otio OUT.wav --format
s16`. Then, from OTIO's own arithmetic (each clip's range in its track, its source range,
its media's available range), every output frame that exactly one unmodified clip covers
(no effect, no transition, enabled, on a top-level audio track without a source range of
its own, one frame in from each edge) must hold its media's frame. A timeline Mixdown
refuses is listed with its message. Prints the counts; exit status 1 when a rendered
sample is wrong (a refusal is not a failure: it is reported).
"""
import json
import os
import subprocess
import sys
import wave
from fractions import Fraction

import numpy as np
import opentimelineio as otio

RATE = 48000


def exact_rate(r):
    """OTIO's Double rate as Mixdown reads it: whole, or k x 1000/1001."""
    if r == round(r):
        return Fraction(int(r))
    k = round(r * 1.001)
    return Fraction(k * 1000, 1001)


def seconds(t):
    return Fraction(round(t.value * 1000), 1000) / exact_rate(t.rate)


def frame(s):
    """Seconds to a frame at RATE, nearest, halves away from zero (Mixdown's rule)."""
    x = s * RATE
    return int(x + Fraction(1, 2)) if x >= 0 else -int(-x + Fraction(1, 2))


def timelines(path):
    ext = os.path.splitext(path)[1].lower()
    kwargs = {"rate": 24} if ext == ".edl" else {}
    if ext == ".aaf" and "--aaf-simplify-false" in sys.argv:
        kwargs["simplify"] = False
    read = otio.adapters.read_from_file(path, **kwargs)
    if isinstance(read, otio.schema.Timeline):
        return [read]
    return [t for t in read.find_children(descended_from_type=otio.schema.Timeline)] if hasattr(read, "find_children") else []


CHANNELS = int(sys.argv[sys.argv.index("--channels") + 1]) if "--channels" in sys.argv else 1


def media_value(n, seed, c):
    """Frame n of a stand-in's channel c (16-bit integers)."""
    if CHANNELS == 1:
        return ((n + seed) % 65536) - 32768
    return (c + 1) * 2048 + ((n + seed) % 2048)


def write_media(path, frames, seed):
    with wave.open(path, "wb") as w:
        w.setnchannels(CHANNELS)
        w.setsampwidth(2)
        w.setframerate(RATE)
        # In slices: four hours of stand-in in one int64 array would be 11 GB.
        for lo in range(0, frames, 1 << 22):
            n = np.arange(lo, min(frames, lo + (1 << 22)), dtype=np.int64)
            w.writeframes(np.stack([media_value(n, seed, c) for c in range(CHANNELS)], axis=1).astype("<i2").tobytes())


def sweep(mixdown, work, path, index):
    report = {"file": path, "timelines": []}
    try:
        found = timelines(path)
    except Exception as e:  # the adapter cannot read it: not Mixdown's concern
        report["adapter_error"] = f"{type(e).__name__}: {str(e)[:120]}"
        return report
    for ti, tl in enumerate(found):
        name = f"{index:03d}-{ti}"
        print(f"{name} {path}", file=sys.stderr, flush=True)
        entry = {"name": name, "clips_checked": 0, "clips_exact": 0, "wrong": []}
        report["timelines"].append(entry)
        try:
            check(mixdown, work, tl, name, entry)
        except ValueError as e:
            entry["skipped"] = str(e)
    return report


def check(mixdown, work, tl, name, entry):
    if True:
        # Media: one file per reference (or per clip name), long enough for each use.
        media = {}
        clips = list(tl.find_clips())
        for c in clips:
            ref = c.media_reference
            if isinstance(ref, otio.schema.GeneratorReference):
                continue
            key = getattr(ref, "target_url", None) or f"name:{c.name}"
            avail = getattr(ref, "available_range", None)
            try:
                sr = c.source_range or c.available_range()
            except Exception:
                continue
            m = media.setdefault(key, {"k": len(media), "avail": avail, "uses": []})
            m["uses"].append((seconds(sr.start_time), seconds(sr.start_time) + seconds(sr.duration), sr.start_time.rate))
        files = {}
        for key, m in media.items():
            # The media starts at its available range, else at the earliest source in-point of
            # its clips (an EDL's source timecodes): then it is given that available range.
            avail = m["avail"]
            origin = seconds(avail.start_time) if avail else min(u[0] for u in m["uses"])
            # Room for dissolves (media before a clip's in-point and after its out-point).
            if not avail:
                origin -= min(origin, Fraction(10))
            length = max(u[1] for u in m["uses"]) - origin + 10
            if avail:
                length = max(length, seconds(avail.duration))
            if length > 4 * 3600:
                raise ValueError(f"clip media spans {float(length):.0f} s")
            f = f"{work}/{name}-m{m['k']}.wav"
            seed = (m["k"] * 7919) % 65536
            write_media(f, frame(length) + RATE, seed)
            if not avail:
                r = m["uses"][0][2]
                avail = otio.opentime.TimeRange(otio.opentime.RationalTime(float(origin * exact_rate(r)), r),
                                                otio.opentime.RationalTime(float((length + 1) * exact_rate(r)), r))
            files[key] = (f, origin, seed, avail)
        for c in clips:
            ref = c.media_reference
            key = getattr(ref, "target_url", None) or f"name:{c.name}"
            if key not in files or isinstance(ref, otio.schema.GeneratorReference):
                continue
            c.media_reference = otio.schema.ExternalReference(target_url=files[key][0], available_range=files[key][3])
        t_path = f"{work}/{name}.otio"
        if "--all-tracks-as-audio" in sys.argv:
            for track in tl.find_children(descended_from_type=otio.schema.Track):
                track.kind = otio.schema.TrackKind.Audio
        otio.adapters.write_to_file(tl, t_path)
        out = f"{work}/{name}.wav"
        fmt = "f32" if CHANNELS > 1 else "s16"
        r = subprocess.run([mixdown, "render", t_path, out, "--format", fmt, "--overwrite", "--quiet"], capture_output=True, text=True)
        if r.returncode != 0:
            msg = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"
            entry["refused"] = msg.split(": ", 2)[-1] if msg.startswith("mixdown: error") else msg
            return
        # Segments that play one channel of their file (docs/otio.md, "Channels").
        explained = subprocess.run([mixdown, "render", t_path, "--explain"], capture_output=True, text=True).stdout
        entry["routed_segments"] = explained.count(" of the file")
        entry["segments"] = explained.count("  <- ")
        if CHANNELS > 1:
            check_mix(tl, out, files, entry)
            return
        with wave.open(out) as w:
            ch = w.getnchannels()
            rendered = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2").astype(np.int64)[::ch]
        # Which output frames each item covers; checked frames are those of one plain clip.
        cover = np.zeros(len(rendered) + 1, dtype=np.int64)
        plain = []
        # Each track's place: a CMX 3600 record window, OTIO's own window, or time 0.
        places = track_offsets(tl, len(rendered))
        for ti, track in enumerate(tl.audio_tracks()):
            offset, window = places[ti]
            top_level_plain = track.enabled
            children = list(track)
            for i, item in enumerate(children):
                if isinstance(item, otio.schema.Transition):
                    continue
                r_in = item.range_in_parent()
                a = frame(seconds(r_in.start_time) + offset)
                b = frame(seconds(r_in.start_time) + seconds(r_in.duration) + offset)
                # A transition widens the items beside it: mark its span covered twice.
                lo, hi = a, b
                if i > 0 and isinstance(children[i - 1], otio.schema.Transition):
                    lo = a - frame(seconds(children[i - 1].in_offset)) - 1
                if i + 1 < len(children) and isinstance(children[i + 1], otio.schema.Transition):
                    hi = b + frame(seconds(children[i + 1].out_offset)) + 1
                if isinstance(item, otio.schema.Gap):
                    continue
                lo, hi = max(lo, window[0]), min(hi, window[1], len(rendered))
                if lo < hi and track.enabled:
                    cover[lo:hi] += 1   # a disabled track plays nothing
                if a < window[0] or b > window[1]:
                    continue   # cut by the window: not checked
                if not track.enabled:
                    continue
                if isinstance(item, otio.schema.Clip) and top_level_plain and item.enabled and not item.effects \
                        and (i == 0 or not isinstance(children[i - 1], otio.schema.Transition)) \
                        and (i + 1 == len(children) or not isinstance(children[i + 1], otio.schema.Transition)):
                    ref = item.media_reference
                    key = ref.target_url if isinstance(ref, otio.schema.ExternalReference) else None
                    hit = [v for v in files.values() if v[0] == key]
                    if hit:
                        plain.append((item, a, b, hit[0]))
                if isinstance(item, otio.schema.Stack):
                    cover[lo:hi] += 1   # nested: never checked
        for item, a, b, (f, origin, seed, _) in plain:
            sr = item.trimmed_range()
            src0 = frame(seconds(sr.start_time) - origin)
            ks = np.arange(max(a + 1, 0), min(b - 1, len(rendered)))
            ks = ks[cover[ks] == 1]
            if len(ks) == 0:
                continue
            want = (((src0 + (ks - a)) + seed) % 65536) - 32768
            entry["clips_checked"] += 1
            bad = int((rendered[ks] != want).sum())
            if bad == 0:
                entry["clips_exact"] += 1
            else:
                entry["wrong"].append(f"clip '{item.name}': {bad} of {len(ks)} frames wrong")


def read_float_wav(path):
    """A float WAV (WAVE_FORMAT_EXTENSIBLE or IEEE float) as (frames, channels) float64."""
    data = open(path, "rb").read()
    pos, fmt, body = 12, None, None
    while pos + 8 <= len(data):
        cid, size = data[pos:pos + 4], int.from_bytes(data[pos + 4:pos + 8], "little")
        if cid == b"fmt ":
            fmt = data[pos + 8:pos + 8 + size]
        elif cid == b"data":
            body = data[pos + 8:pos + 8 + size]
            break
        pos += 8 + size + (size & 1)
    channels = int.from_bytes(fmt[2:4], "little")
    return np.frombuffer(body, dtype="<f4").reshape(-1, channels)


def track_offsets(tl, length):
    """Each top-level audio track's output offset and window (as the mono check computes),
    in the order of tl.audio_tracks() (its wrappers are new objects at each call)."""
    tracks = list(tl.audio_tracks())
    records = {}
    for i, track in enumerate(tracks):
        sr = track.source_range
        if sr is not None and seconds(sr.start_time) < 0 and seconds(sr.duration) == sum(
                (seconds(c.duration()) for c in track if not isinstance(c, otio.schema.Transition)), Fraction(0)):
            records[i] = (-seconds(sr.start_time), exact_rate(sr.start_time.rate))
    shift = Fraction(0)
    if records:
        first, r = min(records.values())
        nominal = round(r)
        hour = Fraction(int(first * r) // (3600 * nominal) * 3600 * nominal) / r
        shift = hour if first - hour <= 60 else first
    out = []
    for i, track in enumerate(tracks):
        window = (0, length)
        if i in records:
            offset = records[i][0] - shift
        elif track.source_range is not None:
            offset = -seconds(track.source_range.start_time)
            window = (0, frame(seconds(track.source_range.duration)))
        else:
            offset = Fraction(0)
        out.append((offset, window))
    return out


def known_channel(track, clip):
    """The editor's routing of a clip: ("whole",), ("channel", source, output or None), or None."""
    tx = track.metadata.get("fcp_xml") or {}
    if int(tx.get("@totalExplodedTrackCount", "1") or 1) > 1:
        return ("whole",)
    cx = clip.metadata.get("fcp_xml") or {}
    st = cx.get("sourcetrack") if isinstance(cx, dict) else None
    if isinstance(st, dict) and st.get("mediatype", "audio") == "audio" and st.get("trackindex") is not None:
        out = tx.get("outputchannelindex")
        return ("channel", int(st["trackindex"]) - 1, int(out) - 1 if out is not None else None)
    rx = clip.metadata.get("Resolve_OTIO") or {}
    chs = rx.get("Channels") if isinstance(rx, dict) else None
    if chs:
        ids = [int(c["Source Channel ID"]) for c in chs]
        if len(ids) == 1:
            return ("channel", ids[0], None)
        return ("whole",)
    name = track.name or ""
    if len(name) >= 2 and name[0] == "A" and name[1:].isdigit():
        return ("channel", int(name[1:]) - 1, None)
    return None


def check_mix(tl, out, files, entry):
    """The mix of all tracks, every output channel, against the editor's routing."""
    x = read_float_wav(out)
    length, outs = x.shape
    want = np.zeros((length, outs), dtype=np.float32)
    unknown = np.zeros(length, dtype=bool)
    places = track_offsets(tl, length)
    plays = []   # (track index, clip, a, b, file entry, routing)
    for ti, track in enumerate(tl.audio_tracks()):
        if not track.enabled:
            continue
        offset, window = places[ti]
        children = list(track)
        for i, item in enumerate(children):
            if isinstance(item, (otio.schema.Transition, otio.schema.Gap)):
                continue
            r_in = item.range_in_parent()
            a = frame(seconds(r_in.start_time) + offset)
            b = frame(seconds(r_in.start_time) + seconds(r_in.duration) + offset)
            lo, hi = max(a - 1, window[0], 0), min(b + 1, window[1], length)
            ref = getattr(item, "media_reference", None)
            key = ref.target_url if isinstance(ref, otio.schema.ExternalReference) else None
            hit = [v for v in files.values() if v[0] == key]
            beside_transition = (i > 0 and isinstance(children[i - 1], otio.schema.Transition)) or \
                (i + 1 < len(children) and isinstance(children[i + 1], otio.schema.Transition))
            plain = isinstance(item, otio.schema.Clip) and item.enabled and not item.effects and hit \
                and not beside_transition and a >= window[0] and b <= window[1]
            if not plain:
                if lo < hi and (not isinstance(item, otio.schema.Clip) or item.enabled):
                    unknown[max(lo - 1, 0):hi + 1] = True
                continue
            # One frame in from each edge, as the mono check.
            unknown[max(a - 1, 0):a + 1] = True
            unknown[max(b - 1, 0):b + 1] = True
            plays.append((ti, item, a, b, hit[0], known_channel(track, item)))
    # Tracks in sync on one file with nothing said: their channels in track order.
    rank = {}
    for p in plays:
        if p[5] is not None:
            continue
        ti, item, a, b, f, _ = p
        sync = a - frame(seconds(item.trimmed_range().start_time) - f[1])
        peers = sorted({q[0] for q in plays if q[5] is None and q[4][0] == f[0] and q[2] < b and a < q[3]
                        and q[2] - frame(seconds(q[1].trimmed_range().start_time) - q[4][1]) == sync})
        if len(peers) >= 2:
            rank[id(item)] = peers.index(ti)
    for ti, item, a, b, (f, origin, seed, _), routing in plays:
        src0 = frame(seconds(item.trimmed_range().start_time) - origin)
        if routing is None and id(item) in rank:
            routing = ("channel", rank[id(item)], None)
        # In slices of 4M frames: an hour of stereo stand-in is 2.6 GB as one array.
        for lo in range(max(a, 0), min(b, length), 1 << 22):
            k = np.arange(lo, min(lo + (1 << 22), b, length))
            n = src0 + (k - a)

            def chan(c):
                return media_value(n, seed, c).astype(np.float32) / np.float32(32768)
            if routing is None or routing[0] == "whole":
                if CHANNELS == outs:
                    for c in range(outs):
                        want[k, c] += chan(c)
                elif outs == 1:
                    want[k, 0] += sum(chan(c) for c in range(CHANNELS)) / np.float32(CHANNELS)
                else:
                    unknown[k] = True   # Mixdown refuses N to M; the render would not exist
                continue
            _, s, o = routing
            if s >= CHANNELS:
                unknown[k] = True
                continue
            dest = o if o is not None else s
            if outs == 1:
                want[k, 0] += chan(s) * np.float32(1.0 if o is not None else 1.0 / CHANNELS)
            else:
                want[k, dest if dest < outs else dest % 2] += chan(s)
    entry["clips_checked"] += len(plays)
    checked = ~unknown & (np.abs(want).sum(axis=1) > 0)
    bad_rows = np.zeros(length, dtype=bool)
    for lo in range(0, length, 1 << 22):
        hi = min(lo + (1 << 22), length)
        bad_rows[lo:hi] = checked[lo:hi] & (np.abs(x[lo:hi] - want[lo:hi]) > 1e-6).any(axis=1)
    frames_bad = np.nonzero(bad_rows)[0].tolist()
    wrong_clips = 0
    for ti, item, a, b, *_ in plays:
        nb = int(bad_rows[max(a, 0):max(0, min(b, length))].sum())
        if nb:
            wrong_clips += 1
            some = (np.nonzero(bad_rows[max(a, 0):min(b, length)])[0][:64] + max(a, 0)).tolist()
            ratio = np.median(x[some].sum(axis=1) / np.maximum(1e-9, want[some].sum(axis=1)))
            entry["wrong"].append(f"clip '{item.name}' on track {ti + 1}: {nb} frames wrong (output/expected {ratio:.2f})")
    entry["clips_exact"] += len(plays) - wrong_clips
    entry["frames_checked"] = int(checked.sum())


def main():
    args = [a for i, a in enumerate(sys.argv[1:], 1) if not a.startswith("--") and sys.argv[i - 1] != "--channels"]
    mixdown, work, dirs = args[0], args[1], args[2:]
    os.makedirs(work, exist_ok=True)
    paths = sorted(os.path.join(d, f) for top in dirs for d, _, fs in os.walk(top) for f in fs
                   if f.lower().endswith((".otio", ".edl", ".xml", ".aaf")))
    reports = [sweep(mixdown, work, p, i) for i, p in enumerate(paths)]
    if "--json" in sys.argv:
        print(json.dumps(reports, indent=1))
    tried = [t for r in reports for t in r["timelines"] if "skipped" not in t]
    skipped = [t for r in reports for t in r["timelines"] if "skipped" in t]
    rendered = [t for t in tried if "refused" not in t]
    refusals = {}
    for r in reports:
        for t in r["timelines"]:
            if "refused" in t:
                refusals.setdefault(t["refused"], []).append(os.path.basename(r["file"]))
    wrong = [(r["file"], t) for r in reports for t in r["timelines"] if t.get("wrong")]
    print(f"files {len(paths)}, the adapters could not read {sum('adapter_error' in r for r in reports)}")
    print(f"timelines skipped (media over 4 hours) {len(skipped)}")
    print(f"timelines tried {len(tried)}, rendered {len(rendered)}, refused {len(tried) - len(rendered)}")
    print(f"clips checked {sum(t['clips_checked'] for t in rendered)}, exact {sum(t['clips_exact'] for t in rendered)}")
    routed = [(os.path.basename(r["file"]), t) for r in reports for t in r["timelines"] if t.get("routed_segments")]
    names = ", ".join("%s (%d)" % (f, t["routed_segments"]) for f, t in routed)
    print(f"segments playing one channel of their file {sum(t['routed_segments'] for _, t in routed)} of "
          f"{sum(t.get('segments', 0) for t in rendered)}, in {len(routed)} timelines: {names}")
    for msg, files in sorted(refusals.items(), key=lambda x: -len(x[1])):
        print(f"  refused x{len(files)}: {msg}  ({', '.join(files[:4])}{'...' if len(files) > 4 else ''})")
    for f, t in wrong:
        print(f"  WRONG {os.path.basename(f)} {t['name']}: {'; '.join(t['wrong'][:3])}")
    for r in reports:
        if "adapter_error" in r:
            print(f"  adapter: {os.path.basename(r['file'])}: {r['adapter_error']}")
    sys.exit(1 if wrong else 0)


if __name__ == "__main__":
    main()
