"""``assay demo``: a toy toxicity classifier scored with row evaluators and an F1 summary."""

__all__: list[str] = []
