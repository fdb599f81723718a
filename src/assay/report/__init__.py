"""What a finished run prints: ``terminal`` (rich: progress bar, tables), ``plain`` (CI logs, pipes)."""

from __future__ import annotations

__all__: list[str] = []
