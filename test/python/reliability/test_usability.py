"""Paths and targets a careless user gives: they work or fail in one line."""
from __future__ import annotations

import json
import shutil

from conftest import REPO, TPUC_OPT, run, tool


def test_chip_and_output_paths_with_pipeline_characters(tiny, tmp_path):
    odd = tmp_path / "chip dir,{x}"
    odd.mkdir()
    chip = odd / "my chip,}.json"
    shutil.copy(REPO / "chips" / "tpu_edge.json", chip)
    out = odd / "out.bmodel"
    r = tool("model_deploy", "--mlir", tiny / "tiny.mlir", "--chip", chip, "--model", out)
    assert r.code == 0, r.err
    assert out.is_file() and not out.is_symlink()


def test_relative_weight_file_from_another_directory(tiny, tmp_path):
    # A top.mlir naming its weights relative to its own directory, deployed
    # from elsewhere.
    sub = tmp_path / "models"
    sub.mkdir()
    text = (tiny / "tiny.mlir").read_text()
    absolute = str(tiny / "tiny_top_weights.npz")
    assert f'top.weight_file = "{absolute}"' in text
    (sub / "m.mlir").write_text(text.replace(absolute, "w.npz"))
    shutil.copy(absolute, sub / "w.npz")
    r = tool("model_deploy", "--mlir", "models/m.mlir", "--model", "a.bmodel", cwd=tmp_path)
    assert r.code == 0, r.err


def test_huge_local_memory_is_a_target_error(tiny, tmp_path):
    d = json.loads((REPO / "chips" / "tpu_edge.json").read_text())
    d["lanes"], d["lmem"]["bytes_per_lane"] = 1024, 64 << 20  # 64 GiB
    (tmp_path / "big.json").write_text(json.dumps(d))
    tool("model_deploy", "--mlir", tiny / "tiny.mlir", "--chip", tmp_path / "big.json",
         "--model", tmp_path / "b.bmodel").assert_clean_error(
        "big.json", "local memory totals 68719476736 bytes")


def test_tpuc_opt_error_is_one_line_without_the_module(tmp_path):
    f = tmp_path / "bad.mlir"
    f.write_text("""func.func @f(%arg0: tensor<1x4xf32>) -> tensor<1x5xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x4xf32>) -> tensor<1x4xf32> loc("x")
  %1 = "top.Relu"(%0) : (tensor<1x4xf32>) -> tensor<1x5xf32> loc("relu")
  return %1 : tensor<1x5xf32>
}
""")
    r = run(TPUC_OPT, f)
    assert r.code == 1 and r.out == ""
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert "'top.Relu' op result #0 has shape 1x5" in r.err
