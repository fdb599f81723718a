"""Time-ordered (version 7) UUIDs for records, and content-ordered (version 8) ones for
inline data's examples.

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
# Below the version's 4 bits: 12 random bits, the variant's 2, 62 random bits. 76 random
# bits are drawn at once and the variant's 2 of them replaced.
_RANDOM_76 = ((1 << 76) - 1) & ~(0b11 << 62)
_VERSION_AND_VARIANT = _VERSION_7 | _VARIANT_RFC


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
    return (time.time_ns() // 1_000_000) << 80 | _VERSION_AND_VARIANT | (_rng.getrandbits(76) & _RANDOM_76)


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
    made in range here (the ids inline data's examples had before ``content_id_texts``)."""
    digest = hashlib.sha1(namespace.bytes + name.encode("utf-8"), usedforsecurity=False).digest()
    value = int.from_bytes(digest[:16], "big")
    value = (value & _NOT_VERSION_AND_VARIANT) | _VERSION_5 | _VARIANT_RFC
    made = object.__new__(uuid.UUID)
    _set_int(made, value)
    _set_is_safe(made, _UNKNOWN_SAFETY)
    return made


_VARIANT = {digit: "89ab"[int(digit, 16) & 0b11] for digit in "0123456789abcdef"}
"""A digest's 17th hex digit with the RFC variant's two bits set over its top two."""

_VERSION_5 = 0x5 << 76
_NOT_VERSION_AND_VARIANT = ~((0xF << 76) | (0b11 << 62)) & ((1 << 128) - 1)


POSITION_DIGITS = 8
"""Hex digits of the position at the end of a content id: up to 2**32 examples."""
MAX_POSITIONS = 16**POSITION_DIGITS


def content_id_texts(digest: str) -> Callable[[int], str]:
    """The ids of inline data's examples as ``text(position)``: version 8 UUIDs (RFC 9562)
    that start with the content's SHA-256 ``digest`` (64 hex digits) and end with the
    position in 8 hex digits, so one dataset's ids are consecutive in the examples'
    ``(dataset_id, id)`` index (an insert appends where the last one went, where
    version 5 ids of each position landed anywhere in it) and sort in position order.

    As a number: the digest's first 96 bits with the version and variant bits set over
    theirs (as version 5 sets them over SHA-1's), shifted left 32 bits, plus the position.

    The same content gives the same ids (a rerun finds its examples and resumes); two
    contents share ids only if their digests agree on the 90 bits kept. Finding such a
    pair costs about 2**45 hashes of chosen data, one that matches a given dataset 2**90;
    the schema allows one id in two datasets anyway (ids are unique within a dataset:
    the same content under two file names shares them)."""
    d = digest
    if len(d) != 64:
        raise ValueError(f"not a SHA-256 hex digest: {digest!r}")
    prefix = f"{d[:8]}-{d[8:12]}-8{d[13:16]}-{_VARIANT[d[16]]}{d[17:20]}-{d[20:24]}"
    return f"{prefix}{{:0{POSITION_DIGITS}x}}".format
