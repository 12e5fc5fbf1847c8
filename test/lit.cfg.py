import os

import lit.formats
from lit.llvm import llvm_config

config.name = "TPUC"
# pip's lit rejects execute_external=True.
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.tpuc_obj_root, "test")
# pytest owns test/python; Inputs hold data for RUN lines.
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in",
                   "python", "Inputs"]

llvm_config.with_system_environment(["HOME", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
config.substitutions.append(("%python", config.python_executable))
llvm_config.add_tool_substitutions(["tpuc-opt"],
                                   [os.path.join(config.tpuc_obj_root, "bin")])
