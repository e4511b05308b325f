"""attnlite.Translator against `attnlite translate` of the same build."""

import numpy as np
import pytest

import attnlite
from conftest import MODELS, cli, cli_json

BOOK = ["go .", "i lost .", "he's calm .", "i'm home ."]
# The book's table (d2l 10.7.6) read by this runtime's shipped copy of its Transformer.
BOOK_D2L = ["va !", "je l\u2019ai perdu .", "il est calme .", "je suis chez moi ."]
FRA = ["i'm home .", "he is a good teacher .", "where is the station ?",
       "I don't know what you're talking about.", "Tom wants to go to Paris tomorrow."]

D2L = MODELS / "transformer-d2l.safetensors"
FRA_PATH = MODELS / "transformer-fra.safetensors"
BAHDANAU = MODELS / "bahdanau-d2l.safetensors"


def cli_texts(model, sentences, *opts):
    return cli("translate", "--model", model, *opts, *sentences).splitlines()


def test_book_sentences_equal_cli(d2l):
    tr = attnlite.Translator(d2l)
    got = [tr.translate(s) for s in BOOK]
    assert [t.text for t in got] == cli_texts(D2L, BOOK) == BOOK_D2L
    ref = cli_json("translate", "--model", D2L, "--json", *BOOK)
    for t, j in zip(got, ref):
        assert t.tokens == j["tokens"]
        assert t.ids == j["token_ids"]
        assert t.probs.dtype == np.float32 and t.probs.shape == (len(t.tokens),)
        np.testing.assert_allclose(t.probs, np.array(j["scores"], dtype=np.float32), rtol=0, atol=1e-5)
        assert t.src_tokens == j["source_tokens"]
        assert t.src_valid == j["source_valid_len"]
        assert (t.steps, t.eos, t.truncated) == (j["steps"], j["eos"], j["truncated"])
        assert t.num_unknown == len(j["unknown"]) == 0
        assert t.enc_self is None and t.dec_self is None and t.cross is None
        assert len(t.nbest) == 1 and t.nbest[0].text == t.text


def test_whole_corpus_model_equals_cli(fra):
    want = cli_texts(FRA_PATH, FRA)
    assert len(want) == len(FRA) and all(want)
    with attnlite.Translator(fra) as tr:
        assert [t.text for t in tr.translate(FRA)] == want
        assert [tr.translate(s).text for s in FRA] == want
    assert tr.closed


def test_bahdanau_equals_cli(bahdanau):
    tr = attnlite.Translator(bahdanau)
    assert [t.text for t in tr.translate(BOOK)] == cli_texts(BAHDANAU, BOOK)


@pytest.mark.parametrize("max_batch", [1, 3, 4, 8])
def test_batches_and_chunks_equal_single_sentences(fra, max_batch):
    # 5 sentences: max_batch 3 translates them in two chunks (3 + 2).
    tr = attnlite.Translator(fra, max_batch=max_batch)
    assert tr.max_batch == max_batch
    got = tr.translate(FRA)
    assert isinstance(got, list) and len(got) == len(FRA)
    assert [t.source for t in got] == FRA
    assert [t.text for t in got] == cli_texts(FRA_PATH, FRA)
    single = attnlite.Translator(fra)
    for t, s in zip(got, FRA):
        one = single.translate(s)
        assert t.ids == one.ids
        np.testing.assert_allclose(t.probs, one.probs, rtol=0, atol=1e-5)


def test_tuple_and_empty_list(d2l):
    tr = attnlite.Translator(d2l)
    assert [t.text for t in tr.translate(tuple(BOOK[:2]))] == BOOK_D2L[:2]
    assert tr.translate([]) == []


@pytest.mark.parametrize("path,model", [(D2L, "d2l"), (FRA_PATH, "fra"), (BAHDANAU, "bahdanau")])
@pytest.mark.parametrize("alpha", [0.0, 0.75])
def test_beam_nbest_equals_cli(request, path, model, alpha):
    m = request.getfixturevalue(model)
    sentences = BOOK if model != "fra" else FRA[:3]
    ref = cli_json("translate", "--model", path, "--beam", 4, "--alpha", alpha, "--json", *sentences)
    tr = attnlite.Translator(m, max_beam=4)
    # --json records the attention weights, which takes the kernels' unfused path: the same
    # option here gives the same bits (without it, scores agree to about 1e-6).
    for t, j in zip(tr.translate(sentences, beam=4, alpha=alpha, attention=True), ref):
        assert t.text == j["translation"]
        assert len(t.nbest) == len(j["nbest"]) == 4
        for h, jh in zip(t.nbest, j["nbest"]):
            text, tokens, logp, score = h  # a tuple (text, tokens, logp, score)
            assert text == jh["translation"]
            assert tokens == jh["tokens"]
            assert h.ids == jh["token_ids"]
            assert (h.length, h.eos) == (jh["length"], jh["eos"])
            assert logp == pytest.approx(jh["logp"], abs=1e-9)
            assert score == pytest.approx(jh["score"], abs=1e-9)
            np.testing.assert_array_equal(h.probs, np.array(jh["scores"], dtype=np.float32))
        scores = [h.score for h in t.nbest]
        assert scores == sorted(scores, reverse=True)
    # without the weights, and in batches of 2: the same hypotheses, scores within 1e-5
    batched = attnlite.Translator(m, max_batch=2, max_beam=4)
    for t, j in zip(batched.translate(sentences, beam=4, alpha=alpha), ref):
        assert [h.text for h in t.nbest] == [jh["translation"] for jh in j["nbest"]]
        np.testing.assert_allclose([h.score for h in t.nbest], [jh["score"] for jh in j["nbest"]],
                                   rtol=0, atol=1e-5)


