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
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "[tpuc] installing pinned requirements"
  python -m pip install -q --disable-pip-version-check -r requirements.txt
  echo "$want" > "$stamp"
fi
# Test models of the PyTorch frontend: torchvision's pure-Python model
# definitions and transformers' BERT. torchvision's wheel declares a CUDA
# torch build's libraries, so it goes in without dependencies (its C
# extension stays unloaded); torch stays the CPU build of requirements.txt.
if ! python -c 'import importlib.metadata as m; assert m.version("torchvision") == "0.28.0"
assert m.version("transformers") == "5.23.0"' 2>/dev/null; then
  echo "[tpuc] installing torchvision and transformers (test models)"
  python -m pip install -q --disable-pip-version-check --no-deps torchvision==0.28.0
  python -m pip install -q --disable-pip-version-check transformers==5.23.0
fi
# Configures build/ once, then rebuilds only what changed (Ninja), and links
# the built Python modules into the editable package.
echo "[tpuc] building C++ (CMake + Ninja) and installing tpuc (editable)"
mkdir -p build
if ! TPUC_BUILD_JOBS=${TPUC_BUILD_JOBS:-2} python -m pip install \
    --disable-pip-version-check --no-build-isolation --no-deps -e . \
    > build/install.log 2>&1; then
  cat build/install.log >&2
  echo "[tpuc] build failed (log above, also in build/install.log)" >&2
  exit 1
fi
