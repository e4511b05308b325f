"""The Python package's overhead over the C API: the same sentences translated as one batch by
a C program over the C API (python/bench_overhead.c: al_translate_batch, then every result's
text, ids and probabilities read) and by attnlite.Translator.translate(list) (which also
encodes the sentences and copies everything out into Translation objects).

    nice -n 10 /usr/bin/python3 python/bench_overhead.py [--sentences 64] [--rounds 101]
        [--model transformer-fra] [--cc cc]

The sentences are the first N English sentences of models/transformer-fra.test.tsv, decoded
greedily without recording the attention (Translator.translate's default; the C program sets
al_decode_options.attention = 0, whose C default is 1) in one batch of N (max_batch N,
max_beam 1 on both sides), one process and one thread each (the library's default: no thread
pool). The C program is compiled here against the very libattnlite_c.so the package loads
(attnlite.library_path()) and runs in a process of its own, one round per line it reads: the
rounds alternate (C, Python, ctypes; then the other orders, forwards and backwards) so that a change of the machine's load
falls on both sides alike. One warm-up round each is not counted.

A third side, the bare al_translate_batch called through ctypes in this process (no package
code), tells the cost of the process and of ctypes apart from the package's. Prints the median
seconds per round and per sentence of each side, their ratio (and the median of the ratios of
neighbouring rounds), the package's own work (encoding the sentences and
copying the N results out, timed alone in this process), and the load average (what `uptime`
shows) before and after; checks that both sides give the same translations.
"""

import argparse
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import attnlite  # noqa: E402
from attnlite import _capi  # noqa: E402


def load() -> str:
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def build_c(tmp: Path, cc: str) -> Path:
    lib = Path(attnlite.library_path()).resolve()
    exe = tmp / "bench_overhead"
    cmd = [cc, "-O2", "-std=c11", "-Wall", "-I", str(ROOT / "include"), str(ROOT / "python" / "bench_overhead.c"),
           "-o", str(exe), f"-L{lib.parent}", "-lattnlite_c", f"-Wl,-rpath,{lib.parent}"]
    subprocess.run(cmd, check=True)
    return exe


class CSide:
    """The C program, one round per request."""

    def __init__(self, exe: Path, model: str, sentences: Path) -> None:
        self.p = subprocess.Popen([str(exe), model, str(sentences)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  bufsize=1)

    def round(self) -> float:
        self.p.stdin.write("r\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line.startswith("round "):
            sys.exit(f"the C program failed: {self.p.communicate()[1].strip()}")
        return float(line.split()[1])

    def texts(self) -> list:
        out, err = self.p.communicate()
        if self.p.returncode != 0:
            sys.exit(f"the C program exited {self.p.returncode}: {err.strip()}")
        return [line[5:] for line in out.splitlines() if line.startswith("text ")]


def python_work(tr: "attnlite.Translator", sentences, rounds: int = 200) -> float:
    """Median seconds of what translate(list) does besides al_translate_batch: encoding the
    sentences and copying the results of the last call out (Translator._result)."""
    L = _capi.lib()
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        enc = [_capi.encode(s, "sentence") for s in sentences]
        (ctypes.c_char_p * len(enc))(*enc)
        with tr._lock:
            h = tr._handle()
            [tr._result(L, L.al_translator_result(h, i), s) for i, s in enumerate(sentences)]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench_overhead.") as tmp:
        run(Path(tmp))


def run(tmp: Path) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sentences", type=int, default=64)
    p.add_argument("--rounds", type=int, default=101, help="timed rounds per side")
    p.add_argument("--model", default="transformer-fra")
    p.add_argument("--cc", default=os.environ.get("CC", "cc"))
    a = p.parse_args()

    english = [line.split("\t", 1)[0] for line in
               (ROOT / "models" / "transformer-fra.test.tsv").read_text(encoding="utf-8").splitlines()]
    sentences = english[:a.sentences]
    n = len(sentences)
    src = tmp / "in.txt"
    src.write_text("".join(s + "\n" for s in sentences), encoding="utf-8")
    exe = build_c(tmp, a.cc)
    model_path = attnlite.resolve_model(a.model)
    print(f"{n} sentences in one batch, model {a.model}, greedy, 1 thread, {a.rounds} rounds per "
          f"side; library {attnlite.library_path()}; {os.cpu_count()} CPUs; {load()}")

    c = CSide(exe, model_path, src)
    # The C program's limits: al_limits_default with max_batch N (max_beam 1).
    tr = attnlite.Translator(attnlite.Model.load(model_path), max_batch=n, max_beam=1)

    def py_round() -> float:
        t = time.perf_counter()
        py_round.out = tr.translate(sentences)
        return time.perf_counter() - t

    # The bare C call through ctypes in this process (no package code): what the process and
    # ctypes cost, apart from the package's own work.
    L = _capi.lib()
    arr = (ctypes.c_char_p * n)(*[_capi.encode(s, "sentence") for s in sentences])
    opts = _capi._DecodeOptions()
    L.al_decode_options_default(ctypes.byref(opts))
    opts.attention = 0

    def ctypes_round() -> float:
        t = time.perf_counter()
        with tr._lock:
            st = L.al_translate_batch(tr._handle(), arr, n, ctypes.byref(opts))
        if st != _capi.AL_OK:
            sys.exit("al_translate_batch failed")
        return time.perf_counter() - t

    sides = {"c": c.round, "py": py_round, "ctypes": ctypes_round}
    times = {k: [] for k in sides}
    for f in sides.values():  # warm-up
        f()
    orders = [("c", "py", "ctypes"), ("py", "ctypes", "c"), ("ctypes", "c", "py")]
    for r in range(a.rounds):
        for k in orders[r % 3] if r % 2 == 0 else reversed(orders[r % 3]):
            times[k].append(sides[k]())
    c_times, py_times, raw_times = times["c"], times["py"], times["ctypes"]
    py_round()  # the translations compared below
    c_texts = c.texts()
    if c_texts != [t.text for t in py_round.out]:
        sys.exit("the C program's translations differ from the package's")

    c_med, py_med = statistics.median(c_times), statistics.median(py_times)
    pair = statistics.median(p / q for p, q in zip(py_times, c_times))
    work = python_work(tr, sentences)
    print(f"C API (al_translate_batch):          median {c_med * 1e3:8.2f} ms per round, "
          f"{c_med / n * 1e6:8.1f} us per sentence")
    print(f"Python (Translator.translate(list)): median {py_med * 1e3:8.2f} ms per round, "
          f"{py_med / n * 1e6:8.1f} us per sentence")
    raw_med = statistics.median(raw_times)
    print(f"bare al_translate_batch via ctypes:  median {raw_med * 1e3:8.2f} ms per round, "
          f"{raw_med / n * 1e6:8.1f} us per sentence (this process, no package code)")
    print(f"ratio Python / C: {py_med / c_med:.4f} ({(py_med / c_med - 1) * 100:+.2f}%); median of the "
          f"rounds' ratios {pair:.4f} ({(pair - 1) * 100:+.2f}%); bare ctypes / C: {raw_med / c_med:.4f} "
          f"({(raw_med / c_med - 1) * 100:+.2f}%)")
    print(f"the package's own work (encode {n} sentences, copy {n} results out), timed alone: "
          f"{work * 1e3:.3f} ms per round, {work / n * 1e6:.1f} us per sentence, "
          f"{work / c_med * 100:.2f}% of the C round")
    print(f"same translations; {load()}")


if __name__ == "__main__":
    main()
