"""The row tables' references, checked once per statement instead of once per row.

A run names its experiment, a result its experiment and its run. As foreign keys, each
reference costs PostgreSQL a trigger query per inserted row (30,000 for a batch run of
10,000 rows with two metrics: about half the server's CPU of a run's writes). Here the
same rules are kept by statement triggers over the statement's new rows (its
"transition table"): each parent is locked once (``FOR KEY SHARE``, as a foreign key
locks it, so that a concurrent delete of it waits for the writer and then cascades to
what it wrote), and when fewer parents were found than the rows name, the statement
fails with ``foreign_key_violation``, naming one, as the foreign key did. ``ON DELETE CASCADE``
becomes a statement trigger on the parent, and changing a referenced id is refused (the
foreign keys' ``NO ACTION``). The other tables keep their foreign keys: they are not
written a row at a time by the thousand.

SQLite keeps its foreign keys (its checks are an index probe in the writer's process).
"""

from __future__ import annotations

__all__ = ["ROW_REFERENCES_SQL"]

_FUNCTIONS_SQL = r"""
DO $$
DECLARE fk record;
BEGIN
    FOR fk IN SELECT c.conrelid::regclass AS owner, c.conname FROM pg_constraint c
        WHERE c.contype = 'f' AND c.conrelid IN ('runs'::regclass, 'results'::regclass)
            AND c.confrelid IN ('experiments'::regclass, 'runs'::regclass)
    LOOP
        EXECUTE format('ALTER TABLE %s DROP CONSTRAINT %I', fk.owner, fk.conname);
    END LOOP;
END $$;

-- The parents are looked up by ``= ANY`` of the distinct ids the rows name: index
-- probes, never a scan of the parent table (which a join plan of the two chose, making
-- each batch's check grow with the experiment).
CREATE OR REPLACE FUNCTION assay_rows_have_experiments() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE named TEXT[] := ARRAY(SELECT DISTINCT n.experiment_id FROM new_rows n);
DECLARE missing TEXT;
BEGIN
    IF (SELECT count(*) FROM (SELECT FROM experiments e WHERE e.id = ANY (named) FOR KEY SHARE OF e) AS locked)
        = cardinality(named) THEN
        RETURN NULL;
    END IF;
    SELECT wanted.id INTO missing FROM unnest(named) AS wanted (id)
        WHERE NOT EXISTS (SELECT FROM experiments e WHERE e.id = wanted.id) LIMIT 1;
    RAISE EXCEPTION 'insert or update on table "%" names an experiment that is not stored', TG_TABLE_NAME
        USING ERRCODE = 'foreign_key_violation',
            DETAIL = format('Key (experiment_id)=(%s) is not present in table "experiments".', missing);
END $$;

-- A run written by this very transaction (the batch's own) needs no lock: no other
-- transaction can see it to delete it.
CREATE OR REPLACE FUNCTION assay_results_have_runs() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE named TEXT[] := ARRAY(SELECT DISTINCT n.run_id FROM new_rows n);
DECLARE ours BIGINT;
DECLARE missing TEXT;
BEGIN
    SELECT count(*) INTO ours FROM runs r WHERE r.id = ANY (named) AND r.xmin = pg_current_xact_id()::xid;
    IF ours = cardinality(named) OR ours + (SELECT count(*) FROM (SELECT FROM runs r WHERE r.id = ANY (named)
            AND r.xmin <> pg_current_xact_id()::xid FOR KEY SHARE OF r) AS locked) = cardinality(named) THEN
        RETURN NULL;
    END IF;
    SELECT wanted.id INTO missing FROM unnest(named) AS wanted (id)
        WHERE NOT EXISTS (SELECT FROM runs r WHERE r.id = wanted.id) LIMIT 1;
    RAISE EXCEPTION 'insert or update on table "results" names a run that is not stored'
        USING ERRCODE = 'foreign_key_violation',
            DETAIL = format('Key (run_id)=(%s) is not present in table "runs".', missing);
END $$;

-- ON DELETE CASCADE: an experiment's runs (and with them their results), then any
-- result left naming it; a run's results.
CREATE OR REPLACE FUNCTION assay_delete_rows_of_experiments() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM runs u WHERE u.experiment_id IN (SELECT o.id FROM old_rows o);
    DELETE FROM results r WHERE r.experiment_id IN (SELECT o.id FROM old_rows o);
    RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION assay_delete_results_of_runs() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM results r WHERE r.run_id IN (SELECT o.id FROM old_rows o);
    RETURN NULL;
END $$;

-- NO ACTION on update: a referenced id stays what its rows name.
CREATE OR REPLACE FUNCTION assay_keep_referenced_ids() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.id IS DISTINCT FROM OLD.id AND (
        (TG_TABLE_NAME = 'experiments' AND (
            EXISTS (SELECT 1 FROM runs u WHERE u.experiment_id = OLD.id)
            OR EXISTS (SELECT 1 FROM results r WHERE r.experiment_id = OLD.id)))
        OR (TG_TABLE_NAME = 'runs' AND EXISTS (SELECT 1 FROM results r WHERE r.run_id = OLD.id))
    ) THEN
        RAISE EXCEPTION 'update on table "%" changes an id that stored rows name', TG_TABLE_NAME
            USING ERRCODE = 'foreign_key_violation', DETAIL = format('Key (id)=(%s) is referenced.', OLD.id);
    END IF;
    RETURN NEW;
END $$;
"""


def _trigger(name: str, when: str, table: str, run: str) -> str:
    """One trigger, dropped first: a store whose version was set back runs this again."""
    return f"DROP TRIGGER IF EXISTS {name} ON {table};\nCREATE TRIGGER {name} {when} ON {table} {run};\n"


def _checks(table: str, check: str, function: str) -> str:
    """The statement triggers checking the references of a table's inserted and updated rows."""
    new_rows = f"REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
    return _trigger(f"{table}_have_{check}", "AFTER INSERT", table, new_rows) + _trigger(
        f"{table}_have_{check}_updated", "AFTER UPDATE", table, new_rows
    )


def _cascade(table: str, function: str) -> str:
    old_rows = f"REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION {function}()"
    return _trigger(f"{table}_cascade", "AFTER DELETE", table, old_rows)


def _kept_ids(table: str) -> str:
    return _trigger(
        f"{table}_keep_ids",
        "BEFORE UPDATE OF id",
        table,
        "FOR EACH ROW EXECUTE FUNCTION assay_keep_referenced_ids()",
    )


ROW_REFERENCES_SQL = (
    _FUNCTIONS_SQL
    + _checks("runs", "experiments", "assay_rows_have_experiments")
    + _checks("results", "experiments", "assay_rows_have_experiments")
    + _checks("results", "runs", "assay_results_have_runs")
    + _cascade("experiments", "assay_delete_rows_of_experiments")
    + _cascade("runs", "assay_delete_results_of_runs")
    + _kept_ids("experiments")
    + _kept_ids("runs")
)
