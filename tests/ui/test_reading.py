"""Reading outputs: side-by-side diffs (line for code, word for prose, bounded), the
target's traceback kept by a real evaluate() run, values shown as what they are."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from ui_testdata import Scenario

import assay
from assay.ui import create_app
from assay.ui.reading.diff import MAX_DIFF_CHARS, side_by_side
from assay.ui.views import Items, Text, view


def pieces(side: Any) -> list[tuple[str, str]]:
    return [(p.text, p.change) for p in side.pieces]


def test_prose_is_diffed_by_word() -> None:
    d = side_by_side("the cat sat on the mat", "the dog sat on a mat")
    ((old, new),) = d.rows
    assert d.mode == "word" and not d.same
    assert pieces(old) == [
        ("the ", "same"),
        ("cat ", "removed"),
        ("sat on ", "same"),
        ("the ", "removed"),
        ("mat", "same"),
    ]
    assert pieces(new) == [
        ("the ", "same"),
        ("dog ", "added"),
        ("sat on ", "same"),
        ("a ", "added"),
        ("mat", "same"),
    ]


def test_code_is_diffed_by_line_with_numbers() -> None:
    d = side_by_side("def f(n):\n    return n\n", "def f(n):\n    return n + 1\n# end\n")
    assert d.mode == "line"
    rows = [(o.number, pieces(o), n.number, pieces(n)) for o, n in d.rows]
    assert rows == [
        (1, [("def f(n):", "same")], 1, [("def f(n):", "same")]),
        (2, [("    return n", "removed")], 2, [("    return n + 1", "added")]),
        (None, [], 3, [("# end", "added")]),
    ]


def test_a_diff_is_bounded_whatever_the_output() -> None:
    """Two long, wholly different outputs: the quadratic worst case of a matcher, cut to its bound."""
    words = " ".join(f"w{i}" for i in range(MAX_DIFF_CHARS))
    d = side_by_side(words, words.replace("w", "v"))
    assert d.truncated and sum(len(p.text) for p in d.rows[0][0].pieces) <= MAX_DIFF_CHARS
    lines = "\n".join(f"line {i}" for i in range(5000))
    assert side_by_side(lines, lines.replace("line", "row")).truncated
    assert side_by_side("same", "same").same


def test_values_show_as_what_they_are() -> None:
    assert view([1, 5, 2]) == Text("[1, 5, 2]", "string")
    assert view(["a,b", None]) == Text('["a,b", null]', "string")
    assert view("") == Text("empty string", "empty")
    assert view([]) == Items([])


def test_compare_links_a_diff_and_the_diff_page_shows_it(scenario: Scenario) -> None:
    with TestClient(create_app(scenario.store), base_url="http://127.0.0.1") as client:
        page = client.get("/compare?e=baseline&e=candidate").text
        links = re.findall(r'href="(/diff\?a=[^"]+)"', page)
        assert len(links) == 12  # one per row: the candidate's cell against the baseline's
        diff = client.get(html.unescape(links[2])).text  # "answer 2" against "candidate 2"
        assert (
            '<span class="d-removed">answer </span>' in diff
            and '<span class="d-added">candidate </span>' in diff
        )
        missing = client.get("/diff?a=nope&b=nope")
        assert missing.status_code == 404 and "parameter 'a': no stored row" in html.unescape(missing.text)
        rows = client.get("/api/experiments/baseline/rows?per_page=2").json()["rows"]
        wrong = client.get(f"/experiments/baseline/rows/{rows[1]['run_id']}").text
        assert 'id="reference-diff" open' in wrong and '<span class="d-removed">answer </span>' in wrong
        right = client.get(f"/experiments/baseline/rows/{rows[0]['run_id']}").text
        assert "The two are identical." in right and 'id="reference-diff" open' not in right


def explode(inputs: dict[str, Any]) -> dict[str, Any]:
    if inputs["q"] == "boom":
        raise ValueError("the tool returned nothing")
    return {"answer": inputs["q"]}


def test_the_targets_traceback_is_on_the_row_page(tmp_path: Path) -> None:
    client = assay.Client(database_url=f"sqlite:///{tmp_path / 'tb.db'}")
    assay.evaluate(
        explode,
        data=[{"inputs": {"q": "fine"}}, {"inputs": {"q": "boom"}}],
        experiment="tb",
        client=client,
        progress=False,
    )
    with TestClient(create_app(client.store), base_url="http://127.0.0.1") as http:
        rows = http.get("/api/experiments/tb/rows").json()["rows"]
        failed = next(r for r in rows if r["error"])
        page = http.get(f"/experiments/tb/rows/{failed['run_id']}").text
    client.close()
    traceback = re.search(r'<pre class="block traceback" id="target-traceback">(.*?)</pre>', page, re.S)
    assert traceback is not None
    text = html.unescape(traceback.group(1))
    assert (
        "Traceback (most recent call last)" in text
        and 'raise ValueError("the tool returned nothing")' in text
    )
