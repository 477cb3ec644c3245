#!/usr/bin/env python3
"""Converts a timeline Mixdown wrote with --otio-rate to FCP 7 XML with the real adapter
(otio-fcp-adapter, as Premiere and Resolve import it), reads the XML back as an editor would,
and prints one JSON object: per audio track, each clip's record in-point (its place on the
sequence), duration and source in-point, in whole frames at the sequence's rate.

Usage: fcp_check.py T.otio OUT.xml
"""
import json
import sys

import opentimelineio as otio

timeline = otio.adapters.read_from_file(sys.argv[1])
otio.adapters.write_to_file(timeline, sys.argv[2], adapter_name="fcp_xml")
back = otio.adapters.read_from_file(sys.argv[2], adapter_name="fcp_xml")
tracks = []
for track in back.tracks:
    if track.kind != otio.schema.TrackKind.Audio:
        continue
    clips = []
    for clip in track.find_clips():
        placed = track.range_of_child(clip)
        clips.append({"name": clip.name,
                      "record_in": round(placed.start_time.value), "duration": round(clip.source_range.duration.value),
                      "source_in": round(clip.source_range.start_time.value), "rate": placed.start_time.rate})
    tracks.append(clips)
print(json.dumps({"tracks": tracks}))
