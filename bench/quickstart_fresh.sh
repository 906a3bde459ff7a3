#!/usr/bin/env bash
# The README's quick start on fresh clones, as a new user runs it: a clean HOME (no uv, no caches),
# only the named Python first on PATH, the first command verbatim. Records the time to the first
# search result for each Python:
#
#   system  /usr/bin/python3 (Debian's, with the EXTERNALLY-MANAGED marker: PEP 668)
#   plain   the python3 found on the caller's PATH (e.g. pyenv's), with its own bin dir first
#   venv    inside an activated virtualenv made from that python3
#   wheel   the system Python again, the private uv taken from the PyPI wheel (PROBE_BOOTSTRAP_VIA=wheel)
#
#   bash bench/quickstart_fresh.sh [system plain venv wheel]    # needs the network to PyPI
#
# Each run clones the committed HEAD of this repository into a temp dir, runs the first command of
# the README's quick start there, checks the search printed a result, stops the background owner
# and deletes everything. Output: one line per run, and bench/results/quickstart.tsv.
set -euo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
CMD=$(awk '/^```sh$/{getline; print; exit}' "$REPO/README.md")  # the quick start's first command
case "$CMD" in python3\ *) ;; *) echo "could not read the quick start command from README.md" >&2; exit 2;; esac
PLAIN_PY="$(command -v python3)"
PLAIN_PY="$(readlink -f "$("$PLAIN_PY" -c 'import sys; print(sys.executable)')")"
if [ $# -gt 0 ]; then RUNS=("$@"); else RUNS=(system plain venv wheel); fi
mkdir -p "$REPO/bench/results"
OUT="$REPO/bench/results/quickstart.tsv"
printf 'run\tpython\tpep668\tseconds_to_first_result\tresult\n' >"$OUT"

for run in "${RUNS[@]}"; do
  T="$(mktemp -d "${TMPDIR:-/tmp}/probe-quickstart.XXXXXX")"
  git clone -q "$REPO" "$T/probe"
  mkdir -p "$T/home"
  base_path="/usr/local/bin:/usr/bin:/bin"
  env_extra=()
  case "$run" in
    system|wheel) py=/usr/bin/python3; path="$base_path" ;;
    plain)        py="$PLAIN_PY"; path="$(dirname "$PLAIN_PY"):$base_path" ;;
    venv)         "$PLAIN_PY" -m venv "$T/venv"; py="$T/venv/bin/python3"
                  path="$T/venv/bin:$base_path"; env_extra=(VIRTUAL_ENV="$T/venv") ;;
    *) echo "unknown run $run" >&2; exit 2 ;;
  esac
  [ "$run" = wheel ] && env_extra+=(PROBE_BOOTSTRAP_VIA=wheel)
  pep668=no
  [ -e "$("$py" -c 'import sysconfig; print(sysconfig.get_path("stdlib"))')/EXTERNALLY-MANAGED" ] && pep668=yes
  # a clean user: no uv, no caches, no data; the certificate settings of this machine are kept
  t0=$(date +%s.%N)
  set +e
  (cd "$T/probe" && env -i HOME="$T/home" PATH="$path" LANG=C.UTF-8 TERM=dumb \
      ${SSL_CERT_FILE:+SSL_CERT_FILE="$SSL_CERT_FILE"} ${SSL_CERT_DIR:+SSL_CERT_DIR="$SSL_CERT_DIR"} \
      ${PIP_INDEX_URL:+PIP_INDEX_URL="$PIP_INDEX_URL"} "${env_extra[@]}" \
      bash -c "$CMD") >"$T/stdout" 2>"$T/stderr"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  first=$(grep -m1 -E '#L[0-9]+-L?[0-9]+' "$T/stdout" || true)  # the first result's source
  if [ $rc -ne 0 ] || [ -z "$first" ]; then
    result="FAILED rc=$rc: $(tail -3 "$T/stderr" | tr '\n' ' ')"
  else
    result="$first"
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$run" "$("$py" -c 'import platform,sys; print(sys.executable, platform.python_version())')" \
    "$pep668" "$secs" "$result" | tee -a "$OUT"
  [ -x "$T/probe/.venv/bin/probe" ] && (cd "$T/probe" && HOME="$T/home" .venv/bin/probe stop >/dev/null 2>&1 || true)
  rm -rf "$T"
done
