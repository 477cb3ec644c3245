"""mixdown.render and mixdown.open: documents given as a path, a JSON string or a dict, and
the pull API's reads, seeks and blocks against the file render of the same job."""
import json
from fractions import Fraction

import numpy as np
import pytest

import mixdown
from conftest import read_wav, write_wav


def document(file):
    """Two tracks: the file at 0.5 s at half volume, and its first second at 2 s."""
    return {
        "version": 1,
        "output": {"sample_rate": 48000, "channels": 2},
        "tracks": [
            {"name": "a", "segments": [{"file": str(file), "at": "0.5"}], "volume": [{"volume": 0.5, "at": "0"}]},
            {"name": "b", "segments": [{"file": str(file), "source": {"start": "0", "duration": "1"}, "at": "2"}]},
        ],
    }


def expected_mix(data):
    mix = np.zeros((24000 + len(data), 2), np.float32)
    mix[24000:] += data * np.float32(0.5)
    mix[96000:96000 + 48000] += data[:48000]
    return mix


@pytest.mark.parametrize("form", ["dict", "json", "path"])
def test_render_takes_a_dict_a_json_string_or_a_path(stereo, tmp_path, form):
    path, data = stereo
    doc = document(path)
    given = {"dict": doc, "json": json.dumps(doc), "path": tmp_path / "doc.json"}[form]
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    out = tmp_path / f"{form}.wav"
    r = mixdown.render(given, out, sample_format="f32")
    assert r.frames == 24000 + len(data)
    written, _ = read_wav(out)
    np.testing.assert_allclose(written, expected_mix(data), atol=1e-6)


def test_relative_paths_in_json_are_relative_to_base_dir(stereo, tmp_path):
    path, data = stereo
    doc = document(path.name)
    r = mixdown.render(doc, tmp_path / "out.wav", base_dir=tmp_path)
    assert r.frames == 24000 + len(data)


def test_open_reads_the_frames_the_file_render_writes(stereo, tmp_path):
    path, data = stereo
    doc = document(path)
    mixdown.render(doc, tmp_path / "out.wav", sample_format="f32")
    written, _ = read_wav(tmp_path / "out.wav")
    with mixdown.open(doc) as r:
        assert (r.frames, r.sample_rate, r.channels) == (len(written), 48000, 2)
        assert r.duration == Fraction(len(written), 48000)
        everything = r.read()
        assert everything.dtype == np.float32 and everything.shape == written.shape
        assert everything.flags.c_contiguous
        np.testing.assert_array_equal(everything, written)
        assert r.tell() == r.frames
        assert r.read(100).shape == (0, 2)


@pytest.mark.parametrize("blocksize", [1, 64, 4096, 48000])
def test_blocks_cover_the_render_exactly(stereo, blocksize):
    path, data = stereo
    with mixdown.open(document(path)) as r:
        whole = r.read()
        r.seek(0)
        if blocksize == 1:
            r.seek(r.frames - 300)  # one frame at a time: the last 300 are enough
            whole = whole[-300:]
        blocks = list(r.blocks(blocksize))
        assert all(len(b) == blocksize for b in blocks[:-1])
        assert len(blocks[-1]) == (len(whole) % blocksize or blocksize)
        np.testing.assert_array_equal(np.concatenate(blocks), whole)


def test_blocks_into_one_buffer(stereo):
    path, _ = stereo
    with mixdown.open(document(path)) as r:
        whole = r.read()
        r.seek(0)
        buffer = np.empty((1000, 2), np.float32)
        total = 0
        for block in r.blocks(1000, out=buffer):
            assert np.shares_memory(block, buffer)
            np.testing.assert_array_equal(block, whole[total:total + len(block)])
            total += len(block)
        assert total == len(whole)


def test_seek_lands_on_the_exact_frame(stereo):
    path, _ = stereo
    with mixdown.open(document(path)) as r:
        whole = r.read()
        for frame in [0, 1, 23999, 24000, 96001, r.frames - 1]:
            assert r.seek(frame) == frame and r.tell() == frame
            np.testing.assert_array_equal(r.read(500), whole[frame:frame + 500])
        with pytest.raises(mixdown.Error):
            r.seek(r.frames + 1)


def test_open_a_file_as_it_is_and_stretched(stereo):
    path, data = stereo
    with mixdown.open(path) as r:
        np.testing.assert_array_equal(r.read(), data)
    with mixdown.open(path, frames=480100) as r:
        assert r.frames == 480100 and r.read().shape == (480100, 2)
    with mixdown.open(path, ratio="1.5", algorithm="varispeed") as r:
        assert r.frames == 720000


def test_mono_reads_as_one_column(tmp_path):
    data = np.linspace(-1, 1, 1000, dtype=np.float32)[:, None]
    path = write_wav(tmp_path / "mono.wav", data, 8000)
    with mixdown.open(path) as r:
        got = r.read(400)
        assert got.shape == (400, 1)
        np.testing.assert_array_equal(got, data[:400])


def test_a_closed_render_refuses_reads(stereo):
    path, _ = stereo
    r = mixdown.open(path)
    r.close()
    r.close()
    with pytest.raises(mixdown.Error, match="closed"):
        r.read(10)
