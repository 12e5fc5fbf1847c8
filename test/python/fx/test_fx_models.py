"""Whole models through torch.compile(backend=aot_backend): torchvision CNNs,
a ViT and a transformers BERT encoder (random weights, small inputs) match
eager PyTorch at cosine >= 0.99999 with every op on the chip."""
import pytest
import torch

from tpuc.dynamo import aot_backend, cache

from conftest import cosine, randomize, torchvision_models
from tpuc.testing import real_models

COSINE_MIN = 0.99999


def _vision(name):
    models = torchvision_models()
    if name == "vit":
        return models.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                        hidden_dim=32, mlp_dim=64, num_classes=10)
    return getattr(models, name)(num_classes=10)


def _bert():
    transformers = real_models.transformers()
    config = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64,
                                     max_position_embeddings=32)
    return transformers.BertModel(config)


def _compile_and_compare(model, inputs, chip="tpu_edge"):
    with torch.no_grad():
        want = model(*inputs)
        got = torch.compile(model, backend=aot_backend, dynamic=False,
                            options={"chip": chip})(*inputs)
    return want, got


@pytest.mark.slow
@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v2", "vit"])
def test_torchvision_model(name, tpuc_log):
    model = randomize(_vision(name))
    x = torch.randn(2, 3, 32, 32, generator=torch.Generator().manual_seed(1))
    want, got = _compile_and_compare(model, (x,))
    assert got.shape == want.shape and got.dtype == want.dtype
    assert cosine(got, want) >= COSINE_MIN
    assert cache.STATS.compiles >= 1
    assert "1 device subgraph(s)" in tpuc_log.text and "no CPU fallback" in tpuc_log.text


@pytest.mark.slow
def test_bert_encoder(tpuc_log):
    model = randomize(_bert())
    ids = torch.randint(0, 100, (2, 8), generator=torch.Generator().manual_seed(2))
    want, got = _compile_and_compare(model, (ids,), chip="tpu_pro")
    for w, g in ((want.last_hidden_state, got.last_hidden_state),
                 (want.pooler_output, got.pooler_output)):
        assert cosine(g, w) >= COSINE_MIN
    assert "no CPU fallback" in tpuc_log.text


@pytest.mark.slow
def test_bert_with_attention_mask_builds_the_mask_on_the_cpu(tpuc_log):
    """The boolean mask arithmetic runs on the CPU; the encoder on the chip."""
    model = randomize(_bert())
    ids = torch.randint(0, 100, (2, 8), generator=torch.Generator().manual_seed(3))
    mask = torch.ones(2, 8, dtype=torch.long)
    mask[1, 5:] = 0
    want, got = _compile_and_compare(model, (ids, mask))
    assert cosine(got.last_hidden_state, want.last_hidden_state) >= COSINE_MIN
    assert "CPU fallback: " in tpuc_log.text
