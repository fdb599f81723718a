"""Record ids (``assay._ids.new_id``): version 7 UUIDs, RFC variant, the creation's Unix
milliseconds in the first 48 bits and 74 random bits after them (a guard of the layout:
the bits are drawn and placed by arithmetic that a slip would silently skew)."""

from __future__ import annotations

import time
import uuid

from assay._ids import new_id, new_id_text

RANDOM_BITS = [*range(0, 62), *range(64, 76)]  # rand_b, then rand_a (RFC 9562)


def test_ids_are_version_7_with_the_time_and_every_random_bit_in_use() -> None:
    before = time.time_ns() // 1_000_000
    ids = [new_id() for _ in range(2000)] + [uuid.UUID(new_id_text()) for _ in range(2000)]
    after = time.time_ns() // 1_000_000
    assert all(i.version == 7 and i.variant == uuid.RFC_4122 for i in ids)
    assert all(before <= i.int >> 80 <= after for i in ids)
    assert len(set(ids)) == len(ids)
    for bit in RANDOM_BITS:  # each random bit is 0 in some ids and 1 in others
        ones = sum(i.int >> bit & 1 for i in ids)
        assert 0 < ones < len(ids), bit
    assert all(isinstance(i, uuid.UUID) and str(uuid.UUID(str(i))) == str(i) for i in ids[:10])
