"""Reference translations of the shipped models, for attnlite's end-to-end parity tests.

    /usr/bin/python3 tools/make_translation_fixtures.py [CORPUS]

For models/transformer-d2l.safetensors and models/bahdanau-d2l.safetensors, and 54
English sentences (the book's four plus 50 from the corpus, see `pick_sentences`), run
the book's greedy `predict_seq2seq` with save_attention_weights=True and write
tests/fixtures/translate_transformer.safetensors and translate_bahdanau.safetensors.

Modes: the Transformer has `pos` (step t adds positional encoding P[:, t], attnlite's
default) and `d2l` (the book: every step adds P[:, 0]); the Bahdanau model has `d2l`.
Per sentence i and mode m:
    <m>.s<i>.tokens      I64 (n,)               predicted ids without <eos>
    <m>.s<i>.steps       I64 (1,)               number of decoder calls (n, or n+1 with <eos>)
    <m>.s<i>.bleu        F32 (1,)               bleu(prediction, reference, k=2)
  Transformer:
    <m>.s<i>.enc_attn.<l>  F32 (heads, 10, 10)      encoder self-attention, layer l
    <m>.s<i>.dec_self.<l>  F32 (steps, heads, steps) step t's weights in [t, :, :t+1], 0 elsewhere
    <m>.s<i>.cross.<l>     F32 (steps, heads, 10)    encoder-decoder attention
  Bahdanau:
    <m>.s<i>.attn          F32 (steps, 10)          additive attention of each step

The same translations serve tools/make_int8_fixtures.py (main_int8: the int8 book models and
their translations with the dequantized weights) and tools/book_table.py (main_book_table:
models/book_table.md).
"""
import argparse
import json
import os
from collections import OrderedDict

import torch

from . import d2l
from . import export
from . import quantize
from . import safetensors as st
from .fixtures_layers import write_readme_section
from .paths import DEFAULT_CORPUS, FIXTURES_DIR, MODELS_DIR, ROOT

MODELS = {
    "transformer": ("transformer-d2l.safetensors", [("pos", True), ("d2l", False)]),
    "bahdanau": ("bahdanau-d2l.safetensors", [("d2l", False)]),
}
TRANSLATE_MARKER = "<!-- translation fixtures -->"


def pick_sentences(corpus):
    """The book's 4 sentences + 25 from lines [0, 600) + 25 from lines [600, 5000).

    Lines of the preprocessed corpus are visited at a fixed stride (24 and 176); when
    the English side was already taken (or is one of the book's four), the next line
    is used instead.  Returns (english list, french reference list, line index list).
    """
    lines = d2l.preprocess_nmt(d2l.read_data_nmt(corpus)).split('\n')
    engs, fras, where = list(d2l.BOOK_ENGS), list(d2l.BOOK_FRAS), [-1] * 4
    seen = set(engs)
    for lo, hi, stride in ((0, 600, 24), (600, 5000, 176)):
        for k in range(25):
            i = lo + k * stride
            while True:
                assert i < hi, "ran out of lines"
                parts = lines[i].split('\t')
                if len(parts) == 2 and parts[0] not in seen:
                    break
                i += 1
            seen.add(parts[0])
            engs.append(parts[0])
            fras.append(parts[1])
            where.append(i)
    return engs, fras, where


class LogitMargin:
    """Records the smallest top-1 minus top-2 logit gap over all decoder calls."""

    def __init__(self, decoder):
        self.min = float("inf")
        self.h = decoder.register_forward_hook(self.hook)

    def hook(self, module, inputs, output):
        top2 = output[0][:, -1].topk(2, dim=-1).values
        self.min = min(self.min, (top2[:, 0] - top2[:, 1]).min().item())


