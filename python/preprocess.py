"""Image preprocessing like tpu-mlir's, recorded in top.mlir.

`model_transform.py --mean/--scale/--pixel_format/--channel_format/
--resize_dims/--keep_aspect_ratio` builds a :class:`Preprocess`; `transform`
stores it as JSON in the module attribute ``top.preprocess``, and every later
consumer (the transform's own test input, calibration datasets, deploy's test
input) rebuilds it with :meth:`Preprocess.from_module`, so an image becomes
the same tensor everywhere.

Steps for an image, in order (tpu-mlir's):

1. decode with Pillow into RGB (``rgb``/``bgr``) or luminance (``gray``);
2. resize (bilinear) to ``resize_dims`` (default: the input's H, W); with
   ``keep_aspect_ratio`` scale by ``min(h / ih, w / iw)`` (sizes truncated to
   ints) and pad to ``resize_dims`` with zeros, centered;
3. center-crop from ``resize_dims`` to the input's H, W;
4. ``bgr`` reverses the channel order;
5. ``(x - mean[c]) * scale[c]`` per channel, in float32, with the channels in
   the order of ``pixel_format``;
6. layout ``nchw`` (C, H, W) or ``nhwc`` (H, W, C), and a batch dimension; an
   input with batch N > 1 gets the image N times.

Arrays in ``.npz``/``.npy`` files are already tensors and pass through
untouched (:func:`tpuc.transform.load_inputs`).
"""
from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

PREPROCESS_ATTR = "top.preprocess"
IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".tiff",
                            ".webp", ".ppm", ".pgm", ".pnm"})
PIXEL_FORMATS = {"rgb": 3, "bgr": 3, "gray": 1}
CHANNEL_FORMATS = ("nchw", "nhwc")


def is_image(path: str | Path) -> bool:
    return Path(path).suffix.lower() in IMAGE_SUFFIXES


def module_inputs(module) -> list[tuple[str, list[int]]]:
    """(name, shape) of the entry function's inputs, in argument order.

    The name is the location name of the `top.Input`/`tpu.Input` op that
    takes the argument: the name the interpreters and the bmodel use.
    """
    from .mlir import ir  # the MLIR bindings are only needed with a module

    func = module.body.operations[0]
    block = func.regions[0].blocks[0]
    names: dict[int, str] = {}
    for op in block.operations:
        if op.operation.name in ("top.Input", "tpu.Input"):
            arg = ir.BlockArgument(op.operands[0])
            loc = op.location
            names[arg.arg_number] = loc.name_str if loc.is_a_name() else f"arg{arg.arg_number}"
    return [(names.get(i, f"arg{i}"), list(ir.RankedTensorType(a.type).shape))
            for i, a in enumerate(block.arguments)]


def _floats(values, channels: int, what: str) -> tuple[float, ...]:
    values = tuple(float(v) for v in values)
    if len(values) == 1:
        values *= channels
    if len(values) != channels:
        raise ValueError(f"--{what} has {len(values)} values but the pixel format has "
                         f"{channels} channel(s)")
    return values