def _weights(j, key):
    return np.array(j["attention"][key], dtype=np.float64)


@pytest.mark.parametrize("extra", [[], ["--d2l-compat"], ["--beam", "3"]])
def test_transformer_attention_equals_cli_weights(d2l, fra, extra):
    opts = dict(d2l_compat="--d2l-compat" in extra, beam=3 if "--beam" in extra else 1)
    for path, m, sentences in ((D2L, d2l, BOOK), (FRA_PATH, fra, FRA[:3])):
        ref = cli_json("translate", "--model", path, "--json", "--weights", *extra, *sentences)
        tr = attnlite.Translator(m)
        got = tr.translate(sentences, attention=True, **opts)
        for t, j in zip(got, ref):
            assert t.text == j["translation"]
            L, NH, S = m.config["layers"], m.config["heads"], m.config["steps"]
            steps = t.steps
            assert t.enc_self.shape == (L, NH, S, S) == tuple(j["attention"]["encoder_self_shape"])
            assert t.dec_self.shape == (L, steps, NH, steps) == tuple(j["attention"]["decoder_self_shape"])
            assert t.cross.shape == (L, steps, NH, S) == tuple(j["attention"]["cross_shape"])
            for a in (t.enc_self, t.dec_self, t.cross):
                assert a.dtype == np.float32 and a.flags.c_contiguous
            np.testing.assert_allclose(t.enc_self, _weights(j, "encoder_self"), rtol=0, atol=1e-6)
            np.testing.assert_allclose(t.dec_self, _weights(j, "decoder_self"), rtol=0, atol=1e-6)
            np.testing.assert_allclose(t.cross, _weights(j, "cross"), rtol=0, atol=1e-6)
            # attention rows are distributions over the valid positions
            np.testing.assert_allclose(t.cross.sum(-1), 1, atol=1e-5)
            np.testing.assert_allclose(t.cross[..., t.src_valid:], 0, atol=1e-6)
            # causal: step t attends to steps k <= t
            assert np.all(np.triu(np.moveaxis(t.dec_self, 2, 1), 1) == 0)
        # decoded together (batched kernels round differently): within 1e-5
        for t, one in zip(attnlite.Translator(m, max_batch=4).translate(sentences, attention=True, **opts), got):
            assert t.text == one.text
            for a, b in ((t.enc_self, one.enc_self), (t.dec_self, one.dec_self), (t.cross, one.cross)):
                np.testing.assert_allclose(a, b, rtol=0, atol=1e-5)


def test_bahdanau_attention_equals_cli_weights(bahdanau):
    ref = cli_json("translate", "--model", BAHDANAU, "--json", "--weights", *BOOK)
    tr = attnlite.Translator(bahdanau)
    for t, j in zip(tr.translate(BOOK, attention=True), ref):
        S = bahdanau.config["steps"]
        assert t.enc_self is None and t.dec_self is None
        assert t.cross.shape == (t.steps, S) == tuple(j["attention"]["cross_shape"])
        np.testing.assert_allclose(t.cross, _weights(j, "cross"), rtol=0, atol=1e-6)


def test_results_are_copies(d2l):
    tr = attnlite.Translator(d2l)
    first = tr.translate("i'm home .", attention=True)
    text, probs, cross = first.text, first.probs.copy(), first.cross.copy()
    tr.translate("go .", attention=True)  # the C library reuses its buffers
    tr.close()
    assert first.text == text
    np.testing.assert_array_equal(first.probs, probs)
    np.testing.assert_array_equal(first.cross, cross)


def test_d2l_compat_and_max_steps_equal_cli(d2l, fra):
    tr = attnlite.Translator(d2l)
    assert [t.text for t in tr.translate(BOOK, d2l_compat=True)] == cli_texts(D2L, BOOK, "--d2l-compat")
    short = tr.translate("i'm home .", max_steps=2)
    assert short.text == cli_texts(D2L, ["i'm home ."], "--max-steps", 2)[0]
    assert len(short.tokens) == 2 and not short.eos and short.steps == 2
    # longer than the model's steps: the translator needs room for them
    long = attnlite.Translator(fra, max_tgt_steps=30)
    assert long.max_tgt_steps == 30
    s = "Tom wants to go to Paris tomorrow."
    assert long.translate(s, max_steps=30).text == cli_texts(FRA_PATH, [s], "--max-steps", 30)[0]


def test_unknown_words_and_truncation(d2l):
    tr = attnlite.Translator(d2l)
    t = tr.translate("i am xyzzy .")
    j = cli_json("translate", "--model", D2L, "--json", "i am xyzzy .")[0]
    assert t.text == j["translation"] and t.num_unknown == len(j["unknown"]) == 1
    long = " ".join(["go"] * 12) + " ."
    t = tr.translate(long)
    assert t.truncated and t.src_len == 14 and t.src_valid == 10
    assert t.text == cli_texts(D2L, [long])[0]


def test_normalization(d2l):
    tr = attnlite.Translator(d2l)
    assert tr.translate("I\u2019m home.").text == tr.translate("i'm home .").text == "je suis chez moi ."


def test_subword_model_equals_cli():
    # The default model (being retrained): only compared with the command line.
    sentences = ["Where is the station?", "I'm home."]
    with attnlite.Translator("transformer-fra-bpe", max_batch=2) as tr:
        got = tr.translate(sentences, attention=True)
        ref = cli_json("translate", "--json", "--weights", *sentences)
        for t, j in zip(got, ref):
            assert t.text == j["translation"] and t.tokens == j["tokens"]
            np.testing.assert_allclose(t.cross, _weights(j, "cross"), rtol=0, atol=1e-6)
