"""Layer groups as a Tpu module prints them: each `tpu.Group` region and
the ops it holds."""
import re

_OPEN = re.compile(r"\btpu\.Group\b.*\{$")
_SLICES = re.compile(r"\bh_slices = (\d+)")
_NSLICES = re.compile(r"\bn_slices = (\d+)")


def layer_groups(text: str) -> list[list[str]]:
    """The member op lines of every tpu.Group in `text`, in order."""
    groups: list[list[str]] = []
    members = None
    for line in text.splitlines():
        s = line.strip()
        if members is None:
            if _OPEN.search(s):
                members = []
        elif s.startswith("tpu.Yield"):
            groups.append(members)
            members = None
        else:
            members.append(s)
    return groups


def grouped_lines(text: str) -> list[str]:
    """The op lines of `text` that are members of a layer group."""
    return [line for group in layer_groups(text) for line in group]


def group_slices(text: str, axis: str = "h") -> list[int]:
    """The slice count along H (or N, `axis="n"`) of every tpu.Group in
    `text` (1: whole)."""
    pattern = _NSLICES if axis == "n" else _SLICES
    out = []
    for line in text.splitlines():
        s = line.strip()
        if _OPEN.search(s):
            m = pattern.search(s)
            out.append(int(m.group(1)) if m else 1)
    return out
