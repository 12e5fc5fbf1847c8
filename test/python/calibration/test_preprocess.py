"""Preprocessing like tpu-mlir's against numpy references; recorded in top.mlir
and applied by transform (test input) and deploy."""
import json

import numpy as np
import pytest
from PIL import Image

from tpuc import compiler
from tpuc.deploy import deploy
from tpuc.preprocess import PREPROCESS_ATTR, Preprocess
from tpuc.testing import zoo
from tpuc.transform import load_inputs, transform

from calib_helpers import run_cli

RNG = np.random.default_rng(7)
PIXELS = RNG.integers(0, 256, (6, 8, 3), dtype=np.uint8)  # H=6, W=8, RGB
MEAN = (10.0, 20.0, 30.0)
SCALE = (0.5, 0.25, 2.0)


def save(tmp_path, pixels, name="img.png"):
    path = tmp_path / name
    Image.fromarray(pixels).save(path)
    return path


def test_mean_scale_rgb_nchw(tmp_path):
    pre = Preprocess(mean=MEAN, scale=SCALE, input_shape=(1, 3, 6, 8))
    x = pre.load(save(tmp_path, PIXELS))
    ref = ((PIXELS.astype(np.float32) - np.float32(MEAN)) * np.float32(SCALE)).transpose(2, 0, 1)[None]
    assert x.dtype == np.float32 and x.shape == (1, 3, 6, 8)
    assert np.array_equal(x, ref)


def test_bgr_nhwc(tmp_path):
    pre = Preprocess(mean=MEAN, scale=SCALE, pixel_format="bgr", channel_format="nhwc",
                     input_shape=(1, 6, 8, 3))
    x = pre.load(save(tmp_path, PIXELS))
    # channels reversed first; mean/scale are given in BGR order
    ref = ((PIXELS[:, :, ::-1].astype(np.float32) - np.float32(MEAN)) * np.float32(SCALE))[None]
    assert x.shape == (1, 6, 8, 3) and np.array_equal(x, ref)


def test_gray_and_batch(tmp_path):
    gray = RNG.integers(0, 256, (6, 8), dtype=np.uint8)
    pre = Preprocess(mean=(100,), scale=(0.1,), pixel_format="gray", input_shape=(2, 1, 6, 8))
    x = pre.load(save(tmp_path, gray))
    ref = (gray.astype(np.float32) - 100) * np.float32(0.1)
    assert x.shape == (2, 1, 6, 8)
    assert np.array_equal(x[0, 0], ref) and np.array_equal(x[1, 0], ref)  # batch 2: the image twice


def test_resize_dims_then_center_crop(tmp_path):
    # An image already of resize_dims (10x12) is not resized, only center-cropped to 6x8.
    pixels = RNG.integers(0, 256, (10, 12, 3), dtype=np.uint8)
    pre = Preprocess(resize_dims=(10, 12), input_shape=(1, 3, 6, 8))
    x = pre.load(save(tmp_path, pixels))
    assert np.array_equal(x[0], pixels[2:8, 2:10].transpose(2, 0, 1).astype(np.float32))


def test_resize_to_the_input_size(tmp_path):
    # Bilinear resize of a constant image is constant; another image resizes
    # as Pillow's bilinear does (H, W from the input shape).
    const = np.full((13, 17, 3), 77, np.uint8)
    pre = Preprocess(input_shape=(1, 3, 6, 8))
    assert np.array_equal(pre.load(save(tmp_path, const)), np.full((1, 3, 6, 8), 77, np.float32))
    small = RNG.integers(0, 256, (3, 4, 3), dtype=np.uint8)
    x = pre.load(save(tmp_path, small, "small.png"))
    ref = np.asarray(Image.fromarray(small).resize((8, 6), Image.Resampling.BILINEAR), np.float32)
    assert np.array_equal(x[0], ref.transpose(2, 0, 1))


def test_keep_aspect_ratio_pads_with_zeros_centered(tmp_path):
    # 10x20 image into 16x16: scale min(16/10, 16/20) = 0.8 -> 8x16, 4 rows of padding above.
    pixels = np.full((10, 20, 3), 200, np.uint8)
    pre = Preprocess(mean=(50,), keep_aspect_ratio=True, input_shape=(1, 3, 16, 16))
    x = pre.load(save(tmp_path, pixels))
    ref = np.full((3, 16, 16), -50.0, np.float32)  # padding: (0 - mean) * scale
    ref[:, 4:12, :] = 150.0
    assert np.array_equal(x[0], ref)


def test_array_input_is_an_rgb_image():
    pre = Preprocess(mean=MEAN, scale=SCALE, input_shape=(1, 3, 6, 8))
    ref = ((PIXELS.astype(np.float32) - np.float32(MEAN)) * np.float32(SCALE)).transpose(2, 0, 1)[None]
    assert np.array_equal(pre.load(PIXELS), ref)


