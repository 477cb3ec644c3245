"""mixdown.info, mixdown.stretch and mixdown.export against files written and read here."""
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

import mixdown
from conftest import read_wav, write_wav


def test_the_installed_package_is_tested_with_its_own_library():
    # The tests run against the wheel installed in a venv, not the checkout's sources.
    package = Path(mixdown.__file__).parent
    assert "site-packages" in package.parts
    assert (package / "libmixdown.so").is_file()
    assert mixdown.__version__ == mixdown.version() and mixdown.__version__.count(".") == 2


def test_info_gives_exact_frames_and_duration(stereo):
    path, data = stereo
    i = mixdown.info(path)
    assert (i.frames, i.sample_rate, i.channels) == (len(data), 48000, 2)
    assert i.duration == Fraction(len(data), 48000) and isinstance(i.duration, Fraction)
    assert (i.container, i.sample_format, i.stream, i.streams) == ("wav", "float", 0, 1)


def test_info_of_an_odd_length_is_an_exact_fraction(tmp_path):
    path = write_wav(tmp_path / "odd.wav", np.zeros((44101, 1), np.float32), 44100)
    assert mixdown.info(path).duration == Fraction(44101, 44100)


def half_away(value: Fraction) -> int:
    return int(value + Fraction(1, 2)) if value >= 0 else -int(-value + Fraction(1, 2))


@pytest.mark.parametrize("ratio", ["1.0001309", Fraction(10001309, 10000000), "10001309/10000000"])
def test_stretch_by_an_exact_ratio_lands_on_round_n_times_r(stereo, tmp_path, ratio):
    path, data = stereo
    out = tmp_path / "out.wav"
    r = mixdown.stretch(path, out, ratio=ratio, sample_format="f32")
    expected = half_away(len(data) * Fraction(10001309, 10000000))
    assert expected == 480063
    assert r.frames == expected and r.sample_rate == 48000 and r.channels == 2
    assert r.duration == Fraction(expected, 48000)
    written, rate = read_wav(out)
    assert written.shape == (expected, 2) and rate == 48000


def test_an_int_ratio_is_exact(tmp_path):
    path = write_wav(tmp_path / "in.wav", np.zeros((1001, 1), np.float32), 8000)
    r = mixdown.stretch(path, tmp_path / "out.wav", ratio=2, algorithm="varispeed")
    assert r.frames == 2002


def test_a_float_ratio_is_refused_with_the_exact_spellings(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(TypeError, match=r"ratio=1\.0001309: a float is not exact; pass the string '1\.0001309'"):
        mixdown.stretch(path, tmp_path / "out.wav", ratio=1.0001309)
    assert not (tmp_path / "out.wav").exists()


def test_stretch_to_frames_duration_and_match(stereo, tmp_path):
    path, _ = stereo
    assert mixdown.stretch(path, tmp_path / "a.wav", frames=480123).frames == 480123
    # 10/3 s at 48 kHz is exactly 160000 frames (a Fraction no float or decimal can hold).
    assert mixdown.stretch(path, tmp_path / "b.wav", duration=Fraction(10, 3), algorithm="wsola").frames == 160000
    # Half a frame rounds away from zero: 480000.5 frames -> 480001.
    assert mixdown.stretch(path, tmp_path / "c.wav", duration=Fraction(960001, 96000)).frames == 480001
    other = write_wav(tmp_path / "other.wav", np.zeros((200000, 1), np.float32), 48000)
    assert mixdown.stretch(path, tmp_path / "d.wav", match=other, algorithm="wsola").frames == 200000
    # Mixdown's own spectral stretch, through the C API's MIXDOWN_ALGORITHM_SPECTRAL.
    assert mixdown.stretch(path, tmp_path / "e.wav", ratio="1.25", algorithm="spectral").frames == 600000


def test_stretch_refuses_two_targets_and_writes_nothing(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(mixdown.Error, match="ratio and frames: give one target"):
        mixdown.stretch(path, tmp_path / "out.wav", ratio="1.0001", frames=1000)
    with pytest.raises(mixdown.Error, match="algorithm='fast': must be one of auto, varispeed, wsola, rubberband, spectral"):
        mixdown.stretch(path, tmp_path / "out.wav", ratio="1.0001", algorithm="fast")
    assert list(tmp_path.iterdir()) == [path]


def test_the_library_names_a_ratio_out_of_range(stereo, tmp_path):
    path, _ = stereo
    with pytest.raises(mixdown.Error, match="0.25 and 4") as caught:
        mixdown.stretch(path, tmp_path / "out.wav", ratio="5")
    assert caught.value.status == 2 and caught.value.reason
    assert list(tmp_path.iterdir()) == [path]


def test_errors_name_pythons_arguments_not_the_commands_options(stereo, tmp_path):
    """The library names --ratio, --to-frames, --match; a Python call names ratio=, frames=,
    duration=, match= and the ratio's bounds."""
    path, data = stereo
    n = len(data)
    with pytest.raises(mixdown.Error, match=r"^ratio=5/1: must lie between 0\.25 and 4$"):
        mixdown.stretch(path, tmp_path / "out.wav", ratio="5")
    with pytest.raises(mixdown.Error, match=rf"^frames={30 * n}: gives {30 * n} frames from {n}, a ratio "
                                            r"\(output / input\) of 30; the ratio must lie between 0\.25 and 4$"):
        mixdown.stretch(path, tmp_path / "out.wav", frames=30 * n)
    seconds = Fraction(30 * n, 48000)
    with pytest.raises(mixdown.Error, match=rf"^duration={seconds}: gives {30 * n} frames from {n}, a ratio "
                                            r"\(output / input\) of 30; the ratio must lie between 0\.25 and 4$"):
        mixdown.stretch(path, tmp_path / "out.wav", duration=seconds)
    long = write_wav(tmp_path / "long.wav", np.zeros((5 * n, 2), np.float32), 48000)
    with pytest.raises(mixdown.Error, match=r"^match='.*long\.wav' \(.*\): gives .* a ratio \(output / input\) of 5;"):
        mixdown.stretch(path, tmp_path / "out.wav", match=long)
    with pytest.raises(mixdown.Error, match=r"^rate=0: must lie between 1 and"):
        mixdown.stretch(path, tmp_path / "out.wav", ratio=1, rate=0)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, "long.wav"])


def test_export_cuts_the_exact_range_and_fades(stereo, tmp_path):
    path, data = stereo
    out = tmp_path / "cut.wav"
    r = mixdown.export(path, out, start="0.25", duration=Fraction(1, 2), fade_in="0.01", sample_format="f32")
    assert r.frames == 24000
    written, _ = read_wav(out)
    assert written.shape == (24000, 2)
    # After the 480-frame fade the samples are the input's own, frame for frame.
    np.testing.assert_array_equal(written[480:], data[12000 + 480:36000])
    # The fade starts from silence and rises.
    assert np.all(np.abs(written[0]) <= 1e-6)
    assert np.all(np.abs(written[240]) < np.abs(data[12240]))


def test_export_to_the_end_when_no_duration(stereo, tmp_path):
    path, data = stereo
    r = mixdown.export(path, tmp_path / "tail.wav", start=9)
    assert r.frames == len(data) - 9 * 48000
