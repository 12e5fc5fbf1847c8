"""Runnable examples (`python -m tpuc.examples.train`)."""
