"""What the command does, through the library: sync of many recordings with its outputs, an
editor's timeline with moved media, batch manifests, and the plan of a stretch said first."""
import json
import warnings
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import mixdown
from conftest import noise_bursts, read_wav, write_wav


def recording_of(reference: Path, out: Path, ratio: str, start: float, seconds: float) -> Path:
    """`reference` heard on a clock `ratio` slow, from `start` s into it."""
    long = out.with_suffix(".long.wav")
    mixdown.stretch(reference, long, ratio=ratio, algorithm="varispeed")
    mixdown.export(long, out, start=Fraction(start), duration=Fraction(seconds))
    long.unlink()
    return out


def test_sync_of_many_recordings_writes_stems_a_document_and_a_timeline(tmp_path):
    ref = write_wav(tmp_path / "ref.wav", noise_bursts(120, 48000, 1, seed=7), 48000)
    a = recording_of(ref, tmp_path / "a.wav", "1.0002", 3, 100)
    b = recording_of(ref, tmp_path / "b.wav", "0.99985", 10, 90)
    report = []
    progress = []
    estimates = mixdown.sync(ref, a, b, stems=tmp_path / "stems", doc=tmp_path / "event.json",
                             otio=tmp_path / "event.otio", report=report, progress=progress.append)
    assert [Path(e.recording).name for e in estimates] == ["a.wav", "b.wav"]
    assert all(e.placed and e.error is None and e.confidence >= 0.5 for e in estimates)
    # reference time = offset + ratio * recording time: a starts 3 s into its stretched copy.
    assert abs(estimates[0].ppm - (1 / 1.0002 - 1) * 1e6) < 2 and abs(float(estimates[0].offset) - 3 / 1.0002) < 1e-3
    assert abs(estimates[1].ppm - (1 / 0.99985 - 1) * 1e6) < 2 and abs(float(estimates[1].offset) - 10 / 0.99985) < 1e-3
    ref_frames = mixdown.info(ref).frames
    assert report[0].stem_frames == 2 * ref_frames
    for name in ("a.wav", "b.wav"):
        assert mixdown.info(tmp_path / "stems" / name).frames == ref_frames
    assert json.loads((tmp_path / "event.json").read_text())["version"] == 1
    assert json.loads((tmp_path / "event.otio").read_text())["OTIO_SCHEMA"].startswith("Timeline")
    assert progress and progress == sorted(progress)
    # The outputs exist now: a second run needs overwrite=True.
    with pytest.raises(mixdown.Error, match="overwrite=True"):
        mixdown.sync(ref, a, b, doc=tmp_path / "event.json")


def test_sync_keep_going_returns_the_recording_it_could_not_place(tmp_path):
    ref = write_wav(tmp_path / "ref.wav", noise_bursts(90, 48000, 1, seed=7), 48000)
    a = recording_of(ref, tmp_path / "a.wav", "1.0001", 2, 70)
    other = write_wav(tmp_path / "other.wav", noise_bursts(60, 48000, 1, seed=9), 48000)
    with pytest.raises(mixdown.Error) as caught:
        mixdown.sync(ref, a, other, doc=tmp_path / "e.json")
    assert caught.value.status == 11 and "other.wav" in str(caught.value)
    assert not (tmp_path / "e.json").exists()
    placed, lost = mixdown.sync(ref, a, other, doc=tmp_path / "e.json", keep_going=True)
    assert placed.placed and not lost.placed and lost.offset is None and "other.wav" in lost.recording
    assert lost.error and (tmp_path / "e.json").exists()


def test_sync_devices_share_a_clock(tmp_path):
    ref = write_wav(tmp_path / "ref.wav", noise_bursts(120, 48000, 1, seed=7), 48000)
    one = recording_of(ref, tmp_path / "one.wav", "1.0002", 5, 40)
    two = recording_of(ref, tmp_path / "two.wav", "1.0002", 60, 40)
    estimates = mixdown.sync(ref, devices={"recorder": [one, two]})
    assert [e.device for e in estimates] == ["recorder", "recorder"]
    assert abs(estimates[0].ppm - estimates[1].ppm) < 1e-9
    with pytest.raises(TypeError, match="a list of clips"):
        mixdown.sync(ref, devices={"recorder": str(one)})


def timeline(url: str) -> dict:
    def rt(value: float) -> dict:
        return {"OTIO_SCHEMA": "RationalTime.1", "rate": 24.0, "value": value}
    clip = {"OTIO_SCHEMA": "Clip.2", "name": "interview", "active_media_reference_key": "DEFAULT_MEDIA",
            "source_range": {"OTIO_SCHEMA": "TimeRange.1", "start_time": rt(24), "duration": rt(96)},
            "media_references": {"DEFAULT_MEDIA": {"OTIO_SCHEMA": "ExternalReference.1", "target_url": url}}}
    return {"OTIO_SCHEMA": "Timeline.1", "name": "cut", "global_start_time": None,
            "tracks": {"OTIO_SCHEMA": "Stack.1", "children": [
                {"OTIO_SCHEMA": "Track.1", "name": "A1", "kind": "Audio", "children": [clip]}]}}


