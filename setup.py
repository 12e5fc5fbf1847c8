"""Builds tpuc's C++ side with CMake + Ninja and installs `python/` as `tpuc`.

The CMake build lives in `build/` (reused across installs). Its Python
artifacts under `build/python_packages/tpuc/` (the `tpuc.mlir` package and
native modules) are linked into the package for editable installs and copied
into it for regular ones.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
BUILD = Path(os.environ.get("TPUC_BUILD_DIR", ROOT / "build"))


def cmake_configure_and_build():
    purelib = Path(sysconfig.get_paths()["purelib"])
    python = sys.executable
    if not (BUILD / "build.ninja").exists():
        lit = shutil.which("lit") or str(Path(python).parent / "lit")
        subprocess.check_call([
            "cmake", "-G", "Ninja", "-S", str(ROOT), "-B", str(BUILD),
            "-DCMAKE_BUILD_TYPE=Release",
            f"-DMLIR_DIR={purelib}/mlir/lib/cmake/mlir",
            f"-DLLVM_DIR={purelib}/llvm/lib/cmake/llvm",
            f"-DLLVM_EXTERNAL_LIT={lit}",
            f"-DPython_EXECUTABLE={python}",
            f"-DPython3_EXECUTABLE={python}",
        ])
    jobs = os.environ.get("TPUC_BUILD_JOBS", str(os.cpu_count() or 2))
    subprocess.check_call(["cmake", "--build", str(BUILD), "-j", jobs])


def place_artifacts(dest: Path, link: bool):
    """Puts every built Python artifact into the `tpuc` package at `dest`."""
    src = BUILD / "python_packages" / "tpuc"
    for item in src.iterdir():
        target = dest / item.name
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
        if link:
            target.symlink_to(item)
        elif item.is_dir():
            shutil.copytree(item, target, symlinks=False)
        else:
            shutil.copy2(item, target)


class CMakeBuild(build_ext):
    def run(self):
        cmake_configure_and_build()
        if self.inplace or getattr(self, "editable_mode", False):
            place_artifacts(ROOT / "python", link=True)
        else:
            dest = Path(self.build_lib) / "tpuc"
            dest.mkdir(parents=True, exist_ok=True)
            place_artifacts(dest, link=False)


TOOLS = ["model_transform", "model_deploy", "model_runner", "npz_tool", "run_calibration",
         "search_qtable"]

setup(
    name="tpuc",
    version="0.1.0",
    description="MLIR-based ahead-of-time compiler toolchain for a TPU",
    python_requires=">=3.10",
    packages=["tpuc"] + ["tpuc." + p for p in
                         ("frontend", "frontend.fx", "dynamo", "tools", "testing",
                          "calibration", "quant")],
    package_dir={"tpuc": "python"},
    # The extension is a placeholder that makes setuptools run CMakeBuild.
    ext_modules=[Extension("tpuc._cmake_build", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": [
        f"{t}.py = tpuc.tools.{t}:main" for t in TOOLS] + [
        f"{t} = tpuc.tools.{t}:main" for t in TOOLS],
        # torch.compile(model, backend="tpuc")
        "torch_dynamo_backends": ["tpuc = tpuc.dynamo:aot_backend"]},
    zip_safe=False,
)
