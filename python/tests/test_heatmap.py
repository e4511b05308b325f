"""attnlite.heatmap / Translator.heatmap against the files of `attnlite heatmap translate` of
the same build: byte for byte, PNG and SVG, the Transformer and the Bahdanau model; the
Figure wrapper; errors."""

import pickle

import pytest

import attnlite
from conftest import CLI, MODELS, cli

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def cli_file(tmp_path, model, sentence, *opts, fmt="png"):
    """The bytes `attnlite heatmap translate --model MODEL SENTENCE OPTS --out FILE` writes."""
    out = tmp_path / f"cli.{fmt}"
    cli("heatmap", "translate", "--model", model, sentence, *opts, "--out", out)
    return out.read_bytes()


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_transformer_default_equals_cli(d2l, tmp_path, fmt):
    tr = attnlite.Translator(d2l)
    fig = tr.heatmap("i'm home .", format=fmt)
    want = cli_file(tmp_path, "transformer-d2l", "i'm home .", fmt=fmt)
    assert isinstance(fig, attnlite.Figure) and isinstance(fig, bytes)
    assert fig == want and fig.data == want and type(fig.data) is bytes
    assert fig.format == fmt
    assert fig.text == "je suis chez moi ." == tr.translate("i'm home .").text
    assert (fig.rows, fig.cols) == (2, 4)
    assert fig.width > 100 and fig.height > 100
    # the CLI prints "FILE: CAPTION (RxC panels)"
    assert "encoder-decoder attention for 'i'm home .'" in fig.caption
    if fmt == "png":
        assert fig.startswith(PNG_MAGIC)
        assert fig._repr_png_() == want and fig._repr_svg_() is None
    else:
        assert fig.startswith(b"<?xml")
        assert fig._repr_svg_() == want.decode("utf-8") and fig._repr_png_() is None


@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_bahdanau_equals_cli(bahdanau, tmp_path, fmt):
    # the module function, with a Model, a Translator or a shipped name
    want = cli_file(tmp_path, "bahdanau-d2l", "i'm home .", "--format", fmt, fmt=fmt)
    assert attnlite.heatmap(bahdanau, "i'm home .", format=fmt) == want
    assert attnlite.heatmap(attnlite.Translator(bahdanau), "i'm home .", format=fmt) == want
    assert attnlite.heatmap("bahdanau-d2l", "i'm home .", format=fmt) == want
    want = cli_file(tmp_path, "bahdanau-d2l", "i'm home .", "--padding", "--cmap", "viridis",
                    "--annotate", "--format", fmt, fmt=fmt)
    fig = attnlite.heatmap(bahdanau, "i'm home .", padding=True, cmap="viridis", annotate=True, format=fmt)
    assert fig == want and (fig.rows, fig.cols) == (1, 1)


@pytest.mark.parametrize("kind,opts,cli_opts", [
    ("enc", dict(layer=2, head=3, cmap="Blues", annotate=True, dpi=80),
     ["--layer", "2", "--head", "3", "--cmap", "Blues", "--annotate", "--dpi", "80"]),
    ("dec-self", dict(head=2, positions=True, padding=True), ["--head", "2", "--positions", "--padding"]),
    ("cross", dict(layer=1, beam=4, alpha=0.75), ["--layer", "1", "--beam", "4", "--alpha", "0.75"]),
    ("cross", dict(d2l_compat=True, layer="all", head="all"), ["--d2l-compat", "--layer", "all", "--head", "all"]),
])
@pytest.mark.parametrize("fmt", ["png", "svg"])
def test_options_equal_cli(d2l, tmp_path, kind, opts, cli_opts, fmt):
    want = cli_file(tmp_path, "transformer-d2l", "he's calm .", "--kind", kind, *cli_opts,
                    "--format", fmt, fmt=fmt)
    assert attnlite.heatmap(d2l, "he's calm .", kind=kind, format=fmt, **opts) == want


def test_model_names_in_titles(tmp_path):
    # A model loaded by path is named by its file name, as the CLI names --model PATH.
    path = MODELS / "transformer-d2l.safetensors"
    want = cli_file(tmp_path, path, "go .")
    assert attnlite.heatmap(attnlite.Model.load(path), "go .") == want
    # From bytes the title names the model's kind, unless model_name says otherwise.
    from_bytes = attnlite.Model.from_bytes(path.read_bytes())
    named = attnlite.heatmap(from_bytes, "go .", model_name="transformer-d2l")
    assert named == want
    assert attnlite.heatmap(from_bytes, "go .") != want


def test_figure_wrapper(tmp_path, d2l):
    fig = attnlite.heatmap(d2l, "go .")
    p = fig.save(tmp_path / "x.png")
    assert p == str(tmp_path / "x.png")
    assert (tmp_path / "x.png").read_bytes() == fig
    assert repr(fig).startswith(f"<attnlite.Figure png {fig.width}x{fig.height}, {len(fig)} bytes: ")
    back = pickle.loads(pickle.dumps(fig))
    assert back == fig and back.format == "png" and back.caption == fig.caption and back.width == fig.width
    own = attnlite.Figure(b"<svg/>", "svg")
    assert own._repr_svg_() == "<svg/>" and own._repr_png_() is None and own.width == 0
    assert repr(own) == "<attnlite.Figure svg, 6 bytes>"
    with pytest.raises(ValueError, match="png' or 'svg"):
        attnlite.Figure(b"", "jpeg")
    with pytest.raises(TypeError):
        attnlite.Figure("text", "svg")


@pytest.mark.parametrize("opts,message", [
    (dict(kind="sideways"), "unknown attention kind 'sideways'"),
    (dict(cmap="rainbow"), "unknown colormap 'rainbow'"),
    (dict(format="jpeg"), "format must be png or svg, got 'jpeg'"),
    (dict(dpi=5), r"dpi must be in \[20, 600\], got 5"),
    (dict(layer=3), "layer 3 is out of range: the model has 2"),
    (dict(head=9), "head 9 is out of range: the model has 4"),
    (dict(beam=0), r"beam_size must be in \[1, 64\]"),
    (dict(alpha=-1.0), "length_penalty must be a number in"),
])
def test_bad_options_raise_error(d2l, opts, message):
    with pytest.raises(attnlite.Error, match=message) as e:
        attnlite.heatmap(d2l, "go .", **opts)
    assert e.value.status == 2


def test_errors(d2l, bahdanau, lm):
    with pytest.raises(attnlite.Error, match="only encoder-decoder"):
        attnlite.heatmap(bahdanau, "go .", kind="enc")
    with pytest.raises(attnlite.Error, match="empty sentence"):
        attnlite.heatmap(d2l, "")
    with pytest.raises(attnlite.Error, match="does not translate"):
        attnlite.heatmap(lm, "je suis")
    with pytest.raises(attnlite.Error, match="cannot find the shipped model"):
        attnlite.heatmap("no-such-model", "go .")
    closed = attnlite.Model.load(MODELS / "transformer-d2l.safetensors")
    closed.close()
    with pytest.raises(attnlite.Error, match="closed"):
        attnlite.heatmap(closed, "go .")
    with pytest.raises(ValueError, match="1-based"):
        attnlite.heatmap(d2l, "go .", layer=0)
    with pytest.raises(TypeError):
        attnlite.heatmap(d2l, "go .", head=1.5)
    with pytest.raises(TypeError):
        attnlite.heatmap(d2l, "go .", dpi="100")
    with pytest.raises(TypeError):
        attnlite.heatmap(d2l, b"go .")
    with pytest.raises(ValueError):
        attnlite.heatmap(d2l, "go\0.")
    assert CLI.is_file()
