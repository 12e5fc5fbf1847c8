#!/usr/bin/env bash
# The main job: compiles the model shipped in models/ through the flow and
# prints the layer-wise comparison against the reference.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck disable=SC1091
. "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
python -m tpuc.tools.main_job "$@"
