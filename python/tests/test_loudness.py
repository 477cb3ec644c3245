"""mixdown.loudness, and loudness=, true_peak=, limit= and rate= on the jobs."""
import math

import numpy as np
import pytest

import mixdown
from conftest import read_wav, write_wav


def sine(seconds, rate, dbfs, frequency=1000.0):
    t = np.arange(int(seconds * rate)) / rate
    x = (10 ** (dbfs / 20) * np.sin(2 * np.pi * frequency * t)).astype(np.float32)
    return np.stack([x, x], axis=1)


def test_a_sine_at_minus_23_dbfs_measures_minus_23_lufs(tmp_path):
    # EBU Tech 3341 case 1: a stereo 1 kHz sine at -23 dBFS is -23 LUFS; its peaks -23 dBTP.
    path = write_wav(tmp_path / "tone.wav", sine(20, 48000, -23), 48000)
    m = mixdown.loudness(path)
    assert isinstance(m, mixdown.Loudness)
    assert abs(m.integrated + 23) <= 0.1
    assert abs(m.max_momentary + 23) <= 0.1 and abs(m.max_short_term + 23) <= 0.1
    assert abs(m.true_peak + 23) <= 0.1 and abs(m.true_peak_fine + 23) <= 0.1
    assert abs(m.sample_peak + 23) <= 0.01
    assert m.range < 0.1
    assert (m.frames, m.sample_rate, m.channels) == (20 * 48000, 48000, 2)


def test_silence_measures_minus_infinity(tmp_path):
    path = write_wav(tmp_path / "silent.wav", np.zeros((48000, 2), dtype=np.float32), 48000)
    m = mixdown.loudness(path)
    assert m.integrated == -math.inf and m.true_peak == -math.inf


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(mixdown.Error, match="nothing.wav"):
        mixdown.loudness(tmp_path / "nothing.wav")


def test_export_at_a_loudness_lands_there(stereo, tmp_path):
    path, _ = stereo
    out = tmp_path / "loud.wav"
    r = mixdown.export(path, out, loudness=-20, limit=True, sample_format="f32")
    assert abs(r.loudness + 20) <= 0.05 and r.true_peak <= -1.5 + 0.01 and r.gain is not None
    assert abs(mixdown.loudness(out).integrated + 20) <= 0.05
    plain = mixdown.export(path, tmp_path / "plain.wav")
    assert plain.loudness is None and plain.gain is None


def test_stretch_and_render_take_a_target(stereo, tmp_path):
    path, _ = stereo
    r = mixdown.stretch(path, tmp_path / "s.wav", ratio="1.0001", loudness=-24)
    assert abs(r.loudness + 24) <= 0.2
    doc = {"version": 1, "tracks": [{"name": "a", "segments": [{"file": str(path), "at": "0"}]}]}
    d = mixdown.render(doc, tmp_path / "d.wav", loudness=-24)
    assert abs(d.loudness + 24) <= 0.2


def test_bad_loudness_arguments_are_refused_and_nothing_written(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(mixdown.Error, match="limit go with loudness"):
        mixdown.export(path, tmp_path / "a.wav", limit=True)
    with pytest.raises(mixdown.Error, match="from -60 to below 0") as caught:
        mixdown.export(path, tmp_path / "b.wav", loudness=3)
    # The package's own checks carry the C API's status for the same mistake, never OK.
    assert caught.value.status == 2 and caught.value.reason == "invalid argument"
    with pytest.raises(mixdown.Error, match="limit go with loudness") as caught:
        mixdown.export(path, tmp_path / "a.wav", limit=True)
    assert caught.value.status == 2
    with pytest.raises(mixdown.Error, match="true_peak=2"):
        mixdown.export(path, tmp_path / "c.wav", loudness=-16, true_peak=2)
    for name in ["a.wav", "b.wav", "c.wav"]:
        assert not (tmp_path / name).exists()


def test_export_at_another_rate(tmp_path):
    path = write_wav(tmp_path / "tone441.wav", sine(2, 44100, -6), 44100)
    r = mixdown.export(path, tmp_path / "t32.wav", rate=32000, sample_format="f32")
    assert (r.sample_rate, r.frames) == (32000, 64000)
    written, rate = read_wav(tmp_path / "t32.wav")
    assert rate == 32000 and written.shape == (64000, 2)
    o = mixdown.export(path, tmp_path / "t.opus")
    assert (o.sample_rate, o.frames) == (48000, 96000)
