"""Real architectures from torchvision and transformers, random weights.

Each entry builds a model from its library's own definition (small inputs,
small configs where the library allows), gives it random weights and
exports it to ONNX the usual way (`torch.onnx.export`, TorchScript exporter,
constant folding on, as users export). Nothing is downloaded.

    >>> path, inputs = export("resnet18", "/tmp/models")
"""
from __future__ import annotations

import importlib.util
import sys
import types
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np


OPSET = 17


def torchvision_models():
    """torchvision.models without running torchvision/__init__: the PyPI
    wheel's C extension needs a CUDA torch, the model definitions do not."""
    try:
        import torchvision.models as models
        return models
    except (ImportError, RuntimeError, OSError):
        pass
    spec = importlib.util.find_spec("torchvision")
    if spec is None:
        raise ImportError("torchvision is not installed (scripts/bootstrap.sh installs it)")
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    pkg = types.ModuleType("torchvision")
    pkg.__path__ = list(spec.submodule_search_locations)
    pkg.__spec__ = spec
    sys.modules["torchvision"] = pkg
    import torchvision.models as models
    return models


def transformers():
    torchvision_models()  # transformers imports torchvision when it is installed
    import transformers as tf
    return tf


def randomize(model, seed: int = 0, var_decades: float = 0.0):
    """Random weights everywhere (torchvision zero-initializes some heads and
    biases, which would make outputs trivially equal), BN statistics
    included; eval mode. BN variances are uniform in [0.5, 1.5), or with
    `var_decades` > 0 log-uniform over that many decades around 1, so that
    channels of one tensor differ in range as trained networks' do."""
    import torch
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, t in list(model.named_parameters()) + list(model.named_buffers()):
            if not t.is_floating_point():
                continue
            if name.endswith("running_var") and var_decades > 0:
                u = torch.rand(t.shape, generator=g) - 0.5
                t.copy_(10.0 ** (u * var_decades))
            elif name.endswith("running_var"):
                t.copy_(torch.rand(t.shape, generator=g) + 0.5)
            elif t.dim() >= 2:
                fan_in = t[0].numel()
                t.copy_(torch.randn(t.shape, generator=g) / fan_in ** 0.5)
            else:
                t.copy_(torch.randn(t.shape, generator=g) * 0.2 + (1.0 if "weight" in name else 0))
    return model.eval()


@dataclass(frozen=True)
class RealModel:
    name: str
    build: Callable[[], object]          # -> torch.nn.Module
    inputs: Callable[[], dict]           # -> {input name: np.ndarray}
    output_names: tuple[str, ...]
    slow: bool = False


def _image(shape=(1, 3, 64, 64)):
    return lambda: {"image": np.random.default_rng(0).standard_normal(shape).astype(np.float32)}


def _tv(name, **kw):
    return lambda: getattr(torchvision_models(), name)(**kw)


def _tv_segmentation(name, **kw):
    def build():
        import torch
        seg = torchvision_models().segmentation
        inner = getattr(seg, name)(weights=None, weights_backbone=None, **kw)

        class Out(torch.nn.Module):  # the dict output as a tensor
            def __init__(self):
                super().__init__()
                self.m = inner

            def forward(self, x):
                return self.m(x)["out"]
        return Out()
    return build


def _vit():
    return torchvision_models().VisionTransformer(
        image_size=32, patch_size=8, num_layers=2, num_heads=2, hidden_dim=32,
        mlp_dim=64, num_classes=10)


def _swin():
    """Swin-T's blocks at a small width: two stages, 4x4 windows over 8x8
    patches, so shifted windows (and their attention masks) are exercised."""
    swin = torchvision_models().swin_transformer
    return swin.SwinTransformer(patch_size=[4, 4], embed_dim=32, depths=[2, 2],
                                num_heads=[2, 4], window_size=[4, 4], num_classes=10)


def _convnext():
    """ConvNeXt's blocks (depthwise 7x7, LayerNorm, MLP, layer scale), two
    small stages."""
    cn = torchvision_models().convnext
    return cn.ConvNeXt([cn.CNBlockConfig(32, 64, 2), cn.CNBlockConfig(64, None, 2)],
                       num_classes=10)