@pytest.mark.parametrize("kwargs, message", [
    ({"pixel_format": "yuv"}, "unknown pixel format 'yuv'"),
    ({"channel_format": "chw"}, "unknown channel format 'chw'"),
    ({"mean": (1, 2)}, "--mean has 2 values but the pixel format has 3"),
    ({"resize_dims": (0, 4)}, "--resize_dims must be two positive sizes"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Preprocess(**kwargs)


def test_shape_checks(tmp_path):
    with pytest.raises(ValueError, match="pixel format gray gives 1 channel"):
        Preprocess(pixel_format="gray", input_shape=(1, 3, 6, 8)).load(PIXELS)
    with pytest.raises(ValueError, match="needs a 4-D input"):
        Preprocess(input_shape=(1, 10)).load(PIXELS)
    with pytest.raises(ValueError, match="smaller than the input's"):
        Preprocess(resize_dims=(4, 4), input_shape=(1, 3, 6, 8)).load(PIXELS)


def test_unreadable_images(tmp_path):
    (tmp_path / "x.png").write_text("nope")
    data = save(tmp_path, PIXELS, "full.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[:len(data) // 2])
    for name in ("x.png", "cut.png"):
        with pytest.raises(ValueError, match=rf"{name}: cannot read the image"):
            Preprocess(input_shape=(1, 3, 6, 8)).load(tmp_path / name)


# ----------------------------------------------------------------- through the flow


@pytest.fixture(scope="module")
def image_model(tmp_path_factory):
    """cnn_bn transformed with preprocessing and an image test input."""
    d = tmp_path_factory.mktemp("pre")
    onnx_path = zoo.export("cnn_bn", d)
    img = save(d, RNG.integers(0, 256, (40, 36, 3), dtype=np.uint8))
    code, out, err = run_cli("model_transform", "--model_name", "cnn", "--model_def", onnx_path,
                             "--mlir", d / "cnn.mlir", "--test_input", img,
                             "--test_result", d / "top.npz", "--mean", "123.675,116.28,103.53",
                             "--scale", "0.0171,0.0175,0.0174", "--pixel_format", "bgr",
                             "--resize_dims", "36,36", "--keep_aspect_ratio")
    assert code == 0, err
    return d, img


def test_transform_records_the_preprocessing(image_model):
    d, _ = image_model
    ctx = compiler.make_context()
    module = compiler.load_module(d / "cnn.mlir", ctx)
    recorded = json.loads(module.operation.attributes[PREPROCESS_ATTR].value)
    assert recorded == {"mean": [123.675, 116.28, 103.53], "scale": [0.0171, 0.0175, 0.0174],
                        "pixel_format": "bgr", "channel_format": "nchw",
                        "resize_dims": [36, 36], "keep_aspect_ratio": True}
    pre = Preprocess.from_module(module)
    assert pre.input_shape == (1, 3, 32, 32) and pre.keep_aspect_ratio


def test_image_test_input_equals_its_npz(image_model, tmp_path):
    # The Top interpreter's input tensor is the preprocessed image; feeding the
    # same tensor as an .npz gives the same tensors everywhere.
    d, img = image_model
    ctx = compiler.make_context()
    pre = Preprocess.from_module(compiler.load_module(d / "cnn.mlir", ctx))
    top = np.load(d / "top.npz")
    assert np.array_equal(top["input"], pre.load(img))
    np.savez(tmp_path / "in.npz", input=pre.load(img))
    assert np.array_equal(load_inputs(tmp_path / "in.npz", ["input"])["input"], top["input"])


def test_deploy_applies_the_recorded_preprocessing(image_model, tmp_path):
    d, img = image_model
    r = deploy(d / "cnn.mlir", chip="tpu_edge", model_path=tmp_path / "cnn.bmodel",
               test_input=img, test_reference=d / "top.npz")
    assert r.tpu_comparison.passed and r.model_comparison.passed
    assert len(r.tpu_comparison.rows) >= 2


def test_npy_and_npz_inputs_pass_through_untouched(tmp_path):
    x = RNG.standard_normal((1, 3, 6, 8)).astype(np.float32)
    np.save(tmp_path / "a.npy", x)
    pre = Preprocess(mean=MEAN, scale=SCALE, input_shape=(1, 3, 6, 8))
    assert np.array_equal(load_inputs(tmp_path / "a.npy", ["input"], pre)["input"], x)
    with pytest.raises(ValueError, match="gives one input but the model has 2"):
        load_inputs(save(tmp_path, PIXELS), ["a", "b"], pre)


def test_transform_rejects_preprocessing_that_does_not_fit(tmp_path):
    onnx_path = zoo.export("mlp", tmp_path)
    with pytest.raises(ValueError, match="needs a 4-D input"):
        transform("mlp", onnx_path, tmp_path / "mlp.mlir", preprocess=Preprocess())


def test_model_runner_interprets_an_image(image_model, tmp_path):
    d, img = image_model
    code, _, err = run_cli("model_runner", "--model", d / "cnn.mlir", "--input", img,
                           "--output", tmp_path / "out.npz", "--dump_all_tensors")
    assert code == 0, err
    out, top = np.load(tmp_path / "out.npz"), np.load(d / "top.npz")
    assert set(out.files) == set(top.files)
    assert all(np.array_equal(out[k], top[k]) for k in top.files)
