"""attnlite.Classifier against `attnlite classify`."""

import numpy as np
import pytest

import attnlite
from conftest import FIXTURES, cli, cli_json

DIGITS = sorted((FIXTURES / "digits").glob("*.png"))


def test_fixture_images_exist():
    assert len(DIGITS) >= 10


def test_labels_equal_cli(vit):
    c = attnlite.Classifier(vit)
    assert c.labels == [str(k) for k in range(10)]
    rows = [line.split("\t") for line in cli("classify", *DIGITS).splitlines()]
    assert len(rows) == len(DIGITS)
    for path, (cpath, label, prob) in zip(DIGITS, rows):
        r = c.classify(path)
        assert cpath == str(path)
        assert r.label == label
        # the fixture names carry the true label
        assert r.label == path.name.split("_label")[1][0]
        assert f"{r.prob:.4f}" == prob


def test_probs_input_and_attention_equal_cli_json(vit):
    c = attnlite.Classifier(vit)
    for j in cli_json("classify", "--json", "--weights", *DIGITS[:6]):
        r = c.classify(j["path"], attention=True)
        assert (r.label, r.index) == (j["label"], j["index"])
        np.testing.assert_array_equal(r.input, np.array(j["input"], dtype=np.float32))
        np.testing.assert_array_equal(r.probs, np.array(j["probs"], dtype=np.float32))
        assert r.prob == np.float32(j["prob"])
        assert r.top(3) == [(t["label"], pytest.approx(t["prob"], abs=1e-7)) for t in j["top"]]
        assert r.attention.shape == tuple(j["attention_shape"]) == (3, 4, c.tokens, c.tokens)
        np.testing.assert_allclose(r.attention, np.array(j["attention"]), rtol=0, atol=1e-6)
        np.testing.assert_allclose(r.rollout, np.array(j["rollout"]), rtol=0, atol=1e-6)


def test_array_bytes_and_rgba_inputs(vit):
    c = attnlite.Classifier(vit)
    path = DIGITS[0]
    by_path = c.classify(path)
    # the 8x8 values (0..16) the model reads, as float or as int arrays
    x = attnlite.digit_from_image(path)
    assert x.shape == (8, 8) and x.dtype == np.float32 and 0 <= x.min() and x.max() <= 16
    for arr in (x, x.astype(np.float64), x.reshape(1, 8, 8), np.asfortranarray(x)):
        r = c.classify(arr)
        assert r.label == by_path.label
        np.testing.assert_array_equal(r.probs, by_path.probs)
    # integer arrays are read as numbers too
    assert c.classify(x.round().astype(np.int32)).label == by_path.label
    # the file's bytes
    r = c.classify(path.read_bytes())
    np.testing.assert_array_equal(r.probs, by_path.probs)
    # RGBA pixels (a canvas): dark ink on white, the 8x8 values scaled up 4 times
    grey = np.kron(255 - x * (255 / 16), np.ones((4, 4))).round().astype(np.uint8)
    rgba = np.dstack([grey, grey, grey, np.full_like(grey, 255)])
    y = attnlite.digit_from_image(rgba)
    assert y.shape == (8, 8)
    assert c.classify(rgba).label == c.classify(y).label == by_path.label


def test_bad_images(vit, tmp_path):
    c = attnlite.Classifier(vit)
    with pytest.raises(attnlite.Error, match="cannot read"):
        c.classify(tmp_path / "missing.png")
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(attnlite.Error, match="bad.png"):
        c.classify(bad)
    with pytest.raises(attnlite.Error):
        c.classify(b"")
    with pytest.raises(ValueError, match="shape"):
        c.classify(np.zeros((7, 7)))
    with pytest.raises(TypeError):
        c.classify(np.array([["a"] * 8] * 8))
    with pytest.raises(TypeError):
        c.classify(42)
    with pytest.raises(TypeError):
        attnlite.digit_from_image(np.zeros((8, 8)))
    with pytest.raises(attnlite.Error):
        attnlite.digit_from_image(np.zeros((0, 4, 4), dtype=np.uint8))
