"""attnlite.Generator against `attnlite generate` and `attnlite eval --perplexity`."""

import numpy as np
import pytest

import attnlite
from conftest import FIXTURES, MODELS, cli, cli_json

LM = MODELS / "lm-fra.safetensors"
PROMPTS = ["je suis", "tu", "il est très", "nous"]
SAMPLING = [
    ([], {}),
    (["--max-tokens", 3], dict(max_tokens=3)),
    (["--seed", 7], dict(seed=7)),
    (["--sample"], dict(sample=True)),
    (["--seed", 11, "--top-k", 20], dict(seed=11, top_k=20)),
    (["--seed", 3, "--top-p", 0.9, "--temperature", 0.8], dict(seed=3, top_p=0.9, temperature=0.8)),
    (["--seed", 5, "--temperature", 1.5, "--max-tokens", 4], dict(seed=5, temperature=1.5, max_tokens=4)),
]


@pytest.mark.parametrize("flags,kwargs", SAMPLING)
def test_generate_equals_cli(lm, flags, kwargs):
    g = attnlite.Generator(lm)
    for prompt in PROMPTS:
        # --json records the attention weights (the kernels' unfused path): so does attention=True.
        j = cli_json("generate", "--model", LM, "--json", *flags, prompt)[0]
        r = g.generate(prompt, attention=True, **kwargs)
        assert r.text == j["text"]
        assert r.continuation == j["continuation"]
        assert r.tokens == j["tokens"]
        assert r.ids == j["token_ids"]
        assert (r.num_prompt, r.num_generated, r.num_unknown, r.eos) == (
            j["num_prompt"], j["num_generated"], j["num_unknown"], j["eos"])
        assert r.probs.dtype == np.float32 and r.probs.shape == (r.num_generated,)
        np.testing.assert_array_equal(r.probs, np.array(j["probs"], dtype=np.float32))
        assert r.attention.shape == tuple(j["attention_shape"])
        # the plain text (no weights recorded) is the command line's plain output
        assert g.generate(prompt, **kwargs).text == cli("generate", "--model", LM, *flags, prompt).rstrip("\n")


def test_attention_equals_cli_weights(lm):
    g = attnlite.Generator(lm)
    j = cli_json("generate", "--model", LM, "--json", "--weights", "--max-tokens", 5, "je suis")[0]
    r = g.generate("je suis", max_tokens=5, attention=True)
    L, NH, P, _ = j["attention_shape"]
    assert r.attention.shape == (L, NH, P, P) == (3, 4, P, P)
    np.testing.assert_allclose(r.attention, np.array(j["attention"]), rtol=0, atol=1e-6)
    np.testing.assert_allclose(r.attention.sum(-1), 1, atol=1e-5)
    assert np.all(np.triu(r.attention, 1) == 0)  # causal
    assert g.generate("je suis", max_tokens=5).attention is None


def test_seeded_sampling_is_reproducible_and_differs_from_greedy(lm):
    g = attnlite.Generator(lm)
    a = [g.generate("je", seed=s, max_tokens=6).text for s in range(6)]
    b = [g.generate("je", seed=s, max_tokens=6).text for s in range(6)]
    assert a == b
    assert len(set(a)) > 1


def test_stream_yields_the_generated_tokens(lm):
    g = attnlite.Generator(lm)
    for kwargs in ({}, dict(seed=7), dict(max_tokens=3)):
        r = g.generate("je suis", **kwargs)
        assert list(g.stream("je suis", **kwargs)) == r.tokens[1 + r.num_prompt:]


def test_calls_inside_a_stream_raise(lm):
    g = attnlite.Generator(lm)
    it = g.stream("je suis")
    first = next(it)
    with pytest.raises(attnlite.Error, match="streaming"):
        g.generate("tu")
    with pytest.raises(attnlite.Error, match="streaming"):
        g.perplexity(["tu es là ."])
    rest = list(it)
    assert [first] + rest == list(g.stream("je suis"))
    it = g.stream("je suis")
    next(it)
    it.close()  # an iteration closed early frees the generator
    assert g.generate("je suis").text
    it = g.stream("je suis")
    next(it)
    g.close()  # from inside the iteration: its next step raises
    with pytest.raises(attnlite.Error, match="generator is closed"):
        next(it)


def test_perplexity_equals_cli(lm):
    path = FIXTURES / "lm_fra_ppl.txt"
    j = cli_json("eval", "--perplexity", path, "--model", LM, "--json")[0]
    g = attnlite.Generator(lm)
    with open(path, encoding="utf-8") as f:
        p = g.perplexity(f)
    assert (p.tokens, p.sentences, p.skipped) == (j["tokens"], j["sentences"], j["skipped"])
    assert p.nll == pytest.approx(j["nll"], rel=1e-12)
    assert p.perplexity == pytest.approx(j["perplexity"], rel=1e-12)
    assert g.perplexity(path.read_text(encoding="utf-8")) == p  # one str of lines
    one = g.perplexity(["je suis content ."])
    assert one.sentences == 1 and one.tokens == 5 and one.perplexity > 1
    with pytest.raises(attnlite.Error, match="no sentence could be scored"):
        g.perplexity(["", ""])


def test_context_and_repr(lm):
    g = attnlite.Generator(lm)
    assert g.context == 32
    assert "context=32" in repr(g)
