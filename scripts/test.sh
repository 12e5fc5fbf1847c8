#!/usr/bin/env bash
# Runs every test: lit (passes, verifiers, round trips) and pytest.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
. "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
echo "[tpuc] lit tests"
lit -sv build/test
echo "[tpuc] pytest"
python -m pytest -q -n "${TPUC_TEST_JOBS:-2}" test/python "$@"
