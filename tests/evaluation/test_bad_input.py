"""Bad data files: a byte that is not UTF-8 is named by file, line and offset in the file
(not an offset in some decoding chunk), in JSONL, CSV and JSON alike; a CSV header is
checked in time linear in its size, so a million columns are read in seconds of CPU and
memory proportional to one row."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from assay.evaluation import DataError
from assay.evaluation._data import load_file

LINES = 40_001


def with_bad_byte(path: Path, lines: list[bytes], at_line: int, column: int) -> int:
    """Write ``lines``, with byte 0xff put at ``column`` (from 0) of line ``at_line`` (from
    1); returns that byte's offset in the file."""
    before = sum(len(line) for line in lines[: at_line - 1])
    bad = lines[at_line - 1]
    lines[at_line - 1] = bad[:column] + b"\xff" + bad[column:]
    path.write_bytes(b"".join(lines))
    return before + column


def test_jsonl_names_the_line_and_the_offset_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    lines = [json.dumps({"inputs": {"q": f"é{i}"}}).encode() + b"\n" for i in range(LINES)]
    offset = with_bad_byte(path, lines, LINES, 15)
    with pytest.raises(DataError) as caught:
        load_file(path)
    message = str(caught.value)
    assert f"data.jsonl:{LINES}: not UTF-8 text" in message
    assert f"byte 0xff at offset {offset} of the file, column 16 of the line" in message


def test_csv_names_the_line_and_the_offset_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data.csv"
    lines = [b"\xef\xbb\xbfq,outputs.a\n"] + [f"q{i},a{i}\n".encode() for i in range(LINES - 1)]
    offset = with_bad_byte(path, lines, LINES, 2)
    with pytest.raises(DataError) as caught:
        load_file(path)
    assert f"data.csv:{LINES}: not UTF-8 text" in str(caught.value)
    assert f"at offset {offset} of the file, column 3 of the line" in str(caught.value)
    path.write_bytes(b'\xef\xbb\xbfq,outputs.a\n"two\nlines",x\n')  # a BOM, a quoted newline
    assert load_file(path) == [{"inputs": {"q": "two\nlines"}, "outputs": {"a": "x"}}]


def test_json_names_the_line_and_the_offset_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    lines = [b"[\n"] + [b'{"inputs": {"q": 1}},\n' for _ in range(99)] + [b'{"inputs": {"q": 2}}\n', b"]\n"]
    offset = with_bad_byte(path, lines, 50, 18)
    with pytest.raises(DataError, match=f"data.json:50: not UTF-8 text .* at offset {offset} of the file"):
        load_file(path)


WIDE = """
    import resource, sys, tracemalloc
    from pathlib import Path
    resource.setrlimit(resource.RLIMIT_CPU, (60, 60))  # CPU seconds: a quadratic check never ends
    from assay.evaluation._data import load_file
    columns = int(sys.argv[2])
    path = Path(sys.argv[1])
    with path.open("w") as handle:
        handle.write(",".join(f"c{i}" for i in range(columns)) + "\\n")
        for row in range(2):
            handle.write(",".join("x" for _ in range(columns)) + "\\n")
    tracemalloc.start()
    records = load_file(path)
    peak = tracemalloc.get_traced_memory()[1]
    assert len(records) == 2 and len(records[0]["inputs"]) == columns
    print(peak)
"""


@pytest.mark.slow
def test_a_million_column_csv_is_read_in_linear_time_and_bounded_memory(tmp_path: Path) -> None:
    columns = 1_000_000
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(WIDE), str(tmp_path / "wide.csv"), str(columns)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    peak = int(done.stdout.strip())
    assert peak < 1500 * columns  # a few records' worth of per-column objects, not more
