"""Typed builders of the Top dialect (generated from its ODS)."""
from ._top_ops_gen import *  # noqa: F401,F403
