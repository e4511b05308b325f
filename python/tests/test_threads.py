"""Threads: ctypes lets go of the GIL in every call into the library, so translators on
different threads run at once; they may share one model, which may be closed meanwhile."""

import threading

import numpy as np

import attnlite
from conftest import MODELS

FRA = ["i'm home .", "he is a good teacher .", "where is the station ?", "we are late .",
       "she likes to read books .", "i don't know ."]


def _reference(model):
    tr = attnlite.Translator(model)
    return {s: tr.translate(s, attention=True) for s in FRA}


def test_two_translators_share_one_model_on_two_threads():
    model = attnlite.Model.load(MODELS / "transformer-fra.safetensors")
    ref = _reference(model)
    translators = [attnlite.Translator(model), attnlite.Translator(model, max_batch=3)]
    errors, results = [], [[], []]
    start = threading.Barrier(3)

    def work(k):
        try:
            start.wait()
            for _ in range(8):
                for s in FRA:
                    results[k].append(translators[k].translate(s, attention=True))
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    start.wait()
    model.close()  # while both translate: the C library keeps the model alive
    for t in threads:
        t.join(60)
    assert not errors, errors
    for k in range(2):
        assert len(results[k]) == 8 * len(FRA)
        for r in results[k]:
            want = ref[r.source]
            assert r.text == want.text and r.ids == want.ids
            np.testing.assert_array_equal(r.probs, want.probs)
            np.testing.assert_array_equal(r.cross, want.cross)


def test_one_translator_used_from_several_threads_serializes():
    model = attnlite.Model.load(MODELS / "transformer-d2l.safetensors")
    tr = attnlite.Translator(model, max_batch=2, max_beam=3)
    want = tr.translate(["go .", "i'm home ."], beam=3)
    errors = []

    def work():
        try:
            for _ in range(30):
                got = tr.translate(["go .", "i'm home ."], beam=3)
                assert [t.text for t in got] == [t.text for t in want]
                assert [[h.text for h in t.nbest] for t in got] == [[h.text for h in t.nbest] for t in want]
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors


def test_close_while_another_thread_translates():
    model = attnlite.Model.load(MODELS / "transformer-d2l.safetensors")
    tr = attnlite.Translator(model)
    outcomes = []
    started = threading.Event()

    def work():
        started.set()
        try:
            for _ in range(2000):
                tr.translate("i'm home .")
            outcomes.append("done")
        except attnlite.Error as e:
            outcomes.append(str(e))

    t = threading.Thread(target=work)
    t.start()
    started.wait()
    tr.close()  # waits for the call in flight; the thread's next call raises
    t.join(60)
    assert outcomes in (["done"], ["this translator is closed"])


def test_generators_and_classifiers_on_threads():
    lm = attnlite.Model.load(MODELS / "lm-fra.safetensors")
    vit = attnlite.Model.load(MODELS / "vit-digits.safetensors")
    want_text = attnlite.Generator(lm).generate("je suis", seed=5).text
    img = np.arange(64, dtype=np.float32).reshape(8, 8) % 17
    want_probs = attnlite.Classifier(vit).classify(img).probs
    errors = []

    def work():
        try:
            g, c = attnlite.Generator(lm), attnlite.Classifier(vit)
            for _ in range(10):
                assert g.generate("je suis", seed=5).text == want_text
                np.testing.assert_array_equal(c.classify(img).probs, want_probs)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
