"""Shared fixtures: the source tree, the attnlite command line of build/python (the
reference every test compares with) and the shipped models."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "models"
FIXTURES = ROOT / "tests" / "fixtures"

# The package from this source tree (python/attnlite), unless ATTNLITE_TEST_INSTALLED asks
# for the installed one.
if not os.environ.get("ATTNLITE_TEST_INSTALLED"):
    sys.path.insert(0, str(ROOT / "python"))

import attnlite  # noqa: E402

if os.environ.get("ATTNLITE_TEST_INSTALLED"):
    assert not Path(attnlite.__file__).resolve().is_relative_to(ROOT / "python"), attnlite.__file__

CLI = Path(os.environ.get("ATTNLITE_CLI", ROOT / "build" / "python" / "attnlite"))


def refused_cuda(e: Exception) -> None:
    """A CUDA session the library refused: right for a CPU build or a machine without a GPU
    (the message says CUDA), a failure where ATTNLITE_TEST_CUDA=1 says the library has CUDA
    and the machine a GPU (tools/gpu-check.sh sets it)."""
    if os.environ.get("ATTNLITE_TEST_CUDA") == "1":
        pytest.fail(f"a CUDA session was refused on a machine with a GPU: {e}")
    assert "CUDA" in str(e)


def cli(*args, check=True, stdin=None):
    """Runs the command line; returns its stdout (str)."""
    if not CLI.is_file():
        pytest.fail(f"{CLI} is missing: run python/build.sh (or set ATTNLITE_CLI)")
    p = subprocess.run([str(CLI), *map(str, args)], capture_output=True, text=True,
                       input=stdin, timeout=60)
    if check and p.returncode != 0:
        pytest.fail(f"attnlite {' '.join(map(str, args))} exited {p.returncode}: {p.stderr}")
    return p.stdout


def cli_json(*args):
    """The command line's JSON lines, parsed."""
    return [json.loads(line) for line in cli(*args).splitlines() if line.strip()]


@pytest.fixture(scope="session")
def d2l():
    m = attnlite.Model.load(MODELS / "transformer-d2l.safetensors")
    yield m
    m.close()


@pytest.fixture(scope="session")
def fra():
    m = attnlite.Model.load(MODELS / "transformer-fra.safetensors")
    yield m
    m.close()


@pytest.fixture(scope="session")
def bahdanau():
    m = attnlite.Model.load(MODELS / "bahdanau-d2l.safetensors")
    yield m
    m.close()


@pytest.fixture(scope="session")
def lm():
    m = attnlite.Model.load(MODELS / "lm-fra.safetensors")
    yield m
    m.close()


@pytest.fixture(scope="session")
def vit():
    m = attnlite.Model.load(MODELS / "vit-digits.safetensors")
    yield m
    m.close()
