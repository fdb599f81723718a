"""CSV files as spreadsheets save them: the delimiter (comma, semicolon, tab, pipe) is read
from the header, and a row of the wrong length names the file, the line, the count and
the delimiter."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from assay import Client
from assay.evaluation import DataError
from assay.evaluation._csv_dialect import sniff_delimiter


def echo(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"answer": inputs["question"]}


@pytest.mark.parametrize("delimiter", [";", "\t", "|", ","])
def test_each_delimiter_reads_as_columns(tmp_path: Path, delimiter: str) -> None:
    rows = [
        ["question", "outputs.answer", "metadata.source"],
        ["Paris", "Paris", "atlas"],
        ['"Rome, Italy"', '"Rome, Italy"', '"a; b"'],  # quoted values holding , and ;
    ]
    path = tmp_path / "qa.csv"
    path.write_text("".join(delimiter.join(row) + "\n" for row in rows), encoding="utf-8")
    client = Client(str(tmp_path / "assay.db"))
    read = [
        (row["example"].inputs, row["example"].outputs, row["example"].metadata)
        for row in client.evaluate(echo, data=path)
    ]
    assert [(i, o, {k: v for k, v in (m or {}).items() if k == "source"}) for i, o, m in read] == [
        ({"question": "Paris"}, {"answer": "Paris"}, {"source": "atlas"}),
        ({"question": "Rome, Italy"}, {"answer": "Rome, Italy"}, {"source": "a; b"}),
    ]


def test_the_header_decides_not_the_values(tmp_path: Path) -> None:
    """A comma file whose values hold semicolons stays a comma file."""
    path = tmp_path / "qa.csv"
    path.write_text('question,outputs.answer\n"a;b;c;d",x\n', encoding="utf-8")
    (row,) = Client(str(tmp_path / "assay.db")).evaluate(echo, data=path)
    assert row["example"].inputs == {"question": "a;b;c;d"}


@pytest.mark.parametrize(
    ("header", "delimiter"),
    [
        ("question", ","),  # one column
        ('"name, with comma";other', ";"),  # a quoted name's comma does not count
        ('"a;b",c', ","),
        ("", ","),
    ],
)
def test_what_the_header_says(header: str, delimiter: str) -> None:
    assert sniff_delimiter(header) == delimiter


def test_a_ragged_row_names_file_line_count_and_delimiter(tmp_path: Path) -> None:
    path = tmp_path / "shop.csv"
    path.write_text("question;outputs.answer\na;b\nc;d;e\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        Client(str(tmp_path / "assay.db")).evaluate(echo, data=path)
    said = str(caught.value)
    assert said.startswith(f"{path}:3: 3 values where the header has 2 columns, separated by ';'")
    assert "quote a value that holds ';'" in said
    short = tmp_path / "short.tsv.csv"
    short.write_text("question\toutputs.answer\na\n", encoding="utf-8")
    with pytest.raises(
        DataError, match=r"short.tsv.csv:2: 1 value where the header has 2 columns, separated by tab"
    ):
        Client(str(tmp_path / "assay.db")).evaluate(echo, data=short)


def test_the_command_line_reads_a_semicolon_file(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "def answer(inputs):\n    return {'answer': inputs['question']}\n\n"
        "def correct(outputs, reference_outputs):\n    return outputs['answer'] == reference_outputs['answer']\n",
        encoding="utf-8",
    )
    (tmp_path / "qa.csv").write_text("question;outputs.answer\nParis;Paris\nRome;Milan\n", encoding="utf-8")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "assay.cli",
            "run",
            "app:answer",
            "--data",
            "qa.csv",
            "-e",
            "app:correct",
            "--json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert '"correct"' in done.stdout and "0.5" in done.stdout, done.stdout


def test_the_header_is_read_in_linear_time(assert_linear: Any) -> None:
    assert_linear(sniff_delimiter, lambda n: '"q;x",' * n + "a;" * n, 20_000)
