"""The store owns the SQL over its tables: the comparison and the UI ask the store's read
model (``assay.store.read``), and no module outside ``store/`` names one of its tables in
SQL, so a schema change stays in ``store/``."""

from __future__ import annotations

import re
from pathlib import Path

SRC = Path(__file__).parents[1] / "src" / "assay"


def store_tables(src: Path = SRC) -> set[str]:
    """Every table the store's schema creates (its migrations included)."""
    schema = (src / "store" / "_schema.py").read_text(encoding="utf-8")
    return set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(\w+)", schema))


def naming_a_table(src: Path = SRC) -> set[str]:
    """Modules outside ``store/`` whose text names a table of the store in SQL
    (``FROM runs``, ``JOIN results r``, ``INTO examples``, ``UPDATE experiments``)."""
    query = re.compile(r"\b(?:FROM|JOIN|INTO|UPDATE)\s+\"?(?:" + "|".join(store_tables(src)) + r")\b")
    return {
        str(path.relative_to(src))
        for path in src.rglob("*.py")
        if path.relative_to(src).parts[0] != "store" and query.search(path.read_text(encoding="utf-8"))
    }


def test_the_schema_is_read_whole() -> None:
    """The check below knows every table, the ones added after the first schema too."""
    assert {
        "runs",
        "results",
        "examples",
        "experiments",
        "datasets",
        "feedback",
        "metric_stats",
    } <= store_tables()
    assert {"experiment_stats", "summary_results", "metric_columns"} <= store_tables()


def test_no_module_outside_the_store_names_a_table() -> None:
    found = naming_a_table()
    assert not found, f"SQL over the store's tables in {sorted(found)}: put it in store/read/"


def test_the_check_finds_a_query_wherever_it_is(tmp_path: Path) -> None:
    """The checker itself: a query in any package, in any table, is found; the store's own are not."""
    (tmp_path / "store").mkdir()
    (tmp_path / "store" / "_schema.py").write_text(
        '"CREATE TABLE runs (id TEXT)"\n"CREATE TABLE feedback (id)"\n'
    )
    (tmp_path / "store" / "reader.py").write_text('SQL = "SELECT id FROM runs"\n')
    (tmp_path / "ui" / "pages").mkdir(parents=True)
    (tmp_path / "ui" / "pages" / "row.py").write_text('db.query("SELECT * FROM feedback WHERE run_id = ?")\n')
    (tmp_path / "ui" / "pages" / "text.py").write_text('HELP = "read the runs from the store"\n')
    (tmp_path / "cli").mkdir()
    (tmp_path / "cli" / "dump.py").write_text('f"""SELECT u.id\n  FROM runs u JOIN x"""\n')
    assert naming_a_table(tmp_path) == {"ui/pages/row.py", "cli/dump.py"}


def test_no_ui_module_runs_sql() -> None:
    """The UI reads through the read model's functions, never a connection of its own."""
    calls = re.compile(r"\.(?:query|query_one|execute|executemany)\(")
    ui = SRC / "ui"
    found = {str(p.relative_to(SRC)) for p in ui.rglob("*.py") if calls.search(p.read_text(encoding="utf-8"))}
    assert not found, f"SQL run in {sorted(found)}: ask assay.store.read instead"


def test_the_read_model_is_in_the_store() -> None:
    read = SRC / "store" / "read"
    for module in (
        "pairing",
        "ranked",
        "rows",
        "changes",
        "datasets",
        "experiments",
        "metrics",
        "annotation",
    ):
        assert (read / f"{module}.py").is_file(), module