def translate_all(net, src_vocab, tgt_vocab, engs, fras, num_steps, kind):
    """Run predict_seq2seq on every sentence; returns a list of dicts."""
    results = []
    ids = []  # argmax of every decoder call, recorded by a forward hook
    hook = net.decoder.register_forward_hook(
        lambda m, i, o: ids.append(int(o[0][0, -1].argmax())))
    eos = tgt_vocab['<eos>']
    for eng, fra in zip(engs, fras):
        ids.clear()
        with torch.no_grad():
            translation, attn_seq = d2l.predict_seq2seq(
                net, eng, src_vocab, tgt_vocab, num_steps, save_attention_weights=True)
        toks = ids[:-1] if ids and ids[-1] == eos else list(ids)
        assert len(ids) == len(attn_seq) and eos not in toks
        assert ' '.join(tgt_vocab.to_tokens(toks)) == translation
        r = dict(eng=eng, ref=fra, translation=translation, tokens=toks,
                 steps=len(attn_seq), bleu=d2l.bleu(translation, fra, k=2))
        S = len(attn_seq)
        if kind == "transformer":
            L = net.decoder.num_layers
            r["enc_attn"] = [net.encoder.attention_weights[l].clone() for l in range(L)]
            heads = attn_seq[0][0][0].shape[0]
            Tk = attn_seq[0][1][0].shape[-1]
            ds = [torch.zeros(S, heads, S) for _ in range(L)]
            cr = [torch.zeros(S, heads, Tk) for _ in range(L)]
            for t, (self_w, cross_w) in enumerate(attn_seq):
                for l in range(L):
                    ds[l][t, :, :t + 1] = self_w[l][:, 0, :]
                    cr[l][t] = cross_w[l][:, 0, :]
            r["dec_self"], r["cross"] = ds, cr
        else:
            # each step: a list with one (1, 1, T_src) tensor
            r["attn"] = torch.stack([w[0][0, 0] for w in attn_seq], 0) if S else \
                torch.zeros(0, num_steps)
        results.append(r)
    hook.remove()
    return results


def run_model(kind, engs, fras, models_dir, model=None, dtype=torch.float32):
    """Translations of every mode of a model: model = (file name in models_dir, modes),
    MODELS[kind] by default; computed in dtype, stored as float32.  Returns (tensors,
    {mode: results and margin})."""
    fname, modes = model or MODELS[kind]
    out = OrderedDict()
    per_mode = OrderedDict()
    for mode, pfc in modes:
        net, src_vocab, tgt_vocab, info = export.load_model(os.path.join(models_dir, fname),
                                                            positions_from_cache=pfc)
        net = net.to(dtype)
        num_steps = info["config"]["num_steps"]
        margin = LogitMargin(net.decoder)
        res = translate_all(net, src_vocab, tgt_vocab, engs, fras, num_steps, kind)
        margin.h.remove()
        per_mode[mode] = dict(results=res, margin=margin.min)
        for i, r in enumerate(res):
            p = f"{mode}.s{i}."
            out[p + "tokens"] = torch.tensor(r["tokens"], dtype=torch.int64)
            out[p + "steps"] = torch.tensor([r["steps"]], dtype=torch.int64)
            out[p + "bleu"] = torch.tensor([r["bleu"]], dtype=torch.float32)
            if kind == "transformer":
                for l, w in enumerate(r["enc_attn"]):
                    out[p + f"enc_attn.{l}"] = w.float()
                for l, w in enumerate(r["dec_self"]):
                    out[p + f"dec_self.{l}"] = w.float()
                for l, w in enumerate(r["cross"]):
                    out[p + f"cross.{l}"] = w.float()
            else:
                out[p + "attn"] = r["attn"].float()
    return out, per_mode


def run_exact(kind, engs, fras, models_dir, model=None):
    """run_model in float64 (the model's exact values, rounded to float32 when stored) and
    PyTorch's own float32 error E: the largest distance of any attention weight of its
    float32 run from them.  Returns (tensors, per_mode, E)."""
    out, per_mode = run_model(kind, engs, fras, models_dir, model, dtype=torch.float64)
    out32, _ = run_model(kind, engs, fras, models_dir, model)
    assert out.keys() == out32.keys()
    for k in out:
        if not out[k].is_floating_point():
            assert torch.equal(out[k], out32[k]), f"{k}: float32 and float64 decode differently"
    err = max(float((out32[k].double() - out[k].double()).abs().max()) if out[k].numel() else 0.0
              for k in out if out[k].is_floating_point() and "bleu" not in k)
    return out, per_mode, err


EXACT_NOTE = ("PyTorch computes the fixtures in float64: the model's exact values, rounded to "
              "float32 when stored. The same run in float32 gives PyTorch's own float32 error, "
              "the largest distance of any of its attention weights from those values "
              "(metadata `float32_error`, E). The tests allow attnlite 1e-5 + E from them: "
              "what 1e-5 from PyTorch's float32 run guaranteed (|attnlite - exact| <= "
              "|attnlite - PyTorch| + E), without the tie to PyTorch's own rounding, which "
              "failed float32 computations no farther from the exact values than PyTorch's "
              "(the scalar kernels on 32-bit Arm, the GPU).")


