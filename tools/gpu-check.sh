#!/usr/bin/env bash
# Everything the CUDA backend claims, checked on the NVIDIA GPU at hand, in one Markdown report
# (docs/cuda.md quotes it). Several minutes on a 16-core machine, the build included: the report
# gives each step's time and the whole run's.
#
#   bash tools/gpu-check.sh [--quick] [--out DIR]      (default DIR: build/gpu-check)
#   bash tools/gpu-check.sh --cases                    (the GPU cases step 7 names: below)
#
# Steps (each one timed and bounded; a failing step is reported and the others still run;
# the exit status is 1 when any check failed):
#   1. the GPU (nvidia-smi: name, compute capability, driver) and the machine;
#   2. a Release build of the CUDA variant for that GPU's architecture (-DATTNLITE_CUDA=ON,
#      -DATTNLITE_BENCH=ON; Ninja when present). A machine with only the CUDA toolkit lacks
#      the Debian header packages: `bash ../shared/tools/device-prefix.sh` (on a Debian
#      machine) makes .device-prefix/, which this script uses when it is there;
#   3. the GPU cases (attnlite_tests "[cuda]"), to show they run rather than skip before
#      anything is measured;
#   4. decode speed of the base-size Transformer: bench_cuda (attnlite) beside
#      bench/peer_torch_cuda.py (PyTorch: eager with a KV cache, and with CUDA graphs), same
#      shapes, fp32, TF32 off, batch 1 and 32, and batch 32 again with its steps launch by
#      launch (ATTNLITE_CUDA_GRAPHS=small; docs/cuda.md), with every product as SGEMM and a
#      bias kernel (ATTNLITE_CUDA_LT=0), with its products timed per shape
#      (ATTNLITE_CUDA_LT=tune), with the GEMV up to 64 rows (ATTNLITE_CUDA_LT=gemv, fp32 and
#      bfloat16 weights), and with bfloat16 weights (--precision bf16, batch 1 and 32); then
#      each product of a decoding step on its own at 16, 32 and 64 rows in those ways
#      (bench_cuda --products);
#      ratios (the peer's decoders are first
#      checked against the book's model on the GPU: --check --device cuda);
#   5. the CLI on held-out sentences (the test splits of both whole-corpus translators, greedy
#      and beam 4, each line as one sentence, --whole, as the earlier runs): CPU (one thread)
#      against CUDA, outputs identical, wall time of each and
#      where it went (translate --times: load, set-up, first call, the rest); the
#      default model's split at other batch sizes, and with finished sentences kept in their
#      batches (ATTNLITE_CUDA_DROP=0); with bfloat16 weights (--precision bf16): the lines
#      that stay as in fp32, and the time; `classify` of the test digits in batches on both
#      devices, the same labels;
#   6. the language model (tokens/s, long generations) and the ViT (images/s, batches of 1
#      and 64) on the GPU against the CPU and against PyTorch on the same GPU, same outputs;
#   7. the checks that time nothing, side by side once every measurement is done (each in a
#      process of its own, so that none waits for another; nothing is timed meanwhile), so
#      that a run cut short by a time limit keeps the goals' numbers:
#      - every test (ctest: the CPU suite and every GPU case, but the CLI's three whole-split
#        CPU evaluations, which CI runs), then the Python package's tests that make CUDA
#        sessions, on this build's libattnlite_c.so (when a Python with numpy and pytest is
#        there; torch is not needed);
#      - compute-sanitizer memcheck, and racecheck (the project's kernels), over the GPU cases
#        (when the tool is there);
#      - the GPU cases in the other three ATTNLITE_CUDA_LT modes, and the C API's CUDA sessions.
# Then tools/gpu_report.py writes DIR/report.md from what the steps left in DIR; a run cut
# short leaves no DIR/finished.json, and `python3 tools/gpu_report.py DIR` reports its finished
# steps, names the one it was in (DIR/running.txt) and fails.
#
# Environment: PYTHON (an interpreter with torch; default /usr/bin/python3 if it has torch,
# else python3), JOBS (build jobs, default nproc), ARCH (CUDA architecture, default the
# GPU's compute capability, e.g. 90).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 2
OUT=build/gpu-check
QUICK=0
CASES=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) QUICK=1 ;;
    --cases) CASES=1 ;;
    --out) OUT="$2"; shift ;;
    *) echo "usage: tools/gpu-check.sh [--quick] [--out DIR] | --cases" >&2; exit 2 ;;
  esac
  shift
