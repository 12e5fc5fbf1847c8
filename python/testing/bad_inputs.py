"""Damaged and hostile input files, one builder per class, for the
reliability tests and the fuzzer (`tpuc.testing.fuzz`).

Each ONNX builder writes a small model that is wrong in one way; each npz
mutation takes the bytes of a valid archive and damages one structure while
keeping the CRCs right where that matters, so the check behind them runs.
"""
from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper as nh

OPSET = 17


def _save(graph, path: Path, ir_version: int | None = None) -> Path:
    m = h.make_model(graph, opset_imports=[h.make_opsetid("", OPSET)])
    if ir_version is not None:
        m.ir_version = ir_version
    onnx.save(m, path)
    return path


def _conv(path, x_shape=(1, 3, 8, 8), w_shape=(4, 3, 3, 3), elem=T.FLOAT, attr=None,
          ir_version=None):
    x = h.make_tensor_value_info("x", elem, list(x_shape))
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    w = nh.from_array(np.full(w_shape, 0.5, np.float32), "w")
    node = h.make_node("Conv", ["x", "w"], ["y"], name="conv0")
    if attr is not None:
        node.attribute.append(attr)
    return _save(h.make_graph([node], "g", [x], [y], [w]), path, ir_version)


def valid_conv(path: Path) -> Path:
    """The undamaged model the ONNX builders start from."""
    return _conv(path)


def _gather_out_of_range(path):
    x = h.make_tensor_value_info("x", T.FLOAT, [4, 5])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    idx = nh.from_array(np.array([0, 7], np.int64), "idx")
    node = h.make_node("Gather", ["x", "idx"], ["y"], name="gather0", axis=0)
    return _save(h.make_graph([node], "g", [x], [y], [idx]), path)


def _duplicate_outputs(path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, [1, 4])
    nodes = [h.make_node("Relu", ["x"], ["y"], name="r0")]
    return _save(h.make_graph(nodes, "g", [x], [y, y]), path)


def _string_input(path):
    x = h.make_tensor_value_info("x", T.STRING, [1, 4])
    y = h.make_tensor_value_info("y", T.STRING, [1, 4])
    nodes = [h.make_node("Identity", ["x"], ["y"], name="id0")]
    return _save(h.make_graph(nodes, "g", [x], [y]), path)


def _missing_external_data(path):
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    w = nh.from_array(np.ones((1, 4), np.float32), "w")
    g = h.make_graph([h.make_node("Add", ["x", "w"], ["y"], name="add0")], "g", [x], [y], [w])
    m = h.make_model(g, opset_imports=[h.make_opsetid("", OPSET)])
    onnx.save(m, path, save_as_external_data=True, location=path.name + ".data",
              size_threshold=0)
    (path.parent / (path.name + ".data")).unlink()
    return path


def _clip_vector_min(path):
    # Found by fuzzing: a Clip whose min is a [4] constant, not a scalar.
    x = h.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = h.make_tensor_value_info("y", T.FLOAT, None)
    lo = nh.from_array(np.zeros(4, np.float32), "lo")
    g = h.make_graph([h.make_node("Clip", ["x", "lo"], ["y"], name="clip0")], "g", [x], [y], [lo])
    return _save(g, path)


# name -> (builder(path) -> path, words the one-line error must contain)
ONNX_CASES: dict[str, tuple[Callable[[Path], Path], tuple[str, ...]]] = {
    "group_float": (lambda p: _conv(p, attr=h.make_attribute("group", 1.5)),
                    ("conv0", "Conv", "'group' is FLOAT")),
    "group_string": (lambda p: _conv(p, attr=h.make_attribute("group", "two")),
                     ("conv0", "'group' is STRING")),
    "unknown_attribute": (lambda p: _conv(p, attr=h.make_attribute("grup", 2)),
                          ("conv0", "unknown attribute 'grup'")),
    "negative_dim": (lambda p: _conv(p, x_shape=(1, 3, -4, 8)), ("input 'x'", "-4")),
    "huge_dim": (lambda p: _conv(p, x_shape=(1, 3, 1 << 62, 8)), ("input 'x'", str(1 << 62))),
    "kernel_larger_than_input": (lambda p: _conv(p, w_shape=(4, 3, 9, 9)),
                                 ("top.Conv", "smaller than the dilated kernel")),
    "unknown_ir_version": (lambda p: _conv(p, ir_version=99), ("IR version 99",)),
    "string_input": (_string_input, ("input 'x'", "STRING")),
    "duplicate_outputs": (_duplicate_outputs, ("output 'y'", "twice")),
    "missing_external_data": (_missing_external_data, ("not a valid ONNX file",)),
    "clip_vector_min": (_clip_vector_min, ("clip0", "Clip min ('lo') must be a scalar")),
    "not_onnx": (lambda p: (p.write_bytes(b"\x08\x07garbage" * 10), p)[1], ("not a valid ONNX",)),
    "empty": (lambda p: (p.write_bytes(b""), p)[1], ("not a valid ONNX",)),
}

# Valid models whose reference run (onnxruntime, with test inputs) would
# fail; constant Gather indices are checked at import already, naming the node.
ORT_CASES = {
    "gather_out_of_range": (_gather_out_of_range, {"x": np.ones((4, 5), np.float32)},
                            ("gather0", "out of range")),
}


# --- npz ---------------------------------------------------------------------