def test_a_timeline_whose_media_moved_renders_through_media_and_relink(tmp_path):
    data = noise_bursts(10, 48000, 2, seed=3)
    (tmp_path / "footage").mkdir()
    (tmp_path / "srv" / "day1").mkdir(parents=True)
    write_wav(tmp_path / "footage" / "take.wav", data, 48000)
    write_wav(tmp_path / "srv" / "day1" / "take.wav", data, 48000)
    cut = tmp_path / "cut.otio"
    cut.write_text(json.dumps(timeline("file:///Volumes/Media/day1/take.wav")))
    with pytest.raises(mixdown.Error, match=r"children\[0\].*/Volumes/Media/day1/take.wav.: no such file") as caught:
        mixdown.render(cut, tmp_path / "none.wav")
    assert caught.value.status == 6 and not (tmp_path / "none.wav").exists()
    by_name = mixdown.render(cut, tmp_path / "by-name.wav", media=[tmp_path / "footage"], sample_format="f32")
    by_prefix = mixdown.render(cut, tmp_path / "by-prefix.wav", relink={"/Volumes/Media": str(tmp_path / "srv")},
                               sample_format="f32")
    assert by_name.frames == by_prefix.frames == 4 * 48000
    out, _ = read_wav(tmp_path / "by-name.wav")
    assert np.array_equal(out, data[48000:5 * 48000])
    assert np.array_equal(read_wav(tmp_path / "by-prefix.wav")[0], out)
    with mixdown.open(cut, media=tmp_path / "footage") as r:
        assert np.array_equal(r.read(), out)
    with pytest.raises(mixdown.Error, match=r"^media='.*nowhere': not a directory"):
        mixdown.render(cut, tmp_path / "x.wav", media=[tmp_path / "nowhere"])
    with pytest.raises(mixdown.Error, match="timeline file"):
        mixdown.render(timeline("x.wav"), tmp_path / "x.wav", media=[tmp_path])


def test_a_batch_runs_resumes_and_names_its_failure(tmp_path):
    write_wav(tmp_path / "in.wav", noise_bursts(5, 48000, 2, seed=1), 48000)
    manifest = tmp_path / "jobs.jsonl"
    manifest.write_text('{"args": ["stretch", "in.wav", "slow.wav", "--ratio", "1.0001"], "id": "slow"}\n'
                        '{"args": ["export", "in.wav", "cut.wav", "--duration", "2"], "id": "cut"}\n')
    s = mixdown.batch(manifest)
    assert (s.total, s.done, s.skipped, s.failed) == (2, 2, 0, 0)
    assert mixdown.info(tmp_path / "slow.wav").frames == 240024 and mixdown.info(tmp_path / "cut.wav").frames == 96000
    again = mixdown.batch(manifest, jobs=1)
    assert (again.done, again.skipped) == (0, 2)
    failing = tmp_path / "failing.jsonl"
    failing.write_text('{"args": ["export", "in.wav", "a.wav", "--duration", "1"], "id": "fine"}\n'
                       '{"args": ["export", "gone.wav", "b.wav"], "id": "gone"}\n')
    with pytest.raises(mixdown.Error, match="'gone'.*gone.wav") as caught:
        mixdown.batch(failing, keep_going=True)
    assert caught.value.status == 14 and caught.value.summary.failed == 1 and caught.value.summary.done == 1
    with pytest.raises(mixdown.Error, match="shard 2/2"):
        mixdown.batch(manifest, shard=(2, 2))


def sparse_wav(path: Path, frames: int, rate: int, channels: int) -> Path:
    """A 16-bit WAV of `frames` frames of silence, written sparse: long, and no disk."""
    data = frames * channels * 2
    header = (b"RIFF" + (36 + data).to_bytes(4, "little") + b"WAVEfmt " + (16).to_bytes(4, "little")
              + (1).to_bytes(2, "little") + channels.to_bytes(2, "little") + rate.to_bytes(4, "little")
              + (rate * channels * 2).to_bytes(4, "little") + (channels * 2).to_bytes(2, "little")
              + (16).to_bytes(2, "little") + b"data" + data.to_bytes(4, "little"))
    with open(path, "wb") as f:
        f.write(header)
        f.truncate(len(header) + data)
    return path


def test_auto_says_before_a_long_slow_stretch(tmp_path):
    long = sparse_wav(tmp_path / "long.wav", 48000 * 1800, 48000, 2)
    p = mixdown.plan(long, ratio="1.02")
    assert p.algorithm in ("rubberband", "spectral", "wsola") and p.frames == 88128000 and p.ratio == Fraction(51, 50)
    assert p.notice and p.notice.startswith(f"auto chose {p.algorithm}") and "--algorithm varispeed" in p.notice
    assert mixdown.plan(long, ratio="1.0001").notice is None
    assert mixdown.plan(long, ratio="1.02", algorithm="wsola").notice is None
    # Near 1 too, auto keeps the pitch through the spectral stretch and says so; the
    # splice, by name, is fast: no notice.
    near = mixdown.plan(long, ratio="1.003")
    assert near.algorithm == "spectral" and near.notice and near.frames == 86659200
    assert mixdown.plan(long, ratio="1.003", algorithm="splice").notice is None
    with warnings.catch_warnings():
        warnings.simplefilter("error", mixdown.SlowStretchWarning)
        with pytest.raises(mixdown.SlowStretchWarning, match="auto chose"):
            mixdown.stretch(long, tmp_path / "out.wav", ratio="1.02")
    assert not (tmp_path / "out.wav").exists()
