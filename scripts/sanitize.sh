#!/usr/bin/env bash
# The sanitizer jobs: C++ built with ASan + UBSan in build-asan/, then run
# with the sanitizer runtimes preloaded into Python (CPython is not
# instrumented). Any sanitizer report, from any process, fails the job.
#
#   bash scripts/sanitize.sh          the full job: every C++ target (tpuc-opt,
#       the dialect, conversion and backend libraries, the chip library, the
#       tpuc.mlir and runtime Python modules); lit on that build, the default
#       pytest suite in groups, then the common steps below. Too slow for CI
#       on 2 cores (docs/reliability.md).
#   bash scripts/sanitize.sh --chip   the CI job: only what reads untrusted
#       files without MLIR in the way (the chip library: bmodel loader,
#       verifier, cmodel, runtime module; and tpuc-npz-check, the C++ npz/npy
#       reader), a few minutes to build; the bad-input tests
#       (test/python/reliability) on the instrumented runtime, then the common
#       steps. tpuc-opt and tpuc.mlir stay the uninstrumented ones of build/.
#
# Common steps: the atheris corpus and the checked-in bad inputs replayed
# through each atheris target, and RUNS mutated npz files through the C++
# npz reader and RUNS mutated bmodels through the loader, verifier and
# cmodel, each case in its own process.
#   RUNS=300 PYTEST_ARGS="test/python/chip" bash scripts/sanitize.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE=full
case "${1:-}" in
  --chip) MODE=chip ;;
  "") ;;
  *) echo "usage: scripts/sanitize.sh [--chip]" >&2; exit 2 ;;
esac
if [ "$MODE" = chip ]; then RUNS=${RUNS:-150}; else RUNS=${RUNS:-300}; fi
JOBS=${TPUC_BUILD_JOBS:-2}
# shellcheck disable=SC1091
. "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
SITE=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
LAUNCHER=()
if command -v ccache > /dev/null; then
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
start=$SECONDS
# -O1 -g1: the usual sanitizer build (line numbers in reports), much quicker
# to compile than -O2 -g.
cmake -G Ninja -S . -B build-asan -DTPUC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
  "${LAUNCHER[@]}" \
  -DMLIR_DIR="$SITE/mlir/lib/cmake/mlir" -DLLVM_DIR="$SITE/llvm/lib/cmake/llvm" \
  -DLLVM_EXTERNAL_LIT="$(command -v lit)" \
  -DPython_EXECUTABLE="$(command -v python)" -DPython3_EXECUTABLE="$(command -v python)" > /dev/null
if [ "$MODE" = chip ]; then
  ninja -C build-asan -j "$JOBS" _runtime tpuc-npz-check
else
  ninja -C build-asan -j "$JOBS"
fi
echo "[tpuc] sanitized build ($MODE): $((SECONDS - start)) s"

WORK=$(mktemp -d)
# Every report aborts its process (SIGABRT, never the exit code 1 of a
# rejected input; UBSan's own halt exits 1). ASan reports also go to files,
# so one in a process whose exit code and stderr a test does not look at
# still fails the job (gcc's UBSan ignores log_path in an ASan build).
# Leaks are not checked: LLVM's and CPython's process-lifetime allocations
# are reported at exit by design.
mkdir -p "$WORK/reports"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$WORK/reports/asan
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
reports() { ! compgen -G "$WORK/reports/*" > /dev/null; }
show_reports() {
  reports && return
  local files=("$WORK"/reports/*)
  echo "[tpuc] ${#files[@]} sanitizer reports, the first ones:" >&2
  for f in "${files[@]:0:3}"; do echo "== $f" >&2; head -c 8000 "$f" >&2; done
}
# A step fails on a report (`reports`); the reports are shown on the way out.
trap 'show_reports; rm -rf "$WORK"' EXIT

if [ "$MODE" = full ]; then
  echo "[tpuc] lit under ASan+UBSan"
  lit -s build-asan/test
  reports
fi

# The tpuc package with build-asan's native modules (and tpuc-opt in the
# full job): links to the Python sources, then to the built artifacts.
PKG="$WORK/pkg/tpuc"
mkdir -p "$PKG"
for f in python/*; do
  case "$(basename "$f")" in mlir | _*.so | *.so | __pycache__) continue ;; esac
  ln -s "$ROOT/$f" "$PKG/"
done
if [ "$MODE" = chip ]; then
  ln -s "$ROOT"/build-asan/python_packages/tpuc/_runtime*.so "$PKG/"
  ln -s "$ROOT/build/python_packages/tpuc/mlir" "$PKG/mlir"
else
  ln -s "$ROOT"/build-asan/python_packages/tpuc/* "$PKG/"
  export TPUC_BUILD_DIR="$ROOT/build-asan"
fi
PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so) $(gcc -print-file-name=libstdc++.so)"
asan_python() {
  LD_PRELOAD="$PRELOAD" PYTHONPATH="$WORK/pkg" python "$@"
}
asan_python -c 'import tpuc.runtime, tpuc.compiler
assert "build-asan" in __import__("os").path.realpath(tpuc.runtime._rt.__file__), tpuc.runtime._rt.__file__'

echo "[tpuc] pytest under ASan+UBSan"
# The default suite (not the wheel test), in groups whose conftest modules
# do not clash; PYTEST_ARGS runs only those paths instead.
if [ -n "${PYTEST_ARGS:-}" ]; then
  GROUPS_=("$PYTEST_ARGS")
elif [ "$MODE" = chip ]; then
  GROUPS_=("test/python/reliability")
else
  GROUPS_=("test/python/chip" "test/python/fx" "test/python/reliability test/python/top test/python/tpu"
           "test/python/backend test/python/frontend test/python/quant test/python/calibration test/python/test_onnx_reference.py test/python/test_top_builders.py"
           "test/python/op_tools test/python/tools test/python/e2e test/python/test_zoo.py test/python/test_npz_tool.py")
fi
for group in "${GROUPS_[@]}"; do
  # shellcheck disable=SC2086
  asan_python -m pytest -q -n "${TPUC_TEST_JOBS:-2}" -p no:cacheprovider -m "not slow" $group
done
reports

echo "[tpuc] atheris corpus and bad inputs replayed under ASan+UBSan"
CORPUS=test/python/reliability/corpus
for target in bmodel npz onnx; do
  # shellcheck disable=SC2046
  asan_python -m tpuc.testing.atheris_fuzz --target "$target" "$CORPUS/atheris/$target"/* \
    $(find "$CORPUS" -maxdepth 1 -name "*.$target" | sort) 2> "$WORK/atheris-$target.log" || {
    tail -50 "$WORK/atheris-$target.log" >&2; exit 1; }
  echo "$target: $(grep -c '^Executed ' "$WORK/atheris-$target.log") inputs"
done
reports

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
    if p.returncode not in (0, 1) and counts["crash"] <= 3:
        print(f.name, p.stderr.decode(errors="replace")[:3000])
print(f"npz: {len(cases)} cases: {dict(counts)}")
sys.exit(1 if counts["crash"] else 0)
PY
reports

echo "[tpuc] bmodel loader under ASan+UBSan: $RUNS mutations"
asan_python -m tpuc.testing.fuzz --target bmodel --runs "$RUNS" --workdir "$WORK/bmodel" --timeout 120
reports
echo "[tpuc] sanitizer job ($MODE): no reports, $((SECONDS - start)) s"
