"""Statistics for honest numbers: intervals that fit the metric and paired tests."""

from assay.stats._distributions import t_quantile

__all__ = ["t_quantile"]
