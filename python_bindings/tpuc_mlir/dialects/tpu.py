"""Typed builders of the Tpu dialect (generated from its ODS)."""
from ._tpu_ops_gen import *  # noqa: F401,F403
