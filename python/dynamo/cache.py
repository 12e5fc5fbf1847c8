"""Compile cache of device subgraphs: in memory and on disk.

The key covers everything the binary depends on: the graph's code (identical
across batch sizes, so never enough alone), every runtime input's shape,
dtype and stride, the constants' contents, the compiler version (package
version and the native libraries' identity) and the chip file. On disk each
entry is a directory `$TPUC_CACHE_DIR/<key>/` holding the stage files and
`entry.json`; a second process finds it there and compiles nothing.
"""
from __future__ import annotations

import getpass
import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Callable, Sequence

import torch

from .. import runtime as rt

log = logging.getLogger(__name__)

ENTRY_FILE = "entry.json"


@dataclass
class CacheStats:
    compiles: int = 0
    memory_hits: int = 0
    disk_hits: int = 0
    compile_seconds: list[float] = field(default_factory=list)


STATS = CacheStats()
_MEMORY: dict[str, object] = {}


def cache_dir() -> Path:
    d = os.environ.get("TPUC_CACHE_DIR")
    return Path(d) if d else Path(tempfile.gettempdir()) / f"tpuc_cache_{getpass.getuser()}"


@lru_cache(maxsize=None)
def compiler_version() -> str:
    """tpuc's version and the identity (size, mtime) of its native libraries:
    a rebuilt compiler gets new keys."""
    try:
        version = metadata.version("tpuc")
    except metadata.PackageNotFoundError:
        version = "unknown"
    here = Path(__file__).resolve().parent.parent
    libs = sorted(p for pattern in ("_runtime*.so", "mlir/_mlir_libs/libTpuc*.so*",
                                    "mlir/_mlir_libs/_tpuc*.so")
                  for p in here.glob(pattern))
    ids = []
    for p in libs:
        st = Path(os.path.realpath(p)).stat()
        ids.append(f"{p.name}:{st.st_size}:{st.st_mtime_ns}")
    return f"{version};{','.join(ids)}"


@lru_cache(maxsize=None)
def chip_digest(chip: str) -> str:
    return hashlib.sha256(rt.chip_path(chip).read_bytes()).hexdigest()


def tensor_digest(t: torch.Tensor) -> str:
    t = t.detach().cpu().contiguous()
    h = hashlib.blake2b(digest_size=16)
    h.update(f"{tuple(t.shape)}{t.dtype}".encode())
    h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def graph_key(code: str, inputs: Sequence, constants: dict[str, torch.Tensor],
              chip: str) -> str:
    """The cache key of a device subgraph; `inputs` are the runtime inputs
    (real or fake tensors)."""
    h = hashlib.sha256()
    h.update(code.encode())
    for t in inputs:
        h.update(f"|{tuple(t.shape)}:{t.dtype}:{tuple(t.stride())}".encode())
    for name in sorted(constants):
        h.update(f"|{name}={tensor_digest(constants[name])}".encode())
    h.update(f"|{compiler_version()}|{chip}:{chip_digest(chip)}".encode())
    return h.hexdigest()[:32]


def lookup_or_compile(key: str, compile_fn: Callable[[Path], dict],
                      load_fn: Callable[[Path, dict], object]):
    """The loaded program for `key`: from memory, else from disk, else
    `compile_fn(directory)` writes the files and returns the entry (a JSON
    dict) that `load_fn(directory, entry)` turns into the program."""
    if key in _MEMORY:
        STATS.memory_hits += 1
        return _MEMORY[key]
    directory = cache_dir() / key
    entry_path = directory / ENTRY_FILE
    if entry_path.is_file():
        try:
            entry = json.loads(entry_path.read_text())
            program = load_fn(directory, entry)
            STATS.disk_hits += 1
            log.debug("disk cache hit %s", directory)
            _MEMORY[key] = program
            return program
        except (OSError, ValueError, KeyError, rt.ChipError) as e:
            log.warning("ignoring unreadable cache entry %s: %s", directory, e)
    directory.mkdir(parents=True, exist_ok=True)
    entry = compile_fn(directory)
    STATS.compiles += 1
    # Written last and atomically: a directory without entry.json is unfinished.
    tmp = directory / f".{ENTRY_FILE}.{os.getpid()}"
    tmp.write_text(json.dumps(entry))
    os.replace(tmp, entry_path)
    program = load_fn(directory, entry)
    _MEMORY[key] = program
    return program


def clear_memory() -> None:
    """Forgets the in-memory entries (the disk cache stays) and zeroes the
    statistics."""
    _MEMORY.clear()
    STATS.compiles = STATS.memory_hits = STATS.disk_hits = 0
    STATS.compile_seconds.clear()
