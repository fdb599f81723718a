"""The store's read model: the queries the comparison and the UI ask of stored
experiments, next to the tables they read, so a schema change stays in ``store/``.

- ``database``: ``ReadOnlyDatabase``, per-thread read-only connections to a store's database;
- ``walk``, ``ranked``: a page of rows in the order of one index (a metric's rank,
  latency, error), and the facts that say a metric's index can be walked;
- ``pairing``: a paired comparison's sums per metric, and each side's stored counts.
"""

__all__: list[str] = []  # the modules are the interface: import them by name
