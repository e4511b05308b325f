"""attnlite.export: nets built with the book's code (tools/attnlite_tools/d2l, the project's
copy of d2l.ai v0.17 chapter 10) and the lab's language model and ViT, exported, loaded by
the C library and compared with PyTorch; and the files are byte for byte those of the
project's reference writer (tools/attnlite_tools: export.save_model, lm.save_lm,
vit.save_vit, quantize.quantize_model).

The translators are trained for a few epochs on the first 200 pairs of
../shared/data/fra-eng/fra.txt with the book's loop; skipped without PyTorch or without that
corpus."""

import functools
import json
import subprocess
import sys

import numpy as np
import pytest

import attnlite
from conftest import ROOT

torch = pytest.importorskip("torch")
torch.set_num_threads(1)

sys.path.insert(0, str(ROOT / "tools"))
from attnlite_tools import d2l  # noqa: E402
from attnlite_tools import export as ref  # noqa: E402
from attnlite_tools import fixtures_translation as ft  # noqa: E402
from attnlite_tools import lm as lab_lm  # noqa: E402
from attnlite_tools import quantize  # noqa: E402
from attnlite_tools import safetensors as st  # noqa: E402
from attnlite_tools import vit as lab_vit  # noqa: E402

CORPUS = ROOT.parent / "shared" / "data" / "fra-eng" / "fra.txt"
NUM_STEPS, EXAMPLES, EPOCHS = 10, 200, 20
TRAINING = dict(epochs=EPOCHS, lr=0.005, batch_size=64, seed=0, examples=EXAMPLES)


@functools.lru_cache(maxsize=None)
def trained(kind):
    """(net, src_vocab, tgt_vocab): a tiny book model trained with d2l.train_seq2seq."""
    if not CORPUS.is_file():
        pytest.skip(f"{CORPUS} is absent")
    torch.manual_seed(0)
    data, sv, tv = d2l.load_data_nmt(64, NUM_STEPS, EXAMPLES, path=str(CORPUS))
    if kind == "transformer":
        net = d2l.make_transformer(len(sv), len(tv), num_hiddens=32, num_layers=2, num_heads=4,
                                   ffn_num_hiddens=64, dropout=0.1)
    else:
        net = d2l.make_bahdanau(len(sv), len(tv), embed_size=24, num_hiddens=32, num_layers=2,
                                dropout=0.1)
    d2l.train_seq2seq(net, data, 0.005, EPOCHS, tv, log=lambda msg: None)
    net.eval()
    return net, sv, tv


def reference_config(kind, sv, tv):
    if kind == "transformer":
        return ref.transformer_config(sv, tv, 32, 2, 4, 64, NUM_STEPS)
    return ref.bahdanau_config(sv, tv, 24, 32, 2, NUM_STEPS)


def book_translations(net, sv, tv, kind):
    """The book's predict_seq2seq on its four sentences (ids, steps, attention)."""
    return ft.translate_all(net, sv, tv, d2l.BOOK_ENGS, d2l.BOOK_FRAS, NUM_STEPS, kind)


def assert_same_translations(tr, book, kind, d2l_compat=True, attention=True):
    got = tr.translate(d2l.BOOK_ENGS, d2l_compat=d2l_compat, attention=attention)
    for t, r in zip(got, book):
        assert (t.ids, t.steps) == (r["tokens"], r["steps"]), (t.source, t.text, r["translation"])
        assert t.text == r["translation"]
        if not attention:
            continue
        if kind == "transformer":
            for l in range(len(r["enc_attn"])):
                np.testing.assert_allclose(t.enc_self[l], r["enc_attn"][l].numpy(), atol=1e-5)
                np.testing.assert_allclose(t.dec_self[l], r["dec_self"][l].numpy(), atol=1e-5)
                np.testing.assert_allclose(t.cross[l], r["cross"][l].numpy(), atol=1e-5)
        else:
            np.testing.assert_allclose(t.cross, r["attn"].numpy(), atol=1e-5)


KINDS = ["transformer", "bahdanau"]


