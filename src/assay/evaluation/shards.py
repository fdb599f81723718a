"""Sharded runs as the CLI shows them: ``--shard i/n`` read, the line a shard ends with,
and an experiment's progress over its shards (``assay experiments``). Which rows a shard
runs is ``_shard``'s; how a shard ends, ``_sharded``'s."""

from __future__ import annotations

from assay.evaluation._shard import Shard, parse_shard
from assay.evaluation._sharded import shard_line, shard_progress

__all__ = ["Shard", "parse_shard", "shard_line", "shard_progress"]
