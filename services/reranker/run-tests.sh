#!/usr/bin/env bash
# Test the reranker service in its own virtual environment (torch stays out of the main project).
# pip, not uv: on the build machines pip resolves torch==2.13.0 to the CPU wheel on local disk,
# while uv would download a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")"

PY=${PYTHON:-python3.11}
command -v "$PY" >/dev/null 2>&1 || PY=python3
DEPS=(torch==2.13.0 "transformers>=4.56" "fastapi>=0.110" "uvicorn>=0.29" "httpx>=0.27" "pytest>=8")

if ! .venv/bin/python -c "import torch, transformers, fastapi, uvicorn, httpx, pytest" >/dev/null 2>&1; then
  echo "reranker: creating services/reranker/.venv with $PY (torch CPU wheel, transformers, fastapi)"
  rm -rf .venv
  "$PY" -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check "${DEPS[@]}"
fi
exec .venv/bin/python -m pytest -q tests "$@"
