#!/usr/bin/env bash
# Sets up everything on a fresh machine, idempotently: a virtual environment in
# .venv with the pinned wheels, the CMake/Ninja build in build/, and tpuc
# installed (editable) with its CLIs on .venv/bin. A second run only rebuilds
# what changed. Source it (it activates .venv) or run it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PY=${PYTHON:-python3}

if [ ! -x .venv/bin/python ]; then
  echo "[tpuc] creating virtual environment .venv"
  "$PY" -m venv .venv
fi
# shellcheck disable=SC1091
. .venv/bin/activate

stamp=.venv/.tpuc-requirements.sha
want=$(sha256sum requirements.txt setup.py | sha256sum | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[tpuc] installing pinned requirements"
  python -m pip install -q --disable-pip-version-check -r requirements.txt
  echo "[tpuc] building C++ (CMake + Ninja) and installing tpuc (editable)"
  TPUC_BUILD_JOBS=${TPUC_BUILD_JOBS:-2} \
    python -m pip install -q --disable-pip-version-check --no-build-isolation \
    --no-deps -e .
  echo "$want" > "$stamp"
else
  echo "[tpuc] environment up to date; rebuilding what changed"
  cmake --build build -j "${TPUC_BUILD_JOBS:-2}" | tail -n 1
fi
