"""Fast random (version 4) UUIDs for records.

``uuid.uuid4()`` reads ``os.urandom`` on every call, a system call that costs about 12 us on
this kind of virtual machine: a tenth of an experiment's per-row overhead. Record ids need
uniqueness, not secrecy, so they come from ``random`` (Mersenne Twister, seeded from the OS
and reseeded in forked children), with 122 random bits.
"""

from __future__ import annotations

import random
import uuid


def new_id() -> uuid.UUID:
    return uuid.UUID(bytes=random.randbytes(16), version=4)