@dataclass(frozen=True)
class Preprocess:
    """tpu-mlir's preprocessing options; see the module doc for the steps.

    ``mean``/``scale`` are per channel in ``pixel_format`` order (empty:
    0 and 1). ``resize_dims`` is (h, w). ``input_shape`` is the model
    input's shape; it is not recorded (the module has it) but is needed to
    load images.
    """

    mean: tuple[float, ...] = ()
    scale: tuple[float, ...] = ()
    pixel_format: str = "rgb"
    channel_format: str = "nchw"
    resize_dims: tuple[int, int] | None = None
    keep_aspect_ratio: bool = False
    input_shape: tuple[int, ...] | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.pixel_format not in PIXEL_FORMATS:
            raise ValueError(f"unknown pixel format {self.pixel_format!r} "
                             f"(one of {', '.join(PIXEL_FORMATS)})")
        if self.channel_format not in CHANNEL_FORMATS:
            raise ValueError(f"unknown channel format {self.channel_format!r} "
                             f"(one of {', '.join(CHANNEL_FORMATS)})")
        c = self.channels
        object.__setattr__(self, "mean", _floats(self.mean or (0.0,), c, "mean"))
        object.__setattr__(self, "scale", _floats(self.scale or (1.0,), c, "scale"))
        if self.resize_dims is not None:
            dims = tuple(int(d) for d in self.resize_dims)
            if len(dims) != 2 or min(dims) <= 0:
                raise ValueError(f"--resize_dims must be two positive sizes h,w, got {self.resize_dims}")
            object.__setattr__(self, "resize_dims", dims)
        if self.input_shape is not None:
            object.__setattr__(self, "input_shape", tuple(int(d) for d in self.input_shape))

    @property
    def channels(self) -> int:
        return PIXEL_FORMATS[self.pixel_format]

    # ------------------------------------------------------------ recording

    def to_json(self) -> str:
        d = asdict(self)
        del d["input_shape"]
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, input_shape: Sequence[int] | None = None) -> "Preprocess":
        try:
            d = json.loads(text)
            return cls(**d, input_shape=input_shape)
        except (json.JSONDecodeError, TypeError) as e:
            raise ValueError(f"bad {PREPROCESS_ATTR} attribute {text!r}: {e}") from None

    @classmethod
    def from_module(cls, module) -> "Preprocess":
        """The module's recorded preprocessing (defaults when it has none),
        bound to its first input's shape."""
        inputs = module_inputs(module)
        shape = inputs[0][1] if inputs else None
        attrs = module.operation.attributes
        if PREPROCESS_ATTR not in attrs:
            return cls(input_shape=shape)
        return cls.from_json(attrs[PREPROCESS_ATTR].value, shape)

    def record(self, module) -> None:
        """Stores the options in the module (attribute ``top.preprocess``)."""
        from .mlir import ir

        with module.context:
            module.operation.attributes[PREPROCESS_ATTR] = ir.StringAttr.get(self.to_json())

    def bind(self, input_shape: Sequence[int]) -> "Preprocess":
        return replace(self, input_shape=tuple(input_shape))

    def check_shape(self, shape: Sequence[int]) -> None:
        """Raises ValueError unless `shape` is a 4-D input in the channel format."""
        if len(shape) != 4:
            raise ValueError(f"image preprocessing needs a 4-D input, the model's is {list(shape)}")
        c = shape[1] if self.channel_format == "nchw" else shape[3]
        if c != self.channels:
            raise ValueError(f"pixel format {self.pixel_format} gives {self.channels} channel(s) but "
                             f"the input {list(shape)} ({self.channel_format}) has {c}")

    # ------------------------------------------------------------ applying

    @property
    def _hw(self) -> tuple[int, int]:
        if self.input_shape is None:
            raise ValueError("preprocessing has no input shape to produce")
        self.check_shape(self.input_shape)
        s = self.input_shape
        return (s[2], s[3]) if self.channel_format == "nchw" else (s[1], s[2])

    def load(self, image) -> np.ndarray:
        """The input tensor for an image file path, a PIL image, or an HWC /
        HW pixel array (RGB order, like Pillow gives)."""
        from PIL import Image, UnidentifiedImageError

        if isinstance(image, (str, Path)):
            path = Path(image)
            if not path.is_file():
                raise FileNotFoundError(f"{path}: no such image file")
            try:
                with Image.open(path) as img:
                    img.load()  # decode now: a truncated file fails here
            except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
                reason = str(e).splitlines()[0] if str(e) else type(e).__name__
                raise ValueError(f"{path}: cannot read the image ({reason})") from None
            return self.apply(img)
        if isinstance(image, np.ndarray):
            arr = image
            if arr.dtype != np.uint8:
                arr = np.clip(arr, 0, 255).astype(np.uint8)
            image = Image.fromarray(arr)
        return self.apply(image)

    def apply(self, img) -> np.ndarray:
        """Steps 1-6 of the module doc on a PIL image."""
        from PIL import Image

        img = img.convert("L" if self.pixel_format == "gray" else "RGB")
        h, w = self._hw
        rh, rw = self.resize_dims or (h, w)
        if self.keep_aspect_ratio:
            ratio = min(rh / img.height, rw / img.width)
            sh, sw = max(1, int(img.height * ratio)), max(1, int(img.width * ratio))
            canvas = Image.new(img.mode, (rw, rh), 0)
            canvas.paste(img.resize((sw, sh), Image.Resampling.BILINEAR),
                         ((rw - sw) // 2, (rh - sh) // 2))
            img = canvas
        elif img.size != (rw, rh):
            img = img.resize((rw, rh), Image.Resampling.BILINEAR)
        if (rh, rw) != (h, w):
            if rh < h or rw < w:
                raise ValueError(f"--resize_dims {rh},{rw} is smaller than the input's {h},{w}")
            top, left = (rh - h) // 2, (rw - w) // 2
            img = img.crop((left, top, left + w, top + h))
        x = np.asarray(img, dtype=np.float32).reshape(h, w, self.channels)
        if self.pixel_format == "bgr":
            x = x[:, :, ::-1]
        x = (x - np.asarray(self.mean, np.float32)) * np.asarray(self.scale, np.float32)
        if self.channel_format == "nchw":
            x = x.transpose(2, 0, 1)
        batch = self.input_shape[0]
        return np.ascontiguousarray(np.broadcast_to(x, (batch, *x.shape)), dtype=np.float32)

