"""The store's read model: the queries the comparison and the UI ask of stored
experiments, next to the tables they read, so a schema change stays in ``store/``.
Each takes a ``ReadOnlyDatabase`` (SQLite or PostgreSQL) and returns plain records,
JSON columns as stored text: the caller decodes and shows them.

- ``database``: ``ReadOnlyDatabase``, per-thread read-only connections to a store's database;
- ``sql``: SQL helpers shared by the queries, and rows as typed records;
- ``datasets``, ``experiments``: the lists, one dataset's examples, one experiment's summary;
- ``figures``, ``metrics``: an experiment's stored figures, else its metrics aggregated;
- ``rows``: a filtered, sorted page of an experiment's rows (``failing``, ``search``,
  ``kept`` say which rows fail, which match a search, and keep the counts);
- ``walk``, ``ranked``: a page of rows in the order of one index (a metric's rank,
  latency, error), and the facts that say a metric's index can be walked;
- ``runs``: one run read whole (a row page, a side-by-side reading);
- ``changes``: rows of other experiments that did worse or better than a baseline's;
- ``pairing``: a paired comparison's sums per metric, and each side's stored counts;
- ``annotation``: people's feedback, the feedback keys in metadata, a queue's rows.
"""

__all__: list[str] = []  # the modules are the interface: import them by name