BN_WEIGHTS = {
    "w": np.full((2, 1, 1, 1), 2.0, np.float32),
    "gamma": np.array([1.0, 3.0], np.float32),
    "beta": np.array([0.5, -1.0], np.float32),
    "mean": np.array([1.0, 0.0], np.float32),
    "var": np.array([3.0, 8.0], np.float32),
}

# A Top module whose BatchNorm folding (and interpretation) reads every
# weight of BN_WEIGHTS through the C++ reader; WEIGHTS is the file.
BN_MODULE = """module attributes {top.weight_file = "WEIGHTS"} {
func.func @main(%arg0: tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %0 = "top.Input"(%arg0) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> loc("x")
  %n = "top.None"() : () -> none
  %w = "top.Weight"() : () -> tensor<2x1x1x1xf32> loc("w")
  %g = "top.Weight"() : () -> tensor<2xf32> loc("gamma")
  %b = "top.Weight"() : () -> tensor<2xf32> loc("beta")
  %m = "top.Weight"() : () -> tensor<2xf32> loc("mean")
  %v = "top.Weight"() : () -> tensor<2xf32> loc("var")
  %1 = "top.Conv"(%0, %w, %n) {kernel_shape = [1, 1], strides = [1, 1], pads = [0, 0, 0, 0], dilations = [1, 1]} : (tensor<1x1x4x4xf32>, tensor<2x1x1x1xf32>, none) -> tensor<1x2x4x4xf32> loc("conv")
  %2 = "top.BatchNorm"(%1, %g, %b, %m, %v) {epsilon = 1.0 : f64} : (tensor<1x2x4x4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x4x4xf32> loc("bn")
  return %2 : tensor<1x2x4x4xf32>
}
}
"""


def npz_bytes(arrays: dict[str, np.ndarray], compressed: bool = False) -> bytes:
    buf = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(buf, **arrays)
    return buf.getvalue()


def _eocd(b: bytes) -> int:
    return b.rfind(b"PK\x05\x06")


def _zip64_offset_wrap(b: bytes) -> bytes:
    # A zip64 locator whose directory offset wraps around 2^64 when the
    # record size is added.
    i = _eocd(b)
    out = bytearray(b)
    out[i + 16:i + 20] = b"\xff\xff\xff\xff"
    loc = b"PK\x06\x07" + struct.pack("<IQI", 0, (1 << 64) - 10, 1)
    return bytes(out[:i]) + loc + bytes(out[i:])


def _rezip(b: bytes, edit: Callable[[str, bytes], bytes]) -> bytes:
    """The archive with every member's bytes passed through `edit` (CRCs
    recomputed by zipfile)."""
    src = zipfile.ZipFile(io.BytesIO(b))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, edit(info.filename, src.read(info.filename)))
    return buf.getvalue()


def _npy_header(shape: str) -> Callable[[str, bytes], bytes]:
    def edit(_name: str, data: bytes) -> bytes:
        hlen = struct.unpack_from("<H", data, 8)[0]
        header = data[10:10 + hlen].decode("latin1")
        start = header.index("'shape': (")
        end = header.index(")", start)
        new = (header[:start] + f"'shape': {shape}" + header[end + 1:]).rstrip() + " "
        new = new.ljust((len(new) + 10 + 63) // 64 * 64 - 10)[:-1] + "\n"
        return data[:8] + struct.pack("<H", len(new)) + new.encode("latin1") + data[10 + hlen:]
    return edit


def _bad_crc(b: bytes) -> bytes:
    out = bytearray(b)
    i = b.find(b"\x93NUMPY")
    out[i + 200] ^= 0xFF  # a data byte: only the CRC notices
    return bytes(out)


def _huge_deflate_size(b: bytes) -> bytes:
    # Uncompressed size in the central directory claims 4 GiB - 1.
    out = bytearray(b)
    i = b.find(b"PK\x01\x02")
    out[i + 24:i + 28] = b"\xfe\xff\xff\xff"
    return bytes(out)


def _corrupt_deflate(b: bytes) -> bytes:
    out = bytearray(b)
    i = b.find(b"PK\x03\x04")
    n = struct.unpack_from("<HH", b, i + 26)
    data = i + 30 + n[0] + n[1]
    for k in range(data, min(data + 16, len(out))):
        out[k] ^= 0x5A
    return bytes(out)


# name -> (mutation of a stored archive's bytes, or of a compressed one, words)
NPZ_CASES: dict[str, tuple[Callable[[bytes], bytes], bool, tuple[str, ...]]] = {
    "empty": (lambda b: b"", False, ("not an npz archive",)),
    "truncated": (lambda b: b[:len(b) // 2], False, ("npz",)),
    "zip64_offset_wraps": (_zip64_offset_wrap, False, ("zip64",)),
    "shape_2^62x3": (lambda b: _rezip(b, _npy_header(f"({1 << 62}, 3)")), False, ("shape",)),
    "negative_dim": (lambda b: _rezip(b, _npy_header("(-2, 3)")), False, ("dimension",)),
    "short_data": (lambda b: _rezip(b, _npy_header("(2000, 3)")), False, ("truncated",)),
    "big_endian": (lambda b: _rezip(b, lambda n, d: d.replace(b"'<f4'", b"'>f4'")), False,
                   ("dtype",)),
    "bad_crc": (_bad_crc, False, ("CRC",)),
    "deflate_size_lie": (_huge_deflate_size, True, ("entry",)),
    "corrupt_deflate": (_corrupt_deflate, True, ("deflate",)),
}
