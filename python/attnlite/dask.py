"""attnlite.dask: translate a text file of English sentences on a Dask distributed cluster.

``import attnlite`` does not import this module (nor Dask); ``import attnlite.dask`` needs
Dask's ``distributed`` (Debian: ``apt-get install python3-distributed``).

:func:`translate_file` cuts the file into partitions of consecutive lines, submits one task
per partition and writes the translations to the output file in input order, one per line,
exactly what ``attnlite translate`` prints for each line with the same options (an empty
line, a line of invalid UTF-8 or any other sentence the library refuses gives an empty
output line, and its message goes to the returned list).

Each worker loads the model once: :class:`ModelPlugin`, a Dask ``WorkerPlugin`` registered
for the run, loads it in ``setup`` on every worker of the cluster, on workers that join
later and on workers the nanny restarts after a crash (the scheduler hands every registered
plugin to a worker when it connects), before that worker runs a task. A plugin rather than a
per-process cache filled by the first task because it (1) fails early: a worker that cannot
load the model makes ``register_worker_plugin`` raise with the library's message, before any
task runs, (2) works for a model sent as bytes (the plugin carries them once per worker,
not once per task), and (3) has a lifetime: it is unregistered at the end of the run, which
closes the model on every worker. Each worker thread borrows its own :class:`attnlite.Translator`
from the plugin (translators are one call at a time; the model is shared).

Workers with an NVIDIA GPU translate on it with ``device="cuda"`` (``--device cuda``): the
plugin then makes the run's first translator in ``setup`` too, so that a worker without a GPU
(or a library built without CUDA) refuses the run at once with the library's message.

Command line (``/usr/bin/python3 -m attnlite.dask --help``)::

    python3 -m attnlite.dask --scheduler local:2 --model transformer-fra SRC OUT
    python3 -m attnlite.dask --scheduler tcp://host:8786 --model /data/m.safetensors SRC OUT
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple, Union

try:
    import distributed
    from distributed import WorkerPlugin, get_worker
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError(
        "attnlite.dask needs Dask's distributed package (Debian: apt-get install "
        f"python3-distributed): {e}") from e

from . import _capi
from ._capi import Error
from .model import Model, resolve_model
from .translator import Translator, cuda_batch, source_length

__all__ = ["ModelPlugin", "TranslateFileResult", "translate_file", "worker_loads", "main"]

NUL_MESSAGE = "line contains a NUL byte, which the C API cannot pass"
"""The message for a line with a NUL byte: the C API takes NUL-terminated strings, so such a
line is refused here (``attnlite translate`` reads it as a character of a word)."""

# Per worker process: how many times each plugin (by name) loaded its model.
_LOADS: Counter = Counter()
_LOADS_LOCK = threading.Lock()


def worker_loads() -> Dict[str, int]:
    """How many times this process loaded a model, by plugin name (``client.run(worker_loads)``
    asks every worker)."""
    with _LOADS_LOCK:
        return dict(_LOADS)


class ModelPlugin(WorkerPlugin):
    """A Dask worker plugin that loads one translation model when the worker starts it, and
    lends each worker thread a :class:`~attnlite.Translator` of that model.

    Args:
        model: the model file's path (it must exist at that path on every worker), or the
            bytes of a safetensors file (sent to each worker once, with the plugin).
        name: the plugin's name on the workers (unique per :func:`translate_file` run).
        device, precision: the translators' (:class:`attnlite.Translator`).
        first: ``(max_batch, beam, max_steps)``: with a device other than the CPU, the
            translator that ``setup`` makes (the device's check; it serves the first task).
    """

    def __init__(self, model: Union[str, bytes], name: str, device: str = "cpu",
                 precision: str = "fp32", first: Optional[Tuple[int, int, int]] = None) -> None:
        self.source = model
        self.name = name
        self.device = device
        self.precision = precision
        self.first = first
        self.model: Optional[Model] = None
        self.loads = 0
        self._pool: Dict[tuple, List[Translator]] = {}
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        # Only the recipe travels; the loaded model and translators stay in their process.
        return {"source": self.source, "name": self.name, "device": self.device,
                "precision": self.precision, "first": self.first}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["source"], state["name"], state.get("device", "cpu"),
                      state.get("precision", "fp32"), state.get("first"))

    def setup(self, worker=None) -> None:
        """Loads the model (called by the worker, once per plugin and worker process)."""
        if isinstance(self.source, (bytes, bytearray, memoryview)):
            m = Model.from_bytes(self.source)
        else:
            m = Model.load(self.source)
        if m.task != "translate":
            m.close()
            raise Error(f"{self._what()} is a {m.kind} model, not a translator")
        self.model = m
        if self.device != "cpu" and self.first is not None:
            try:
                key, tr = self.acquire(*self.first)
            except Exception:
                self.model = None
                m.close()
                raise
            self.release(key, tr)
        self.loads += 1
        with _LOADS_LOCK:
            _LOADS[self.name] += 1

    def teardown(self, worker=None) -> None:
        """Closes the translators and the model (when the plugin is unregistered)."""
        with self._lock:
            pool, self._pool = self._pool, {}
        for trs in pool.values():
            for tr in trs:
                tr.close()
        if self.model is not None:
            self.model.close()
            self.model = None

    def _what(self) -> str:
        return "<model bytes>" if isinstance(self.source, (bytes, bytearray, memoryview)) else str(self.source)

    def acquire(self, max_batch: int, beam: int, max_steps: int) -> Tuple[tuple, Translator]:
        """A translator for these options, for the calling thread alone until :meth:`release`:
        ``(key, translator)``. Its limits are the CLI's: ``max_beam = beam``,
        ``max_tgt_steps = max(model steps, max_steps)``."""
        key = (max_batch, beam, max_steps)
        with self._lock:
            if self.model is None:
                raise RuntimeError(f"attnlite.dask: the model of plugin {self.name} is not loaded")
            idle = self._pool.get(key)
            if idle:
                return key, idle.pop()
            model = self.model
        limit = max(model.config["steps"], max_steps)
        return key, Translator(model, max_batch=max_batch, max_beam=beam, max_tgt_steps=limit,
                               device=self.device, precision=self.precision)

    def release(self, key: tuple, tr: Translator) -> None:
        """Gives a translator from :meth:`acquire` back."""
        with self._lock:
            if self.model is None:
                tr.close()
            else:
                self._pool.setdefault(key, []).append(tr)


def _translate_lines(plugin: ModelPlugin, first_line: int, lines: List[bytes],
                     opts: dict) -> Tuple[bytes, List[Tuple[int, str]]]:
    """Translates one partition: the output bytes (a line per input line) and the errors.

    Batches of ``max_batch`` sentences of like lengths; a batch the library refuses (one
    sentence of it is empty, too long, invalid UTF-8...) is translated again one sentence at
    a time, so that every other sentence gets its translation and the bad one its own
    message, as the CLI prints it."""
    key, tr = plugin.acquire(opts["max_batch"], opts["beam"], opts["max_steps"])
    kw = dict(beam=opts["beam"], alpha=opts["alpha"], max_steps=opts["max_steps"],
              d2l_compat=opts["d2l_compat"])
    try:
        # A line is cut into its sentences as the CLI cuts it (unless "whole"): each part is
        # translated alone and a line's translations are joined by a space.
        parts: List[List[Optional[str]]] = [[] for _ in lines]
        errors: List[Tuple[int, str]] = []
        todo = []  # (line, part, sentence)
        for i, raw in enumerate(lines):
            if b"\0" in raw:
                errors.append((first_line + i, NUL_MESSAGE))
                continue
            # Invalid UTF-8 comes through as lone surrogates, which the package passes on as
            # invalid UTF-8 for the library to refuse with the CLI's message.
            line = raw.decode("utf-8", errors="surrogateescape")
            cut = [line] if opts["whole"] else tr.model.sentences(line)
            for k, s in enumerate(cut):
                todo.append((i, k, s))
            parts[i] = [None] * len(cut)
        # Sentences of like lengths decode together (a batch runs until its longest
        # translation ends), as the command line orders its batches; each keeps its index.
        if tr.max_batch > 1:
            todo.sort(key=lambda item: source_length(tr.model, item[2]))
        failed = set()
        for start in range(0, len(todo), tr.max_batch):
            chunk = todo[start:start + tr.max_batch]
            try:
                for (i, k, _), t in zip(chunk, tr.translate([s for _, _, s in chunk], **kw)):
                    parts[i][k] = t.text
            except Error:
                for i, k, s in chunk:
                    try:
                        parts[i][k] = tr.translate(s, **kw).text
                    except Error as e:
                        if i not in failed:
                            failed.add(i)
                            errors.append((first_line + i, e.message))
        errors.sort()
        texts = ("" if i in failed or None in p else " ".join(p)  # type: ignore[arg-type]
                 for i, p in enumerate(parts))
        return "".join(t + "\n" for t in texts).encode("utf-8"), errors
    finally:
        plugin.release(key, tr)


def _translate_partition(plugin_name: str, first_line: int, lines: List[bytes],
                         opts: dict) -> dict:
    """The task of one partition, run on a worker."""
    t0 = time.perf_counter()
    worker = get_worker()
    plugin = worker.plugins.get(plugin_name)
    if plugin is None:
        raise RuntimeError(f"attnlite.dask: worker {worker.address} lacks plugin {plugin_name}")
    out, errors = _translate_lines(plugin, first_line, lines, opts)
    return {"out": out, "errors": errors, "worker": worker.address,
            "seconds": time.perf_counter() - t0}


class TranslateFileResult(list):
    """What :func:`translate_file` returns: the list of ``(line number, message)`` of the lines
    that failed (1-based, in order), with the run's figures as attributes:

    Attributes:
        lines: input lines (= output lines).
        partitions: tasks submitted (retries not counted).
        seconds: wall time from the first submission to the last line written.
        lines_per_second: ``lines / seconds``.
        workers: ``{worker address: partitions it finished}``.
        loads: ``{worker address: times that worker process loaded the model}`` for this run.
    """

    lines: int = 0
    partitions: int = 0
    seconds: float = 0.0
    workers: Dict[str, int]
    loads: Dict[str, int]

    @property
    def lines_per_second(self) -> float:
        return self.lines / self.seconds if self.seconds > 0 else 0.0


def _count_lines(path: str) -> int:
    """Lines as ``std::getline`` reads them: a last line without a newline counts."""
    n = 0
    last = b"\n"
    with open(path, "rb") as f:
        while True:
            block = f.read(1 << 20)
            if not block:
                break
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def _partitions(path: str, size: int) -> Iterator[Tuple[int, List[bytes]]]:
    """(first line number, lines) of consecutive lines, read lazily. A line is what
    ``std::getline`` gives, less one trailing carriage return, as ``attnlite translate``
    reads standard input."""
    with open(path, "rb") as f:
        number = 1
        while True:
            chunk = []
            for raw in itertools.islice(f, size):
                if raw.endswith(b"\n"):
                    raw = raw[:-1]
                if raw.endswith(b"\r"):
                    raw = raw[:-1]
                chunk.append(raw)
            if not chunk:
                return
            yield number, chunk
            number += len(chunk)


def _model_source(model) -> Union[str, bytes]:
    """A path (absolute) or the bytes of a model file."""
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if isinstance(model, Model):
        if model.source == "<bytes>":
            raise ValueError("a Model loaded from bytes cannot be sent: pass the bytes")
        model = model.source
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(f"model must be a path, a shipped name or bytes, not {type(model).__name__}")
    return os.path.abspath(resolve_model(model))


def translate_file(client, model, src_path, out_path, partition_lines: int = 1000,
                   beam: int = 1, alpha: float = 0.0, max_batch: Optional[int] = None,
                   progress: bool = True, retries: int = 2, max_steps: int = 0,
                   d2l_compat: bool = False, max_pending: Optional[int] = None,
                   file=None, device: str = "cpu", precision: str = "fp32",
                   whole: bool = False) -> TranslateFileResult:
    """Translates every line of ``src_path`` on the cluster of ``client`` into ``out_path``.

    The output has one line per input line, in input order, byte for byte what
    ``attnlite translate --model MODEL [--beam K --alpha A ...] < src_path`` prints: a line
    the library refuses (empty, only spaces, invalid UTF-8, too long) gives an empty line, and
    its ``(line number, message)`` goes to the returned list (the CLI prints the message on
    stderr). A line with a NUL byte is refused too (:data:`NUL_MESSAGE`; the C API cannot
    pass it).

    Args:
        client: a ``distributed.Client``.
        model: a model path (absolute, or made absolute here: it must exist at that path on
            every worker), a shipped name (resolved here, as :func:`attnlite.resolve_model`,
            to this machine's path), an :class:`attnlite.Model` loaded from a file, or the
            ``bytes`` of a model file (sent to every worker once: no shared file needed).
        src_path: the input, one English sentence per line (read as bytes, UTF-8 expected).
        out_path: the output file (written as partitions come back, in order).
        partition_lines: lines per task.
        beam, alpha, max_steps, d2l_compat, whole: the decoding options, as ``attnlite
            translate``'s ``--beam``, ``--alpha``, ``--max-steps``, ``--d2l-compat`` and
            ``--whole``: a line of several sentences is cut into them, each translated
            alone, the translations joined by a space (:meth:`attnlite.Model.sentences`),
            unless ``whole``.
        max_batch: sentences a worker decodes together (default: 32 on the CPU; with
            ``device="cuda"`` the CLI's: 256, or 1,024 / ``beam`` past a beam of 4).
        progress: a line on stderr (or ``file``) for every finished partition and a summary.
        retries: how many times Dask runs a partition again after it raised (``retries=`` of
            ``Client.submit``). A partition whose worker died or was restarted is run again
            on another worker by the scheduler itself (up to its ``allowed-failures``, 3).
        max_pending: partitions submitted and not yet written, at most (default: 4 per worker
            thread, at least 8): bounds the memory of the client and the scheduler, however
            long the file.
        device, precision: where the workers translate, as :class:`attnlite.Translator`'s:
            ``"cuda"`` on each worker's GPU (the first one it sees: on a machine with several,
            one worker per GPU, each with its own ``CUDA_VISIBLE_DEVICES``, as dask-cuda's
            ``LocalCUDACluster`` starts them), ``"bf16"`` weights there. Every worker must
            have one: a worker without refuses the run at its start.

    Returns:
        a :class:`TranslateFileResult`: the list of ``(line number, message)``, with the
        figures of the run (``lines``, ``seconds``, ``lines_per_second``, ``workers``,
        ``loads``).

    Raises:
        attnlite.Error: the model cannot be loaded (here or on a worker) or is no translator,
            or a worker cannot translate on ``device`` (no GPU, a library without CUDA).
        RuntimeError: a partition failed for good (its retries spent, or its workers killed
            ``allowed-failures`` times); the output then holds the lines before it.
    """
    _capi.device_id(device)  # TypeError or ValueError for bad names
    _capi.precision_id(precision, device)
    for name, v in (("partition_lines", partition_lines), ("beam", beam),
                    ("max_batch", 1 if max_batch is None else max_batch),
                    ("retries", retries), ("max_steps", max_steps)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{name} must be an int, not {type(v).__name__}")
    if max_batch is None:
        max_batch = cuda_batch(beam) if device == "cuda" else 32
    if partition_lines < 1 or beam < 1 or max_batch < 1 or retries < 0 or max_steps < 0:
        raise ValueError("partition_lines, beam and max_batch must be >= 1, retries and max_steps >= 0")
    source = _model_source(model)
    # Check the model here first when this machine has it: a clear error before any task.
    if isinstance(source, bytes) or os.path.isfile(source):
        with (Model.from_bytes(source) if isinstance(source, bytes) else Model.load(source)) as m:
            if m.task != "translate":
                raise Error(f"{m.source} is a {m.kind} model, not a translator")
    opts = {"beam": beam, "alpha": float(alpha), "max_batch": max_batch,
            "d2l_compat": bool(d2l_compat), "max_steps": max_steps, "whole": bool(whole)}
    err = file if file is not None else sys.stderr

    def say(msg: str) -> None:
        if progress:
            print(f"attnlite.dask: {msg}", file=err, flush=True)

    total = _count_lines(os.fspath(src_path))
    nparts = (total + partition_lines - 1) // partition_lines
    if max_pending is None:
        max_pending = max(8, 4 * sum(client.nthreads().values()))
    run = uuid.uuid4().hex[:12]
    plugin_name = f"attnlite-model-{run}"
    result = TranslateFileResult()
    result.lines, result.partitions, result.workers, result.loads = total, nparts, Counter(), {}
    say(f"{total} lines in {nparts} partitions of {partition_lines} on "
        f"{len(client.nthreads())} workers ({sum(client.nthreads().values())} threads); "
        f"loading {'the model bytes' if isinstance(source, bytes) else source}"
        + (f" on each worker's GPU ({precision})" if device == "cuda" else ""))
    t0 = time.perf_counter()
    futures = {}
    try:
        # Raises the library's message when a worker cannot load the model.
        client.register_worker_plugin(
            ModelPlugin(source, plugin_name, device, precision, (max_batch, beam, max_steps)),
            name=plugin_name)
        parts = _partitions(os.fspath(src_path), partition_lines)
        ac = distributed.as_completed()
        meta = {}  # key -> (index, first line, count)
        next_index = 0

        def submit_more() -> None:
            nonlocal next_index
            while len(meta) < max_pending:
                try:
                    first, lines = next(parts)
                except StopIteration:
                    return
                key = f"attnlite-translate-{run}-{next_index}"
                fut = client.submit(_translate_partition, plugin_name, first, lines, opts,
                                    key=key, retries=retries, pure=False)
                futures[key] = fut
                meta[key] = (next_index, first, len(lines))
                ac.add(fut)
                next_index += 1

        submit_more()
        done: Dict[int, dict] = {}
        written, write_index = 0, 0
        with open(out_path, "wb") as out:
            for fut in ac:
                index, first, count = meta[fut.key]
                try:
                    r = fut.result()
                except Exception as e:
                    raise RuntimeError(f"partition {index + 1}/{nparts} (lines "
                                       f"{first}-{first + count - 1}) failed: {type(e).__name__}: {e}") from e
                done[index] = r
                # The result is in this process now: let the cluster forget it.
                futures.pop(fut.key).release()
                result.workers[r["worker"]] += 1
                # Write every partition whose turn has come; later ones wait in `done`.
                while write_index in done:
                    d = done.pop(write_index)
                    out.write(d["out"])
                    result.extend(d["errors"])
                    written += meta.pop(f"attnlite-translate-{run}-{write_index}")[2]
                    write_index += 1
                say(f"partition {index + 1}/{nparts} (lines {first}-{first + count - 1}) done on "
                    f"{r['worker']} in {r['seconds']:.2f} s, {len(r['errors'])} errors; "
                    f"{written}/{total} lines written, {time.perf_counter() - t0:.1f} s")
                submit_more()
        result.seconds = time.perf_counter() - t0
        if written != total:  # pragma: no cover - a bug, not a condition
            raise RuntimeError(f"wrote {written} of {total} lines")
        result.workers = dict(result.workers)
        try:
            result.loads = {w: d.get(plugin_name, 0) for w, d in client.run(worker_loads).items()}
        except Exception:  # a worker gone while asked: the figures only
            result.loads = {}
        say(f"{total} lines in {result.seconds:.2f} s ({result.lines_per_second:.1f} lines/s), "
            f"{len(result)} errors -> {os.fspath(out_path)}")
        return result
    finally:
        for fut in futures.values():
            fut.cancel()
        try:
            client.unregister_worker_plugin(plugin_name)
        except Exception:
            pass


def _connect(scheduler: str):
    """A (client, cluster or None) for ``local``, ``local:N`` or a scheduler address."""
    if scheduler == "local" or scheduler.startswith("local:"):
        n = os.cpu_count() or 1
        if scheduler != "local":
            try:
                n = int(scheduler[len("local:"):])
            except ValueError:
                raise SystemExit(f"attnlite.dask: --scheduler local:N needs a number, got {scheduler!r}")
            if n < 1:
                raise SystemExit("attnlite.dask: --scheduler local:N needs N >= 1")
        # ":0": the scheduler's HTTP server on a free port (None would take 8787, which another
        # local cluster may hold)
        cluster = distributed.LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                           dashboard_address=":0")
        return distributed.Client(cluster), cluster
    return distributed.Client(scheduler), None


def main(argv=None) -> int:
    p = argparse.ArgumentParser(
        prog="python3 -m attnlite.dask",
        description="Translates SRC (one English sentence per line) into OUT on a Dask cluster: "
                    "one line per input line, as `attnlite translate < SRC` prints them. Exit "
                    "status 1 when a line failed (its message on stderr), 2 on bad usage.")
    p.add_argument("--scheduler", required=True, metavar="ADDRESS|local[:N]",
                   help="a scheduler address (tcp://host:8786), or local:N for a LocalCluster of N "
                        "worker processes (local: one per CPU)")
    p.add_argument("--model", required=True, metavar="NAME|PATH",
                   help="a shipped model name or a model file (the same path on every worker)")
    p.add_argument("src", metavar="SRC")
    p.add_argument("out", metavar="OUT")
    p.add_argument("--beam", type=int, default=1, metavar="K", help="beam search with K hypotheses (default 1: greedy)")
    p.add_argument("--alpha", type=float, default=0.0, metavar="A", help="length penalty (default 0)")
    p.add_argument("--max-steps", type=int, default=0, metavar="N", help="stop after N decoding steps")
    p.add_argument("--d2l-compat", action="store_true", help="position 0 at every decoder step, as the book")
    p.add_argument("--whole", action="store_true",
                   help="translate each line as one sentence (default: cut into sentences, as the CLI)")
    p.add_argument("--partition-lines", type=int, default=1000, metavar="N", help="lines per task (default 1000)")
    p.add_argument("--max-batch", type=int, default=None, metavar="N",
                   help="sentences decoded together (default 32; with --device cuda 256, or "
                        "1024 / beam past a beam of 4)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                   help="where the workers translate (cuda: each worker's GPU; default cpu)")
    p.add_argument("--precision", choices=("fp32", "bf16"), default="fp32",
                   help="bf16 (with --device cuda): the linear layers' matrices in bfloat16")
    p.add_argument("--retries", type=int, default=2, metavar="N", help="reruns of a partition that raised (default 2)")
    p.add_argument("--send-model", action="store_true",
                   help="read the model file here and send its bytes to the workers (no shared path)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    a = p.parse_args(argv)
    model: Union[str, bytes] = a.model
    try:
        if a.send_model:
            model = Path(resolve_model(a.model)).read_bytes()
    except (OSError, Error) as e:
        print(f"attnlite.dask: error: {e}", file=sys.stderr)
        return 2
    client, cluster = _connect(a.scheduler)
    try:
        errors = translate_file(client, model, a.src, a.out, partition_lines=a.partition_lines,
                                beam=a.beam, alpha=a.alpha, max_batch=a.max_batch,
                                progress=not a.quiet, retries=a.retries, max_steps=a.max_steps,
                                d2l_compat=a.d2l_compat, device=a.device, precision=a.precision,
                                whole=a.whole)
    except (Error, ValueError, TypeError, OSError) as e:
        print(f"attnlite.dask: error: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:  # a partition failed for good: the output is incomplete
        print(f"attnlite.dask: error: {e}", file=sys.stderr)
        return 1
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    for line, msg in errors:
        print(f"attnlite.dask: error: line {line}: {msg}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    # Run the module's own copy (attnlite.dask), not this __main__ one: the plugin and the
    # task function must pickle by reference to attnlite.dask for the workers.
    from attnlite.dask import main as _main

    sys.exit(_main())
