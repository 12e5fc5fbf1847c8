#!/usr/bin/env bash
# The sanitizer job: builds the C++ npz reader (tpuc-npz-check) and the chip
# runtime module with ASan + UBSan in build-asan/, then runs the checked-in
# corpus and RUNS mutated npz files through the reader and RUNS mutated
# bmodels through the loader, verifier and cmodel, each case in its own
# process. Any sanitizer report fails the job. See docs/reliability.md.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=${RUNS:-1000}
# shellcheck disable=SC1091
. "$ROOT/scripts/bootstrap.sh"
cd "$ROOT"
SITE=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
cmake -G Ninja -S . -B build-asan -DTPUC_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DMLIR_DIR="$SITE/mlir/lib/cmake/mlir" -DLLVM_DIR="$SITE/llvm/lib/cmake/llvm" \
  -DPython_EXECUTABLE="$(command -v python)" > /dev/null
ninja -C build-asan -j "${TPUC_BUILD_JOBS:-2}" tpuc-npz-check _runtime

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

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
cases = [p.read_bytes() for p in Path("test/python/reliability/corpus").glob("*.npz")]
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
# A copy of the package whose _runtime is build-asan's.
mkdir -p "$WORK/pkg/tpuc"
(cd python && git ls-files | while read -r f; do
   mkdir -p "$WORK/pkg/tpuc/$(dirname "$f")"; cp "$f" "$WORK/pkg/tpuc/$f"; done)
ln -s "$ROOT"/build-asan/python_packages/tpuc/_runtime*.so "$WORK/pkg/tpuc/"
LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so) $(gcc -print-file-name=libstdc++.so)" \
PYTHONPATH="$WORK/pkg" python -m tpuc.testing.fuzz --target bmodel --runs "$RUNS" \
  --seed_file "$WORK/seed.bmodel" --workdir "$WORK/bmodel" --timeout 120
