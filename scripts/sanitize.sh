#!/usr/bin/env bash
# The sanitizer job: every C++ target (tpuc-opt, the dialect, conversion and
# backend libraries, the chip library, the tpuc.mlir and runtime Python
# modules) built with ASan + UBSan in build-asan/, then
#   1. lit on that build (its tpuc-opt),
#   2. the default pytest suite with the tpuc package pointed at its Python
#      modules (CPython is not instrumented: the sanitizer runtimes are
#      preloaded),
#   3. the checked-in corpus and RUNS mutated npz files through the C++ npz
#      reader, and RUNS mutated bmodels through the loader, verifier and
#      cmodel, each case in its own process.
# Any sanitizer report fails the job. Too slow for CI on 2 cores (a second
# full build and slower tests); see docs/reliability.md.
#   RUNS=300 PYTEST_ARGS="test/python/chip" bash scripts/sanitize.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-300}
JOBS=${TPUC_BUILD_JOBS:-2}
# shellcheck disable=SC1091
. "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
SITE=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
LAUNCHER=()
if command -v ccache > /dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
# -O1 -g1: the usual sanitizer build (line numbers in reports), much quicker
# to compile than -O2 -g.
cmake -G Ninja -S . -B build-asan -DTPUC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  "${LAUNCHER[@]}" \
  -DMLIR_DIR="$SITE/mlir/lib/cmake/mlir" -DLLVM_DIR="$SITE/llvm/lib/cmake/llvm" \
  -DLLVM_EXTERNAL_LIT="$(command -v lit)" \
  -DPython_EXECUTABLE="$(command -v python)" -DPython3_EXECUTABLE="$(command -v python)" > /dev/null
ninja -C build-asan -j "$JOBS"

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
# Leaks are not checked: LLVM's and CPython's process-lifetime allocations
# are reported at exit by design.
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

echo "[tpuc] lit under ASan+UBSan"
lit -s build-asan/test

# The tpuc package with build-asan's native modules and tpuc-opt: links to
# the Python sources, then to every built artifact.
PKG="$WORK/pkg/tpuc"
mkdir -p "$PKG"
for f in python/*; do
  case "$(basename "$f")" in mlir | _*.so | *.so | __pycache__) continue ;; esac
  ln -s "$ROOT/$f" "$PKG/"
done
ln -s "$ROOT"/build-asan/python_packages/tpuc/* "$PKG/"
export TPUC_BUILD_DIR="$ROOT/build-asan"
PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so) $(gcc -print-file-name=libstdc++.so)"
asan_python() {
  LD_PRELOAD="$PRELOAD" PYTHONPATH="$WORK/pkg" python "$@"
}
asan_python -c 'import tpuc.runtime, tpuc.compiler, sys
assert "build-asan" in tpuc.runtime._rt.__file__, tpuc.runtime._rt.__file__'

echo "[tpuc] pytest under ASan+UBSan"
# The default suite (not the wheel test), in groups whose conftest modules
# do not clash; PYTEST_ARGS runs only those paths instead.
if [ -n "${PYTEST_ARGS:-}" ]; then
  GROUPS_=("$PYTEST_ARGS")
else
  GROUPS_=("test/python/chip" "test/python/fx" "test/python/reliability test/python/top test/python/tpu"
           "test/python/backend test/python/frontend test/python/quant test/python/calibration test/python/test_onnx_reference.py test/python/test_top_builders.py"
           "test/python/op_tools test/python/tools test/python/e2e test/python/test_zoo.py test/python/test_npz_tool.py")
fi
for group in "${GROUPS_[@]}"; do
  # shellcheck disable=SC2086
  asan_python -m pytest -q -n "${TPUC_TEST_JOBS:-2}" -p no:cacheprovider -m "not slow" $group
done

echo "[tpuc] npz reader under ASan+UBSan: corpus and $RUNS mutations"
python - "$RUNS" "$WORK" <<'PY'
import subprocess, sys
from collections import Counter
from pathlib import Path
import random
from tpuc.testing import bad_inputs as bad, fuzz
runs, work = int(sys.argv[1]), Path(sys.argv[2])
exe = "build-asan/bin/tpuc-npz-check"
seeds = [bad.npz_bytes(bad.BN_WEIGHTS, False), bad.npz_bytes(bad.BN_WEIGHTS, True)]
rng = random.Random(0)
corpus = Path("test/python/reliability/corpus")
cases = [p.read_bytes() for p in sorted(corpus.glob("*.npz")) + sorted(corpus.glob("atheris/npz/*"))]
cases += [fuzz._mutate_npz(seeds[i % 2], rng) for i in range(runs)]
counts = Counter()
for i, data in enumerate(cases):
    f = work / f"{i}.npz"
    f.write_bytes(data)
    p = subprocess.run([exe, str(f)], capture_output=True, timeout=60)
    counts[{0: "accepted", 1: "rejected"}.get(p.returncode, "crash")] += 1
    if p.returncode not in (0, 1):
        print(f.name, p.stderr.decode(errors="replace")[-2000:])
print(f"npz: {len(cases)} cases: {dict(counts)}")
sys.exit(1 if counts["crash"] else 0)
PY

echo "[tpuc] bmodel loader under ASan+UBSan: $RUNS mutations"
model_transform.py --model_name seed --model_def models/mobilenetv2_tiny.onnx --mlir "$WORK/seed.mlir" > /dev/null
model_deploy.py --mlir "$WORK/seed.mlir" --chip tpu_edge --model "$WORK/seed.bmodel" > /dev/null
asan_python -m tpuc.testing.fuzz --target bmodel --runs "$RUNS" \
  --seed_file "$WORK/seed.bmodel" --workdir "$WORK/bmodel" --timeout 120
