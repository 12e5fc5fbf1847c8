"""Bad input to every entry point: a one-line error naming the file and the
reason, exit code 1, never a crash, traceback or silent success. Every case
runs in its own process."""
from __future__ import annotations

import sys

import numpy as np
import pytest

from conftest import INPUT, MODEL, TPUC_OPT, run, tool
from tpuc.testing import bad_inputs as bad

def tpuc_opt_on_weights(tmp_path, weights):
    mlir = tmp_path / "bn.mlir"
    mlir.write_text(bad.BN_MODULE.replace("WEIGHTS", str(weights)))
    return run(TPUC_OPT, mlir, "-canonicalize")


# --- the C++ npz reader -------------------------------------------------------

@pytest.mark.parametrize("case", sorted(bad.NPZ_CASES))
def test_cpp_npz_reader_rejects(case, tmp_path):
    mutate, compressed, words = bad.NPZ_CASES[case]
    f = tmp_path / f"{case}.npz"
    f.write_bytes(mutate(bad.npz_bytes(bad.BN_WEIGHTS, compressed)))
    r = tpuc_opt_on_weights(tmp_path, f)
    r.assert_clean_error(f.name, *words)
    assert r.out == "", "a module was printed after an error"


@pytest.mark.parametrize("compressed", [False, True])
def test_cpp_npz_reader_accepts_numpy_archives(compressed, tmp_path):
    f = tmp_path / "w.npz"
    f.write_bytes(bad.npz_bytes(bad.BN_WEIGHTS, compressed))
    r = tpuc_opt_on_weights(tmp_path, f)
    assert r.code == 0, r.err
    assert "top.BatchNorm" not in r.out and "top.Conv" in r.out


ADD_WEIGHT = """
import numpy as np
from tpuc import compiler
ctx = compiler.make_context()
m = compiler.parse_module('''module attributes {{top.weight_file = "{weights}"}} {{
func.func @main(%a: tensor<2x4xf32>) -> tensor<2x4xf32> {{
  %0 = "top.Input"(%a) : (tensor<2x4xf32>) -> tensor<2x4xf32> loc("x")
  %w = "top.Weight"() : () -> tensor<2x4xf32> loc("{name}")
  %1 = "top.Add"(%0, %w) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> loc("y")
  return %1 : tensor<2x4xf32>
}}
}}''', ctx)
with ctx:
    out = compiler.interpret(m, {{"x": np.ones((2, 4), np.float32)}})
print(out["y"].ravel().tolist())
"""


def interpret_add_weight(weights, name):
    """Interprets x + weight (2x4) in its own process, the weight read by C++."""
    return run(sys.executable, "-c", ADD_WEIGHT.format(weights=weights, name=name))


def test_cpp_reader_accepts_plain_npy(tmp_path):
    # A bare .npy holds one array, named arr_0 as numpy names unnamed arrays.
    w = np.arange(8, dtype=np.float32).reshape(2, 4)
    np.save(tmp_path / "w.npy", w)
    r = interpret_add_weight(tmp_path / "w.npy", "arr_0")
    assert r.code == 0, r.err
    assert r.out.strip() == str((w + 1).ravel().tolist())


def test_transposed_weight_of_the_same_size_rejected(tmp_path):
    np.savez(tmp_path / "w.npz", w=np.zeros((4, 2), np.float32))
    r = interpret_add_weight(tmp_path / "w.npz", "w")
    assert r.code != 0 and "Traceback" in r.err  # a library call: CompileError
    assert "weight 'w' has shape [4, 2]" in r.err and "its type needs [2, 4]" in r.err


# --- Python readers: test inputs and references --------------------------------

PY_NPZ_CASES = ["empty", "truncated", "zip64_offset_wraps", "shape_2^62x3", "bad_crc"]


@pytest.mark.parametrize("case", PY_NPZ_CASES)
def test_model_runner_bad_input_file(case, tiny, tmp_path):
    mutate, compressed, _ = bad.NPZ_CASES[case]
    f = tmp_path / f"{case}.npz"
    f.write_bytes(mutate(bad.npz_bytes(dict(np.load(INPUT)), compressed)))
    tool("model_runner", "--model", tiny / "tiny.bmodel", "--input", f).assert_clean_error(f.name)


@pytest.mark.parametrize("case", ["empty", "truncated", "zip64_offset_wraps"])
def test_model_deploy_bad_test_input(case, tiny, tmp_path):
    mutate, compressed, _ = bad.NPZ_CASES[case]
    f = tmp_path / f"{case}.npz"
    f.write_bytes(mutate(bad.npz_bytes(dict(np.load(INPUT)), compressed)))
    tool("model_deploy", "--mlir", tiny / "tiny.mlir", "--model", tmp_path / "x.bmodel",
         "--test_input", f, "--test_reference", tiny / "tiny_top.npz").assert_clean_error(f.name)


