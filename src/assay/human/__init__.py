"""People's feedback on rows: what makes a feedback record human, the latest label of
each annotator, and the mean of people's scores with its interval. Shared by the web
UI (which records labels), exports and ``assay show``."""

from assay.human.labels import HUMAN, NOTE_KEY, SKIP_KEY, Label, annotator_of, keep_latest
from assay.human.stats import HumanMean, human_mean
from assay.human.store import human_labels

__all__ = [
    "HUMAN",
    "NOTE_KEY",
    "SKIP_KEY",
    "HumanMean",
    "Label",
    "annotator_of",
    "human_labels",
    "human_mean",
    "keep_latest",
]
