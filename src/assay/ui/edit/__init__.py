"""Datasets people can grow from the UI: add, edit and delete examples, add an
experiment's row, upload a file. Every change goes through the store's API, so each is
a new dataset version, as ``Client`` makes it."""

__all__: list[str] = []
