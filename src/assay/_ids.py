"""Fast random (version 4) UUIDs for records.

``uuid.uuid4()`` reads ``os.urandom`` on every call, a system call that costs about 12 us on
this kind of virtual machine: a tenth of an experiment's per-row overhead. Record ids need
uniqueness, not secrecy, so they come from a private Mersenne Twister seeded from the OS
(and reseeded in forked children): user code that calls ``random.seed`` neither repeats
our ids nor sees its own random stream consumed.
"""

from __future__ import annotations

import os
import random
import uuid

_rng = random.Random()
os.register_at_fork(after_in_child=_rng.seed)


def new_id() -> uuid.UUID:
    return uuid.UUID(int=_rng.getrandbits(128), version=4)
