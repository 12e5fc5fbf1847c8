"""Zoo models lowered in F16, BF16 and INT8 (symmetric and asymmetric,
calibrated on 16 random samples) and compiled for both chips, with and
without layer groups (INT8 convolutions, max pooling and residual adds join
groups): every INT8 tensor the cmodel dumps equals the Tpu
interpreter's bit for bit, float tensors (F16/BF16 and INT8 mode's float
fallbacks) agree with it to rounding, and F16/BF16 outputs keep cosine >=
0.9999 against the float reference."""
from __future__ import annotations

import numpy as np
import pytest

from backendutil import CHIPS
from tpuc import compiler
from tpuc import runtime as rt
from tpuc.testing import zoo
from tpuc.testing.groups import grouped_lines
from tpuc.testing.quant import prepare

MODELS = ("cnn_bn", "mobilenetv2", "bert_layer", "mlp")
GROUPED = ("cnn_bn", "mobilenetv2", "resnet18")


def cosine(a, b) -> float:
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    na, nb = np.linalg.norm(a), np.linalg.norm(b)
    return 1.0 if na == nb == 0 else float(a @ b / (na * nb))


@pytest.fixture(scope="module")
def prepared(tmp_path_factory):
    """Per zoo model: top.mlir, its float reference and a calibration table."""
    cache = {}

    def get(name):
        if name not in cache:
            cache[name] = prepare(name, tmp_path_factory.mktemp(name), seed=5)
        return cache[name]

    return get


def run(p, name, chip, mode, asymmetric=False, layer_group=True, module_text=None):
    """Lowers, compiles and runs; returns (interpreter tensors, cmodel tensors).
    `module_text`, a list, receives the compiled module's text."""
    inputs = dict(np.load(p.test_input))
    ctx = compiler.make_context()
    with ctx:
        m = compiler.load_module(p.mlir, ctx)
        opts = f"mode={mode} chip={chip}"
        if mode == "INT8":
            opts += f" calibration-table={p.table} asymmetric={str(asymmetric).lower()}"
        compiler.run_pipeline(m, f"top-to-tpu-pipeline{{{opts}}}")
        ref = compiler.interpret(m, inputs, all_tensors=True)
        bm = p.mlir.parent / f"{name}_{chip}_{mode}_{asymmetric}_{layer_group}.bmodel"
        compiler.run_pipeline(m, f"tpu-codegen-pipeline{{chip={chip} bmodel={bm} "
                                 f"layer-group={str(layer_group).lower()}}}")
        if module_text is not None:
            module_text.append(str(m))
    r = rt.Model(bm).run(inputs, dump_all_tensors=True)
    return ref, {**r.tensors, **r.outputs}


def compare_stages(ref, got, chip, least=2):
    """Compares the tensors both stages have (at least `least` of them);
    returns how many agree bit for bit: the integer ones (which must) and
    float ones that do (an INT8 model's dequantized output)."""
    names = [n for n in ref if n in got]
    assert len(names) >= least
    exact = 0
    for n in names:
        r, g = ref[n], got[n]
        assert r.size == g.size, n
        if np.issubdtype(g.dtype, np.integer):
            bad = np.flatnonzero(r.ravel().astype(np.float64) != g.ravel().astype(np.float64))
            assert bad.size == 0, f"{n} on {chip}: {bad.size} of {r.size} INT8 values differ"
            exact += 1
        else:
            assert cosine(r, g) >= 0.9999, f"{n} on {chip}: cosine {cosine(r, g)}"
            exact += int(np.array_equal(r.ravel(), g.ravel().astype(r.dtype)))
    return exact


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("asymmetric", [False, True])
@pytest.mark.parametrize("name", MODELS)
def test_int8_bit_exact(prepared, name, chip, asymmetric):
    ref, got = run(prepared(name), name, chip, "INT8", asymmetric, layer_group=False)
    assert compare_stages(ref, got, chip) >= 1, "no INT8 tensor was compared"


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("asymmetric", [False, True])
@pytest.mark.parametrize("name", GROUPED)
def test_int8_layer_groups_bit_exact(prepared, name, chip, asymmetric):
    text = []
    ref, got = run(prepared(name), name, chip, "INT8", asymmetric, module_text=text)
    assert compare_stages(ref, got, chip) >= 1, "no INT8 tensor was compared"
    grouped = grouped_lines(text[0])
    assert any('"tpu.Conv"' in line for line in grouped), "no INT8 conv joined a group"
    # Asymmetric convs pad with the zero point themselves, as symmetric ones.
    assert '"tpu.Pad"' not in text[0]


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("mode", ["F16", "BF16"])
@pytest.mark.parametrize("name", MODELS)
def test_half_precision(prepared, name, chip, mode):
    p = prepared(name)
    top = dict(np.load(p.reference))
    ref, got = run(p, name, chip, mode)
    # A model grouped whole (the MLP) stores only its output.
    compare_stages(ref, got, chip, least=1)
    spec = zoo.ZOO[name]
    for out in spec.outputs:
        key = next(k for k in got if k == out or k.startswith(out))
        assert cosine(top[out], got[key]) >= 0.9999, (out, mode, chip)


