"""A metric across a dataset's experiments in time: is this release better than the last?"""

__all__: list[str] = []