def translation_meta(engs, fras, per_mode, where, model):
    """The `__metadata__` of a translation fixture file."""
    return OrderedDict([
        ("sentences", json.dumps(engs, ensure_ascii=False)),
        ("references", json.dumps(fras, ensure_ascii=False)),
        ("modes", json.dumps(list(per_mode))),
        ("lines", json.dumps(where)),
        ("model", model),
    ])


def readme_section(kind_summaries):
    lines = [TRANSLATE_MARKER, "",
             "## `translate_transformer.safetensors`, `translate_bahdanau.safetensors`", "",
             "Generated by `tools/make_translation_fixtures.py` from the shipped models "
             "`models/transformer-d2l.safetensors` and `models/bahdanau-d2l.safetensors`: "
             "the book's greedy `predict_seq2seq` (source `lower().split(' ')` + `<eos>`, "
             "valid length counted before truncate/pad to 10, argmax, stop at `<eos>`, "
             "attention weights saved at every decoder call including the `<eos>` one) on "
             "54 sentences: the book's four, then 25 from lines [0, 600) and 25 from lines "
             "[600, 5000) of the preprocessed corpus (the latter contain words outside "
             "the vocabulary). " + EXACT_NOTE, "",
             "`__metadata__`: `sentences` (JSON array of the English inputs), `references` "
             "(their French references, preprocessed), `modes` (JSON array of prefixes), "
             "`lines` (corpus line of each sentence, -1 for the book's four), `model`, "
             "`float32_error`.", "",
             "Modes: Transformer `pos` (step t adds P[:, t]; attnlite's default) and `d2l` "
             "(the book: every step adds P[:, 0]); Bahdanau `d2l` only.", "",
             "| tensor | dtype | shape |", "|---|---|---|",
             "| `<m>.s<i>.tokens` | I64 | [n]: predicted ids without `<eos>` (n may be 0) |",
             "| `<m>.s<i>.steps` | I64 | [1]: number of decoder calls (n, or n+1 when "
             "`<eos>` was produced) |",
             "| `<m>.s<i>.bleu` | F32 | [1]: `bleu(prediction, reference, k=2)` |",
             "| `<m>.s<i>.enc_attn.<l>` (Transformer) | F32 | [heads, 10, 10] |",
             "| `<m>.s<i>.dec_self.<l>` (Transformer) | F32 | [steps, heads, steps]; "
             "step t in `[t, :, :t+1]`, zero elsewhere |",
             "| `<m>.s<i>.cross.<l>` (Transformer) | F32 | [steps, heads, 10] |",
             "| `<m>.s<i>.attn` (Bahdanau) | F32 | [steps, 10] |", ""]
    lines += kind_summaries
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--models", default=MODELS_DIR)
    ap.add_argument("--out", default=FIXTURES_DIR)
    args = ap.parse_args()
    torch.set_num_threads(1)
    engs, fras, where = pick_sentences(args.corpus)
    assert len(engs) == 54 and len(set(engs)) == 54
    summaries = []
    for kind in MODELS:
        tensors, per_mode, f32_err = run_exact(kind, engs, fras, args.models)
        meta = translation_meta(engs, fras, per_mode, where, "models/" + MODELS[kind][0])
        meta["float32_error"] = repr(f32_err)
        path = os.path.join(args.out, f"translate_{kind}.safetensors")
        n = st.save(path, tensors, meta)
        print(f"{os.path.relpath(path, ROOT)}: {len(tensors)} tensors, {n} bytes")
        for mode, d in per_mode.items():
            res = d["results"]
            avg = sum(r["bleu"] for r in res) / len(res)
            empty = sum(1 for r in res if not r["tokens"])
            noeos = sum(1 for r in res if r["steps"] == len(r["tokens"]))
            print(f"  {mode}: mean bleu {avg:.4f}, min top-2 logit margin {d['margin']:.5f}, "
                  f"empty outputs {empty}, without <eos> {noeos}")
            summaries.append(f"- `translate_{kind}` mode `{mode}`: mean BLEU (k=2) "
                             f"{avg:.4f}; smallest top-1/top-2 logit gap over all greedy "
                             f"steps {d['margin']:.5f}; {empty} empty outputs; {noeos} "
                             f"sentences stop at 10 steps without `<eos>`; PyTorch's float32 "
                             f"error {f32_err:.3g}.")
    write_readme_section(os.path.join(args.out, "README.md"), TRANSLATE_MARKER,
                         readme_section(summaries))



INT8_MARKER = "<!-- int8 fixtures -->"