@pytest.mark.parametrize("kind", KINDS)
def test_translator_round_trip(kind, tmp_path):
    net, sv, tv = trained(kind)
    path = tmp_path / f"{kind}.safetensors"
    n = attnlite.export(net, sv, tv, path, num_steps=NUM_STEPS, training=TRAINING)
    assert n == path.stat().st_size
    with attnlite.Model.load(path) as m:
        cfg = m.config
        assert (m.kind, cfg["layers"], cfg["steps"], cfg["hiddens"], cfg["int8"]) == (
            kind, 2, NUM_STEPS, 32, False)
        assert cfg["heads"] == (4 if kind == "transformer" else 1)
        assert (cfg["src_vocab_size"], cfg["tgt_vocab_size"]) == (len(sv), len(tv))
        assert m.src_vocab == sv.idx_to_token and m.tgt_vocab == tv.idx_to_token
        assert json.loads(m.metadata("attnlite.training")) == TRAINING
        assert m.license is None
        tr = attnlite.Translator(m, max_batch=4)
        # the book: position 0 at every decoder step (d2l_compat)
        assert_same_translations(tr, book_translations(net, sv, tv, kind), kind)
        if kind == "transformer":  # attnlite's default: position t at step t
            net.decoder.positions_from_cache = True
            try:
                assert_same_translations(tr, book_translations(net, sv, tv, kind), kind,
                                         d2l_compat=False)
            finally:
                net.decoder.positions_from_cache = False


@pytest.mark.parametrize("kind", KINDS)
def test_translator_int8(kind, tmp_path):
    net, sv, tv = trained(kind)
    path = tmp_path / f"{kind}-int8.safetensors"
    attnlite.export(net, sv, tv, path, num_steps=NUM_STEPS, int8=True)
    with attnlite.Model.load(path) as m:
        assert m.config["int8"]
        assert m.metadata("attnlite.quantization").startswith("int8 symmetric per output channel")
        # the PyTorch reference of an int8 file: the same net with the dequantized weights
        qnet, qsv, qtv, _ = ref.load_model(str(path), positions_from_cache=False)
        assert qsv.idx_to_token == sv.idx_to_token and qtv.idx_to_token == tv.idx_to_token
        tr = attnlite.Translator(m, max_batch=4)
        assert_same_translations(tr, book_translations(qnet, sv, tv, kind), kind,
                                 attention=False)


@pytest.mark.parametrize("kind", KINDS)
def test_translator_file_equals_reference_writer(kind, tmp_path):
    net, sv, tv = trained(kind)
    mine, theirs = tmp_path / "mine.safetensors", tmp_path / "ref.safetensors"
    attnlite.export(net, sv, tv, mine, num_steps=NUM_STEPS, license=ref.LICENSE,
                    training=TRAINING)
    ref.save_model(net, str(theirs), kind, reference_config(kind, sv, tv),
                   ref.vocab_tokens(sv), ref.vocab_tokens(tv), TRAINING)
    assert mine.read_bytes() == theirs.read_bytes()
    attnlite.export(net, sv, tv, mine, num_steps=NUM_STEPS, license=ref.LICENSE,
                    training=TRAINING, int8=True)
    st.save(str(theirs), *quantize.quantize_model(*st.load(str(theirs))))
    assert mine.read_bytes() == theirs.read_bytes()


# ---- the language model and the ViT: small random nets --------------------------------------

LM_WORDS = ("je tu il elle nous vous suis es est sommes êtes sont très content contente "
            "là ici . !").split()
LM_HP = dict(d_model=16, num_heads=2, num_layers=2, dim_feedforward=32, activation="gelu")


@functools.lru_cache(maxsize=None)
def random_lm():
    torch.manual_seed(1)
    vocab = d2l.Vocab([LM_WORDS], reserved_tokens=lab_lm.RESERVED)
    net = lab_lm.DecoderOnlyLM(len(vocab), LM_HP["d_model"], LM_HP["num_heads"],
                               LM_HP["num_layers"], LM_HP["dim_feedforward"], dropout=0.0,
                               activation=LM_HP["activation"])
    return net.eval(), vocab


def greedy(net, vocab, prompt, context):
    """The net's greedy continuation, as attnlite.Generator decodes: argmax until <eos> or a
    full context (the last token is not read)."""
    ids = [vocab["<bos>"]] + vocab[prompt.split()]
    with torch.no_grad():
        while True:
            ids.append(int(net(torch.tensor([ids]))[0, -1].argmax()))
            if ids[-1] == vocab["<eos>"] or len(ids) == context + 1:
                return ids


