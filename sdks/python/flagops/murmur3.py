"""
Bucketing: MurmurHash3 x86 32-bit (seed 0) over the UTF-8 bytes of a string, and the bucket it gives a user.

A hash can resume from a saved state, so the evaluator absorbs ``"<flagKey>/"`` once per snapshot and hashes
only the user id on each call. Strings are encoded as JavaScript's TextEncoder does: a lone surrogate becomes
U+FFFD, so every SDK and the server agree on the bytes of any string JSON can carry.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_M32 = 0xFFFFFFFF


class Murmur3State(NamedTuple):
    """The hash state between blocks: ``h`` after the whole 4-byte blocks, the pending ``tail`` bytes (0 to 3)."""

    h: int
    tail: bytes
    length: int


def utf8(s: str) -> bytes:
    """UTF-8 bytes of ``s``; lone surrogates encode as U+FFFD (as TextEncoder and Go's []byte(string) do)."""
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:
        # Joins surrogate pairs that arrived as two code points, and replaces the lone ones with U+FFFD.
        return s.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace").encode("utf-8")


# Unpackers of n little-endian words, for the usual lengths (flag key plus user id); longer input iterates.
_WORDS = [struct.Struct(f"<{n}I").unpack_from for n in range(33)]


def _blocks(h: int, data: bytes, end: int) -> int:
    """Mixes the 4-byte blocks of ``data[:end]`` (``end`` a multiple of 4) into ``h``."""
    n = end >> 2
    words = _WORDS[n](data) if n < 33 else (w for (w,) in struct.iter_unpack("<I", data[:end]))
    for k in words:
        k = (k * _C1) & _M32
        k = ((((k << 15) & _M32) | (k >> 17)) * _C2) & _M32
        h ^= k
        h = ((((h << 13) & _M32) | (h >> 19)) * 5 + 0xE6546B64) & _M32
    return h


def _finish(h: int, tail: bytes, length: int) -> int:
    if tail:
        k = int.from_bytes(tail, "little")
        k = (k * _C1) & _M32
        k = ((k << 15) | (k >> 17)) & _M32
        k = (k * _C2) & _M32
        h ^= k
    h ^= length & _M32
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _M32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _M32
    h ^= h >> 16
    return h


def absorb(s: str, seed: int = 0) -> Murmur3State:
    """Absorbs ``s`` without finishing, for :func:`resume`."""
    data = utf8(s)
    end = len(data) & ~3
    return Murmur3State(_blocks(seed & _M32, data, end), data[end:], len(data))


def resume(state: Murmur3State, s: str) -> int:
    """The unsigned 32-bit hash of the absorbed prefix followed by ``s``."""
    # The hot path of every bucket: one function, no calls but the encoding and the unpacking of the words.
    h, tail, length = state
    try:
        data = tail + s.encode("utf-8")
    except UnicodeEncodeError:
        data = tail + utf8(s)
    n = len(data)
    end = n & ~3
    words = _WORDS[end >> 2](data) if end < 132 else (w for (w,) in struct.iter_unpack("<I", data[:end]))
    for k in words:
        k = (k * 0xCC9E2D51) & 0xFFFFFFFF
        k = ((((k << 15) | (k >> 17)) & 0xFFFFFFFF) * 0x1B873593) & 0xFFFFFFFF
        h ^= k
        h = ((((h << 13) | (h >> 19)) & 0xFFFFFFFF) * 5 + 0xE6546B64) & 0xFFFFFFFF
    if n & 3:
        k = (int.from_bytes(data[end:], "little") * 0xCC9E2D51) & 0xFFFFFFFF
        h ^= ((((k << 15) | (k >> 17)) & 0xFFFFFFFF) * 0x1B873593) & 0xFFFFFFFF
    h ^= (length + n - len(tail)) & 0xFFFFFFFF
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & 0xFFFFFFFF
    return h ^ (h >> 16)


def murmur3_32(s: str, seed: int = 0) -> int:
    """MurmurHash3 x86 32-bit (unsigned) of the UTF-8 encoding of ``s``."""
    data = utf8(s)
    end = len(data) & ~3
    return _finish(_blocks(seed & _M32, data, end), data[end:], len(data))


def bucket(flag_key: str, user_id: str) -> float:
    """A user's bucket for a flag: ``(murmur3("<flagKey>/<userId>") mod 10000) / 100``, in [0, 100) with two decimals."""
    return murmur3_32(f"{flag_key}/{user_id}") % 10000 / 100
