"""People labelling rows: feedback keys, the feedback form, annotation queues and agreement."""

__all__: list[str] = []
