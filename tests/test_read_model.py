"""The store owns the SQL over its tables: the comparison asks the store's read model
(``assay.store.read``) and holds no query of its own; the UI modules that still do are
listed here, and the list only shrinks."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "assay"
TABLES = ("runs", "results", "examples", "experiments", "experiment_stats", "metric_stats", "metric_columns")
# ``FROM runs``, ``JOIN results r``, ``INTO examples``: a table of the store named in SQL
QUERY = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE)\s+(?:" + "|".join(TABLES) + r")\b")

#: UI modules whose queries are still to move into ``store/read/`` (shrink it, never grow it)
UI_STILL_QUERYING = {
    "ui/queries/compare.py",
    "ui/queries/experiments.py",
    "ui/queries/failing.py",
    "ui/queries/metrics.py",
    "ui/queries/rows.py",
    "ui/queries/search.py",
    "ui/trend/series.py",
}


def querying(package: str) -> set[str]:
    return {
        str(path.relative_to(SRC))
        for path in (SRC / package).rglob("*.py")
        if QUERY.search(path.read_text(encoding="utf-8"))
    }


def test_the_comparison_holds_no_sql_over_the_stores_tables() -> None:
    assert querying("comparison") == set()


def test_the_read_model_is_in_the_store() -> None:
    assert {"store/read/pairing.py", "store/read/ranked.py"} <= querying("store")


def test_no_ui_module_starts_querying_the_stores_tables() -> None:
    found = querying("ui")
    assert found <= UI_STILL_QUERYING, (
        f"new SQL over the store's tables in {sorted(found - UI_STILL_QUERYING)}: put it in store/read/"
    )
    assert not UI_STILL_QUERYING - found, (
        f"no longer querying (remove from the list): {UI_STILL_QUERYING - found}"
    )