def main_int8():
    """tools/make_int8_fixtures.py"""
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--out", default=FIXTURES_DIR)
    args = ap.parse_args()
    torch.set_num_threads(1)
    engs, fras, where = pick_sentences(args.corpus)
    lines = [INT8_MARKER, "", "## Int8 models and `translate_int8_*.safetensors`", "",
             "Generated by `tools/make_int8_fixtures.py`: `transformer-d2l-int8` and "
             "`bahdanau-d2l-int8` are the shipped book models after `tools/quantize.py` "
             "(per-output-channel symmetric int8 for every linear weight and embedding "
             "table). The translation fixtures are the book's greedy `predict_seq2seq` with "
             "the dequantized weights (scale * q), same 54 sentences and layout as "
             "`translate_*.safetensors`; the Transformer in mode `pos` only. In float64, "
             "scale * q is exact (a float32 times a 7-bit integer). " + EXACT_NOTE, ""]
    for kind, modes in (("transformer", [("pos", True)]), ("bahdanau", [("d2l", False)])):
        src = os.path.join(MODELS_DIR, f"{kind}-d2l.safetensors")
        qpath = os.path.join(args.out, f"{kind}-d2l-int8.safetensors")
        n = st.save(qpath, *quantize.quantize_model(*st.load(src)))
        out, per_mode, f32_err = run_exact(kind, engs, fras, args.out,
                                           model=(os.path.basename(qpath), modes))
        fmeta = translation_meta(engs, fras, per_mode, where,
                                 "tests/fixtures/" + os.path.basename(qpath))
        fmeta["float32_error"] = repr(f32_err)
        path = os.path.join(args.out, f"translate_int8_{kind}.safetensors")
        m = st.save(path, out, fmeta)
        for mode, d in per_mode.items():
            res = d["results"]
            avg = sum(r["bleu"] for r in res) / len(res)
            msg = (f"- `{kind}-d2l-int8` ({n} bytes) mode `{mode}`: mean BLEU (k=2) {avg:.4f}; "
                   f"smallest top-1/top-2 logit gap {d['margin']:.5f}; PyTorch's float32 "
                   f"error {f32_err:.3g}")
            print(msg, f"-> {os.path.relpath(path, ROOT)} ({m} bytes)")
            lines.append(msg)
    write_readme_section(os.path.join(args.out, "README.md"), INT8_MARKER,
                         "\n".join(lines) + "\n")


BOOK_TABLE_COLUMNS = [
    ("transformer", "pos", "Transformer, position t at step t (attnlite default)"),
    ("transformer", "d2l", "Transformer, position 0 every step (book, `--d2l-compat`)"),
    ("bahdanau", "d2l", "Bahdanau GRU (book)")]


def main_book_table():
    """tools/book_table.py"""
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="?", default=DEFAULT_CORPUS)
    ap.add_argument("--models", default=MODELS_DIR)
    args = ap.parse_args()
    torch.set_num_threads(1)
    engs, fras, _ = pick_sentences(args.corpus)
    cols = []
    info = {}
    for kind, mode, title in BOOK_TABLE_COLUMNS:
        fname, modes = MODELS[kind]
        pfc = dict(modes)[mode]
        net, sv, tv, meta = export.load_model(os.path.join(args.models, fname),
                                              positions_from_cache=pfc)
        info[kind] = meta["training"]
        res = translate_all(net, sv, tv, engs, fras, meta["config"]["num_steps"], kind)
        cols.append((title, res))

    out = ["# The book's translations, reproduced", "",
           "Greedy decoding (`predict_seq2seq`, num_steps 10) with the models in this "
           "folder; BLEU with k=2 against the book's references. Generated by "
           "`tools/book_table.py`.", "",
           "| English | reference | " + " | ".join(t for t, _ in cols) + " |",
           "|---|---|" + "---|" * len(cols)]
    for i in range(len(d2l.BOOK_ENGS)):
        cells = [f"`{r[i]['translation']}` ({r[i]['bleu']:.3f})" for _, r in cols]
        out.append(f"| `{engs[i]}` | `{fras[i]}` | " + " | ".join(cells) + " |")
    means = [sum(x["bleu"] for x in r) / len(r) for _, r in cols]
    out.append(f"| mean BLEU, {len(engs)} sentences | | " +
               " | ".join(f"{m:.3f}" for m in means) + " |")
    out += ["", "Training (final loss per token, as the book prints it): " +
            ", ".join(f"{k} {v['final_loss']:.3f} after {v['epochs']} epochs (seed "
                      f"{v['seed']})" for k, v in info.items()) + ".", ""]
    print("\n".join(out))
