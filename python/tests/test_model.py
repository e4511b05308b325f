"""attnlite.Model: loading, names, configuration, vocabularies, tokenization."""

import json
import os

import pytest

import attnlite
from conftest import CLI, MODELS, cli


@pytest.mark.parametrize("name,kind", [("transformer-d2l", "transformer"), ("bahdanau-d2l", "bahdanau"),
                                       ("lm-fra", "lm"), ("vit-digits", "vit"),
                                       ("transformer-fra", "transformer")])
def test_shipped_names_and_config_match_cli_info(name, kind):
    with attnlite.Model.load(name) as m:
        assert m.kind == kind
        assert os.path.samefile(m.source, MODELS / f"{name}.safetensors")
        info = json.loads(cli("info", "--model", name))
        cfg = m.config
        assert cfg["kind"] == info["kind"] == kind
        assert cfg["file"] == info["config"]
        assert cfg["src_vocab_size"] == info["src_vocab_size"]
        assert cfg["tgt_vocab_size"] == info["tgt_vocab_size"]
        assert cfg["weight_bytes"] == info["weight_bytes"]
        assert cfg["int8"] == info["int8"]
        assert m.license == info["license"]
        assert len(m.src_vocab) == cfg["src_vocab_size"]
        assert len(m.tgt_vocab) == cfg["tgt_vocab_size"]


def test_transformer_d2l_dimensions(d2l):
    cfg = d2l.config
    assert (cfg["layers"], cfg["heads"], cfg["steps"], cfg["hiddens"]) == (2, 4, 10, 32)
    assert (cfg["src_vocab_size"], cfg["tgt_vocab_size"]) == (186, 198)
    assert cfg["subword"] is False and d2l.is_subword is False
    assert cfg["max_target_steps"] >= cfg["steps"]


def test_bahdanau_has_one_head(bahdanau):
    assert bahdanau.config["heads"] == 1


def test_vocabularies(d2l):
    src, tgt = d2l.src_vocab, d2l.tgt_vocab
    assert src[d2l.src_id("home")] == "home"
    assert d2l.src_id("no-such-word") == 0  # <unk>
    assert "chez" in tgt and "<eos>" in tgt
    src.append("x")  # a copy: the model's cache is untouched
    assert len(d2l.src_vocab) == 186


def test_from_bytes_equals_load(d2l):
    data = (MODELS / "transformer-d2l.safetensors").read_bytes()
    with attnlite.Model.from_bytes(data) as m:
        assert m.source == "<bytes>"
        assert m.config == d2l.config
        assert m.tgt_vocab == d2l.tgt_vocab
        a = attnlite.Translator(m).translate("i'm home .")
        b = attnlite.Translator(d2l).translate("i'm home .")
        assert a.text == b.text and (a.probs == b.probs).all()
    with attnlite.Model.from_bytes(bytearray(data)) as m2, attnlite.Model.from_bytes(memoryview(data)) as m3:
        assert m2.kind == m3.kind == "transformer"


def test_tokenize_matches_cli(d2l, fra):
    sentences = ["I'm home.", "He\u2019s calm!", "Where is the station?"]
    for path, m in (("models/transformer-d2l.safetensors", d2l), ("models/transformer-fra.safetensors", fra)):
        want = cli("tokenize", "--model", CLI.parents[2] / path, *sentences).splitlines()
        assert [" ".join(m.tokenize(s)) for s in sentences] == want
    assert d2l.tokenize("I'm home.") == ["i'm", "home", "."]
    assert d2l.tokenize("") == []
    assert attnlite.tokenize("Go.") == ["go", "."]


def test_subword_model_tokenizes_as_cli():
    # The default model (being retrained): only compared with the command line.
    with attnlite.Model.load("transformer-fra-bpe") as m:
        assert m.is_subword and m.config["subword"]
        s = "Where is the station?"
        assert " ".join(m.tokenize(s)) == cli("tokenize", "--model", "transformer-fra-bpe", s).strip()


