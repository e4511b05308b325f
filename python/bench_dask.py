"""Sentences per second of attnlite.dask.translate_file on a LocalCluster of 1 and 2 worker
processes (one thread each), next to `attnlite translate` in one process.

    /usr/bin/python3 python/bench_dask.py [--lines 20000] [--model transformer-fra]
        [--workers 1 2] [--partition-lines 1000] [--beam 1]

The input is the English column of models/transformer-fra.test.tsv repeated to --lines
lines. Each cluster is started (its start-up time reported apart), warmed up on 200 lines,
then timed on the whole file; every output is checked against the CLI's, byte for byte.
Prints the machine's load (os.getloadavg, what `uptime` shows) before and after.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

import distributed  # noqa: E402

import attnlite.dask as ad  # noqa: E402


def load() -> str:
    return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lines", type=int, default=20000)
    p.add_argument("--model", default="transformer-fra")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--partition-lines", type=int, default=1000)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--cli", default=str(ROOT / "build" / "python" / "attnlite"))
    a = p.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench_dask."))
    english = [line.split("\t", 1)[0] for line in
               (ROOT / "models" / "transformer-fra.test.tsv").read_text(encoding="utf-8").splitlines()]
    lines = (english * (a.lines // len(english) + 1))[:a.lines]
    src = tmp / "in.txt"
    src.write_text("".join(s + "\n" for s in lines), encoding="utf-8")
    print(f"{a.lines} lines, model {a.model}, beam {a.beam}, partitions of {a.partition_lines}, "
          f"{os.cpu_count()} CPUs; {load()}")

    ref = tmp / "cli.txt"
    t = time.perf_counter()
    with open(src, "rb") as fin, open(ref, "wb") as fout:
        subprocess.run([a.cli, "translate", "--model", a.model, "--beam", str(a.beam)], stdin=fin,
                       stdout=fout, stderr=subprocess.DEVNULL, check=False)
    s = time.perf_counter() - t
    print(f"attnlite translate (CLI, one process): {s:.2f} s, {a.lines / s:.0f} sentences/s")

    warm = tmp / "warm.txt"
    warm.write_text("".join(s + "\n" for s in lines[:200]), encoding="utf-8")
    for n in a.workers:
        t = time.perf_counter()
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=None)
        client = distributed.Client(cluster)
        start = time.perf_counter() - t
        try:
            ad.translate_file(client, a.model, warm, tmp / "warm.out", progress=False,
                              partition_lines=100, beam=a.beam)
            out = tmp / f"dask{n}.txt"
            t = time.perf_counter()
            r = ad.translate_file(client, a.model, src, out, partition_lines=a.partition_lines,
                                  beam=a.beam, progress=False)
            s = time.perf_counter() - t
            same = out.read_bytes() == ref.read_bytes()
            print(f"attnlite.dask, {n} worker(s): {s:.2f} s, {a.lines / s:.0f} sentences/s "
                  f"(cluster start {start:.1f} s; partitions per worker "
                  f"{sorted(r.workers.values())}; output {'= CLI' if same else 'DIFFERS from the CLI'})")
        finally:
            client.close()
            cluster.close()
    print(load())
    for f in tmp.iterdir():
        f.unlink()
    tmp.rmdir()


if __name__ == "__main__":
    main()
