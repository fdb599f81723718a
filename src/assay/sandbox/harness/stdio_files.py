"""A checker program's start, inside its own sandbox: the test's input, the candidate's
output and the expected answer arrive on descriptors 3, 4 and 5; written to files in
the job's folder, they are handed to the checker testlib-style:
``checker input.txt output.txt answer.txt``.

``main()``, argv ARGV_JSON (booted like ``build.py``), then exec the checker.
"""

from __future__ import annotations

import json
import os
import sys

STREAMS = ((3, "input.txt"), (4, "output.txt"), (5, "answer.txt"))
CHUNK = 1 << 16


def copy_to_file(fd: int, name: str) -> str:
    with open(name, "wb") as target:
        while True:
            chunk = os.read(fd, CHUNK)
            if not chunk:
                break
            target.write(chunk)
    os.close(fd)
    return os.path.join(os.getcwd(), name)


def main() -> int:
    argv = [str(part) for part in json.loads(sys.argv[1])]
    paths = [copy_to_file(fd, name) for fd, name in STREAMS]
    for path in paths:
        os.chmod(path, 0o400)  # the checker reads them; a checker bug does not change them
    sys.stdout.flush()
    os.execve(argv[0], [*argv, *paths], dict(os.environ))
    return 127
