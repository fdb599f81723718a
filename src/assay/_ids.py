"""Time-ordered (version 7) UUIDs for records.

Run ids are the primary key of the runs table: random (version 4) keys land all over its
B-tree, so every insert touches a different page and writes slow down as the table grows
(38 us a row for the first 100k rows, 90-128 us towards 1M). A version 7 UUID starts with
the Unix time in milliseconds, so new keys append at the right edge of the index, and its
text form sorts by creation time too.

The 74 bits after the timestamp are random, drawn from a private Mersenne Twister seeded
from the OS (and reseeded in forked children): ``uuid.uuid4()`` reads ``os.urandom`` on
every call, a system call that costs about 12 us on this kind of virtual machine, and
record ids need uniqueness, not secrecy. User code that calls ``random.seed`` neither
repeats our ids nor sees its own random stream consumed. No counter is shared between
threads, so no lock is needed: two ids of one millisecond differ in 74 random bits.
"""

from __future__ import annotations

import hashlib
import os
import random
import time
import uuid
from collections.abc import Callable

_rng = random.Random()
os.register_at_fork(after_in_child=_rng.seed)

_VERSION_7 = 0x7 << 76
_VARIANT_RFC = 0b10 << 62
_RAND_A = (1 << 12) - 1
_RAND_B = (1 << 62) - 1


def new_id() -> uuid.UUID:
    """A version 7 UUID: 48 bits of Unix milliseconds, then random bits."""
    # What uuid.UUID(int=value) does, without re-checking a value built in range.
    made = object.__new__(uuid.UUID)
    _set_int(made, _version_7())
    _set_is_safe(made, _UNKNOWN_SAFETY)
    return made


def new_id_text() -> str:
    """``str(new_id())``, written from the number with no UUID made (examples added in
    bulk are stored, and answered, by their ids' text)."""
    digits = f"{_version_7():032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


def _version_7() -> int:
    millis = time.time_ns() // 1_000_000
    bits = _rng.getrandbits(74)
    return (millis << 80) | _VERSION_7 | ((bits >> 62) & _RAND_A) << 64 | _VARIANT_RFC | (bits & _RAND_B)


def stored_uuid(text: str) -> uuid.UUID:
    """A UUID from the text the store writes (``str(uuid)``): what ``uuid.UUID(text)``
    makes, without its handling of braces and URN prefixes (a third of its cost, paid
    for every example a run reads). Raises ValueError where ``uuid.UUID`` would."""
    digits = text.replace("-", "")
    if len(digits) != 32:
        raise ValueError(f"not a stored UUID: {text!r}")
    made = object.__new__(uuid.UUID)
    _set_int(made, int(digits, 16))
    _set_is_safe(made, _UNKNOWN_SAFETY)
    return made


# UUID's two slots, set through their descriptors (no lookup by name per call).
_set_int = uuid.UUID.__dict__["int"].__set__
_set_is_safe = uuid.UUID.__dict__["is_safe"].__set__
_UNKNOWN_SAFETY = uuid.SafeUUID.unknown  # an enum member: looked up once, not per id


def name_based_id(namespace: uuid.UUID, name: str) -> uuid.UUID:
    """``uuid.uuid5(namespace, name)``, built without ``uuid.UUID``'s checks of a value
    made in range here (half its cost, paid for every example of inline data)."""
    digest = hashlib.sha1(namespace.bytes + name.encode("utf-8"), usedforsecurity=False).digest()
    value = int.from_bytes(digest[:16], "big")
    value = (value & _NOT_VERSION_AND_VARIANT) | _VERSION_5 | _VARIANT_RFC
    made = object.__new__(uuid.UUID)
    _set_int(made, value)
    _set_is_safe(made, _UNKNOWN_SAFETY)
    return made


def name_based_text(namespace: uuid.UUID, name: str) -> str:
    """``str(uuid.uuid5(namespace, name))``, written from the digest's hex digits with no
    UUID made (inline data names each of its examples so; only the text is stored)."""
    digits = hashlib.sha1(namespace.bytes + name.encode("utf-8"), usedforsecurity=False).hexdigest()
    return _version_5_text(digits)


def numbered_name_texts(namespace: uuid.UUID, prefix: str) -> Callable[[int], str]:
    """``name_based_text(namespace, f"{prefix}{number}")`` as ``text(number)``: the
    namespace and the prefix (inline data's 64-digit content digest) are hashed once, and
    each number continues a copy of that hash (half the cost of hashing every name whole)."""
    started = hashlib.sha1(namespace.bytes + prefix.encode("utf-8"), usedforsecurity=False)

    def text(number: int) -> str:
        hashed = started.copy()
        hashed.update(b"%d" % number)
        d = hashed.hexdigest()  # _version_5_text, inline: one call an example fewer
        return f"{d[:8]}-{d[8:12]}-5{d[13:16]}-{_VARIANT[d[16]]}{d[17:20]}-{d[20:32]}"

    return text


def _version_5_text(digits: str) -> str:
    """A SHA-1 digest's hex digits as a version 5 UUID's text."""
    return (
        f"{digits[:8]}-{digits[8:12]}-5{digits[13:16]}-{_VARIANT[digits[16]]}{digits[17:20]}-{digits[20:32]}"
    )


_VARIANT = {digit: "89ab"[int(digit, 16) & 0b11] for digit in "0123456789abcdef"}
"""A digest's 17th hex digit with the RFC variant's two bits set over its top two."""


_VERSION_5 = 0x5 << 76
_NOT_VERSION_AND_VARIANT = ~((0xF << 76) | (0b11 << 62)) & ((1 << 128) - 1)
