#!/usr/bin/env python3
"""Reads a timeline Mixdown wrote (mixdown render DOC --otio T.otio) with the real
OpenTimelineIO client and prints what it finds, one JSON object: per audio track, each
clip's name, target_url, source_range (as [value, rate]: a value or rate that is not whole
makes it fail, since Mixdown writes them exact), its place in the track
(trimmed_range_in_parent, in seconds: OTIO sums the items before it in Doubles) and its
LinearTimeWarp's time_scalar.

Usage: read_back.py T.otio [REWRITTEN.otio]
With a second path, also writes the timeline again through otio.adapters.write_to_file
(the client's own serialiser), which Mixdown must render to the same frames.
"""
import json
import sys

import opentimelineio as otio


def exact(t):
    if t.value != int(t.value) or t.rate != int(t.rate):
        raise SystemExit(f"not exact: {t}")
    return [int(t.value), int(t.rate)]


timeline = otio.adapters.read_from_file(sys.argv[1])
tracks = []
for track in timeline.tracks:
    if track.kind != otio.schema.TrackKind.Audio:
        continue
    clips = []
    for item in track:
        if not isinstance(item, otio.schema.Clip):
            continue
        placed = item.trimmed_range_in_parent()
        warps = [e.time_scalar for e in item.effects if isinstance(e, otio.schema.LinearTimeWarp)]
        clips.append({
            "name": item.name,
            "target_url": item.media_reference.target_url,
            "source_start": exact(item.source_range.start_time),
            "duration": exact(item.source_range.duration),
            # Sums of the items before it, in OTIO's Double arithmetic: seconds, not exact.
            "at_seconds": placed.start_time.to_seconds(),
            "placed_seconds": placed.duration.to_seconds(),
            "time_scalar": warps[0] if warps else None,
        })
    tracks.append({"name": track.name, "clips": clips, "seconds": track.duration().to_seconds()})
print(json.dumps({"tracks": tracks}))
if len(sys.argv) > 2:
    otio.adapters.write_to_file(timeline, sys.argv[2])
