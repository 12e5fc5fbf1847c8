"""Which ATen ops a tool applies to, from its environment lists.

`OP_<TOOL>_LIST` selects and `OP_<TOOL>_DISABLE_LIST` excludes; each is a
comma list of op names (`aten.convolution`: every overload) or overload
names (`aten.convolution.default`), `::` accepted for `.`, and regular
expressions (matched against both names, whole). An unset or empty select
list selects every op.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass


def _patterns(text: str) -> list[re.Pattern]:
    out = []
    for item in text.split(","):
        item = item.strip().replace("::", ".")
        if not item:
            continue
        try:
            out.append(re.compile(item))
        except re.error as e:
            raise ValueError(f"op list entry {item!r} is not a regular expression: {e}") from None
    return out


@dataclass
class Selection:
    select: list[re.Pattern]
    exclude: list[re.Pattern]

    @classmethod
    def from_env(cls, tool: str) -> "Selection":
        """The lists of `OP_<tool>_LIST` / `OP_<tool>_DISABLE_LIST`."""
        return cls(_patterns(os.environ.get(f"OP_{tool}_LIST", "")),
                   _patterns(os.environ.get(f"OP_{tool}_DISABLE_LIST", "")))

    @staticmethod
    def _hit(patterns: list[re.Pattern], names: tuple[str, ...]) -> bool:
        return any(p.fullmatch(n) for p in patterns for n in names)

    def matches(self, packet: str, overload: str) -> bool:
        """Whether the op `packet` (aten.add) / `overload` (aten.add.Tensor) is selected."""
        names = (packet, overload)
        if self.select and not self._hit(self.select, names):
            return False
        return not self._hit(self.exclude, names)

    def key(self) -> tuple:
        return (tuple(p.pattern for p in self.select), tuple(p.pattern for p in self.exclude))
