"""Every failure raises an exception (attnlite.Error with the library's message, TypeError,
ValueError) and none takes the interpreter down."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import attnlite
from conftest import FIXTURES, MODELS, ROOT, refused_cuda

D2L = MODELS / "transformer-d2l.safetensors"


def test_error_carries_the_library_message(tmp_path):
    with pytest.raises(attnlite.Error) as e:
        attnlite.Model.load(tmp_path / "missing.safetensors")
    assert "missing.safetensors" in str(e.value) and e.value.message == str(e.value)
    assert e.value.status == 2  # AL_ERR_INPUT
    assert isinstance(e.value, Exception) and type(e.value).__module__ == "attnlite"


@pytest.mark.parametrize("data", [b"", b"\0" * 16, b"not a safetensors file at all",
                                  D2L.read_bytes()[:1000]])
def test_bad_model_bytes(tmp_path, data):
    with pytest.raises(attnlite.Error) as e:
        attnlite.Model.from_bytes(data)
    assert e.value.message
    f = tmp_path / "bad.safetensors"
    f.write_bytes(data)
    with pytest.raises(attnlite.Error):
        attnlite.Model.load(f)


def test_paths(tmp_path):
    with pytest.raises(ValueError, match="NUL"):
        attnlite.Model.load("models/x\0.safetensors")
    with pytest.raises(attnlite.Error):
        attnlite.Model.load(tmp_path)  # a folder
    odd = tmp_path / "mod\u00e8le \udcff.safetensors"  # not UTF-8 on disk: os.fsencode's bytes
    odd.write_bytes(D2L.read_bytes())
    with attnlite.Model.load(odd) as m:
        assert m.kind == "transformer"


def test_unknown_shipped_name():
    with pytest.raises(attnlite.Error, match="cannot find the shipped model 'no-such-model.safetensors'"):
        attnlite.Model.load("no-such-model")


def test_wrong_types(d2l):
    with pytest.raises(TypeError):
        attnlite.Model.load(42)
    with pytest.raises(TypeError):
        attnlite.Model.from_bytes("a str")
    with pytest.raises(TypeError):
        attnlite.Model.from_bytes(None)
    tr = attnlite.Translator(d2l)
    for bad in (42, None, b"go .", ["go .", 3], {"go ."}):
        with pytest.raises(TypeError):
            tr.translate(bad)
    with pytest.raises(TypeError):
        tr.translate("go .", beam="4")
    with pytest.raises(TypeError):
        tr.translate("go .", alpha="x")
    with pytest.raises(TypeError):
        attnlite.Translator(d2l, max_batch=1.5)
    with pytest.raises(TypeError):
        attnlite.Translator(d2l, device=1)
    with pytest.raises(ValueError):
        attnlite.Translator(d2l, device="tpu")
    with pytest.raises(TypeError):
        d2l.tokenize(None)
    with pytest.raises(ValueError, match="NUL"):
        tr.translate("go\0 .")


def test_wrong_model_kinds(d2l, lm, vit):
    with pytest.raises(attnlite.Error, match="translation model"):
        attnlite.Translator(lm)
    with pytest.raises(attnlite.Error, match="language model"):
        attnlite.Generator(d2l)
    with pytest.raises(attnlite.Error, match="Vision Transformer"):
        attnlite.Classifier(d2l)
    with pytest.raises(attnlite.Error, match="translation model"):
        attnlite.Translator(vit)


def test_translation_errors_from_the_library(d2l):
    tr = attnlite.Translator(d2l, max_beam=2)
    cases = [
        (dict(sentences=""), ""),
        (dict(sentences="go .", beam=3), "beam"),
        (dict(sentences="go .", beam=0), "beam"),
        (dict(sentences="go .", max_steps=11), ""),
        (dict(sentences="go .", max_steps=-1), ""),
        (dict(sentences="x" * 5000), ""),
        (dict(sentences="go \ud800 ."), ""),  # a lone surrogate: invalid UTF-8 for the library
    ]
    for kwargs, words in cases:
        with pytest.raises(attnlite.Error, match=words) as e:
            tr.translate(**kwargs)
        assert e.value.message, kwargs
        assert e.value.status in (1, 2)
    # a failing sentence in a list is named; the translator still works afterwards
    with pytest.raises(attnlite.Error, match=r"^sentence 2: empty sentence$"):
        tr.translate(["go .", ""])
    assert tr.translate("go .").text == "va !"
    with pytest.raises(attnlite.Error):
        d2l.tokenize("\udcff")
    # chunks go by source length: "" (sentence 4) and "go ." (3) make the first chunk of two;
    # the library names the refused one by its place in the chunk, the message by the list's
    two = attnlite.Translator(d2l, max_batch=2)
    with pytest.raises(attnlite.Error, match=r"^sentence 4: empty sentence$"):
        two.translate(["i lost my keys yesterday .", "i lost .", "go .", ""])
    with pytest.raises(attnlite.Error, match=r"^sentence 1: empty sentence$"):
        two.translate(["", "i lost my keys yesterday .", "go ."])
    # what is no one sentence's fault names the chunk, also in chunks of one
    with pytest.raises(attnlite.Error, match=r"^sentences 1..2: beam_size 5 is outside"):
        two.translate(["go .", "i lost ."], beam=5)
    with pytest.raises(attnlite.Error, match=r"^sentences 1..1: beam_size 5 is outside"):
        tr.translate(["go .", "i lost ."], beam=5)
    with pytest.raises(attnlite.Error, match=r"^sentence 3: empty sentence$"):
        tr.translate(["go .", "i lost .", " "])
    three = ["i lost my keys yesterday .", "go .", "i lost ."]
    assert [t.text for t in two.translate(three)] == [tr.translate(s).text for s in three]


def test_chunk_messages():
    from attnlite.translator import _chunk_message
    assert _chunk_message("sentence 1 of 2: empty sentence", 1, [6, 3], 9) == "sentence 4: empty sentence"
    assert _chunk_message("sentence 0 of 1: empty sentence", 0, [6], 9) == "sentence 7: empty sentence"
    assert _chunk_message("sentence 0 of 1: empty sentence", 0, [0], 1) == "empty sentence"
    # the reason is all that follows the first ": ", colons included
    assert _chunk_message("sentence 0 of 2: a: b", 0, [3, 4], 9) == "sentence 4: a: b"
    assert _chunk_message("beam_size 5 is outside [1, max_beam = 1]", -1, [0, 1], 2) == \
        "sentences 1..2: beam_size 5 is outside [1, max_beam = 1]"
    assert _chunk_message("beam_size 5 is outside [1, max_beam = 1]", -1, [4], 9) == \
        "sentences 5..5: beam_size 5 is outside [1, max_beam = 1]"
    assert _chunk_message("beam_size 5 is outside [1, max_beam = 1]", -1, [0], 1) == \
        "beam_size 5 is outside [1, max_beam = 1]"
    # a message without the place: the reason is all of it
    assert _chunk_message("empty sentence", 0, [3, 4], 9) == "sentence 4: empty sentence"
    from attnlite._capi import item_reason
    assert item_reason("image 2 of 8: pixel 5 is not a finite number") == "pixel 5 is not a finite number"
    assert item_reason("no place") == "no place"
    # an index outside the chunk: not taken for a sentence's
    assert _chunk_message("sentence 2 of 3: x", 2, [0, 1], 2) == "sentences 1..2: sentence 2 of 3: x"
    assert _chunk_message("", -1, [0, 1], 2) == "sentences 1..2: translation failed"


def test_chunk_numbers():
    from attnlite.translator import _numbers
    assert _numbers([4, 2, 3]) == "3..5"
    assert _numbers([0, 2]) == "1, 3"
    assert _numbers(list(range(0, 40, 2))) == "1, 3, 5, 7, 9, 11, 13, 15 and 12 more"


def test_bad_limits(d2l):
    for kwargs in (dict(max_batch=0), dict(max_beam=0), dict(max_tgt_steps=-1),
                   dict(max_tgt_steps=10 ** 6)):
        with pytest.raises(attnlite.Error):
            attnlite.Translator(d2l, **kwargs)
    # past a C int: refused, not wrapped into range (2**32 + 2 would be 2)
    for name in ("max_batch", "max_beam", "max_tgt_steps"):
        with pytest.raises(attnlite.Error, match=f"limits: {name} 4294967298 is out of range"):
            attnlite.Translator(d2l, **{name: 2**32 + 2})


def test_cuda_without_a_cuda_build_or_device(d2l, bahdanau):
    # A CPU build (or no device) refuses with a message; a CUDA build on a GPU machine works,
    # for both families.
    for model in (d2l, bahdanau):
        assert attnlite.Translator(model).max_batch == 1  # the CPU's default, as the CLI's
        try:
            tr = attnlite.Translator(model, device="cuda")
        except attnlite.Error as e:
            refused_cuda(e)
        else:
            assert tr.max_batch == 256  # the CLI's default on cuda: 1,024 rows / 4
            assert attnlite.Translator(model, device="cuda", max_beam=8).max_batch == 128
            cpu = attnlite.Translator(model)
            assert tr.translate("i'm home .").text == cpu.translate("i'm home .").text
            some = ["go .", "i lost .", "he's calm .", "i'm home ."] * 3
            assert [t.text for t in tr.translate(some)] == [t.text for t in cpu.translate(some)]


def test_precision(d2l):
    # bf16 weights are a CUDA option: the CPU refuses it before the library is asked; an
    # unknown name or type is refused too; the default is fp32.
    with pytest.raises(TypeError):
        attnlite.Translator(d2l, precision=16)
    with pytest.raises(ValueError, match="'fp32' or 'bf16', got 'fp16'"):
        attnlite.Translator(d2l, precision="fp16")
    with pytest.raises(ValueError, match="needs device 'cuda'"):
        attnlite.Translator(d2l, precision="bf16")
    tr = attnlite.Translator(d2l, precision="fp32")
    assert tr.precision == "fp32" and "precision" not in repr(tr)
    assert tr.translate("i'm home .").text == "je suis chez moi ."
    try:
        tr = attnlite.Translator(d2l, device="cuda", precision="bf16")
    except attnlite.Error as e:  # a CPU build, or no device
        refused_cuda(e)
    else:
        assert tr.precision == "bf16" and "precision=bf16" in repr(tr)
        assert tr.translate("i'm home .").text == "je suis chez moi ."


@pytest.mark.parametrize("kind", ["Generator", "Classifier"])
def test_precision_of_generators_and_classifiers(kind, lm, vit):
    # As for translators: bf16 is a CUDA option, names and types are checked, fp32 is the
    # default; on a GPU the same results as the CPU's (the shipped LM is int8, kept int8).
    make = getattr(attnlite, kind)
    model = lm if kind == "Generator" else vit
    with pytest.raises(TypeError):
        make(model, precision=16)
    with pytest.raises(ValueError, match="'fp32' or 'bf16', got 'fp16'"):
        make(model, precision="fp16")
    with pytest.raises(ValueError, match="needs device 'cuda'"):
        make(model, precision="bf16")
    cpu = make(model, precision="fp32")
    assert cpu.precision == "fp32" and "precision" not in repr(cpu)
    try:
        gpu = make(model, device="cuda", precision="bf16")
    except attnlite.Error as e:  # a CPU build, or no device
        refused_cuda(e)
        return
    assert gpu.precision == "bf16" and "precision=bf16" in repr(gpu)
    if kind == "Generator":
        assert gpu.generate("nous allons").text == cpu.generate("nous allons").text
    else:
        digit = FIXTURES / "digits" / "idx0022_label2_8x8.png"
        assert gpu.classify(digit).label == cpu.classify(digit).label == "2"


def test_generation_errors(lm):
    g = attnlite.Generator(lm)
    with pytest.raises(attnlite.Error):
        g.generate("je", temperature=0)
    with pytest.raises(attnlite.Error):
        g.generate("je", top_p=1.5)
    with pytest.raises(attnlite.Error):
        g.generate("je", top_k=-2)
    with pytest.raises(ValueError):
        g.generate("je", seed=-1)
    with pytest.raises(TypeError):
        g.generate(None)
    with pytest.raises(TypeError):
        g.generate("je", max_tokens="3")
    with pytest.raises(TypeError):
        g.perplexity(b"je suis .")
    with pytest.raises(attnlite.Error, match="line 2"):
        g.perplexity(["je suis .", "\ud800"])
    assert g.generate("je", max_tokens=2).num_generated == 2  # still usable


def test_closed_objects_raise(tmp_path):
    m = attnlite.Model.load(D2L)
    tr = attnlite.Translator(m)
    assert not m.closed
    m.close()
    m.close()  # twice is fine
    assert m.closed and "closed" in repr(m)
    for call in (lambda: m.config, lambda: m.tokenize("go ."), lambda: m.metadata("x"),
                 lambda: m.is_subword, lambda: m.src_id("go"), lambda: attnlite.Translator(m)):
        with pytest.raises(attnlite.Error, match="model is closed"):
            call()
    assert m.kind == "transformer"  # kept
    # the translator keeps the model's weights alive
    assert tr.translate("i'm home .").text == "je suis chez moi ."
    with tr:
        pass
    assert tr.closed
    with pytest.raises(attnlite.Error, match="translator is closed"):
        tr.translate("go .")
    with pytest.raises(attnlite.Error, match="translator is closed"):
        tr.workspace_bytes

    with attnlite.Model.load("lm-fra") as lm, attnlite.Generator(lm) as g:
        pass
    for call in (lambda: g.generate("je"), lambda: g.perplexity(["je ."]), lambda: list(g.stream("je"))):
        with pytest.raises(attnlite.Error, match="generator is closed"):
            call()
    with attnlite.Model.load("vit-digits") as vm:
        c = attnlite.Classifier(vm)
    c.close()
    with pytest.raises(attnlite.Error, match="classifier is closed"):
        c.classify(np.zeros((8, 8)))


def test_sessions_outlive_their_model():
    # The Python objects of the model dropped and collected: the sessions still run.
    import gc

    tr = attnlite.Translator(attnlite.Model.load(D2L))
    g = attnlite.Generator(attnlite.Model.load("lm-fra"))
    c = attnlite.Classifier(attnlite.Model.load("vit-digits"))
    tr.model.close()
    g.model.close()
    c.model.close()
    gc.collect()
    assert tr.translate("i'm home .", beam=2, attention=True).text == "je suis chez moi ."
    assert g.generate("je suis", max_tokens=3).num_generated == 3
    assert c.classify(np.zeros((8, 8))).probs.shape == (10,)


def _run(code, **env):
    e = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=e, cwd=str(ROOT / "python"), timeout=60)


def test_missing_library_is_an_error():
    p = _run("""
        import attnlite
        try:
            attnlite.Model.load("transformer-d2l")
        except attnlite.Error as e:
            print("Error:", e)
    """, ATTNLITE_LIBRARY="/nonexistent/libattnlite_c.so")
    assert p.returncode == 0, p.stderr
    assert "Error: cannot find libattnlite_c.so" in p.stdout and "ATTNLITE_LIBRARY" in p.stdout


def test_library_from_the_environment():
    lib = attnlite.library_path()
    p = _run("import attnlite; print(attnlite.library_path())", ATTNLITE_LIBRARY=lib)
    assert p.returncode == 0 and p.stdout.strip() == lib


def test_collecting_objects_in_any_order_does_not_crash():
    p = _run("""
        import gc, attnlite, numpy as np
        objs = []
        for i in range(20):
            m = attnlite.Model.load("transformer-d2l")
            tr = attnlite.Translator(m, max_batch=2, max_beam=2)
            tr.translate(["go .", "i lost ."], beam=2, attention=True)
            objs += [tr, m] if i % 2 else [m, tr]
            if i % 3 == 0:
                m.close()
        del m, tr
        while objs:
            objs.pop(len(objs) // 2)
            gc.collect()
        g = attnlite.Generator("lm-fra")  # left to the interpreter's exit
        c = attnlite.Classifier("vit-digits")
        it = g.stream("je suis")            # an iteration left open
        next(it)
        print("ok")
    """)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "ok"