def test_lm_round_trip_and_reference_writer(tmp_path):
    net, vocab = random_lm()
    path, theirs = tmp_path / "lm.safetensors", tmp_path / "ref.safetensors"
    evaluation, training = {"perplexity": 12.5}, {"epochs": 0}
    attnlite.export(net, path, vocab=vocab, eval=evaluation, license=lab_lm.LICENSE,
                    training=training)
    lab_lm.save_lm(net, str(theirs), lab_lm.lm_config(len(vocab), LM_HP), vocab, evaluation,
                   training)
    assert path.read_bytes() == theirs.read_bytes()
    with attnlite.Model.load(path) as m:
        assert m.kind == "lm" and m.tgt_vocab == vocab.idx_to_token
        g = attnlite.Generator(m)
        assert g.context == lab_lm.MAX_LEN
        for prompt in ("je suis", "tu es très", "nous"):
            assert g.generate(prompt).ids == greedy(net, vocab, prompt, lab_lm.MAX_LEN)
    # int8: the reference writer's quantization, and the dequantized net's greedy tokens
    attnlite.export(net, path, vocab=vocab, eval=evaluation, license=lab_lm.LICENSE,
                    training=training, int8=True)
    st.save(str(theirs), *quantize.quantize_model(*st.load(str(theirs))))
    assert path.read_bytes() == theirs.read_bytes()
    qnet, _, _ = lab_lm.load_lm(str(path))
    with attnlite.Model.load(path) as m:
        assert m.config["int8"]
        g = attnlite.Generator(m)
        for prompt in ("je suis", "il est"):
            assert g.generate(prompt).ids == greedy(qnet, vocab, prompt, lab_lm.MAX_LEN)


def test_lm_context(tmp_path):
    net, vocab = random_lm()
    path = tmp_path / "lm.safetensors"
    attnlite.export(net, path, vocab=vocab, num_steps=8)
    with attnlite.Model.load(path) as m:
        g = attnlite.Generator(m)
        assert g.context == 8 and m.config["file"]["max_len"] == 8
        r = g.generate("je suis")
        assert r.ids == greedy(net, vocab, "je suis", 8)


VIT_CFG = dict(image_size=8, patch_size=2, in_channels=1, num_classes=10, embed_dim=16,
               depth=2, num_heads=2, dim_feedforward=32, activation="gelu",
               input_scale=1 / 16)


@functools.lru_cache(maxsize=None)
def random_vit():
    torch.manual_seed(2)
    c = VIT_CFG
    net = lab_vit.VisionTransformer(c["image_size"], c["patch_size"], c["in_channels"],
                                    c["num_classes"], c["embed_dim"], c["depth"],
                                    c["num_heads"], dropout=0.0,
                                    dim_feedforward=c["dim_feedforward"],
                                    activation=c["activation"])
    with torch.no_grad():  # away from the initialisation's zeros and ones
        for p in net.parameters():
            p.add_(0.2 * torch.randn_like(p))
    return net.eval()


def test_vit_round_trip_and_reference_writer(tmp_path):
    net = random_vit()
    labels = [f"digit {d}" for d in range(10)]
    cfg = lab_vit.vit_config(**{k: v for k, v in VIT_CFG.items()})
    images = np.random.RandomState(0).randint(0, 17, size=(6, 8, 8)).astype(np.float32)
    path, theirs = tmp_path / "vit.safetensors", tmp_path / "ref.safetensors"
    for int8 in (False, True):
        attnlite.export(net, path, labels=labels, input_scale=VIT_CFG["input_scale"], int8=int8)
        lab_vit.save_vit(net, str(theirs), cfg, labels, int8=int8)
        assert path.read_bytes() == theirs.read_bytes()
        torch_net = lab_vit.load_vit(str(path))[0] if int8 else net  # int8: dequantized
        with torch.no_grad():
            x = lab_vit.input_tensor(images[:, None], cfg)
            want = torch.softmax(torch_net(x), dim=-1).numpy()
        with attnlite.Model.load(path) as m:
            assert m.kind == "vit" and m.config["int8"] == int8
            c = attnlite.Classifier(m)
            assert c.labels == labels
            for img, p in zip(images, want):
                r = c.classify(img)
                np.testing.assert_allclose(r.probs, p, rtol=0, atol=1e-5)
                assert r.label == labels[int(np.argmax(p))]


# ---- what export refuses, and what it accepts ----------------------------------------------

def tiny_vocab(n, prefix="w"):
    return ["<unk>", "<pad>", "<bos>", "<eos>"] + [f"{prefix}{i}" for i in range(n - 4)]


def tiny_transformer():
    torch.manual_seed(3)
    return d2l.make_transformer(9, 10, num_hiddens=8, num_layers=1, num_heads=2,
                                ffn_num_hiddens=16).eval()


