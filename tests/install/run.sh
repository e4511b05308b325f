#!/usr/bin/env bash
# Installs the built library into a temporary prefix, builds the consumer against it with
# find_package(attnlite), and checks that it translates with the installed model.
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
test -f "$tmp/prefix/include/attnlite/translate.h"
test -f "$tmp/prefix/include/attnlite/render/heatmap.h"
test -x "$tmp/prefix/bin/attnlite"
model="$tmp/prefix/share/attnlite/models/transformer-d2l.safetensors"
test -f "$model"
cmake -S "$src/tests/install" -B "$tmp/consumer" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$tmp/consumer" -j2 >/dev/null
out=$("$tmp/consumer/consumer" "$model" "i'm home .")
echo "consumer: $out"
[ "$out" = "je suis chez moi ." ]
# The installed CLI finds its default model (the sub-word one) next to itself, without the
# source tree.
out2=$(cd "$tmp" && "$tmp/prefix/bin/attnlite" translate "I'm home.")
echo "installed CLI: $out2"
[ "$out2" = "Je suis chez moi." ]
echo "install + find_package: ok"
