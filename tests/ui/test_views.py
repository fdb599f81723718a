"""Turning stored values into display nodes: tables for records, blocks for long text."""

from __future__ import annotations

from ui_testdata import SQL_DIFF, TEST_CASES

from assay.ui import views
from assay.ui.charts import histogram_bars, histogram_ticks, timeline_span, timeline_total
from assay.ui.models import Histogram, HistogramBin, RunNode


def texts(row: views.TableRow) -> list[str]:
    return [cell.text for cell in row.cells if isinstance(cell, views.Text)]


def test_code_evaluator_test_cases_become_a_table_with_failing_rows_marked() -> None:
    node = views.view({"test_cases_details": TEST_CASES})
    assert isinstance(node, views.Mapping)
    ((key, table),) = node.items
    assert key == "test_cases_details" and isinstance(table, views.Table)
    assert table.columns == [
        "test_case_index",
        "input",
        "expected_output",
        "actual_output",
        "execution_success",
        "error_message",
    ]
    assert [row.status for row in table.rows] == ["good", "bad", "bad"]
    assert texts(table.rows[2])[-1] == "ZeroDivisionError: division by zero"


def test_sql_result_difference_becomes_tables_under_its_columns() -> None:
    node = views.view(SQL_DIFF)
    assert isinstance(node, views.Mapping)
    by_key = dict(node.items)
    rows, expected, differences = by_key["rows"], by_key["expected_rows"], by_key["first_differences"]
    assert isinstance(rows, views.Table) and rows.columns == ["id", "city"]
    assert texts(rows.rows[1]) == ["2", "Lyon"]
    assert isinstance(expected, views.Table) and texts(expected.rows[1]) == ["2", "Nice"]
    assert isinstance(differences, views.Table)
    assert differences.columns == ["row", "column", "actual", "expected"]


def test_any_list_of_records_is_a_table_with_the_union_of_their_keys() -> None:
    node = views.view([{"a": 1}, {"b": "x", "a": 2}])
    assert isinstance(node, views.Table) and node.columns == ["a", "b"]
    assert texts(node.rows[0]) == ["1", ""] and texts(node.rows[1]) == ["2", "x"]


def test_big_tables_long_text_and_deep_nesting_are_bounded() -> None:
    table = views.view([{"i": i} for i in range(views.MAX_TABLE_ROWS + 5)])
    assert isinstance(table, views.Table) and len(table.rows) == views.MAX_TABLE_ROWS
    assert table.hidden_rows == 5
    block = views.view("x" * (views.MAX_TEXT + 10))
    assert isinstance(block, views.Text) and block.kind == "block"
    assert block.text.endswith("(10 more characters: see the JSON API)")
    deep: object = "leaf"
    for _ in range(20):
        deep = {"k": deep}
    node = views.view(deep)
    for _ in range(views.MAX_DEPTH):
        assert isinstance(node, views.Mapping)
        node = node.items[0][1]
    assert isinstance(node, views.Text) and '"leaf"' in node.text


def test_scalars_keep_their_kind() -> None:
    assert views.view(None) == views.Text("null", "null")
    assert views.view(True) == views.Text("true", "bool")
    assert views.view(0.5) == views.Text("0.5", "number")
    assert views.view("two\nlines").kind == "block"  # type: ignore[union-attr]
    assert views.view("<b>short</b>") == views.Text("<b>short</b>", "string")


def test_numbers_and_score_colours() -> None:
    assert [views.format_number(v) for v in (1.0, 0.83333, 2.5e-7, 12345678.9, None)] == [
        "1",
        "0.833",
        "2.5e-07",
        "1.23e+07",
        "—",
    ]
    assert views.score_class(0.0) == "sc-0" and views.score_class(1) == "sc-10"
    assert views.score_class(0.46) == "sc-5" and views.score_class(7.0) == "sc-na"
    assert views.score_class(None, "boom") == "sc-err" and views.score_class(None) == "sc-none"


def test_tracebacks_are_shown_apart_from_metadata() -> None:
    metadata = {"traceback": "Traceback ...", "attempts": 2}
    assert views.traceback_of(metadata) == "Traceback ..."
    assert views.without_traceback(metadata) == {"attempts": 2}
    assert views.traceback_of({"attempts": 2}) is None


def test_histogram_bars_keep_errors_in_their_own_bar() -> None:
    bins = [HistogramBin(low=i / 10, high=(i + 1) / 10, count=c) for i, c in enumerate([4] + [0] * 8 + [2])]
    bars = histogram_bars(Histogram(key="k", bins=bins, errors=1))
    assert len(bars) == 11 and bars[-1].error and bars[-1].count == 1
    assert bars[0].height > bars[-2].height > bars[-1].height > 0
    assert bars[1].height == 0
    assert [t.label for t in histogram_ticks(Histogram(key="k", bins=bins, errors=1))] == ["0", "1", "error"]


def test_timeline_spans_are_relative_to_the_root() -> None:
    child = RunNode(name="c", offset_ms=25.0, duration_ms=50.0)
    root = RunNode(name="r", offset_ms=0.0, duration_ms=100.0, children=[child])
    assert timeline_total(root) == 100.0
    span = timeline_span(child, 100.0)
    assert span is not None and (span.x, span.width) == (250.0, 500.0)
    assert timeline_span(RunNode(name="x"), 100.0) is None
    assert timeline_total(RunNode(name="r", children=[RunNode(name="c", offset_ms=5, duration_ms=10)])) == 15
