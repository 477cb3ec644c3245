"""The examples of python/README.md and of the repository's README.md, run as written:
each fenced python block in a fresh namespace (so each has its own imports), in order, in
a directory holding the files they name, made here."""
import json
import os
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import mixdown
from conftest import noise_bursts, write_wav

ROOT = Path(__file__).resolve().parents[2]


def python_blocks(markdown: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", markdown.read_text(), flags=re.S | re.M)


def make_event(directory: Path) -> None:
    """camera.wav (the reference), recorder.wav and lav.wav: the same event on clocks 200
    and -150 ppm off, starting 3 s and 1 s into it; camera.mov holds the camera's sound of
    the recorder's take."""
    camera = write_wav(directory / "camera.wav", noise_bursts(150, 48000, 1, seed=7), 48000)
    for name, ratio, start in (("recorder", "1.0002", 3), ("lav", "0.99985", 1)):
        mixdown.stretch(camera, directory / f"{name}.long.wav", ratio=ratio, algorithm="varispeed")
        mixdown.export(directory / f"{name}.long.wav", directory / f"{name}.wav", start=start, duration=120)
        (directory / f"{name}.long.wav").unlink()
    # The camera's file of the same take: 120 s of its clock, 1.2 ms longer than the recorder's.
    mixdown.export(camera, directory / "camera.mov", start=3, duration="120.0012")


def otio_timeline(media: str, seconds: int) -> dict:
    def rt(value: float) -> dict:
        return {"OTIO_SCHEMA": "RationalTime.1", "rate": 24.0, "value": value}
    clip = {"OTIO_SCHEMA": "Clip.2", "name": "voice", "active_media_reference_key": "DEFAULT_MEDIA",
            "source_range": {"OTIO_SCHEMA": "TimeRange.1", "start_time": rt(0), "duration": rt(24.0 * seconds)},
            "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": media}}}
    return {"OTIO_SCHEMA": "Timeline.1", "name": "cut", "global_start_time": None,
            "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
                {"OTIO_SCHEMA": "Track.1", "name": "A1", "kind": "Audio", "children": [clip]}]}}


def run_blocks(blocks: list[str], directory: Path, monkeypatch) -> None:
    monkeypatch.chdir(directory)
    for number, code in enumerate(blocks, 1):
        try:
            exec(compile(code, f"<example {number}>", "exec"), {"__name__": f"example{number}"})
        except Exception as error:  # pragma: no cover - the message is the test's report
            pytest.fail(f"example {number} failed: {type(error).__name__}: {error}\n{code}")


def test_python_readme_examples_run_as_written(tmp_path, monkeypatch):
    blocks = python_blocks(ROOT / "python" / "README.md")
    assert len(blocks) == 5
    write_wav(tmp_path / "interview.wav", noise_bursts(10, 48000, 2, seed=1), 48000)
    make_event(tmp_path)
    write_wav(tmp_path / "show.wav", 0.5 * noise_bursts(100, 48000, 2, seed=2), 48000)
    write_wav(tmp_path / "voice.wav", noise_bursts(20, 48000, 1, seed=3), 48000)
    mixdown.export(write_wav(tmp_path / "m.wav", 0.3 * noise_bursts(20, 48000, 2, seed=4), 48000), tmp_path / "music.flac")
    (tmp_path / "timeline.otio").write_text(json.dumps(otio_timeline("voice.wav", 10)))
    (tmp_path / "mix.json").write_text(json.dumps({
        "version": 1, "tracks": [{"name": "voice", "segments": [{"file": "voice.wav", "at": "0"}]}]}))
    (tmp_path / "footage").mkdir()
    write_wav(tmp_path / "footage" / "take.wav", noise_bursts(10, 48000, 2, seed=5), 48000)
    (tmp_path / "cut.otio").write_text(json.dumps(otio_timeline("file:///Volumes/Media/day1/take.wav", 4)))
    (tmp_path / "jobs.jsonl").write_text(
        '{"args": ["export", "voice.wav", "voice-cut.wav", "--duration", "5"], "id": "cut"}\n')
    run_blocks(blocks, tmp_path, monkeypatch)
    # What the examples wrote, at the lengths they promise.
    fixed = mixdown.info(tmp_path / "fixed.wav")
    assert fixed.duration == Fraction(120)
    assert mixdown.info(tmp_path / "clip.m4a").duration == 30
    assert mixdown.info(tmp_path / "show.opus").sample_rate == 48000
    assert mixdown.info(tmp_path / "mix.wav").frames == mixdown.info(tmp_path / "music.flac").frames + 120000
    assert mixdown.info(tmp_path / "timeline.wav").duration == 10
    for name in ("recorder.wav.fixed.wav", "lav.wav.fixed.wav", "synced/recorder.wav", "synced/lav.wav",
                 "event.json", "event.otio"):
        assert (tmp_path / name).exists(), name
    assert mixdown.info(tmp_path / "cut.wav").duration == 4
    assert mixdown.info(tmp_path / "voice-cut.wav").duration == 5


def test_readme_python_example_runs_as_written(tmp_path, monkeypatch):
    readme = (ROOT / "README.md").read_text()
    blocks = python_blocks(ROOT / "README.md")
    assert len(blocks) == 1 and "## Five examples" in readme
    make_event(tmp_path)
    (tmp_path / "mix.json").write_text(json.dumps({
        "version": 1, "tracks": [{"name": "cam", "segments": [{"file": "camera.wav", "at": "0"}]}]}))
    run_blocks(blocks, tmp_path, monkeypatch)
    assert (tmp_path / "fixed.wav").exists()
    assert os.path.getsize(tmp_path / "fixed.wav") > 0
    assert np.isfinite(mixdown.info(tmp_path / "fixed.wav").frames)