def test_npy_reference_where_npz_expected(tiny, tmp_path):
    np.save(tmp_path / "ref.npy", np.zeros(3, np.float32))
    tool("model_deploy", "--mlir", tiny / "tiny.mlir", "--model", tmp_path / "x.bmodel",
         "--test_input", INPUT, "--test_reference", tmp_path / "ref.npy"
         ).assert_clean_error("ref.npy", "not an npz archive")


def test_compressed_and_npy_inputs_accepted(tiny, tmp_path):
    x = dict(np.load(INPUT))
    np.savez_compressed(tmp_path / "c.npz", **x)
    np.save(tmp_path / "x.npy", next(iter(x.values())))
    outs = []
    for f in ("c.npz", "x.npy"):
        r = tool("model_runner", "--model", tiny / "tiny.bmodel", "--input", tmp_path / f,
                 "--output", tmp_path / f"{f}.out.npz")
        assert r.code == 0, r.err
        outs.append(dict(np.load(tmp_path / f"{f}.out.npz")))
    for k in outs[0]:
        np.testing.assert_array_equal(outs[0][k], outs[1][k])


# --- silent successes on wrong data ------------------------------------------------

def test_nhwc_array_is_not_reshaped(tiny, tmp_path):
    x = dict(np.load(INPUT))
    k = next(iter(x))
    np.savez(tmp_path / "nhwc.npz", **{k: x[k].transpose(0, 2, 3, 1).copy()})
    r = tool("model_runner", "--model", tiny / "tiny.bmodel", "--input", tmp_path / "nhwc.npz")
    r.assert_clean_error("nhwc.npz", f"input '{k}'", "NHWC")
    # With the layout stated, it runs and equals the NCHW run.
    ok = tool("model_runner", "--model", tiny / "tiny.bmodel", "--input", tmp_path / "nhwc.npz",
              "--input_layout", "nhwc", "--output", tmp_path / "a.npz")
    ref = tool("model_runner", "--model", tiny / "tiny.bmodel", "--input", INPUT,
               "--output", tmp_path / "b.npz")
    assert ok.code == 0 and ref.code == 0, ok.err + ref.err
    a, b = np.load(tmp_path / "a.npz"), np.load(tmp_path / "b.npz")
    for n in b.files:
        np.testing.assert_array_equal(a[n], b[n])


def test_extra_arrays_rejected(tiny, tmp_path):
    np.savez(tmp_path / "extra.npz", **dict(np.load(INPUT)), bogus=np.zeros(3))
    tool("model_runner", "--model", tiny / "tiny.bmodel", "--input", tmp_path / "extra.npz"
         ).assert_clean_error("extra.npz", "'bogus' is not an input")


# --- the ONNX frontend and the reference run -----------------------------------------

@pytest.mark.parametrize("case", sorted(bad.ONNX_CASES))
def test_model_transform_rejects(case, tmp_path):
    build, words = bad.ONNX_CASES[case]
    f = build(tmp_path / f"{case}.onnx")
    tool("model_transform", "--model_name", "m", "--model_def", f,
         "--mlir", tmp_path / "out" / "m.mlir").assert_clean_error(*words)


@pytest.mark.parametrize("case", sorted(bad.ORT_CASES))
def test_reference_run_failure_is_one_line(case, tmp_path):
    build, inputs, words = bad.ORT_CASES[case]
    f = build(tmp_path / f"{case}.onnx")
    np.savez(tmp_path / "in.npz", **inputs)
    tool("model_transform", "--model_name", "m", "--model_def", f, "--mlir", tmp_path / "m.mlir",
         "--test_input", tmp_path / "in.npz", "--test_result", tmp_path / "top.npz"
         ).assert_clean_error(f.name, *words)


def test_output_path_under_a_regular_file(tmp_path):
    (tmp_path / "file").write_text("")
    tool("model_transform", "--model_name", "m", "--model_def", MODEL,
         "--mlir", tmp_path / "file" / "m.mlir").assert_clean_error("file", "directory")


def test_debug_flag_shows_the_traceback(tmp_path):
    f = bad.ONNX_CASES["group_float"][0](tmp_path / "g.onnx")
    r = tool("model_transform", "--model_name", "m", "--model_def", f,
             "--mlir", tmp_path / "m.mlir", "--debug")
    assert r.code == 1 and "Traceback" in r.err


def test_unknown_property_rejected(tiny, tmp_path):
    # MLIR's parser drops unknown entries of `<{...}>`; the tools refuse them.
    text = (tiny / "tiny.mlir").read_text()
    assert "<{" in text
    (tmp_path / "m.mlir").write_text(text.replace("<{", "<{bogus_option = 3 : i64, ", 1))
    tool("model_deploy", "--mlir", tmp_path / "m.mlir", "--model", tmp_path / "m.bmodel"
         ).assert_clean_error("m.mlir", "unknown property 'bogus_option'")
