"""The store's schema, as forward-only migrations. Index i upgrades version i to i + 1."""

from __future__ import annotations

POSTGRES_ROW_REFERENCES = "-- PostgreSQL only: the row tables' references as statement triggers\n"
"""A migration with nothing to do on SQLite; PostgreSQL's scripts put its own in its place."""

MIGRATIONS: list[str] = [
    """
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE datasets (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        description TEXT,
        metadata TEXT,
        created_at TEXT NOT NULL,
        version INTEGER NOT NULL DEFAULT 0
    );
    -- Examples are immutable versions: an edit closes one row and opens another,
    -- so an experiment always reads the examples of the version it ran on.
    CREATE TABLE examples (
        pk INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        dataset_id TEXT NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
        position INTEGER NOT NULL,
        inputs TEXT NOT NULL,
        outputs TEXT,
        metadata TEXT,
        created_at TEXT NOT NULL,
        added_version INTEGER NOT NULL,
        removed_version INTEGER,
        UNIQUE (dataset_id, id, added_version)
    );
    CREATE INDEX examples_by_dataset ON examples (dataset_id, position);
    CREATE TABLE experiments (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        dataset_id TEXT,
        dataset_version INTEGER,
        description TEXT,
        metadata TEXT,
        config TEXT,
        fingerprint TEXT,
        status TEXT NOT NULL,
        num_examples INTEGER NOT NULL DEFAULT 0,
        num_repetitions INTEGER NOT NULL DEFAULT 1,
        created_at TEXT NOT NULL,
        finished_at TEXT
    );
    CREATE TABLE runs (
        id TEXT PRIMARY KEY,
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        example_id TEXT NOT NULL,
        repetition INTEGER NOT NULL,
        position INTEGER NOT NULL,
        name TEXT,
        run_type TEXT,
        inputs TEXT,
        outputs TEXT,
        error TEXT,
        start_time TEXT,
        end_time TEXT,
        latency_ms REAL,
        child_runs TEXT,
        extra TEXT,
        UNIQUE (experiment_id, example_id, repetition)
    );
    CREATE INDEX runs_by_position ON runs (experiment_id, position, repetition);
    CREATE TABLE results (
        pk INTEGER PRIMARY KEY,
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        score REAL,
        value TEXT,
        feedback TEXT,
        comment TEXT,
        correction TEXT,
        metadata TEXT,
        evaluator_info TEXT,
        error TEXT
    );
    CREATE INDEX results_by_run ON results (run_id);
    CREATE INDEX results_by_metric ON results (experiment_id, key, score);
    CREATE TABLE summary_results (
        pk INTEGER PRIMARY KEY,
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        score REAL,
        value TEXT,
        feedback TEXT,
        comment TEXT,
        metadata TEXT,
        error TEXT
    );
    -- Pairwise (or n-way) judgements across experiments on one dataset.
    CREATE TABLE comparisons (
        pk INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        name TEXT NOT NULL,
        experiment_ids TEXT NOT NULL,
        example_id TEXT NOT NULL,
        key TEXT NOT NULL,
        scores TEXT,
        comment TEXT,
        metadata TEXT,
        error TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX comparisons_by_name ON comparisons (name);
    -- Content-addressed cache (model calls, embeddings): namespace + hash -> bytes.
    CREATE TABLE cache (
        namespace TEXT NOT NULL,
        key TEXT NOT NULL,
        value BLOB NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (namespace, key)
    );
    """,
    # Stored counts and metric figures, so that pages and reports never scan an
    # experiment's rows; a stored "failed" flag per row for the failed-rows filter.
    """
    CREATE TABLE experiment_stats (
        experiment_id TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
        row_count INTEGER NOT NULL DEFAULT 0,
        run_errors INTEGER NOT NULL DEFAULT 0,
        latency_n INTEGER NOT NULL DEFAULT 0,
        latency_sum REAL NOT NULL DEFAULT 0,
        latency_max REAL,
        usage TEXT,
        final INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE metric_stats (
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        key TEXT NOT NULL,
        mean REAL,
        n INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        unscored INTEGER NOT NULL,
        stderr REAL,
        ci_low REAL,
        ci_high REAL,
        min REAL,
        max REAL,
        histogram TEXT,
        skipped INTEGER NOT NULL DEFAULT 0,
        ci_method TEXT,
        direction TEXT NOT NULL DEFAULT 'higher',
        score_range TEXT,
        binary INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (experiment_id, key)
    );
    -- 1 when the target failed, or a result errored or scored below 1: the UI's "failed
    -- rows" filter, read from an index instead of a scan of every row's results.
    ALTER TABLE runs ADD COLUMN failed INTEGER;
    UPDATE runs SET failed = (error IS NOT NULL OR EXISTS (SELECT 1 FROM results r
        WHERE r.run_id = runs.id AND (r.error IS NOT NULL OR r.score < 1)));
    CREATE INDEX runs_by_failed ON runs (experiment_id, failed, position, repetition);
    -- 'bool' or 'int' when the score was one: the REAL column alone reads True back as 1.0.
    ALTER TABLE results ADD COLUMN score_kind TEXT;
    """,
    # Feedback on runs from people or programs (Client.create_feedback), apart from the
    # evaluators' results. ``score`` has no declared type, so an integer stays one.
    """
    CREATE TABLE feedback (
        id TEXT PRIMARY KEY,
        run_id TEXT,
        trace_id TEXT,
        experiment_id TEXT,
        key TEXT NOT NULL,
        score,
        value TEXT,
        comment TEXT,
        correction TEXT,
        feedback_source TEXT,
        extra TEXT,
        created_at TEXT NOT NULL
    );
    CREATE INDEX feedback_by_run ON feedback (run_id);
    """,
    # Who runs each shard of an experiment (a whole run is shard 0 of 1): a holder renews
    # ``expires_at`` (seconds since the epoch) while it runs; a lease past it was left by
    # a dead process and may be taken over. ``state`` is how the shard's last run ended.
    """
    CREATE TABLE leases (
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        shard INTEGER NOT NULL,
        shards INTEGER NOT NULL,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        token TEXT NOT NULL,
        expires_at REAL NOT NULL,
        state TEXT NOT NULL,
        PRIMARY KEY (experiment_id, shard)
    );
    """,
    # Each result carries its run's (example, repetition), and one covering index holds
    # what a paired comparison reads: per metric, both experiments' scores in example
    # order, paired by an index lookup (a merge join where the database has one) with no
    # visit to the runs or the results' rows.
    """
    ALTER TABLE results ADD COLUMN example_id TEXT;
    ALTER TABLE results ADD COLUMN repetition INTEGER;
    UPDATE results SET
        example_id = (SELECT u.example_id FROM runs u WHERE u.id = results.run_id),
        repetition = (SELECT u.repetition FROM runs u WHERE u.id = results.run_id);
    CREATE INDEX results_by_pair ON results (experiment_id, key, example_id, repetition, score);
    """,
    # Each result carries its run's position too, and one index holds a metric's rows in
    # the order a sorted page shows them: by the score an errored result does not have,
    # ties in data order. A sorted or metric-filtered page is then a range of it read in
    # order, whatever the experiment's size. It replaces (experiment_id, key, score),
    # whose every use it or ``results_by_pair`` serves, so a write keeps four indexes.
    """
    ALTER TABLE results ADD COLUMN position INTEGER;
    UPDATE results SET position = (SELECT u.position FROM runs u WHERE u.id = results.run_id);
    DROP INDEX results_by_metric;
    CREATE INDEX results_by_rank ON results
        (experiment_id, key, (CASE WHEN error IS NULL THEN score END), position, repetition);
    """,
    # Rows sorted by latency, or by whether the target failed, are ranges of an index read
    # in order (ties in data order), as a metric sort is of ``results_by_rank``: the
    # runs' latency (the writer has always stored it) and a 0/1 "errored" rank.
    """
    CREATE INDEX runs_by_latency ON runs (experiment_id, latency_ms, position, repetition);
    CREATE INDEX runs_by_error ON runs
        (experiment_id, (CASE WHEN error IS NULL THEN 0 ELSE 1 END), position, repetition);
    """,
    # Per (experiment, metric), the metric's results as compact columns in pair-index
    # order (assay.store._columns), so a paired comparison reads two blobs per metric
    # instead of looking one side up per row. A set exists only while it is true: every
    # write of the experiment's runs or results deletes it in the same transaction.
    """
    CREATE TABLE metric_column_sets (
        experiment_id TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
        runs INTEGER NOT NULL,
        repeated INTEGER NOT NULL,
        built_at TEXT  -- NULL while a build is pending (its columns not stored yet)
    );
    CREATE TABLE metric_columns (
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        results INTEGER NOT NULL,
        one_per_row INTEGER NOT NULL,
        unique_keys INTEGER NOT NULL,
        keys_digest TEXT NOT NULL,
        id_format TEXT NOT NULL,
        example_ids BLOB NOT NULL,
        repetitions BLOB NOT NULL,
        scores BLOB NOT NULL,
        outcomes BLOB NOT NULL,
        PRIMARY KEY (experiment_id, key)
    );
    """,
    # Per finished experiment, the name of a text index of its runs' inputs and outputs
    # (assay.store.text_index): an FTS5 trigram table on SQLite, a pg_trgm-indexed copy on
    # PostgreSQL. A mark exists only while its index is true: every write of the
    # experiment's runs deletes it in the same transaction; the table it named is dropped
    # by the next build.
    """
    CREATE TABLE text_indexes (
        experiment_id TEXT PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        kind TEXT NOT NULL,
        built_at TEXT  -- NULL while a build is pending
    );
    """,
    # The current examples of a dataset, alone: counting them (every run and every
    # dataset page asks) reads this index only, not each example's row to see whether it
    # was removed (1M examples: 300 -> 80 ms on SQLite).
    """
    CREATE INDEX examples_alive ON examples (dataset_id, position) WHERE removed_version IS NULL;
    """,
    # People's feedback on an experiment's rows, in the order it was given: what an
    # annotation queue, the human metrics and the row table read (by experiment), a
    # range of this index rather than a scan of every experiment's feedback.
    """
    CREATE INDEX feedback_by_experiment ON feedback (experiment_id, created_at);
    """,
    # Files kept with examples: each content once, keyed by its SHA-256, linked to every
    # example version that carries it (so a dataset version reads the files it had). A
    # blob no version links any more is deleted with the last dataset that linked it.
    # ``dataset_id`` on a link: whether a dataset has any files is one index probe.
    """
    CREATE TABLE blobs (
        sha256 TEXT PRIMARY KEY,
        size INTEGER NOT NULL,
        data BLOB NOT NULL,
        created_at TEXT NOT NULL
    );
    CREATE TABLE example_attachments (
        example_pk INTEGER NOT NULL REFERENCES examples(pk) ON DELETE CASCADE,
        name TEXT NOT NULL,
        dataset_id TEXT NOT NULL,
        mime_type TEXT NOT NULL,
        sha256 TEXT NOT NULL REFERENCES blobs(sha256),
        size INTEGER NOT NULL,
        PRIMARY KEY (example_pk, name)
    );
    CREATE INDEX example_attachments_by_dataset ON example_attachments (dataset_id);
    CREATE INDEX example_attachments_by_blob ON example_attachments (sha256);
    """,
    # Runs traced outside an experiment's rows (Client.create_run / update_run, LangSmith's
    # tracing projects): one row per run, a child naming its parent, a trace's runs sharing
    # ``trace_id``; ``run`` holds the rest of the run as JSON. A project's runs are read in
    # start order, a trace's by ``traced_runs_by_trace``.
    """
    CREATE TABLE traced_runs (
        id TEXT PRIMARY KEY,
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        trace_id TEXT NOT NULL,
        parent_run_id TEXT,
        start_time TEXT NOT NULL,
        run TEXT NOT NULL
    );
    CREATE INDEX traced_runs_by_project ON traced_runs (experiment_id, start_time);
    CREATE INDEX traced_runs_by_trace ON traced_runs (trace_id, start_time);
    """,
    # PostgreSQL checks a run's and a result's references once per statement instead of
    # once per row (``assay.store.postgres._integrity``); SQLite keeps its foreign keys.
    POSTGRES_ROW_REFERENCES,
    # Per finished experiment and order a page is sorted in (latency, errored, each
    # metric's rank), its rows' keys (position * stride + repetition) in that order, with
    # their ranks: where a deep page starts, and which rows a filter keeps, found without
    # walking an index (assay.store._columns). Written and dropped with the metric columns.
    """
    CREATE TABLE row_orders (
        experiment_id TEXT NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        stride INTEGER NOT NULL,
        ranked INTEGER NOT NULL,
        errored INTEGER NOT NULL,
        keys BLOB NOT NULL,
        ranks BLOB NOT NULL,
        PRIMARY KEY (experiment_id, name)
    );
    """,
    # The failed-rows filter reads only the flagged rows (``failed = 1``), in data order:
    # an index of those alone serves it as the whole-table one did, and a row that passes
    # (most, in a good run) costs its write no entry in it (PostgreSQL's server: ~3 us a
    # row less of the ~45 its backend spends writing a row).
    """
    DROP INDEX IF EXISTS runs_by_failed;
    CREATE INDEX runs_flagged ON runs (experiment_id, position, repetition) WHERE failed = 1;
    """,
]

SCHEMA_VERSION = len(MIGRATIONS)
