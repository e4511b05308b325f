#!/usr/bin/env bash
# Builds libattnlite_c.so (the C API as a shared library) and the attnlite command line in
# build/python, and copies the library into the package (python/attnlite/_lib/), ready for
#   pip install --no-build-isolation --no-deps python/
# Environment: JOBS (parallel compile jobs, default 2), BUILD_DIR (default build/python),
# CMAKE_ARGS (more -D options, e.g. -DATTNLITE_CUDA=ON).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build/python}
jobs=${JOBS:-2}
# shellcheck disable=SC2086
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DATTNLITE_SHARED_C=ON \
  -DATTNLITE_TESTS=OFF -DATTNLITE_TOOLS=ON ${CMAKE_ARGS:-} >/dev/null
cmake --build "$build" -j"$jobs" --target attnlite_c attnlite_cli
mkdir -p python/attnlite/_lib
# A fresh file (not overwritten in place): a running interpreter may have the old one mapped.
cp "$build/libattnlite_c.so" python/attnlite/_lib/libattnlite_c.so.tmp
mv -f python/attnlite/_lib/libattnlite_c.so.tmp python/attnlite/_lib/libattnlite_c.so
# Where the shipped models are, for Model.load("transformer-d2l") from an installed package.
echo "$PWD/models" > python/attnlite/_lib/models_dir
echo "python/build.sh: python/attnlite/_lib/libattnlite_c.so from $build"
