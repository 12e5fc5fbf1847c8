"""Helpers shared by the calibration tests."""
import subprocess
import sys


def run_cli(tool, *args):
    """Runs a tpuc CLI in a subprocess: (exit code, stdout, stderr)."""
    p = subprocess.run([sys.executable, "-m", f"tpuc.tools.{tool}", *map(str, args)],
                       capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr
