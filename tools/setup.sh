#!/usr/bin/env bash
# Installs what attnlite needs to build and test on Debian 12 (bookworm):
# compilers and CMake, the header-only libraries, Catch2, Google Benchmark, clang's
# sanitizer/fuzzer runtime, Emscripten + Node for the WASM build, Chromium for the page test
# (npm packages of the web tests come from package-lock.json: tools/test.sh web runs npm ci),
# and Python 3 with NumPy, pytest, venv, pip and setuptools for the Python package (python/),
# Dask distributed for its attnlite.dask (tests skipped without it),
# PyTorch for its export tests (attnlite.export of models built with the book's code),
# Debian's cross compilers for 64- and 32-bit Arm and s390x (big-endian) with qemu-user to run
# what they build (the arm stage of tools/test.sh).
# Usage: tools/setup.sh            (everything)
#        tools/setup.sh --minimal  (just what the native library and CLI need)
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
minimal=(g++ cmake make nlohmann-json3-dev libsimde-dev libstb-dev catch2)
extra=(clang libclang-rt-14-dev libbenchmark-dev emscripten chromium python3 python3-numpy python3-pytest python3-torch
       python3-venv python3-setuptools python3-wheel python3-pip python3-distributed
       g++-aarch64-linux-gnu g++-arm-linux-gnueabihf g++-s390x-linux-gnu qemu-user)
pkgs=("${minimal[@]}")
[ "${1:-}" == "--minimal" ] || pkgs+=("${extra[@]}")
# Node.js may come from another repository that bundles npm; only ask Debian when absent.
if [ "${1:-}" != "--minimal" ] && ! command -v npm >/dev/null; then pkgs+=(nodejs npm); fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
echo "setup: all packages present"
