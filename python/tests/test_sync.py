"""mixdown.sync: a recording made from the reference with a known offset and drift (by the
library's exact stretch and export), found again."""
from fractions import Fraction

import pytest

import mixdown
from conftest import noise_bursts, write_wav


def test_sync_finds_the_offset_and_the_drift(tmp_path):
    reference = write_wav(tmp_path / "ref.wav", noise_bursts(120, 48000, 1, seed=7), 48000)
    stretch = Fraction(1000200, 1000000)  # the recorder's clock runs 200 ppm slow
    mixdown.stretch(reference, tmp_path / "long.wav", ratio=stretch, algorithm="varispeed")
    # The recording starts 3 s (its own clock) into the stretched copy.
    mixdown.export(tmp_path / "long.wav", tmp_path / "rec.wav", start=3)
    [estimate] = mixdown.sync(reference, tmp_path / "rec.wav")
    # Recording time t is stretched time 3 + t, reference time (3 + t) / stretch.
    assert isinstance(estimate.offset, Fraction) and isinstance(estimate.ratio, Fraction)
    assert abs(estimate.offset - 3 / stretch) < Fraction(1, 2000), float(estimate.offset)
    assert abs(estimate.ppm - float((1 / stretch - 1) * 10**6)) < 2, estimate.ppm
    assert abs(float(estimate.ratio) - (1 + estimate.ppm / 1e6)) < 1e-9
    assert estimate.confidence >= 0.5 and estimate.windows >= 5
    assert estimate.recording == str(tmp_path / "rec.wav")
    # The estimate's ratio corrects the recording: a Fraction the stretch takes as it is.
    corrected = mixdown.stretch(tmp_path / "rec.wav", tmp_path / "fixed.wav", ratio=estimate.ratio)
    frames = mixdown.info(tmp_path / "rec.wav").frames
    assert abs(corrected.frames - frames / stretch) < frames * 1e-6  # within 1 ppm


def test_sync_refuses_unrelated_audio(tmp_path):
    reference = write_wav(tmp_path / "ref.wav", noise_bursts(60, 48000, 1, seed=8), 48000)
    other = write_wav(tmp_path / "other.wav", noise_bursts(60, 48000, 1, seed=9), 48000)
    with pytest.raises(mixdown.Error) as caught:
        mixdown.sync(reference, other)
    assert caught.value.status == 11 and "other.wav" in str(caught.value)


def test_sync_needs_a_recording():
    with pytest.raises(mixdown.Error, match="at least one recording"):
        mixdown.sync("ref.wav")
