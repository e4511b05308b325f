"""attnlite.Classifier against `attnlite classify`."""

import numpy as np
import pytest

import attnlite
from conftest import FIXTURES, cli, cli_json, refused_cuda

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


def _split():
    """tests/fixtures/vit_digits_test.json: the digits test split and PyTorch's results."""
    import json

    j = json.loads((FIXTURES / "vit_digits_test.json").read_text())
    return np.array(j["images"], dtype=np.float32), j


def test_batches_of_the_test_split_equal_pytorch(vit):
    # The whole split (359 images) as a list, in batches of 64 and the last of 39: PyTorch's
    # labels and probabilities (1e-5, as the C++ test on the same fixture); as a 4-D array, the
    # same results.
    images, j = _split()
    c = attnlite.Classifier(vit, max_batch=64)
    assert c.max_batch == 64 and "max_batch=64" in repr(c)
    rs = c.classify(list(images))
    assert len(rs) == len(images) == j["count"]
    assert [r.index for r in rs] == j["predicted"]
    assert sum(r.index == t for r, t in zip(rs, j["targets"])) == j["correct"]
    np.testing.assert_allclose(np.stack([r.probs for r in rs]), np.array(j["probs"]), rtol=0, atol=1e-5)
    for r, x in zip(rs, images):
        assert r.label == str(r.index) and r.prob == r.probs[r.index]
        np.testing.assert_array_equal(r.input, x)
    as_array = c.classify(images.reshape(-1, 1, 8, 8))
    for a, b in zip(as_array, rs):
        np.testing.assert_array_equal(a.probs, b.probs)
    assert c.classify([]) == [] and c.classify(()) == []


def test_a_batch_equals_one_image_at_a_time(vit):
    # Labels equal; probabilities, attention and rollout to float rounding (a product of many
    # rows may sum in another order than one of a single row).
    images, _ = _split()
    one = attnlite.Classifier(vit)
    c = attnlite.Classifier(vit, max_batch=8)
    mixed = [DIGITS[0], images[1], DIGITS[1].read_bytes(), images[3].astype(np.float64),
             images[4].reshape(1, 8, 8), images[5], DIGITS[2], images[7], images[8], images[9]]
    rs = c.classify(mixed, attention=True)  # a batch of 8, then one of 2
    assert len(rs) == len(mixed)
    for x, r in zip(mixed, rs):
        want = one.classify(x, attention=True)
        assert r.index == want.index and r.label == want.label
        np.testing.assert_array_equal(r.input, want.input)
        np.testing.assert_allclose(r.probs, want.probs, rtol=0, atol=1e-6)
        assert r.attention.shape == (3, 4, c.tokens, c.tokens)
        np.testing.assert_allclose(r.attention, want.attention, rtol=0, atol=1e-6)
        np.testing.assert_allclose(r.rollout, want.rollout, rtol=0, atol=1e-6)
    # one image is still one Classification, a list of one a list
    assert isinstance(c.classify(images[0]), attnlite.Classification)
    assert len(c.classify([images[0]])) == 1


def test_bad_batches(vit, tmp_path):
    images, _ = _split()
    c = attnlite.Classifier(vit, max_batch=4)
    bad = tmp_path / "bad.png"
    bad.write_bytes(b"not an image")
    with pytest.raises(attnlite.Error, match=r"^images\[2\]: .*bad.png"):
        c.classify([images[0], images[1], bad])
    with pytest.raises(ValueError, match=r"^images\[1\]: .*shape"):
        c.classify([images[0], np.zeros((7, 7))])
    with pytest.raises(TypeError, match=r"^images\[0\]"):
        c.classify([42])
    with pytest.raises(ValueError, match=r"\(N, 1, 8, 8\)"):
        c.classify(np.zeros((3, 2, 8, 8), dtype=np.float32))
    # the library's own errors name the image in the list, not in its batch
    nan = images[:6].copy()
    nan[5, 2, 3] = np.nan
    with pytest.raises(attnlite.Error, match=r"^images\[5\]: pixel 19 is not a finite number$"):
        c.classify(list(nan))
    huge = images[:3].copy()
    huge[1] *= 1e20  # a uniform image of 3e38 stays finite, a digit scaled up does not
    with pytest.raises(attnlite.Error, match=r"^images\[1\]: the model's activations overflowed"):
        c.classify(list(huge))
    # the classifier still works
    assert c.classify(list(images[:6]))[5].index == c.classify(images[5]).index
    assert attnlite.Classifier(vit).max_batch == 1  # the CPU's default, as the CLI's
    with pytest.raises(attnlite.Error, match=r"max_batch must be in \[1, 4096\], got 0"):
        attnlite.Classifier(vit, max_batch=0)
    with pytest.raises(TypeError, match="max_batch must be an int"):
        attnlite.Classifier(vit, max_batch=2.0)
    # past a C int: refused, not wrapped into range; past 4,096: the library's range
    for big in (2**32 + 2, -2**32 + 3):
        with pytest.raises(attnlite.Error, match=f"^limits: max_batch {big} is out of range$"):
            attnlite.Classifier(vit, max_batch=big)
    with pytest.raises(attnlite.Error, match=r"max_batch must be in \[1, 4096\], got 4097"):
        attnlite.Classifier(vit, max_batch=4097)
    # an error that is no image's is not pinned on one
    c.close()
    with pytest.raises(attnlite.Error, match=r"^this classifier is closed$"):
        c.classify(list(images[:3]))


def test_batches_on_cuda(vit):
    # Where the library has CUDA and the machine a GPU (else the refusal that says so): the
    # test split in batches of 64 gives PyTorch's labels (its smallest margin between the two
    # best logits is 0.24), and probabilities within 2e-4 of PyTorch's: the GPU's logits are
    # within 1e-4 of the reference (tests/test_cuda_models.cpp), and logits moved by at most d
    # move each probability p by at most p (e^(2d) - 1) < 2d.
    images, j = _split()
    try:
        c = attnlite.Classifier(vit, device="cuda")
    except attnlite.Error as e:
        refused_cuda(e)
        return
    assert c.max_batch == 64  # the CLI's default on cuda
    rs = c.classify(list(images), attention=True)
    assert [r.index for r in rs] == j["predicted"]
    np.testing.assert_allclose(np.stack([r.probs for r in rs]), np.array(j["probs"]), rtol=0, atol=2e-4)
    for r in rs[:8]:
        np.testing.assert_allclose(r.rollout.sum(axis=1), 1, rtol=0, atol=1e-5)
