"""Progress bars for steps that can take seconds (tqdm on stderr).

A bar appears only when stderr is a terminal, progress is not switched off
(``TPUC_PROGRESS=0``, or a tool's ``--quiet``), and the work has already
taken longer than ``DELAY`` seconds, so quick runs and logs stay clean.
"""
from __future__ import annotations

import os
import sys
from contextlib import contextmanager
from typing import Iterable, Iterator, Optional

from tqdm import tqdm

DELAY = 1.0  # seconds before a bar shows up
_enabled = os.environ.get("TPUC_PROGRESS", "1") not in ("0", "off", "false", "no")


def set_enabled(on: bool) -> None:
    """Switch every progress bar of this process on or off (e.g. --quiet)."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled and sys.stderr.isatty()


def bar(iterable: Optional[Iterable] = None, total: Optional[int] = None, desc: str = "",
        unit: str = "it", enable: bool = True) -> tqdm:
    """A tqdm bar (over `iterable` if given) following the rules above."""
    return tqdm(iterable, total=total, desc=desc, unit=unit, delay=DELAY, leave=False,
                disable=not (enable and enabled()), file=sys.stderr, dynamic_ncols=True)


class Stages:
    """A bar over the `total` stages of a flow: ``with stages.step("reference"):``."""

    def __init__(self, desc: str, total: int):
        self._bar = bar(total=total, desc=desc, unit="stage")
        self._desc = desc

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        # Show the running stage at once, unless the bar is still in its delay.
        shown = self._bar.format_dict["elapsed"] >= DELAY
        self._bar.set_description(f"{self._desc}: {name}", refresh=shown)
        yield
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> "Stages":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
