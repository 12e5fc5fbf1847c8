"""Byte-level access to a .bmodel for crafting damaged files (tests, fuzzing).

Layout in docs/bmodel.md: a 40-byte header (magic, version, header size,
payload size, FNV-1a 64 checksum, section count, reserved) then sections of
``u32 tag, u32 flags, u64 length, body``. ``reseal`` recomputes the payload
size and checksum, so a mutation reaches the checks behind the checksum.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass

HEADER_BYTES = 40


def fnv1a64(data: bytes) -> int:
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


@dataclass
class Section:
    offset: int  # of the section's 16-byte head in the file
    tag: bytes
    flags: int
    length: int

    @property
    def body(self) -> int:
        return self.offset + 16


def sections(data: bytes) -> list[Section]:
    """The sections of a well-formed file, in order."""
    count = struct.unpack_from("<I", data, 32)[0]
    out, pos = [], HEADER_BYTES
    for _ in range(count):
        tag, flags, length = struct.unpack_from("<4sIQ", data, pos)
        out.append(Section(pos, tag, flags, length))
        pos += 16 + length
    return out


def reseal(data: bytes | bytearray, count: int | None = None) -> bytes:
    """``data`` with the header's payload size, checksum (and optionally the
    section count) made consistent with its payload."""
    b = bytearray(data)
    payload = bytes(b[HEADER_BYTES:])
    struct.pack_into("<QQ", b, 16, len(payload), fnv1a64(payload))
    if count is not None:
        struct.pack_into("<I", b, 32, count)
    return bytes(b)
