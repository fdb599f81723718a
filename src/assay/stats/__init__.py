"""Statistics for honest numbers: intervals that fit the metric and paired tests."""

__all__: list[str] = []