done
# The GPU cases of step 7 by name, as Catch2 test specs (names joined by commas): what
# compute-sanitizer goes over (the kernels, the models, the searches' device ops), and the op
# whose CUDA path depends on the BLAS mode (linear_add_layer_norm: where the bias goes), run
# again in each mode. `--cases` prints them (tests/tools/gpu_check_cases.sh: each spec names
# only cases the test program has, and all of them), without a GPU.
lt_ops="ops: linear_add_layer_norm on every op set and as linear then add_layer_norm"
gemv_rows="CUDA: the GEMV of many rows gives each row the bits that launches of 8 rows give"
san_memcheck="$lt_ops,ops: append_attend on every op set is the cache's two copies then attend,CUDA products match the scalar CPU reference,$gemv_rows,CUDA kernels match the scalar CPU reference,CUDA beam search and Bahdanau match the CPU,CUDA translations match the CPU on the random fixture Transformer,translate on CUDA makes no device allocation,ops: beam search's top_rows and permute_blocks on every op set,ops: the searches' keep_rows on every op set,CUDA batches drop their finished rows as ATTNLITE_CUDA_DROP says"
# (racecheck in two processes side by side: the kernel case; the model and the searches' ops)
san_racecheck="CUDA kernels match the scalar CPU reference,$gemv_rows"
san_racecheck_ops="CUDA translations match the CPU on the random fixture Transformer,ops: beam search's top_rows and permute_blocks on every op set,ops: the searches' keep_rows on every op set"
if [ "$CASES" = 1 ]; then
  printf 'memcheck\t%s\nracecheck\t%s\nracecheck_ops\t%s\nlt_modes\t%s\n' \
    "$san_memcheck" "$san_racecheck" "$san_racecheck_ops" "$lt_ops"
  exit 0
fi
mkdir -p "$OUT"
OUT="$(cd "$OUT" && pwd)"
BUILD="$ROOT/build/cuda-check"
JOBS="${JOBS:-$(nproc)}"
LOG="$OUT/steps.jsonl"
: > "$LOG"
rm -f "$OUT/finished.json" "$OUT/running.txt" "$OUT/report.md"  # nothing of an earlier run
failed=0

say() { printf '\n== %s\n' "$*" >&2; }
now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
# step NAME SECONDS CMD...: runs CMD (a program with a time limit, or one of the functions
# below, which end by themselves), its output in OUT/NAME.log; records the status and the
# wall time in steps.jsonl. In the side-by-side phase (SIDE=1, step 7) the step runs in a
# background chain: running.txt names the phase instead, and its line says "side"; beside the
# build (SIDE=build: the exports of step 6, which need no build), its line says "beside".
SIDE=0
step() {
  local name="$1" limit="$2"; shift 2
  say "$name"
  local t0 t1 rc side=""
  case "$SIDE" in
    1) side=', "side": true' ;;
    build) side=', "beside": "build"' ;;
    *) echo "$name" > "$OUT/running.txt" ;;
  esac
  t0=$(now)
  if declare -F "$1" >/dev/null; then "$@" > "$OUT/$name.log" 2>&1; else timeout "$limit" "$@" > "$OUT/$name.log" 2>&1; fi
  rc=$?
  t1=$(now)
  tail -5 "$OUT/$name.log" | sed "s/^/[$name] /" >&2
  printf '{"step": "%s", "rc": %d, "seconds": %s%s}\n' "$name" "$rc" "$(secs "$t0" "$t1")" "$side" >> "$LOG"
  [ "$rc" -eq 0 ] || { echo "gpu-check: step $name failed (status $rc; $OUT/$name.log)" >&2; failed=1; }
  return "$rc"
}
# finished: the script's last word before the report, with its whole time. A report without
# it is of a run cut short (a time limit, a lost machine): gpu_report.py says which steps ran.
finished() { rm -f "$OUT/running.txt"; printf '{"seconds": %d}\n' "$SECONDS" > "$OUT/finished.json"; }

PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for p in /usr/bin/python3 python3; do
    if "$p" -c "import torch" 2>/dev/null; then PY="$p"; break; fi
  done
fi

# 1. the GPU
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU here (nvidia-smi finds none); nothing to check" >&2
  exit 1
fi
gpu_line=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,memory.total --format=csv,noheader | head -1)
cap=$(echo "$gpu_line" | cut -d, -f2 | tr -d ' .')
ARCH="${ARCH:-$cap}"
{
  echo "gpu: $gpu_line"
  echo "date: $(date -u +%Y-%m-%d)"
  echo "commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "cpu: $(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores"
  echo "nvcc: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')"
  echo "cxx: $(c++ --version | head -1)"
  echo "torch: $([ -n "$PY" ] && "$PY" -c 'import torch; print(torch.__version__, "cuda", torch.version.cuda)' 2>/dev/null || echo none)"
  echo "arch: $ARCH"
  echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
} | tee "$OUT/machine.txt" >&2

# 2. build
cfg=(-S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DATTNLITE_CUDA=ON -DATTNLITE_BENCH=ON
     -DATTNLITE_SHARED_C=ON -DCMAKE_CUDA_ARCHITECTURES="$ARCH")
command -v ninja >/dev/null && cfg+=(-G Ninja)
if [ -d "$ROOT/.device-prefix" ]; then
  P="$ROOT/.device-prefix"
  export LD_LIBRARY_PATH="$P/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  cfg+=(-DCMAKE_PREFIX_PATH="$P" -DSIMDE_INCLUDE_DIR="$P/include" -DSTB_INCLUDE_DIR="$P/include/stb")
fi
build() { cmake "${cfg[@]}" && cmake --build "$BUILD" -j"$JOBS"; }
# the language model's and the ViT's PyTorch exports (step 6: a minute of CPU, no GPU, no
# build) run beside the build
exports() {
  mkdir -p "$OUT/lm" "$OUT/vit"
  step export_lm 120 "$PY" "$ROOT/tools/export_lm_bench.py" "$ROOT/models/lm-fra.safetensors" "$OUT/lm" --tokens 24
  step export_vit 120 "$PY" "$ROOT/tools/export_vit_bench.py" "$ROOT/models/vit-digits.safetensors" \
    "$ROOT/tests/fixtures/vit_digits_test.json" "$OUT/vit"
}
exports_pid=""
if [ -n "$PY" ]; then
  SIDE=build
  exports &
  exports_pid=$!
  SIDE=0
fi
if ! step build 300 build; then
  [ -z "$exports_pid" ] || wait "$exports_pid"
  finished
  "${PY:-python3}" "$ROOT/tools/gpu_report.py" "$OUT"
  exit 1
fi
CLI="$BUILD/attnlite"
TESTS="$BUILD/tests/attnlite_tests"

# 3. the GPU cases, before anything is measured: they ran, rather than skipped (the report
# counts a skip as a failure)
step gpu_tests 240 "$TESTS" "[cuda]" --durations yes

# 4. base Transformer decode: attnlite against PyTorch (eager + KV cache, CUDA graphs)
reps=5; steps=64
[ $QUICK = 1 ] && { reps=3; steps=32; }
step bench_cuda 240 "$BUILD/bench/bench_cuda" --batch 1,32 --steps $steps --reps $reps \
  --json "$OUT/bench_cuda.json"
step bench_cuda_small 240 env ATTNLITE_CUDA_GRAPHS=small "$BUILD/bench/bench_cuda" --batch 32 \
  --steps $steps --reps $reps --json "$OUT/bench_cuda_small.json"
step bench_cuda_sgemm 240 env ATTNLITE_CUDA_LT=0 "$BUILD/bench/bench_cuda" --batch 32 \
  --steps $steps --reps $reps --json "$OUT/bench_cuda_sgemm.json"
step bench_cuda_tune 240 env ATTNLITE_CUDA_LT=tune "$BUILD/bench/bench_cuda" --batch 32 \
  --steps $steps --reps $reps --json "$OUT/bench_cuda_tune.json"
step bench_cuda_gemv 240 env ATTNLITE_CUDA_LT=gemv "$BUILD/bench/bench_cuda" --batch 32 \
  --steps $steps --reps $reps --json "$OUT/bench_cuda_gemv.json"
step bench_cuda_gemv_bf16 240 env ATTNLITE_CUDA_LT=gemv "$BUILD/bench/bench_cuda" --batch 32 \
  --precision bf16 --steps $steps --reps $reps --json "$OUT/bench_cuda_gemv_bf16.json"
# each fp32 product of a decoding step on its own, at 16, 32 and 64 rows, in each BLAS mode
step bench_cuda_products 180 "$BUILD/bench/bench_cuda" --products --batch 16,32,64 --reps $reps \
  --json "$OUT/bench_products.json"
step bench_cuda_bf16 240 "$BUILD/bench/bench_cuda" --batch 1,32 --precision bf16 --steps $steps \
  --reps $reps --json "$OUT/bench_cuda_bf16.json"
if [ -n "$PY" ]; then
  step peer_check 120 "$PY" "$ROOT/bench/peer_torch_cuda.py" --check --device cuda
  step peer_torch_cuda 300 "$PY" "$ROOT/bench/peer_torch_cuda.py" --batch 1,32 --steps $steps \
    --reps $reps --mode eager,graphs --json "$OUT/peer_torch_cuda.json"
fi

# 5. the CLI on held-out sentences: CPU (1 thread, one line at a time) against CUDA (its
# default: 256 lines at a time, 1,024 / beam past beam 4)
parity() {  # parity MODEL BEAM: translate the test split's English on both devices
  local model="$1" beam="$2" tag="$1.beam$2"
  cut -f1 "$ROOT/models/$model.test.tsv" | awk '!seen[$0]++' > "$OUT/$model.src"
  local n; n=$(wc -l < "$OUT/$model.src")
  local a b c
  a=$(now)
  "$CLI" translate --whole --model "$model" --beam "$beam" --device cpu --times < "$OUT/$model.src" \
    > "$OUT/$tag.cpu" 2> "$OUT/$tag.cpu.err" || return 1
  b=$(now)
  "$CLI" translate --whole --model "$model" --beam "$beam" --device cuda --times < "$OUT/$model.src" \
    > "$OUT/$tag.cuda" 2> "$OUT/$tag.cuda.err" || return 1
  c=$(now)
  local same; same=$(paste -d '\n' "$OUT/$tag.cpu" "$OUT/$tag.cuda" | paste - - | awk -F'\t' '$1 == $2' | wc -l)
  printf '{"model": "%s", "beam": %d, "sentences": %d, "identical": %d, "cpu_s": %s, "cuda_s": %s}\n' \
    "$model" "$beam" "$n" "$same" "$(secs "$a" "$b")" "$(secs "$b" "$c")" >> "$OUT/parity.jsonl"
  [ "$same" -eq "$n" ]
}
: > "$OUT/parity.jsonl"
for m in transformer-fra-bpe transformer-fra; do
  for beam in 1 4; do step "parity_${m}_beam$beam" 240 parity "$m" "$beam"; done
done
# the default model's split at other batch sizes on the GPU (the CLI's default is 256), on the
# CPU at --batch 32 (its batches drop finished sentences: about twice as fast as one line at a
# time), the CPU's own best against which the GPU's speed-up is also stated, and on the GPU at
# the default batch with every finished sentence kept in its batch (ATTNLITE_CUDA_DROP=0, the
# code before finished rows left GPU batches), greedy and beam 4, and with the GEMV up to 64
# rows (ATTNLITE_CUDA_LT=gemv: batches of 32 lines, and the default's, whose rows fall below
# 65 as sentences finish). Each run: DEV:BATCH:DROP:BEAM:LT (BATCH "-": the CLI's default;
# DROP, LT "-": ATTNLITE_CUDA_DROP, ATTNLITE_CUDA_LT unset)
sweep() {
  local m=transformer-fra-bpe run dev b drop beam lt a c same out
  for run in cpu:32:-:1:- cuda:16:-:1:- cuda:64:-:1:- cuda:-:0:1:- cuda:-:0:4:- cuda:32:-:1:gemv \
    cuda:-:-:1:gemv cuda:-:-:4:gemv; do
    IFS=: read -r dev b drop beam lt <<< "$run"
    out="$OUT/$m.b$b.drop$drop.beam$beam.lt$lt.$dev"
    local envs=() args=(translate --whole --model $m --device "$dev" --beam "$beam")
    [ "$drop" = - ] || envs+=(ATTNLITE_CUDA_DROP="$drop")
    [ "$lt" = - ] || envs+=(ATTNLITE_CUDA_LT="$lt")
    [ "$b" = - ] || args+=(--batch "$b")
    a=$(now)
    env "${envs[@]}" "$CLI" "${args[@]}" < "$OUT/$m.src" > "$out" 2>/dev/null || return 1
    c=$(now)
    same=$(paste -d '\n' "$OUT/$m.beam$beam.cpu" "$out" | paste - - | awk -F'\t' '$1 == $2' | wc -l)
    printf '{"model": "%s", "batch": "%s", "drop": "%s", "lt": "%s", "beam": %d, "sentences": %d, "identical": %d, "%s_s": %s}\n' \
      "$m" "$b" "$drop" "$lt" "$beam" "$(wc -l < "$OUT/$m.src")" "$same" "$dev" "$(secs "$a" "$c")" >> "$OUT/batch.jsonl"
  done
}
: > "$OUT/batch.jsonl"
step batch_sweep 180 sweep
# bfloat16 weights (--precision bf16): the word translator's held-out English (the parity
# step's distinct sentences) through the book's two fp32 translators, whose matrices halve,
# on the GPU at fp32 and at bf16: how many lines stay the same, and the time of each; and the
# default sub-word model, which is int8 (nothing to halve: every line must stay as the
# parity step's). Each run: MODEL:BEAM
bf16() {
  local run m beam a b c ref out same src="$OUT/transformer-fra.src"
  [ -s "$src" ] || return 1
  for run in transformer-d2l:1 transformer-d2l:4 bahdanau-d2l:1 bahdanau-d2l:4 transformer-fra-bpe:1; do
    IFS=: read -r m beam <<< "$run"
    ref="$OUT/$m.beam$beam.cuda" out="$OUT/$m.beam$beam.bf16"
    a=$(now)
    if [ "$m" = transformer-fra-bpe ]; then
      src="$OUT/$m.src"
      [ -s "$ref" ] || return 1
    else
      "$CLI" translate --whole --model "$m" --beam "$beam" --device cuda < "$src" > "$ref" 2>/dev/null || return 1
    fi
    b=$(now)
    "$CLI" translate --whole --model "$m" --beam "$beam" --device cuda --precision bf16 < "$src" > "$out" 2>/dev/null || return 1
    c=$(now)
    same=$(paste -d '\n' "$ref" "$out" | paste - - | awk -F'\t' '$1 == $2' | wc -l)
    printf '{"model": "%s", "beam": %d, "sentences": %d, "identical": %d, "fp32_s": %s, "bf16_s": %s}\n' \
      "$m" "$beam" "$(wc -l < "$src")" "$same" "$(secs "$a" "$b")" "$(secs "$b" "$c")" >> "$OUT/bf16.jsonl"
  done
}
: > "$OUT/bf16.jsonl"
step bf16_weights 120 bf16
# little work on the GPU: the CLI says that its start-up outweighs it (stderr, in the report);
# one sentence's whole process on each device, three times, is the start-up's price
small() {
  "$CLI" translate --device cuda "i'm home ." 2> "$OUT/small_work.txt" &&
    grep -q "note: the GPU's start-up took" "$OUT/small_work.txt" || return 1
  local dev a b
  for dev in cpu cuda cpu cuda cpu cuda; do
    a=$(now)
    "$CLI" translate --device $dev "i'm home ." > /dev/null 2>&1 || return 1
    b=$(now)
    printf '{"device": "%s", "s": %s}\n' "$dev" "$(secs "$a" "$b")" >> "$OUT/one_sentence.jsonl"
  done
}
: > "$OUT/one_sentence.jsonl"
step small_work 60 small

# the CLI's classify on the GPU: the test digits in batches of 8 (the last one short) give
# the CPU's labels; the start-up note for less than one batch (its default 64), not for more
classify() {
  local d="$ROOT/tests/fixtures/digits"
  "$CLI" classify --device cpu "$d"/*.png > "$OUT/classify.cpu" || return 1
  "$CLI" classify --device cuda --batch 8 "$d"/*.png > "$OUT/classify.cuda" 2> "$OUT/classify.b8.err" || return 1
  "$CLI" classify --device cuda "$d"/*.png > "$OUT/classify.b64.cuda" 2> "$OUT/classify.b64.err" || return 1
  local n same same64 diff note8=0 note64=0
  n=$(wc -l < "$OUT/classify.cpu")
  same=$(paste "$OUT/classify.cpu" "$OUT/classify.cuda" | awk -F'\t' '$1 == $4 && $2 == $5' | wc -l)
  same64=$(paste "$OUT/classify.cpu" "$OUT/classify.b64.cuda" | awk -F'\t' '$1 == $4 && $2 == $5' | wc -l)
  diff=$(paste "$OUT/classify.cpu" "$OUT/classify.cuda" | awk -F'\t' '{ d = $3 - $6; if (d < 0) d = -d; if (d > m) m = d } END { printf "%g", m + 0 }')
  grep -q "note: the GPU's start-up took" "$OUT/classify.b8.err" && note8=1
  grep -q "note: the GPU's start-up took" "$OUT/classify.b64.err" && note64=1
  printf '{"images": %d, "identical_b8": %d, "identical_b64": %d, "max_prob_diff": %s, "note_b8": %d, "note_b64": %d}\n' \
    "$n" "$same" "$same64" "$diff" "$note8" "$note64" > "$OUT/classify.json"
  [ "$n" -gt 0 ] && [ "$same" -eq "$n" ] && [ "$same64" -eq "$n" ] && [ "$note8" -eq 0 ] && [ "$note64" -eq 1 ]
}
step classify 60 classify

# 6. the language model and the ViT: GPU, CPU, PyTorch on the GPU
if [ -n "$PY" ]; then
  wait "$exports_pid"  # beside the build (above)
  prompt=$("$PY" -c "import json,sys; print(json.load(open(sys.argv[1]))['prompt'])" "$OUT/lm/lm.json" 2>/dev/null)
  : > "$OUT/lm.jsonl"; : > "$OUT/vit.jsonl"
  for dev in cuda cpu; do
    step "lm_attnlite_$dev" 120 bash -o pipefail -c "'$BUILD/bench/attnlite_bench_generate' --model '$OUT/lm/lm.f32.safetensors' \
      --prompt '$prompt' --tokens 24 --gens 8 --min-time 2 --device $dev | tail -1 >> '$OUT/lm.jsonl'"
    for b in 1 64; do
      step "vit_attnlite_${dev}_b$b" 120 bash -o pipefail -c "'$BUILD/bench/attnlite_bench_classify' --model '$ROOT/models/vit-digits.safetensors' \
        --images '$OUT/vit/digits.f32' --batch $b --min-time 2 --device $dev | tail -1 >> '$OUT/vit.jsonl'"
    done
  done
  step lm_torch_cuda 180 bash -o pipefail -c "'$PY' '$ROOT/bench/peer_torch_lm.py' --dir '$OUT/lm' --tokens 24 --gens 8 \
    --min-time 2 --device cuda --label pytorch-cuda | tail -1 >> '$OUT/lm.jsonl'"
  for b in 1 64; do
    step "vit_torch_cuda_b$b" 180 bash -o pipefail -c "'$PY' '$ROOT/bench/peer_torch_vit.py' --dir '$OUT/vit' --batch $b \
      --min-time 2 --device cuda --label pytorch-cuda | tail -1 >> '$OUT/vit.jsonl'"
  done
fi

# 7. the checks that time nothing, side by side: five background chains (ctest, then Python;
# memcheck; racecheck in two; the other LT modes and the C API), so that the phase takes as
# long as its longest chain. Nothing is measured meanwhile. Each step still has its own time
# limit and line; the phase's wall time is the step "side_by_side".
# The CLI's whole-split CPU evaluations (corpus model, typed-input parity, sub-word corpus: 30,
# 10 and 7 s of one core, the longest tests) run the CPU code that CI runs; not here.
PYT=""
for p in "$PY" /usr/bin/python3 python3; do
  if [ -n "$p" ] && "$p" -c "import numpy, pytest" 2>/dev/null; then PYT="$p"; break; fi
done
# racecheck looks for races on shared memory: the project's kernels that use it, not the
# products (the GEMV of few rows uses none, the GEMV of many rows has a case of its own;
# instrumented, cuBLAS's large products in the three BLAS modes outran the step's 300 s on an
# H200, 2026-11-30), and where compute-sanitizer can filter
# kernels by name, only the project's own (namespace attnlite::cuda)
race_only=()
if command -v compute-sanitizer >/dev/null; then
  san_help=$(compute-sanitizer --help 2>&1)  # (grep -q on a pipe could stop its writer: 141)
  if grep -q -- '--kernel-name ' <<< "$san_help"; then race_only=(--kernel-name kns=attnlite)
  elif grep -q -- '--kernel-regex' <<< "$san_help"; then race_only=(--kernel-regex kns=attnlite)
  fi
  echo "racecheck filter: ${race_only[*]:-none (this compute-sanitizer filters no kernel names)}" >> "$OUT/machine.txt"
fi
others() {
  # the products of few rows timed per shape (ATTNLITE_CUDA_LT=tune, docs/cuda.md) and without
  # cuBLASLt: the GPU cases again in those modes
  step gpu_tests_lt_tune 240 env ATTNLITE_CUDA_LT=tune "$TESTS" "[cuda],$lt_ops"
  step gpu_tests_lt_off 240 env ATTNLITE_CUDA_LT=0 "$TESTS" "[cuda],$lt_ops"
  step gpu_tests_lt_gemv 240 env ATTNLITE_CUDA_LT=gemv "$TESTS" "[cuda],$lt_ops"
  # the C API's CUDA sessions (a translator, a generator and a classifier with bf16 weights, a
  # batch of images), told that CUDA must work here
  step c_api_cuda 60 env ATTNLITE_TEST_CUDA=1 "$BUILD/tests/attnlite_c_api_test"
}
tests() {
  step ctest 300 bash -c "cd '$BUILD' && ctest -j'$JOBS' --output-on-failure -E '^cli\.(corpus_model|normalize_parity|bpe_corpus)\$'"
  # the Python package: its tests that make CUDA sessions (translators, generators and
  # classifiers with bf16, batches of images, Dask workers), told that CUDA must work here;
  # any interpreter with numpy and pytest (torch is not needed). After ctest, whose jobs take
  # every core: Dask's workers then start beside the sanitizers only.
  if [ -n "$PYT" ]; then
    step python_cuda 180 env ATTNLITE_LIBRARY="$BUILD/libattnlite_c.so" ATTNLITE_CLI="$CLI" ATTNLITE_TEST_CUDA=1 \
      "$PYT" -m pytest "$ROOT/python/tests" -q -p no:cacheprovider -k "cuda or precision" -rA
  else
    echo '{"step": "python_cuda", "rc": -1, "seconds": 0, "note": "no Python with numpy and pytest"}' >> "$LOG"
  fi
}
SIDE=1
echo "side_by_side (ctest and Python, memcheck, racecheck, the other modes and the C API)" > "$OUT/running.txt"
t_side=$(now)
tests &
if command -v compute-sanitizer >/dev/null; then
  step memcheck 300 compute-sanitizer --tool memcheck --error-exitcode 9 "$TESTS" "$san_memcheck" &
  step racecheck 300 compute-sanitizer --tool racecheck ${race_only[@]+"${race_only[@]}"} --error-exitcode 9 "$TESTS" "$san_racecheck" &
  step racecheck_ops 300 compute-sanitizer --tool racecheck ${race_only[@]+"${race_only[@]}"} --error-exitcode 9 "$TESTS" "$san_racecheck_ops" &
else
  echo '{"step": "memcheck", "rc": -1, "seconds": 0, "note": "compute-sanitizer not found"}' >> "$LOG"
fi
others &
wait
SIDE=0
printf '{"step": "side_by_side", "rc": 0, "seconds": %s}\n' "$(secs "$t_side" "$(now)")" >> "$LOG"
# a step of a background chain set its own copy of `failed`: read the chains' lines instead
grep -E '"side": true|"beside": ' "$LOG" | grep -qv '"rc": 0,' && failed=1

finished
"${PY:-python3}" "$ROOT/tools/gpu_report.py" "$OUT" || failed=1
echo "gpu-check: report in $OUT/report.md" >&2
exit $failed
