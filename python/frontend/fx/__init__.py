"""PyTorch frontend: ATen-level torch.fx graphs → Top (see `importer`)."""
from .importer import FxImporter, ImportedGraph, Output, import_graph
from .registry import REGISTRY, Param, Sample, op_name, packet_name, unsupported_reason

__all__ = ["FxImporter", "ImportedGraph", "Output", "import_graph", "REGISTRY", "Param",
           "Sample", "op_name", "packet_name", "unsupported_reason"]
