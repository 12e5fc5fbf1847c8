"""Test helpers: a model zoo built by code."""
