"""`tpuc-opt` on PATH: runs the `tpuc-opt` binary of the installed package.

An installed wheel carries the binary in `tpuc/_bin/`; an editable install
runs the one in the source tree's build directory. The process is replaced
(exec), so arguments, stdio and the exit status are the binary's own.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]


def binary() -> Path:
    candidates = [PACKAGE / "_bin" / "tpuc-opt"]
    build = os.environ.get("TPUC_BUILD_DIR")
    candidates.append(Path(build) / "bin" / "tpuc-opt" if build
                      else PACKAGE.parent / "build" / "bin" / "tpuc-opt")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    raise FileNotFoundError("tpuc-opt binary not found (looked in "
                            + ", ".join(str(c) for c in candidates) + ")")


def main() -> int:
    try:
        exe = binary()
    except FileNotFoundError as e:
        print(f"tpuc-opt: {e}", file=sys.stderr)
        return 1
    os.execv(exe, [str(exe)] + sys.argv[1:])
    return 1  # not reached


if __name__ == "__main__":
    sys.exit(main())
