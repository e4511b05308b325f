"""attnlite.dask: a file translated on a LocalCluster of two worker processes equals
`attnlite translate < file` of the same build, byte for byte; a worker killed mid-run, a
task that raises, partitions finishing out of order; one model load per worker."""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

distributed = pytest.importorskip("distributed")

# Dask 2022.12 on Debian 12's tornado.
pytestmark = pytest.mark.filterwarnings("ignore:make_current is deprecated:DeprecationWarning")

import attnlite  # noqa: E402
import attnlite.dask as ad  # noqa: E402
from conftest import CLI, MODELS, refused_cuda  # noqa: E402

FRA = MODELS / "transformer-fra.safetensors"
BPE = MODELS / "transformer-fra-bpe.safetensors"
PACKAGE_PARENT = str(Path(attnlite.__file__).resolve().parents[1])


def english(tsv: Path) -> list:
    """The English column of a test split, as bytes lines."""
    return [line.split(b"\t", 1)[0] for line in tsv.read_bytes().splitlines()]


def run_cli(model, src: Path, *opts):
    """`attnlite translate --model MODEL OPTS < src`: (stdout bytes, [(line, message)])."""
    if not CLI.is_file():
        pytest.fail(f"{CLI} is missing: run python/build.sh (or set ATTNLITE_CLI)")
    with open(src, "rb") as f:
        p = subprocess.run([str(CLI), "translate", "--model", str(model), *map(str, opts)],
                           stdin=f, capture_output=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    errors = [(int(m.group(1)), m.group(2)) for m in
              re.finditer(rb"attnlite translate: error: sentence (\d+)(?:, part \d+ of \d+)?: (.*)", p.stderr)]
    return p.stdout, [(n, msg.decode()) for n, msg in errors]


@pytest.fixture(scope="module")
def client():
    # ":0": the scheduler's HTTP server on a free port (None would take 8787, which another
    # local cluster may hold)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0")
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """~3,000 lines: the word model's test English, then the sub-word model's (cased, as
    written) up to 3,000, with an empty line, a line of spaces, one of invalid UTF-8, a CRLF
    line, and a last line without a newline. Its reference: the CLI."""
    lines = english(MODELS / "transformer-fra.test.tsv")
    lines += english(MODELS / "transformer-fra-bpe.test.tsv")[:3000 - len(lines)]
    lines[700:700] = [b""]
    lines[1400:1400] = [b"   "]
    lines[2100:2100] = [b"he\xffllo ."]
    lines[2500:2500] = [b"he is calm .\r"]
    lines.append(b"where is the station ?")
    path = tmp_path_factory.mktemp("dask") / "corpus.txt"
    path.write_bytes(b"\n".join(lines))  # no newline after the last line
    out, errors = run_cli(FRA, path)
    assert out.count(b"\n") == len(lines) == 3005
    assert [n for n, _ in errors] == [701, 1401, 2101]
    return path, out, errors, lines


def slice_file(tmp_path, lines, n, name="slice.txt"):
    path = tmp_path / name
    path.write_bytes(b"".join(line + b"\n" for line in lines[:n]))
    return path


def ours(stderr: str) -> list:
    return [line for line in stderr.splitlines() if line.startswith("attnlite.dask:")]


def patch_workers(client, mode, first_line, marker=""):
    """Replaces attnlite.dask._translate_lines in every worker process: for the partition
    starting at first_line, 'exit' kills the worker (os._exit) and 'raise' raises, the first
    time only (a marker file); 'sleep' waits a second every time."""

    def install():
        import os
        import time

        import attnlite.dask as m

        orig = getattr(m, "_orig_translate_lines", m._translate_lines)
        m._orig_translate_lines = orig

        def patched(plugin, first, lines, opts):
            if first == first_line:
                if mode == "sleep":
                    time.sleep(1.0)
                elif not os.path.exists(marker):
                    open(marker, "w").close()
                    if mode == "exit":
                        os._exit(1)
                    raise RuntimeError("injected failure")
            return orig(plugin, first, lines, opts)

        m._translate_lines = patched

    client.run(install)


def unpatch_workers(client):
    def restore():
        import attnlite.dask as m

        if hasattr(m, "_orig_translate_lines"):
            m._translate_lines = m._orig_translate_lines

    client.run(restore)


def test_import_attnlite_does_not_import_dask():
    code = ("import sys; import attnlite; "
            "bad = [m for m in ('attnlite.dask', 'dask', 'distributed') if m in sys.modules]; "
            "assert not bad, bad")
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    subprocess.run([sys.executable, "-c", code], check=True, env=env, timeout=60)


def test_corpus_greedy_equals_cli(client, corpus, tmp_path, capfd):
    src, want, want_errors, lines = corpus
    out = tmp_path / "out.txt"
    capfd.readouterr()
    r = ad.translate_file(client, "transformer-fra", src, out, partition_lines=250)
    assert out.read_bytes() == want
    assert list(r) == want_errors
    assert isinstance(r, ad.TranslateFileResult) and isinstance(r, list)
    assert r.lines == len(lines) and r.partitions == 13 and r.seconds > 0
    # Both workers worked, and each loaded the model once for all its partitions.
    assert len(r.workers) == 2 and sum(r.workers.values()) == 13
    assert sorted(r.loads.values()) == [1, 1]
    # A progress line per partition, and the summary.
    progress = ours(capfd.readouterr().err)
    assert sum("done on tcp://" in line for line in progress) == 13
    assert "3005/3005 lines written" in "".join(progress)
    assert progress[-1].endswith(f"3 errors -> {out}")


def test_beam_2_equals_cli(client, corpus, tmp_path):
    _, _, _, lines = corpus
    src = slice_file(tmp_path, lines, 400)
    want, errors = run_cli(FRA, src, "--beam", "2")
    out = tmp_path / "out.txt"
    r = ad.translate_file(client, str(FRA), src, out, beam=2, partition_lines=100, progress=False)
    assert out.read_bytes() == want and list(r) == errors == []


def test_subword_model_as_bytes_beam_alpha(client, tmp_path, capfd):
    # The sub-word model sent as bytes (no shared file), odd partitions and batches.
    lines = english(MODELS / "transformer-fra-bpe.test.tsv")[-150:] + [b"", b"Where is it?"]
    src = slice_file(tmp_path, lines, len(lines))
    want, errors = run_cli(BPE, src, "--beam", "2", "--alpha", "0.75")
    out = tmp_path / "out.txt"
    capfd.readouterr()
    r = ad.translate_file(client, BPE.read_bytes(), src, out, beam=2, alpha=0.75,
                          partition_lines=37, max_batch=5, progress=False)
    assert out.read_bytes() == want
    assert list(r) == errors == [(151, "empty sentence")]
    assert sorted(r.loads.values()) == [1, 1]
    assert ours(capfd.readouterr().err) == []  # progress=False: quiet


def test_lines_of_several_sentences_are_cut_as_the_cli_cuts_them(client, tmp_path):
    lines = [b"I'm home. I'm happy. Where is the station?", b"Mr. Smith is here! \xf0\x9f\x98\x80",
             b"All right. I'll take it.", b"\xf0\x9f\x98\x80", b"go . i lost .", b"Run! Now.",
             b"Go. " + b"word " * 1000 + b"."]  # its second sentence too long: the line fails
    src = slice_file(tmp_path, lines, len(lines))
    outs = {}
    for whole in (False, True):
        want, errors = run_cli(BPE, src, *(["--whole"] if whole else []))
        out = tmp_path / f"out-{whole}.txt"
        r = ad.translate_file(client, str(BPE), src, out, partition_lines=4, max_batch=3,
                              progress=False, whole=whole)
        assert out.read_bytes() == want
        assert list(r) == errors and [n for n, _ in errors] == [4, 7]
        outs[whole] = want.decode().split("\n")
    assert outs[False][0] == "Je suis chez moi. Je suis heureux. Où se trouve la gare ?"
    assert outs[True][0] != outs[False][0]
    assert outs[False][5].count("!") == 2  # "Run!" and "Now." each translated


def test_nul_byte_and_empty_file(client, tmp_path):
    src = tmp_path / "nul.txt"
    src.write_bytes(b"go .\ni am\x00 home .\n")
    out = tmp_path / "out.txt"
    r = ad.translate_file(client, FRA, src, out, progress=False)
    assert out.read_bytes() == run_cli(FRA, slice_file(tmp_path, [b"go ."], 1))[0] + b"\n"
    assert list(r) == [(2, ad.NUL_MESSAGE)]
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    r = ad.translate_file(client, FRA, empty, out, progress=False)
    assert out.read_bytes() == b"" and list(r) == [] and r.lines == 0 and r.partitions == 0


def test_out_of_order_partitions_are_written_in_order(client, corpus, tmp_path, capfd):
    _, want, _, lines = corpus
    src = slice_file(tmp_path, lines, 300)
    out = tmp_path / "out.txt"
    patch_workers(client, "sleep", first_line=1)  # the first partition comes back last
    try:
        capfd.readouterr()
        ad.translate_file(client, FRA, src, out, partition_lines=50, max_pending=4)
    finally:
        unpatch_workers(client)
    assert out.read_bytes() == b"".join(want.split(b"\n")[i] + b"\n" for i in range(300))
    progress = [line for line in ours(capfd.readouterr().err) if "done on" in line]
    assert len(progress) == 6 and "partition 1/6 " not in progress[0]
    # Each line: the partitions written are the finished ones before the first unfinished.
    finished = set()
    for line in progress:
        finished.add(int(re.search(r"partition (\d)/6", line).group(1)))
        prefix = next(i for i in range(1, 8) if i not in finished) - 1
        assert f" {50 * prefix}/300 lines written" in line, (line, finished)
    # At most 4 partitions pending (submitted, not written): 5 and 6 start after 1 is written.
    order = [int(re.search(r"partition (\d)/6", line).group(1)) for line in progress]
    assert order.index(1) < order.index(5) and order.index(1) < order.index(6)


def test_killed_worker_partition_is_run_again(client, corpus, tmp_path):
    _, want, _, lines = corpus
    src = slice_file(tmp_path, lines, 600)
    out = tmp_path / "out.txt"
    marker = tmp_path / "killed"
    before = set(client.nthreads())
    patch_workers(client, "exit", first_line=201, marker=str(marker))
    try:
        r = ad.translate_file(client, FRA, src, out, partition_lines=100, progress=False)
    finally:
        client.wait_for_workers(2, timeout=60)  # the nanny restarts the dead worker
        unpatch_workers(client)
    assert marker.exists()  # the worker did die in partition 3
    assert out.read_bytes() == b"".join(want.split(b"\n")[i] + b"\n" for i in range(600))
    assert list(r) == [(i + 1, "empty sentence") for i in range(600) if not lines[i].strip()]
    after = set(client.nthreads())
    assert len(after) == 2 and after != before  # a new worker process took the dead one's place
    assert all(n == 1 for n in r.loads.values())  # the new worker loaded the model once too


def test_task_that_raises_is_retried(client, corpus, tmp_path):
    _, want, _, lines = corpus
    src = slice_file(tmp_path, lines, 300)
    out = tmp_path / "out.txt"
    patch_workers(client, "raise", first_line=101, marker=str(tmp_path / "raised"))
    try:
        ad.translate_file(client, FRA, src, out, partition_lines=100, retries=1, progress=False)
        assert out.read_bytes() == b"".join(want.split(b"\n")[i] + b"\n" for i in range(300))
        # Without retries the same failure stops the run, and says which lines.
        os.remove(tmp_path / "raised")
        with pytest.raises(RuntimeError, match=r"partition 2/3 \(lines 101-200\) failed: "
                                               r"RuntimeError: injected failure"):
            ad.translate_file(client, FRA, src, out, partition_lines=100, retries=0, progress=False)
    finally:
        unpatch_workers(client)
    # The plugin of every run is gone from the workers.
    assert client.run(lambda dask_worker: [n for n in dask_worker.plugins if n.startswith("attnlite")]) \
        == {w: [] for w in client.nthreads()}


def test_bad_models_and_arguments(client, tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"go .\n")
    out = tmp_path / "out.txt"
    with pytest.raises(attnlite.Error, match="not a translator"):
        ad.translate_file(client, "lm-fra", src, out, progress=False)
    # Not on this machine: the workers' plugin setup fails, with the library's message.
    with pytest.raises(attnlite.Error, match="missing.safetensors"):
        ad.translate_file(client, tmp_path / "missing.safetensors", src, out, progress=False)
    with pytest.raises(attnlite.Error):
        ad.translate_file(client, b"not a model", src, out, progress=False)
    with pytest.raises(ValueError):
        ad.translate_file(client, FRA, src, out, partition_lines=0)
    with pytest.raises(TypeError):
        ad.translate_file(client, FRA, src, out, beam="2")
    with pytest.raises(TypeError):
        ad.translate_file(client, 3, src, out)
    assert client.run(lambda dask_worker: [n for n in dask_worker.plugins if n.startswith("attnlite")]) \
        == {w: [] for w in client.nthreads()}


def test_cuda_workers(client, corpus, tmp_path, capfd):
    # Workers translating on their GPU (the emulated device in CI, a GPU in
    # tools/gpu-check.sh): the CLI's output on the CPU, byte for byte, the device named in the
    # progress; without CUDA, the run is refused at its start with the library's message, and
    # nothing is left on the workers. bf16 on the CPU is refused before any work.
    _, _, _, lines = corpus
    src = slice_file(tmp_path, lines[680:740], 60)  # holds the corpus's empty line (701)
    out = tmp_path / "out.txt"
    want, want_errors = run_cli(FRA, src)
    with pytest.raises(ValueError, match="needs device 'cuda'"):
        ad.translate_file(client, FRA, src, out, precision="bf16")
    with pytest.raises(ValueError, match="'cpu' or 'cuda'"):
        ad.translate_file(client, FRA, src, out, device="gpu")
    try:
        res = ad.translate_file(client, FRA, src, out, partition_lines=25, device="cuda", retries=0)
    except attnlite.Error as e:
        refused_cuda(e)
    else:
        assert out.read_bytes() == want
        assert list(res) == want_errors == [(21, "empty sentence")]
        assert "on each worker's GPU (fp32)" in capfd.readouterr().err
    assert client.run(lambda dask_worker: [n for n in dask_worker.plugins if n.startswith("attnlite")]) \
        == {w: [] for w in client.nthreads()}


def run_module(*args):
    env = dict(os.environ, PYTHONPATH=PACKAGE_PARENT)
    return subprocess.run([sys.executable, "-m", "attnlite.dask", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=120)


def test_command_line_on_a_running_cluster(client, corpus, tmp_path):
    _, want, _, lines = corpus
    src = slice_file(tmp_path, lines[650:750], 100)  # holds the corpus's empty line (701)
    out = tmp_path / "out.txt"
    p = run_module("--scheduler", client.scheduler.address, "--model", "transformer-fra",
                   src, out, "--partition-lines", "30", "--quiet")
    assert p.returncode == 1, p.stderr
    assert out.read_bytes() == run_cli(FRA, src)[0]
    assert "attnlite.dask: error: line 51: empty sentence" in p.stderr
    assert not [line for line in ours(p.stderr) if "done on" in line]


def test_command_line_local_cluster(tmp_path):
    src = tmp_path / "in.txt"
    src.write_bytes(b"go .\ni lost .\nhe's calm .\n")
    out = tmp_path / "out.txt"
    t = time.perf_counter()
    p = run_module("--scheduler", "local:1", "--model", FRA, src, out, "--beam", "2",
                   "--send-model")
    assert p.returncode == 0, p.stderr
    assert out.read_bytes() == run_cli(FRA, src, "--beam", "2")[0]
    assert sum("done on" in line for line in ours(p.stderr)) == 1
    assert time.perf_counter() - t < 60
    p = run_module("--scheduler", "local:x", "--model", FRA, src, out)
    assert p.returncode != 0 and "local:N needs a number" in p.stderr
