"""A tiny sub-word Transformer and what PyTorch makes of it, for attnlite's tests.

    /usr/bin/python3 tools/make_bpe_fixtures.py [CORPUS]

Writes tests/fixtures/bpe_tiny.safetensors: the book's Transformer (2 layers, 16 hidden
units, 2 heads) with random weights (seed 0), one embedding table shared by the encoder, the
decoder and the output layer, and a joint byte-pair table of 300 merges learned on the
training split (tools/bpe.py), in the metadata as the shipped sub-word model has it; its
int8 copy tests/fixtures/bpe_tiny-int8.safetensors (tools/quantize.py); and
tests/fixtures/bpe_tiny.json: for a few sentences, the pieces tools/bpe.py makes of them
(normalized first, as a translator reads them: tools/normalize.py) and PyTorch's greedy
translation (attnlite's decoder positions) of both files: token ids, pieces
and the detokenized text.
"""
import json
import os
import sys

import torch

from . import bpe
from . import d2l
from . import export
from . import normalize
from . import quantize
from . import safetensors as st
from . import splits
from .paths import DEFAULT_CORPUS, ROOT
from .train_subword import source_ids, translate_pieces

SENTENCES = [
    "Where is the station?",
    "I'm home.",
    "My brother's going to kill me.",
    "Tom bought a Zyxquorp yesterday, didn't he?",   # a word never seen: known pieces
    "She said:\u00a0\u00abno\u00bb!",                 # a non-breaking space, French quotes
    "Look at 漢字 now.",                               # characters never seen: <unk>
    "Wait... what?!",
    "I\u2019m \u201chome\u201d \u2014 wait\u2026",           # typed on a phone: ' " - ...
]
NUM_STEPS = 12


def translate(net, vocab, seg, sentence):
    ids = source_ids(seg(normalize.normalize(sentence)), vocab, NUM_STEPS)
    pieces = translate_pieces(net, [ids], vocab, NUM_STEPS)[0]
    return dict(ids=[vocab[p] for p in pieces], pieces=pieces, text=bpe.detokenize(pieces))


def main():
    corpus = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_CORPUS
    data = splits.load_raw(corpus)
    sents = [s for s, _ in data["train"]] + [t for _, t in data["train"]]
    alphabet, merges = bpe.learn(sents, 300)
    syms = bpe.symbols(alphabet, merges)
    seg = bpe.Segmenter(syms)
    tokens = ['<unk>', '<pad>', '<bos>', '<eos>'] + syms
    vocab = export.vocab_from_tokens(tokens)
    torch.manual_seed(0)
    H = 16
    net = d2l.make_transformer(len(tokens), len(tokens), num_hiddens=H, num_layers=2,
                               num_heads=2, ffn_num_hiddens=32, dropout=0.0)
    net.apply(d2l.xavier_init_weights)
    net.encoder.embedding = net.decoder.embedding
    net.decoder.dense.weight = net.decoder.embedding.weight
    torch.nn.init.normal_(net.decoder.embedding.weight, std=H ** -0.5)
    with torch.no_grad():
        net.decoder.dense.bias.normal_(0, 0.5)
    net.eval()
    config = export.transformer_config(tokens, tokens, H, 2, 2, 32, NUM_STEPS)
    config["shared_embeddings"] = True
    table = json.dumps({"end_of_word": bpe.END, "alphabet": alphabet,
                        "merges": [list(m) for m in merges]}, ensure_ascii=False)
    shared = {k: v for k, v in net.state_dict().items()
              if k not in ("encoder.embedding.weight", "decoder.dense.weight")}
    fx = os.path.join(ROOT, "tests", "fixtures")
    path = os.path.join(fx, "bpe_tiny.safetensors")
    export.save_model(net, path, "transformer", config, tokens, tokens,
                      {"random_seed": 0, "merges": 300}, tensors=shared,
                      extra={"attnlite.bpe": table},
                      license="Random weights (tools/make_bpe_fixtures.py), for tests only")
    tensors, meta = st.load(path)
    q_path = os.path.join(fx, "bpe_tiny-int8.safetensors")
    qt, qmeta = quantize.quantize_model(tensors, meta)
    st.save(q_path, qt, qmeta)
    out = {"sentences": []}
    qnet, _, _, _ = export.load_model(q_path, positions_from_cache=True)
    fnet, _, _, info = export.load_model(path, positions_from_cache=True)
    assert info["bpe"]["merges"] == [list(m) for m in merges]
    for s in SENTENCES:
        out["sentences"].append(dict(source=s, pieces=seg(normalize.normalize(s)),
                                     f32=translate(fnet, vocab, seg, s),
                                     int8=translate(qnet, vocab, seg, s)))
    with open(os.path.join(fx, "bpe_tiny.json"), "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
    for e in out["sentences"]:
        print(e["source"], "|", " ".join(e["pieces"]), "=>", e["f32"]["text"], "|", e["int8"]["text"])
