"""bmodel assembly, model_runner end to end, and corrupted-file handling."""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from tpuc import runtime as rt
from tpuc.tools import model_runner
from chiputil import conv_ref

HEADER = 40


def build_conv_relu(tgt, rng):
    """y = relu(conv3x3(x) + b), x:[1,20,6,6] f32, weights in the weight region.
    The pre-activation conv result is also stored to DDR as named tensor 'conv'."""
    x_shape, oc = (1, 20, 6, 6), 24
    w = (rng.standard_normal((20, oc, 3, 3)) * 0.2).astype(np.float32)
    b = rng.standard_normal((1, oc, 1, 1)).astype(np.float32)
    weights = w.tobytes() + b.tobytes()
    act = 4096 * ((len(weights) + 4095) // 4096)
    x_addr, conv_addr, y_addr = act, act + 4096, act + 8192
    F = rt.DType.F32
    bank = tgt.lmem_bytes_per_lane // tgt.lmem_banks
    xl = rt.lmem_tensor(0, list(x_shape), F)
    wl = rt.lmem_tensor(bank, [20, oc, 3, 3], F)
    bl = rt.lmem_tensor(2 * bank, [1, oc, 1, 1], F)
    cl = rt.lmem_tensor(3 * bank, [1, oc, 6, 6], F)
    yl = rt.lmem_tensor(4 * bank, [1, oc, 6, 6], F)
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_move(xl, rt.ddr_tensor(x_addr, list(x_shape), F)))
    sb.gdma(rt.make_dma_move(wl, rt.ddr_tensor(0, [20, oc, 3, 3], F)))
    g = sb.gdma(rt.make_dma_move(bl, rt.ddr_tensor(w.nbytes, [1, oc, 1, 1], F)))
    t1 = sb.tiu(rt.make_conv(cl, xl, wl, bl, pads=(1, 1, 1, 1)), g)
    g_conv = sb.gdma(rt.make_dma_move(rt.ddr_tensor(conv_addr, [1, oc, 6, 6], F), cl), t1)
    t2 = sb.tiu(rt.make_active(rt.ActOp.RELU, yl, cl))
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(y_addr, [1, oc, 6, 6], F), yl), t2)
    inputs = [rt.TensorInfo("x", F, list(x_shape), ddr_addr=x_addr)]
    outputs = [rt.TensorInfo("y", F, [1, oc, 6, 6], ddr_addr=y_addr)]
    tensors = [rt.NamedTensor(rt.TensorInfo("conv", F, [1, oc, 6, 6], ddr_addr=conv_addr),
                              rt.Engine.GDMA, g_conv)]
    m = rt.build_bmodel(tgt, sb.tiu_stream, sb.gdma_stream, inputs, outputs, weights=weights,
                        tensors=tensors, name="conv_relu")
    return m, (w, b)


def reference(x, w, b):
    c = conv_ref(x, w, b, (1, 1), (1, 1), (1, 1, 1, 1), 1)
    return c, np.maximum(c, 0)


@pytest.fixture
def model_file(edge, rng, tmp_path):
    m, wb = build_conv_relu(edge, rng)
    path = tmp_path / "conv_relu.bmodel"
    rt.write_bmodel(m, str(path))
    return path, wb


def test_roundtrip_and_introspection(model_file):
    path, _ = model_file
    m = rt.Model(path)
    assert m.networks == ["conv_relu"]
    assert m.target.name == "tpu_edge"
    (i,), (o,) = m.inputs, m.outputs
    assert (i.name, i.shape, i.dtype, i.scale, i.zero_point) == ("x", (1, 20, 6, 6), "f32", 1.0, 0)
    assert (o.name, o.shape, o.dtype) == ("y", (1, 24, 6, 6), "f32")
    b1 = path.read_bytes()
    b2 = rt.serialize_bmodel(rt.read_bmodel(str(path)))
    assert b1 == b2


