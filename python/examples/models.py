"""Models of the examples: torchvision ResNets and a transformers BERT
classifier built from configs with random weights (nothing downloaded)."""
from __future__ import annotations

import torch

from ..testing.real_models import torchvision_models


class WithLoss(torch.nn.Module):
    """model(inputs) → cross-entropy with `labels`: the loss and its
    backward (log-softmax, NLL) are part of the compiled graphs."""

    def __init__(self, model: torch.nn.Module):
        super().__init__()
        self.model = model

    def forward(self, inputs, labels):
        out = self.model(inputs)
        logits = out.logits if hasattr(out, "logits") else out
        return torch.nn.functional.cross_entropy(logits, labels)


def resnet(depth: str = "18", num_classes: int = 10) -> torch.nn.Module:
    """torchvision ResNet: "18", "50", or "small" (one BasicBlock a stage)."""
    models = torchvision_models()
    if depth == "small":
        return models.resnet.ResNet(models.resnet.BasicBlock, [1, 1, 1, 1],
                                    num_classes=num_classes)
    return getattr(models, f"resnet{depth}")(num_classes=num_classes)


BERT_CONFIGS = {
    "small": dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                  intermediate_size=64),
    "base": dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072),
    "large": dict(hidden_size=1024, num_hidden_layers=24, num_attention_heads=16,
                  intermediate_size=4096),
}


def bert(size: str = "small", vocab_size: int = 100, seq_len: int = 16,
         num_labels: int = 3) -> torch.nn.Module:
    """transformers BertForSequenceClassification from a config; dropout off
    (its random masks would differ between the two runs compared)."""
    torchvision_models()  # transformers imports torchvision when it is installed
    import transformers

    config = transformers.BertConfig(
        vocab_size=vocab_size, max_position_embeddings=max(seq_len, 32), num_labels=num_labels,
        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
        attn_implementation="eager", **BERT_CONFIGS[size])
    return transformers.BertForSequenceClassification(config)
