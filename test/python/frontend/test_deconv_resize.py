"""ConvTranspose (top.Deconv) and Resize linear / fractional nearest
(top.Interp): tiny models for each attribute combination match onnxruntime on
every tensor through model_transform, and compile and run on the cmodel of
both chips, with and without layer groups, matching the Tpu interpreter; a
torch-exported U-Net-like model runs end to end."""
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tpuc.deploy import deploy
from tpuc.frontend.errors import FrontendError
from tpuc.transform import transform

from onnx_cases import CHIPS, TOL, Runner, const

_rng = np.random.default_rng(11)


def _f32(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _deconv(x, w, bias=True, **attrs):
    """x [N, IC, ...] -> ConvTranspose with weight w [IC, OC/g, k...] -> y."""
    inits = [const("w", _f32(*w))]
    names = ["x", "w"]
    if bias:
        inits.append(const("b", _f32(w[1] * attrs.get("group", 1))))
        names.append("b")
    node = helper.make_node("ConvTranspose", names, ["y"], name="y", **attrs)
    return dict(nodes=[node], inits=inits, inputs=[("x", x)], opset=17)


def _resize(x, scales=None, sizes=None, opset=17, **attrs):
    inits = [const("roi", np.zeros(0, np.float32))]
    names = ["x", "roi"]
    if scales is not None:
        inits.append(const("scales", np.array(scales, np.float32)))
        names.append("scales")
    else:
        inits.append(const("sizes", np.array(sizes, np.int64)))
        names += ["", "sizes"]
    node = helper.make_node("Resize", names, ["y"], name="y", **attrs)
    return dict(nodes=[node], inits=inits, inputs=[("x", x)], opset=opset)


CASES = {
    "deconv_s2": _deconv([1, 4, 5, 5], [4, 3, 3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
    "deconv_dil_asym": _deconv([2, 3, 4, 6], [3, 5, 2, 3], bias=False, strides=[3, 2],
                               dilations=[2, 1], pads=[0, 2, 1, 0], output_padding=[1, 0]),
    "deconv_group": _deconv([1, 6, 4, 4], [6, 2, 3, 3], strides=[2, 2], group=3),
    "deconv_depthwise": _deconv([1, 8, 5, 5], [8, 1, 4, 4], strides=[2, 2],
                                pads=[1, 1, 1, 1], group=8),
    "deconv_1d": _deconv([1, 4, 7], [4, 3, 5], strides=[3], pads=[2, 1]),
    "deconv_same_upper": _deconv([1, 3, 5, 5], [3, 2, 3, 3], strides=[2, 2],
                                 auto_pad="SAME_UPPER"),
    "deconv_same_lower": _deconv([1, 3, 5, 5], [3, 2, 4, 4], strides=[2, 2],
                                 auto_pad="SAME_LOWER"),
    "deconv_output_shape": _deconv([1, 3, 5, 5], [3, 2, 3, 3], strides=[2, 2],
                                   output_shape=[10, 9]),
    "deconv_big_pads": _deconv([1, 2, 6, 6], [2, 2, 3, 3], pads=[3, 2, 2, 3]),
    "resize_half_pixel": _resize([1, 3, 5, 7], scales=[1, 1, 2, 2], mode="linear"),
    "resize_align_corners": _resize([1, 2, 4, 6], sizes=[1, 2, 7, 11], mode="linear",
                                    coordinate_transformation_mode="align_corners"),
    "resize_asymmetric": _resize([1, 2, 6, 5], scales=[1, 1, 0.5, 1.6], mode="linear",
                                 coordinate_transformation_mode="asymmetric"),
    "resize_pytorch_half_pixel": _resize(
        [2, 2, 5, 4], sizes=[2, 2, 1, 9], mode="linear",
        coordinate_transformation_mode="pytorch_half_pixel"),
    "resize_nearest_fraction": _resize([1, 2, 4, 6], scales=[1, 1, 1.5, 0.75]),
    "resize_nearest_ceil": _resize([1, 2, 5, 5], sizes=[1, 2, 8, 7], nearest_mode="ceil",
                                   coordinate_transformation_mode="asymmetric"),
}


@pytest.fixture(scope="module")
def runner(tmp_path_factory):
    return Runner(CASES, tmp_path_factory, seed=11)


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_onnxruntime(name, runner):
    r = runner.check_transform(name)
    assert ("top.Deconv" if name.startswith("deconv") else "top.Interp") in r.mlir.read_text()


@pytest.mark.parametrize("layer_group", [True, False], ids=["groups", "per_op"])
@pytest.mark.parametrize("chip", CHIPS)
@pytest.mark.parametrize("name", sorted(CASES))
def test_deploys_and_matches(name, chip, layer_group, runner):
    runner.check_deploy(name, chip, layer_group)


def _single(op_type, inits, x=(1, 2, 4, 4), **attrs):
    node = helper.make_node(op_type, ["x"] + [i.name if i is not None else "" for i in inits],
                            ["y"], name="the_node", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializer=[i for i in inits if i is not None])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


_ROI = const("roi", np.zeros(0, np.float32))


@pytest.mark.parametrize("model,fragment", [
    (_single("Resize", [_ROI, const("scales", np.array([1, 1, 2, 2], np.float32))],
             mode="linear", coordinate_transformation_mode="tf_crop_and_resize"),
     "coordinate_transformation_mode 'tf_crop_and_resize' is not supported"),
    (_single("Resize", [_ROI, const("scales", np.array([1, 2, 2, 2], np.float32))],
             mode="linear"), "only H/W resizing of NCHW tensors is supported"),
    (_single("Resize", [_ROI, const("scales", np.array([1, 1, 0.5, 0.5], np.float32))],
             mode="linear", antialias=1), "antialias=1 when downscaling is not supported"),
    (_single("ConvTranspose", [const("w", _f32(2, 2, 3, 3))], strides=[2, 2],
             output_shape=[12, 12]), "larger than the deconvolved extent"),
], ids=["crop_and_resize", "channel_resize", "antialias", "output_shape_too_big"])
def test_unsupported_attributes_fail_with_one_line(model, fragment, tmp_path):
    onnx.save(model, tmp_path / "m.onnx")
    with pytest.raises(FrontendError) as e:
        transform("m", tmp_path / "m.onnx", tmp_path / "m.mlir")
    message = str(e.value)
    assert "\n" not in message and "node 'the_node'" in message
    assert fragment in message, message


def test_torch_unet(tmp_path):
    """Conv encoder, ConvTranspose and bilinear F.interpolate decoder with skip
    Concats, exported by torch: matches onnxruntime and runs on the cmodel."""
    torch = pytest.importorskip("torch")
    nn, F = torch.nn, torch.nn.functional

    class UNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc1 = nn.Conv2d(3, 8, 3, padding=1)
            self.enc2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
            self.mid = nn.Conv2d(16, 16, 3, stride=2, padding=1)
            self.up1 = nn.ConvTranspose2d(16, 16, 2, stride=2)
            self.dec1 = nn.Conv2d(32, 8, 3, padding=1)
            self.dec2 = nn.Conv2d(16, 4, 3, padding=1)

        def forward(self, x):
            e1 = F.relu(self.enc1(x))
            e2 = F.relu(self.enc2(e1))
            m = F.relu(self.mid(e2))
            d1 = F.relu(self.dec1(torch.cat([self.up1(m), e2], 1)))
            up = F.interpolate(d1, scale_factor=2, mode="bilinear", align_corners=False)
            return self.dec2(torch.cat([up, e1], 1))

    torch.manual_seed(0)
    x = torch.randn(1, 3, 16, 16)
    with warnings.catch_warnings(), torch.no_grad():
        # The TorchScript exporter is deprecated but works without onnxscript.
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(UNet().eval(), (x,), str(tmp_path / "unet.onnx"), dynamo=False,
                          input_names=["x"], output_names=["y"], opset_version=17)
    np.savez(tmp_path / "in.npz", x=x.numpy())
    r = transform("unet", tmp_path / "unet.onnx", tmp_path / "unet.mlir",
                  test_input=tmp_path / "in.npz", test_result=tmp_path / "top.npz",
                  tolerance=TOL)
    assert r.comparison.passed, r.comparison.summary()
    text = r.mlir.read_text()
    assert "top.Deconv" in text and "top.Interp" in text
    for chip in CHIPS:
        for lg in (True, False):
            d = deploy(r.mlir, "F32", chip, tmp_path / f"unet_{chip}_{lg}.bmodel",
                       test_input=tmp_path / "in.npz", test_reference=r.top_outputs,
                       compare_all=True, tolerance=TOL, layer_group=lg)
            assert d.tpu_comparison.passed, d.tpu_comparison.summary()
            assert d.model_comparison.passed, d.model_comparison.summary()