def test_vocabularies_as_lists_or_objects(tmp_path):
    net = tiny_transformer()
    sv, tv = tiny_vocab(9), tiny_vocab(10, "f")
    a, b = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
    attnlite.export(net, sv, tv, a, num_steps=6)
    attnlite.export(net, path=b, src_vocab=ref.vocab_from_tokens(sv),
                    tgt_vocab=ref.vocab_from_tokens(tv), num_steps=6)
    assert a.read_bytes() == b.read_bytes()
    # the book's empty token (a double space in the corpus) is stored as <empty>
    tv2 = tv[:-1] + [""]
    attnlite.export(net, sv, tv2, a, num_steps=6, note="x", extra={"k": 1})
    with attnlite.Model.load(a) as m:
        assert m.tgt_vocab[-1] == "<empty>"
        assert m.metadata("attnlite.note") == "x" and m.metadata("attnlite.extra") == '{"k": 1}'
        assert m.config["file"]["num_steps"] == 6 and m.config["file"]["use_bias"] is False


def test_refusals(tmp_path):
    p = tmp_path / "x.safetensors"
    net = tiny_transformer()
    sv, tv = tiny_vocab(9), tiny_vocab(10)
    with pytest.raises(ValueError, match="does not know a Linear"):
        attnlite.export(torch.nn.Linear(2, 2), sv, tv, p, num_steps=6)
    with pytest.raises(ValueError, match="torch.nn.Module"):
        attnlite.export(object(), sv, tv, p, num_steps=6)
    with pytest.raises(ValueError, match="num_steps is required"):
        attnlite.export(net, sv, tv, p)
    with pytest.raises(ValueError, match="src_vocab has 10 tokens but the net's embedding has 9"):
        attnlite.export(net, tv, tv, p, num_steps=6)
    with pytest.raises(ValueError, match="lacks the reserved token '<bos>'"):
        attnlite.export(net, sv, [t if t != "<bos>" else "x" for t in tv], p, num_steps=6)
    with pytest.raises(ValueError, match="must start with '<unk>'"):
        attnlite.export(net, sv, tv[1:] + ["z"], p, num_steps=6)
    with pytest.raises(ValueError, match="written by export itself"):
        attnlite.export(net, sv, tv, p, num_steps=6, config={})
    with pytest.raises(TypeError, match="needs tgt_vocab, path"):
        attnlite.export(net, sv, num_steps=6)
    # a Bahdanau model with an LSTM
    lstm = d2l.EncoderDecoder(d2l.Seq2SeqLSTMEncoder(9, 8, 8, 1),
                              d2l.Seq2SeqAttentionDecoder(10, 8, 8, 1))
    with pytest.raises(ValueError, match="only GRU Bahdanau models"):
        attnlite.export(lstm, sv, tv, p, num_steps=6)
    # unlike layer counts; a tensor attnlite would not read
    odd = d2l.EncoderDecoder(tiny_transformer().encoder,
                             d2l.make_transformer(9, 10, num_hiddens=8, num_layers=2,
                                                  num_heads=2, ffn_num_hiddens=16).decoder)
    with pytest.raises(ValueError, match="encoder has 1 blocks and the decoder 2"):
        attnlite.export(odd, sv, tv, p, num_steps=6)
    extra = tiny_transformer()
    extra.decoder.extra = torch.nn.Linear(8, 8)
    with pytest.raises(ValueError, match="unexpected decoder.extra.weight"):
        attnlite.export(extra, sv, tv, p, num_steps=6)
    # the language model and the ViT
    lm_net, vocab = random_lm()
    with pytest.raises(TypeError, match="needs vocab="):
        attnlite.export(lm_net, p)
    with pytest.raises(ValueError, match="vocab has 20 tokens but the net's embedding has 23"):
        attnlite.export(lm_net, p, vocab=vocab.idx_to_token[:20])
    vit_net = random_vit()
    with pytest.raises(ValueError, match="9 labels for 10 classes"):
        attnlite.export(vit_net, p, labels=[str(d) for d in range(9)])
    with pytest.raises(ValueError, match="input_scale must be a number > 0"):
        attnlite.export(vit_net, p, labels=[str(d) for d in range(10)], input_scale=0)
    assert not p.exists()


def test_import_does_not_need_torch():
    """The package imports PyTorch inside export() only."""
    code = ("import sys\n"
            "if sys.argv[1]: sys.path.insert(0, sys.argv[1])\n"
            "import attnlite\n"
            "assert callable(attnlite.export) and 'torch' not in sys.modules, sys.modules.keys()")
    here = str(ROOT / "python")
    pkg = here if attnlite.__file__.startswith(here) else ""
    subprocess.run([sys.executable, "-c", code, pkg], check=True, timeout=60)
