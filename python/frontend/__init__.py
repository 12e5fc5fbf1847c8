"""Model frontends (ONNX import and reference execution)."""
