"""Builds tpuc's C++ side with CMake + Ninja and installs `python/` as `tpuc`.

The CMake build lives in `build/` (reused across installs). Its Python
artifacts under `build/python_packages/tpuc/` (the `tpuc.mlir` package and
native modules) are linked into the package for editable installs and copied
into it for regular ones (`pip install .` / `pip wheel .`), together with the
`tpuc-opt` binary (`tpuc/_bin/`) and the chip descriptions (`tpuc/chips/`),
so an installed wheel needs nothing from the source tree. Editable installs
find both in the source tree instead.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

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


def _library_aliases(directory, names):
    d = Path(directory)
    return [n for n in names if n.endswith(".so") and (d / n).is_symlink()
            and (d / n).resolve().parent == d.resolve()]


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
            # A library's unversioned-name symlink (lib.so -> lib.so.22.1)
            # would become a second full copy in a wheel; loaders use the
            # versioned name.
            shutil.copytree(item, target, symlinks=False, ignore=_library_aliases)
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
            (dest / "_bin").mkdir(exist_ok=True)
            shutil.copy2(BUILD / "bin" / "tpuc-opt", dest / "_bin" / "tpuc-opt")


class BuildPyWithChips(build_py):
    """Ships chips/*.json as package data (tpuc/chips) in regular installs."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return
        dest = Path(self.build_lib) / "tpuc" / "chips"
        dest.mkdir(parents=True, exist_ok=True)
        for chip in sorted((ROOT / "chips").glob("*.json")):
            shutil.copy2(chip, dest / chip.name)


TOOLS = ["model_transform", "model_deploy", "model_runner", "model_tool", "npz_tool",
         "run_calibration", "search_qtable"]

setup(
    name="tpuc",
    version="0.1.0",
    description="MLIR-based ahead-of-time compiler toolchain for a TPU",
    python_requires=">=3.10",
    # libLLVM.so of the LLVM build the C++ side links against, plus what the
    # flow imports; torch is needed only by the PyTorch frontend.
    install_requires=["xtc-llvm-dev==22.1.8.2", "numpy", "onnx", "onnxruntime",
                      "ml_dtypes", "tqdm"],
    # Every directory of python/ with an __init__.py is a subpackage.
    packages=["tpuc"] + sorted(
        "tpuc." + ".".join(p.parent.relative_to(ROOT / "python").parts)
        for p in (ROOT / "python").glob("*/**/__init__.py") if "mlir" not in p.parts),
    package_dir={"tpuc": "python"},
    # The extension is a placeholder that makes setuptools run CMakeBuild.
    ext_modules=[Extension("tpuc._cmake_build", sources=[])],
    cmdclass={"build_ext": CMakeBuild, "build_py": BuildPyWithChips},
    entry_points={"console_scripts": [
        f"{t}.py = tpuc.tools.{t}:main" for t in TOOLS] + [
        f"{t} = tpuc.tools.{t}:main" for t in TOOLS] + [
        "tpuc-opt = tpuc.tools.tpuc_opt:main"],
        # torch.compile(model, backend="tpuc")
        "torch_dynamo_backends": ["tpuc = tpuc.dynamo:aot_backend"]},
    zip_safe=False,
)