def test_split_sentences():
    assert attnlite.split_sentences("  I'm home. Mr. Smith is here!  ok ") == \
        ["I'm home.", "Mr. Smith is here!", "ok"]
    assert attnlite.split_sentences("\u00c7a va. \u00c0 demain\u2026 Oui.") == \
        ["\u00c7a va.", "\u00c0 demain\u2026", "Oui."]
    assert attnlite.split_sentences("go . i lost .") == ["go .", "i lost ."]
    assert attnlite.split_sentences("It costs 3.5 euros.") == ["It costs 3.5 euros."]
    assert attnlite.split_sentences(" \t ") == [] and attnlite.split_sentences("") == []
    # lone surrogates (invalid UTF-8 read with surrogateescape) come back as they went in
    assert attnlite.split_sentences("a\udcff. B.") == ["a\udcff.", "B."]
    with pytest.raises(TypeError):
        attnlite.split_sentences(b"Go.")
    with pytest.raises(ValueError):
        attnlite.split_sentences("Go.\0 Run.")
    # the CLI translates each sentence alone and joins the translations with a space
    text = "I'm home. I'm happy. Where is the station?"
    with attnlite.Translator("transformer-fra-bpe", max_batch=4) as tr:
        joined = " ".join(t.text for t in tr.translate(attnlite.split_sentences(text)))
    assert joined == cli("translate", text).strip()
    assert joined.startswith("Je suis chez moi. ")


def test_model_sentences_are_those_it_translates(d2l):
    with attnlite.Model.load("transformer-fra-bpe") as m:
        # a sentence of emoji alone reads as no piece: left out
        assert m.sentences("I'm home. Where is the station? \U0001F600") == \
            ["I'm home.", "Where is the station?"]
        assert m.sentences(" Run! Now. ") == ["Run!", "Now."]
        # no sentence with a token, or not UTF-8: the whole text, for translate() to refuse
        assert m.sentences("") == [""] and m.sentences("  ") == ["  "]
        assert m.sentences("\U0001F600 \U0001F600") == ["\U0001F600 \U0001F600"]
        assert m.sentences("a\udcff. B.") == ["a\udcff. B."]
        with pytest.raises(attnlite.Error, match="UTF-8"):
            attnlite.Translator(m).translate(m.sentences("a\udcff. B.")[0])
        with pytest.raises(TypeError):
            m.sentences(b"Go.")
        text = "I'm home. I'm happy. Where is the station?"
        with attnlite.Translator(m, max_batch=4) as tr:
            joined = " ".join(t.text for t in tr.translate(m.sentences(text)))
        assert joined == cli("translate", text).strip()
    # the book's word model reads every sentence of words
    assert d2l.sentences("go . i lost .") == ["go .", "i lost ."]
    d2l_closed = attnlite.Model.load("transformer-d2l")
    d2l_closed.close()
    with pytest.raises(attnlite.Error, match="closed"):
        d2l_closed.sentences("go .")


def test_models_dir_env(monkeypatch, tmp_path):
    monkeypatch.setenv("ATTNLITE_MODELS", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # no ./models either
    assert attnlite.models_dir() == str(tmp_path)
    with pytest.raises(attnlite.Error, match="cannot find the shipped model 'transformer-d2l.safetensors'"):
        attnlite.Model.load("transformer-d2l")
    (tmp_path / "mine.safetensors").write_bytes((MODELS / "transformer-d2l.safetensors").read_bytes())
    with attnlite.Model.load("mine") as m:
        assert m.kind == "transformer"


def test_metadata(d2l):
    assert json.loads(d2l.metadata("attnlite.config")) == d2l.config["file"]
    assert d2l.metadata("no.such.key") is None
    assert d2l.metadata("no.such.key", "x") == "x"


def test_library_path():
    p = attnlite.library_path()
    assert p.endswith("libattnlite_c.so") and os.path.isfile(p)
