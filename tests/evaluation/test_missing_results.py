"""One outcome per row and metric: an evaluator (local, served by a real evaluator
service, inside a composite) that answers with fewer results than it declares, or with
none (``[]``, ``{}``, ``{"results": []}``), gets an error result for each missing key; the
report counts them, and the stored figures agree with the rows."""

from __future__ import annotations

import http.server
import itertools
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from assay import Client, evaluate
from assay.evaluation import BaseEvaluator
from assay.evaluation.audit import figure_mismatches
from assay.evaluators import CompositeEvaluator
from assay.schemas import EvaluationResult, Example, Run

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service"))
from service_testing import LiveService  # noqa: E402

from assay.service import RemoteEvaluator  # noqa: E402
from assay.service.wire import encode_results  # noqa: E402

ROWS = 30


def data() -> list[dict[str, Any]]:
    return [{"inputs": {"i": i}, "outputs": {"i": i}} for i in range(ROWS)]


def target(inputs: dict[str, Any]) -> dict[str, Any]:
    return {"i": inputs["i"]}


def run(client: Client, evaluator: Any, name: str) -> Any:
    return evaluate(
        target, data=data(), evaluators=[evaluator], experiment=name, client=client, progress=False
    )


def outcomes(results: Any, key: str) -> list[str]:
    """Per row: "score", "error" or "none" for ``key``."""
    found = []
    for row in results:
        mine = [r for r in row["evaluation_results"]["results"] if r.key == key]
        assert len(mine) <= 1, mine
        found.append("none" if not mine else "error" if mine[0].error else "score")
    return found


def agree(client: Client, name: str) -> None:
    record = client.store.get_experiment(name=name)
    assert record is not None
    assert figure_mismatches(client.store, record) == []


@pytest.mark.parametrize("empty", [[], {}, {"results": []}], ids=["list", "dict", "results"])
def test_a_local_evaluator_answering_nothing_gets_an_error_per_row(tmp_path: Path, empty: Any) -> None:
    client = Client(str(tmp_path / "db.sqlite"))

    def correct(outputs: dict[str, Any], reference_outputs: dict[str, Any]) -> Any:
        return empty if outputs["i"] % 3 == 0 else outputs == reference_outputs

    results = run(client, correct, "local")
    found = outcomes(results, "correct")
    assert found.count("error") == ROWS // 3 and found.count("score") == ROWS - ROWS // 3
    errors = [r.error for row in results for r in row["evaluation_results"]["results"] if r.error]
    assert all("returned no result" in e and "'correct'" in e for e in errors)
    [metric] = [m for m in results.stats.metrics if m.key == "correct"]
    assert (metric.n, metric.errors) == (20, 10)
    agree(client, "local")


class TwoKeys(BaseEvaluator):
    """Declares two keys; answers with only the first on odd rows."""

    result_keys = ["relevance", "fluency"]

    def __init__(self) -> None:
        super().__init__(name="two")

    def _evaluate(self, run: Run, example: Example | None = None) -> Any:
        first = EvaluationResult(key="relevance", score=1.0)
        if run.outputs and run.outputs["i"] % 2:
            return [first]
        return [first, EvaluationResult(key="fluency", score=0.5)]


def test_a_declared_key_missing_from_an_answer_is_an_error(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "db.sqlite"))
    results = run(client, TwoKeys(), "declared")
    assert outcomes(results, "relevance") == ["score"] * ROWS
    fluency = outcomes(results, "fluency")
    assert fluency == ["score", "error"] * (ROWS // 2)
    agree(client, "declared")


class EmptyEveryThird:
    """A real HTTP evaluator service that answers every third call ``{"results": []}``
    (as a service did through an outage), and a score otherwise."""

    def __init__(self) -> None:
        calls = itertools.count()
        score = encode_results("correct", [EvaluationResult(key="correct", score=1.0)])
        empty = b'{"evaluator": "correct", "results": []}'

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                body = empty if next(calls) % 3 == 0 else score
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> str:
        self.thread.start()
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_a_service_answering_an_empty_list_gives_an_error_not_a_missing_metric(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "db.sqlite"))
    with EmptyEveryThird() as url:
        remote = RemoteEvaluator(url, "correct", retries=0)
        # one row at a time: the first answer (row 0) is empty, before any key was seen
        results = evaluate(
            target,
            data=data(),
            evaluators=[remote],
            experiment="remote",
            client=client,
            progress=False,
            max_concurrency=1,
        )
    found = outcomes(results, "correct")
    assert found == ["error", "score", "score"] * (ROWS // 3)
    [metric] = [m for m in results.stats.metrics if m.key == "correct"]
    assert (metric.n, metric.errors) == (20, 10)
    agree(client, "remote")


def test_a_served_function_answering_nothing_is_an_error_from_the_service(tmp_path: Path) -> None:
    def served(outputs: dict[str, Any]) -> Any:
        return [] if outputs["i"] % 3 == 0 else 1.0

    client = Client(str(tmp_path / "db.sqlite"))
    with LiveService({"served": served}) as service:
        results = run(client, RemoteEvaluator(service.url, "served"), "served")
    assert outcomes(results, "served") == ["error", "score", "score"] * (ROWS // 3)
    agree(client, "served")


def test_a_composite_of_an_evaluator_answering_nothing_is_undecided_not_silent(tmp_path: Path) -> None:
    client = Client(str(tmp_path / "db.sqlite"))

    def nothing(outputs: dict[str, Any]) -> Any:
        return [] if outputs["i"] % 2 else 1.0

    def always(outputs: dict[str, Any]) -> float:
        return 1.0

    composite = CompositeEvaluator([nothing, always], "mean", name="both", store_sub_results=True)
    results = run(client, composite, "composite")
    assert "none" not in outcomes(results, "both")
    assert outcomes(results, "nothing") == ["score", "error"] * (ROWS // 2)
    agree(client, "composite")