def test_run_and_dump(model_file, rng):
    path, (w, b) = model_file
    x = rng.standard_normal((1, 20, 6, 6)).astype(np.float32)
    r = rt.Model(path).run({"x": x}, dump_all_tensors=True)
    conv, y = reference(x, w, b)
    np.testing.assert_allclose(r.outputs["y"], y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(r.tensors["conv"], conv, rtol=1e-5, atol=1e-5)
    assert r.stats.total_cycles > 0 and r.stats.tiu_instructions == 2 and r.stats.gdma_instructions == 5
    assert r.stats.macs == 24 * 36 * 20 * 9


def test_model_runner_main(model_file, rng, tmp_path, capsys):
    path, (w, b) = model_file
    x = rng.standard_normal((1, 20, 6, 6)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    rc = model_runner.main(["--model", str(path), "--input", str(tmp_path / "in.npz"),
                            "--output", str(tmp_path / "out.npz"), "--dump_all_tensors",
                            "--trace", str(tmp_path / "trace.json")])
    assert rc == 0
    assert "cycles: total" in capsys.readouterr().out
    out = np.load(tmp_path / "out.npz")
    conv, y = reference(x, w, b)
    np.testing.assert_allclose(out["y"], y, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(out["conv"], conv, rtol=1e-5, atol=1e-5)
    tr = json.loads((tmp_path / "trace.json").read_text())
    assert sum(e["ph"] == "X" for e in tr["traceEvents"]) == 7


def test_model_runner_subprocess(model_file, rng, tmp_path):
    path, (w, b) = model_file
    x = rng.standard_normal((1, 20, 6, 6)).astype(np.float32)
    np.savez(tmp_path / "in.npz", x=x)
    proc = subprocess.run([sys.executable, "-m", "tpuc.tools.model_runner", "--model", str(path),
                           "--input", str(tmp_path / "in.npz"), "--output", str(tmp_path / "o.npz")],
                          capture_output=True, text=True, env=os.environ.copy(), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "cycles: total" in proc.stdout
    np.testing.assert_allclose(np.load(tmp_path / "o.npz")["y"], reference(x, w, b)[1], rtol=1e-5, atol=1e-5)
    # and a bad invocation: one-line error, non-zero exit
    proc = subprocess.run([sys.executable, "-m", "tpuc.tools.model_runner", "--model",
                           str(tmp_path / "missing.bmodel"), "--input", str(tmp_path / "in.npz")],
                          capture_output=True, text=True, env=os.environ.copy(), timeout=120)
    assert proc.returncode == 1
    assert proc.stderr.strip().count("\n") == 0 and "model_runner: error:" in proc.stderr


def test_model_runner_bad_inputs(model_file, tmp_path, capsys):
    path, _ = model_file
    np.savez(tmp_path / "wrong.npz", z=np.zeros(3, np.float32))
    assert model_runner.main(["--model", str(path), "--input", str(tmp_path / "wrong.npz")]) == 1
    assert "has no array named 'x'" in capsys.readouterr().err
    np.savez(tmp_path / "shape.npz", x=np.zeros((1, 20, 6, 5), np.float32))
    assert model_runner.main(["--model", str(path), "--input", str(tmp_path / "shape.npz")]) == 1
    assert "input 'x' has shape [1, 20, 6, 5] but the model takes [1, 20, 6, 6]" in \
        capsys.readouterr().err


# --- corrupted files ----------------------------------------------------------

def _fix_checksum(data: bytearray) -> bytearray:
    struct.pack_into("<Q", data, 24, rt._rt.fnv1a64(bytes(data[HEADER:])))
    return data


def _expect_error(tmp_path, data, pattern):
    p = tmp_path / "bad.bmodel"
    p.write_bytes(bytes(data))
    with pytest.raises(rt.ChipError, match=pattern):
        rt.Model(p)
    np.savez(tmp_path / "in.npz", x=np.zeros((1, 20, 6, 6), np.float32))
    assert model_runner.main(["--model", str(p), "--input", str(tmp_path / "in.npz")]) == 1


def test_truncated(model_file, tmp_path):
    data = model_file[0].read_bytes()
    _expect_error(tmp_path, data[:-100], "truncated")
    _expect_error(tmp_path, data[:20], "truncated")


def test_flipped_byte(model_file, tmp_path):
    data = bytearray(model_file[0].read_bytes())
    data[len(data) // 2] ^= 0x40
    _expect_error(tmp_path, data, "checksum mismatch")


def test_wrong_version_and_magic(model_file, tmp_path):
    data = bytearray(model_file[0].read_bytes())
    struct.pack_into("<I", data, 8, 99)
    _expect_error(tmp_path, data, "unsupported bmodel version 99")
    data = bytearray(model_file[0].read_bytes())
    data[0:4] = b"ELF\x7f"
    _expect_error(tmp_path, data, "bad magic")


def test_out_of_bounds_instruction(edge, rng, tmp_path):
    m, _ = build_conv_relu(edge, rng)
    net = m.networks[0]
    gdma = net.gdma
    bad = gdma[0]
    src = bad.src[0]
    src.addr = m.plan.total_bytes + 4096  # beyond every DDR region
    bad.set_src(0, src)
    gdma[0] = bad
    net.gdma = gdma
    m.networks = [net]
    with pytest.raises(rt.ChipError, match="refusing to write invalid bmodel"):
        rt.serialize_bmodel(m)
    data = rt.serialize_bmodel(m, validate=False)
    p = tmp_path / "oob.bmodel"
    p.write_bytes(data)
    with pytest.raises(rt.ChipError) as e:
        rt.Model(p)
    msg = str(e.value)
    assert "GDMA instruction #0" in msg and "src0.addr" in msg and "outside" in msg


def test_lmem_out_of_bounds_instruction(edge, rng):
    m, _ = build_conv_relu(edge, rng)
    net = m.networks[0]
    tiu = net.tiu
    inst = tiu[1]
    d = inst.dst
    d.addr = edge.lmem_bytes_per_lane - 16
    inst.dst = d
    tiu[1] = inst
    net.tiu = tiu
    m.networks = [net]
    with pytest.raises(rt.ChipError, match=r"TIU instruction #1 .*dst.addr: LMEM range"):
        rt.Model(rt.serialize_bmodel(m, validate=False))


def test_random_corruption_never_crashes(model_file):
    """Mutate bytes (keeping the checksum valid) to reach the structural
    checks: every outcome is a clean load or a ChipError."""
    base = bytearray(model_file[0].read_bytes())
    rng = np.random.default_rng(7)
    errors = 0
    for _ in range(300):
        data = bytearray(base)
        for _ in range(int(rng.integers(1, 4))):
            pos = int(rng.integers(HEADER, len(data)))
            data[pos] = int(rng.integers(0, 256))
        _fix_checksum(data)
        try:
            rt.Model(bytes(data))
        except rt.ChipError:
            errors += 1
    assert errors > 0


def test_quantized_io(edge, tmp_path):
    """int8 input with scale/zero point: float data is quantized on the way in;
    y = requant(x*x) shows the quant parameters survive the round trip."""
    I8, I32 = rt.DType.INT8, rt.DType.INT32
    sb = rt.StreamBuilder()
    bank = edge.lmem_bytes_per_lane // edge.lmem_banks
    xl = rt.lmem_tensor(0, [1, 4, 1, 8], I8)
    al = rt.lmem_tensor(bank, [1, 4, 1, 8], I32)
    yl = rt.lmem_tensor(2 * bank, [1, 4, 1, 8], I8)
    g = sb.gdma(rt.make_dma_move(xl, rt.ddr_tensor(0, [1, 4, 1, 8], I8)))
    sb.tiu(rt.make_binary(rt.BinaryOp.MUL, al, xl, xl), g)
    t = sb.tiu(rt.make_requant(yl, al, 1, 4, -3))
    sb.gdma(rt.make_dma_move(rt.ddr_tensor(64, [1, 4, 1, 8], I8), yl), t)
    m = rt.build_bmodel(edge, sb.tiu_stream, sb.gdma_stream,
                        [rt.TensorInfo("x", I8, [1, 4, 1, 8], 0.5, 2, 0)],
                        [rt.TensorInfo("y", I8, [1, 4, 1, 8], 0.125, -3, 64)],
                        activation_addr=0, activation_size=4096)
    model = rt.Model(rt.serialize_bmodel(m))
    assert (model.inputs[0].scale, model.inputs[0].zero_point) == (0.5, 2)
    assert (model.outputs[0].scale, model.outputs[0].zero_point) == (0.125, -3)
    xf = np.linspace(-20, 20, 32, dtype=np.float32).reshape(1, 4, 1, 8)
    q = np.clip(np.sign(xf / 0.5) * np.floor(np.abs(xf / 0.5) + 0.5) + 2, -128, 127).astype(np.int64)
    sq = q * q
    ref = np.clip(np.floor(sq / 16 + 0.5) - 3, -128, 127)  # sq >= 0: half away == half up
    y = model.run({"x": xf}).outputs["y"]
    assert np.array_equal(y, ref.astype(np.int8))


def test_a_program_reading_what_a_previous_run_left_is_refused(edge):
    """The runtime keeps its simulated memory between runs: every run still
    starts with the weights in place and everything else zero, also after a
    run that left data in local memory and DDR scratch. y = w + ddr_scratch,
    so a leak from the previous run would change the next result. A bmodel
    cannot store into its weights, nor read local memory or DDR scratch
    nothing wrote: the verifier refuses all three."""
    F = rt.DType.F32
    shape = [1, 4, 1, 8]
    w = np.arange(32, dtype=np.float32).reshape(shape)
    act = 4096
    x_addr, scratch_addr, y_addr = act, act + 256, act + 512
    bank = edge.lmem_bytes_per_lane // edge.lmem_banks
    wl, sl, dl = (rt.lmem_tensor(k * bank, shape, F) for k in range(3))
    sb = rt.StreamBuilder()
    sb.gdma(rt.make_dma_move(wl, rt.ddr_tensor(0, shape, F)))
    g = sb.gdma(rt.make_dma_move(dl, rt.ddr_tensor(scratch_addr, shape, F)))
    t = sb.tiu(rt.make_binary(rt.BinaryOp.ADD, wl, wl, dl), g)
    g = sb.gdma(rt.make_dma_move(rt.ddr_tensor(y_addr, shape, F), wl), t)
    g = sb.gdma(rt.make_dma_move(sl, rt.ddr_tensor(x_addr, shape, F)), 0)
    t = sb.tiu(rt.make_binary(rt.BinaryOp.ADD, sl, sl, sl), g)
    g = sb.gdma(rt.make_dma_move(rt.ddr_tensor(scratch_addr, shape, F), sl), t)
    m = rt.build_bmodel(edge, sb.tiu_stream, sb.gdma_stream,
                        [rt.TensorInfo("x", F, shape, ddr_addr=x_addr)],
                        [rt.TensorInfo("y", F, shape, ddr_addr=y_addr)],
                        weights=w.tobytes(), activation_addr=act, activation_size=1024,
                        tensors=[rt.NamedTensor(rt.TensorInfo("scratch", F, shape,
                                                              ddr_addr=scratch_addr),
                                                rt.Engine.GDMA, 0)])
    # The program reads the scratch before anything stored it: the verifier
    # refuses that too, so no bmodel can observe what a run leaves behind.
    with pytest.raises(rt.ChipError, match=r"undefined read: GDMA instruction #1 \(id 2, dma_move\) "
                       rf"src0 reads DDR byte {scratch_addr} which no earlier instruction wrote"):
        rt.serialize_bmodel(m)
