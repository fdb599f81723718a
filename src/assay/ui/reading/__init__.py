"""Reading outputs: side-by-side diffs and what a row page adds to the stored row."""

__all__: list[str] = []