@pytest.mark.parametrize("chip", CHIPS)
def test_fused_epilogues_bit_exact(prepared, chip):
    """bert_layer's bias adds are its MatMuls' biases and its written-out erf
    GELU one GELU (Top canonicalization); in INT8 the fused forms (INT32
    bias before the requant, the GELU as a table of its float island) stay
    bit-exact."""
    p = prepared("bert_layer")
    top = p.mlir.read_text()
    assert "top.GELU" in top and "top.Erf" not in top
    biased = [line for line in top.splitlines()
              if '"top.MatMul"' in line and "none)" not in line.split("->")[0]]
    assert len(biased) == 6, "the six Linear layers' MatMuls carry their biases"
    text = []
    ref, got = run(p, "bert_layer", chip, "INT8", module_text=text)
    assert compare_stages(ref, got, chip, least=1) >= 1
    assert '"tpu.Lut"' in text[0] and 'mode = "gelu"' not in text[0]


@pytest.mark.parametrize("asymmetric", [False, True])
def test_int8_island_table_equals_island(prepared, asymmetric):
    """The GELU's float island (dequantize, F16 GELU, quantize) of INT8
    bert_layer becomes a tpu.Lut (Tpu canonicalization) whose results are
    the island's, bit for bit, in the Tpu interpreter."""
    p = prepared("bert_layer")
    inputs = dict(np.load(p.test_input))
    opts = (f"mode=INT8 chip=tpu_edge calibration-table={p.table} "
            f"asymmetric={str(asymmetric).lower()}")
    tensors, texts = [], []
    for passes in ("convert-top-to-tpu", "convert-top-to-tpu,canonicalize"):
        with compiler.make_context() as ctx:
            m = compiler.load_module(p.mlir, ctx)
            compiler.run_pipeline(m, passes.replace("convert-top-to-tpu",
                                                    f"convert-top-to-tpu{{{opts}}}"))
            tensors.append(compiler.interpret(m, inputs, all_tensors=True))
            texts.append(str(m))
    assert 'mode = "gelu"' in texts[0] and 'mode = "gelu"' not in texts[1]
    island, table = tensors
    gelu = [k for k in table if k.startswith("/gelu/") and k.endswith("_i8")]
    assert gelu, "the island's quantized result is named in both"
    for k in gelu + ["output"]:
        np.testing.assert_array_equal(island[k], table[k], err_msg=k)


@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("mode", ["F32", "INT8"])
def test_attention_block_grouped(prepared, chip, mode):
    """The attention block compiled with layer groups: its F32 scores,
    softmax and weighted values stay in local memory as one group, the
    cmodel agrees with the interpreter (INT8 bit for bit) and the output
    with the float reference."""
    p = prepared("attention_block")
    text = []
    ref, got = run(p, "attention_block", chip, mode, module_text=text)
    # The whole block is one group (K's transpose folds into the scores'
    # matmul): the output may be the only tensor the cmodel stores.
    exact = compare_stages(ref, got, chip, least=1)
    assert mode == "F32" or exact >= 1, "no INT8 tensor was compared"
    grouped = grouped_lines(text[0])
    if mode == "F32":
        assert sum('"tpu.MatMul"' in line for line in grouped) >= 2, grouped
        assert any('"tpu.Softmax"' in line for line in grouped), grouped
    top = dict(np.load(p.reference))
    for out in zoo.LARGE["attention_block"].outputs:
        key = next(k for k in got if k == out or k.startswith(out))
        assert cosine(top[out], got[key]) >= (0.9999 if mode == "F32" else 0.99), (out, chip)