def _text_inputs(batch=1, seq=8, vocab=100, mask=True, token_types=False):
    def make():
        rng = np.random.default_rng(0)
        d = {"input_ids": rng.integers(0, vocab, (batch, seq)).astype(np.int64)}
        if mask:
            m = np.ones((batch, seq), np.int64)
            m[-1, seq - 3:] = 0
            d["attention_mask"] = m
        if token_types:
            t = np.zeros((batch, seq), np.int64)
            t[:, seq // 2:] = 1
            d["token_type_ids"] = t
        return d
    return make


def _named_outputs(model, arg_names, outputs, **fixed):
    """A transformers model taking `arg_names` positionally and returning
    its `outputs` fields as a tuple (what torch.onnx.export traces)."""
    import torch

    class Wrapped(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.m = model

        def forward(self, *args):
            r = self.m(**dict(zip(arg_names, args)), **fixed)
            return tuple(getattr(r, o) for o in outputs)
    return Wrapped()


def _bert():
    tf = transformers()
    cfg = tf.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64,
                        max_position_embeddings=32)
    return _named_outputs(tf.BertModel(cfg), ("input_ids", "attention_mask", "token_type_ids"),
                          ("last_hidden_state", "pooler_output"))


def _gpt2():
    tf = transformers()
    cfg = tf.GPT2Config(vocab_size=100, n_positions=32, n_embd=32, n_layer=2, n_head=2,
                         bos_token_id=0, eos_token_id=0)
    return _named_outputs(tf.GPT2Model(cfg), ("input_ids", "attention_mask"),
                          ("last_hidden_state",), use_cache=False)


def _whisper_encoder():
    tf = transformers()
    cfg = tf.WhisperConfig(vocab_size=100, d_model=32, encoder_layers=2,
                           encoder_attention_heads=2, encoder_ffn_dim=64,
                           decoder_layers=1, decoder_attention_heads=2,
                           decoder_ffn_dim=64, num_mel_bins=16, max_source_positions=16,
                           pad_token_id=0, bos_token_id=0, eos_token_id=0,
                           decoder_start_token_id=0)
    return _named_outputs(tf.WhisperModel(cfg).get_encoder(), ("input_features",),
                          ("last_hidden_state",))


def _lstm():
    import torch

    class Tagger(torch.nn.Module):
        """Embedding, a 2-layer bidirectional LSTM and a GRU, a linear head."""

        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(50, 16)
            self.lstm = torch.nn.LSTM(16, 24, num_layers=2, bidirectional=True,
                                      batch_first=True)
            self.gru = torch.nn.GRU(48, 16, batch_first=True)
            self.head = torch.nn.Linear(16, 5)

        def forward(self, ids):
            x, _ = self.lstm(self.emb(ids))
            x, h = self.gru(x)
            return self.head(x), h
    return Tagger()


MODELS: dict[str, RealModel] = {m.name: m for m in [
    RealModel("resnet18", _tv("resnet18", num_classes=10), _image(), ("logits",), slow=True),
    RealModel("mobilenet_v3_small", _tv("mobilenet_v3_small", num_classes=10), _image(),
              ("logits",), slow=True),
    RealModel("efficientnet_b0", _tv("efficientnet_b0", num_classes=10), _image(),
              ("logits",), slow=True),
    RealModel("regnet_y_400mf", _tv("regnet_y_400mf", num_classes=10), _image(),
              ("logits",), slow=True),
    RealModel("shufflenet_v2_x0_5", _tv("shufflenet_v2_x0_5", num_classes=10), _image(),
              ("logits",), slow=True),
    RealModel("densenet121", _tv("densenet121", num_classes=10), _image(),
              ("logits",), slow=True),
    RealModel("convnext", _convnext, _image(), ("logits",), slow=True),
    RealModel("vit", _vit, _image((1, 3, 32, 32)), ("logits",)),
    RealModel("swin", _swin, _image((1, 3, 32, 32)), ("logits",), slow=True),
    RealModel("deeplabv3_mobilenet", _tv_segmentation("deeplabv3_mobilenet_v3_large",
                                                      num_classes=4),
              _image(), ("out",), slow=True),
    RealModel("bert", _bert, _text_inputs(batch=2, token_types=True),
              ("last_hidden_state", "pooler_output")),
    RealModel("gpt2", _gpt2, _text_inputs(), ("last_hidden_state",)),
    RealModel("whisper_encoder", _whisper_encoder,
              lambda: {"input_features": np.random.default_rng(0).standard_normal(
                  (1, 16, 32)).astype(np.float32)}, ("last_hidden_state",)),
    RealModel("lstm_tagger", _lstm,
              lambda: {"ids": np.random.default_rng(0).integers(0, 50, (1, 6)).astype(np.int64)},
              ("logits", "hidden")),
]}


def export(name: str, out_dir: str | Path, opset: int = OPSET,
           image_size: int | None = None) -> tuple[Path, dict]:
    """Exports `name` to `<out_dir>/<name>.onnx`; returns the path and its
    test inputs. `image_size` replaces an image model's test input by a
    random `image_size` x `image_size` one."""
    import torch
    spec = MODELS[name]
    model = randomize(spec.build())
    inputs = spec.inputs()
    if image_size is not None:
        (key, x), = inputs.items()
        inputs = {key: np.random.default_rng(0).standard_normal(
            (*x.shape[:2], image_size, image_size)).astype(np.float32)}
    path = Path(out_dir) / f"{name}.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    args = tuple(torch.from_numpy(v) for v in inputs.values())
    # Gradients stay enabled: under no_grad torch.nn.MultiheadAttention takes
    # a fused fast path that has no ONNX form.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(path), dynamo=False, opset_version=opset,
                          input_names=list(inputs), output_names=list(spec.output_names))
    return path, inputs
