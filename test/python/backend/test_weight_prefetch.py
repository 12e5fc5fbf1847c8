"""Weight prefetch (WeightPrefetch.h): a conv whose filter loads take longer than its compute
(a ResNet layer4-like conv on tpu_edge) gets its last filter tiles loaded
into reserved local memory while the compute-bound convs before it leave
the DDR idle. Its output is bit for bit the one without the prefetch (the
same arithmetic on the same tiles), the bmodel passes the verifier's race
and dataflow checks at load, and the F32 chain takes fewer cycles; the
Top reference is met in F32, and INT8 (where the last two convs form one
layer group) stays bit-exact against the Tpu interpreter."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from tpuc import compiler
from tpuc import runtime as rt
from tpuc.deploy import deploy
from tpuc.testing.quant import prepare, prepare_onnx

C, H = 128, 28


def pair_model(path: Path, rng) -> None:
    """Compute-bound 3x3 convs at 28x28 and 14x14, then a DDR-bound 3x3
    conv to 512 channels at 7x7 (576 KiB of filter in INT8, 2.25 MiB in
    F32)."""
    def conv_w(o, i):
        return (rng.standard_normal((o, i, 3, 3)) / np.sqrt(9 * i)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w0"], ["a0"], name="conv_0", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3]),
             helper.make_node("Relu", ["a0"], ["r0"], name="relu_0"),
             helper.make_node("Conv", ["r0", "w1"], ["a"], name="conv_a", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3], strides=[2, 2]),
             helper.make_node("Relu", ["a"], ["r"], name="relu_a"),
             helper.make_node("Conv", ["r", "w2"], ["y"], name="conv_b", pads=[1, 1, 1, 1],
                              kernel_shape=[3, 3], strides=[2, 2])]
    graph = helper.make_graph(
        nodes, "pair", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 512, H // 4, H // 4])],
        [numpy_helper.from_array(conv_w(C, C), "w0"), numpy_helper.from_array(conv_w(C, C), "w1"), numpy_helper.from_array(conv_w(512, C), "w2")])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prefetch")
    pair_model(tmp / "pair.onnx", np.random.default_rng(3))
    return prepare_onnx("pair", tmp / "pair.onnx", {"x": (1, C, H, H)}, tmp, samples=2,
                        seed=4)


def without_prefetch(tpu_mlir: Path, bmodel: Path) -> None:
    """Compiles the deployed Tpu module again with weight-prefetch=false."""
    ctx = compiler.make_context()
    with ctx:
        m = compiler.load_module(tpu_mlir, ctx)
        compiler.run_pipeline(m, f"tpu-codegen-pipeline{{chip=tpu_edge bmodel={bmodel} "
                                 f"weight-prefetch=false}}")


@pytest.mark.parametrize("mode", ["F32", "INT8"])
def test_prefetch_saves_cycles_same_result(pair, mode):
    tmp = pair.mlir.parent
    r = deploy(pair.mlir, quantize=mode, chip="tpu_edge",
               model_path=tmp / f"pair_{mode}.bmodel", test_input=pair.test_input,
               test_reference=pair.reference,
               calibration_table=pair.table if mode == "INT8" else None,
               tolerance=(0.99, 0.9))
    assert r.passed
    if mode == "INT8":
        assert not r.int_mismatches
    plain = tmp / f"pair_{mode}_plain.bmodel"
    without_prefetch(r.tpu_mlir, plain)
    x = dict(np.load(pair.test_input))
    with_pf = rt.Model(r.bmodel).run(x)
    without = rt.Model(plain).run(x)
    for k, v in without.outputs.items():
        np.testing.assert_array_equal(with_pf.outputs[k], v)
    if mode == "F32":  # INT8 groups the last two convs: nothing to prefetch for
        assert with_pf.stats.total_cycles < without.stats.total_cycles, \
            (with_pf.stats.total_cycles, without.stats.total_cycles)


def test_resident_weights_small_network(tmp_path):
    """A network whose weights fit an eighth of every lane (the zoo's cnn_bn
    on tpu_pro) keeps them there (WeightPrefetcher::planResident): they load
    in parts into the GDMA's idle time before their ops, which read them in
    place. Bit for bit the output without, in fewer cycles."""
    p = prepare("cnn_bn", tmp_path, samples=2, seed=3)
    lane = 256 * 1024  # tpu_pro's LMEM per lane
    runs = {}
    for prefetch in ("true", "false"):
        ctx = compiler.make_context()
        with ctx:
            m = compiler.load_module(p.mlir, ctx)
            bm = tmp_path / f"cnn_bn_{prefetch}.bmodel"
            compiler.run_pipeline(m, "convert-top-to-tpu{mode=F32 chip=tpu_pro},canonicalize,"
                                     f"tpu-codegen-pipeline{{chip=tpu_pro bmodel={bm} "
                                     f"weight-prefetch={prefetch}}}")
        gdma = rt.read_bmodel(str(bm)).networks[0].gdma
        reserved = [g for g in gdma if g.dst.space == rt.Space.LMEM and g.dst.addr >= lane * 7 // 8]
        runs[prefetch] = (rt.Model(bm).run(dict(np.load(p.test_input))), reserved)
    (with_pf, reserved), (without, none) = runs["true"], runs["false"]
    assert reserved and not none
    for k, v in without.outputs.items():
        np.testing.assert_array_equal(with_pf.outputs[k], v)
    assert with_pf.stats.total_cycles < without.stats.total_cycles, \
        (with_pf.stats.total_cycles, without.stats.total_cycles)
