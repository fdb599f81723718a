"""Records of the evaluation world: examples, datasets, runs and evaluation results.

Shaped after ``langsmith.schemas`` so code written for LangSmith runs with the
package name swapped.
"""

from __future__ import annotations

import copy
import functools
import logging
import math
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, NamedTuple, Protocol, TypedDict, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticUndefined

from assay._ids import new_id
from assay._metric import Direction, MetricInfo, Range, check_direction, check_range

__all__ = [
    "Attachment",
    "AttachmentInfo",
    "Attachments",
    "AttachmentsOperations",
    "BinaryIOLike",
    "ComparisonEvaluationResult",
    "Dataset",
    "EvaluationResult",
    "EvaluationResults",
    "Example",
    "ExampleCreate",
    "ExampleUpdate",
    "ExampleUploadWithAttachments",
    "ExampleUpsertWithAttachments",
    "ExampleUpdateWithAttachments",
    "Feedback",
    "Run",
    "TracerSession",
    "utcnow",
]


def dotted_order_of(start_time: datetime, run_id: Any, parent_order: str | None) -> str:
    """LangSmith's sortable path of a run: ``<start><id>`` per ancestor, joined by dots."""
    own = f"{start_time.strftime('%Y%m%dT%H%M%S%fZ')}{run_id}"
    return f"{parent_order}.{own}" if parent_order else own


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


_log = logging.getLogger("assay")

# Records assay builds itself, made without validating them again. Per row an experiment
# makes a root ``Run``, its ``Example`` and an ``EvaluationResult`` per metric from values
# already of their declared types; validation (``model(**fields)``) costs more than the
# trivial target it records, and ``model_construct`` more still. So these records are made
# the way validation leaves them: the fields in the declared order, defaults filled,
# ``model_fields_set`` the fields given. Never for values a user passed in.

M = TypeVar("M", bound=BaseModel)
_Template = tuple[dict[str, Any], tuple[tuple[str, Any], ...], bool]
_TEMPLATES: dict[type[BaseModel], _Template] = {}

# The four slots of a pydantic model, set through their descriptors: no attribute lookup
# (``object.__setattr__`` finds the descriptor by name on every call).
_SET_DICT = BaseModel.__dict__["__dict__"].__set__
_SET_FIELDS_SET = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_SET_EXTRA = BaseModel.__dict__["__pydantic_extra__"].__set__
_SET_PRIVATE = BaseModel.__dict__["__pydantic_private__"].__set__


class SharedFieldsSet(set[str]):
    """The fields set every record one ``trusted_builder`` makes shares: one object, not a
    set per record (a set the collector walks, built per row). Never changed in place: a
    record takes its own copy before anything could change it (``_FieldsSetOwner``), and
    copies of it are plain sets."""

    __slots__ = ()

    def _shared(self, *_: Any) -> Any:
        raise TypeError(
            "this fields set is shared by many records and cannot change: read a record's "
            "own through record.model_fields_set"
        )

    add = discard = remove = pop = clear = update = _shared
    difference_update = intersection_update = symmetric_difference_update = _shared
    __ior__ = __iand__ = __isub__ = __ixor__ = _shared

    def __copy__(self) -> set[str]:
        return set(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> set[str]:
        return set(self)

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (a record's state) as a plain set
        return (set, (list(self),))


class _FieldsSetOwner:
    """A record that may hold a ``SharedFieldsSet``: what pydantic and a user see of it is
    the record's own set, copied from the shared one on first need (pydantic adds to it
    when a field is assigned; a user may change what ``model_fields_set`` returns)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        _own_fields_set(self)
        super().__setattr__(name, value)

    @property
    def model_fields_set(self) -> set[str]:
        """The names of fields explicitly set when the record was made (pydantic's)."""
        return _own_fields_set(self)


def _own_fields_set(record: Any) -> set[str]:
    given: set[str] = record.__pydantic_fields_set__
    if type(given) is SharedFieldsSet:
        given = set(given)
        _SET_FIELDS_SET(record, given)
    return given


def trusted(model: type[M], fields: dict[str, Any]) -> M:
    """An instance of ``model`` from ``fields`` that are already of their declared types
    and pass its validators (records assay builds itself, or reads back from its store):
    ~3x cheaper than ``model(**fields)``. Fields not given take their defaults;
    ``model_fields_set`` is the fields given, as with validation.
    """
    defaults, factories, allows_extra = _template_of(model)
    values = {**defaults, **fields}  # the declared field order, as validation builds it
    for name, factory in factories:
        if name not in fields:
            values[name] = factory()
    return _made(model, values, set(fields), allows_extra)


def trusted_builder(model: type[M], names: tuple[str, ...]) -> Callable[..., M]:
    """``trusted(model, dict(zip(names, values)))`` as ``build(*values)``, for records
    built per row with always the same fields.

    The builder is a function written for ``model`` and ``names`` (as ``dataclasses``
    writes ``__init__``): one dict display in the declared order, the given values and
    the defaults in place, ``{}`` and ``[]`` for the ``dict`` and ``list`` factories;
    nothing is merged, looked up or looped over per call.
    """
    if len(set(names)) != len(names):
        raise ValueError(f"trusted_builder({model.__name__}): a field named twice in {names}")
    defaults, factories, allows_extra = _template_of(model)
    factory_of = dict(factories)
    scope: dict[str, Any] = {
        "_model": model,
        "_new": object.__new__,
        "_set_dict": _SET_DICT,
        "_set_fields_set": _SET_FIELDS_SET,
        "_set_extra": _SET_EXTRA,
        "_set_private": _SET_PRIVATE,
    }
    entries: list[tuple[str, str | None]] = []  # (field, the expression of its value; None: a constant)
    constants: dict[str, Any] = {}
    for index, name in enumerate(defaults):
        if name in names:
            entries.append((name, f"v{names.index(name)}"))
        elif factory_of.get(name) is dict:
            entries.append((name, "{}"))
        elif factory_of.get(name) is list:
            entries.append((name, "[]"))
        elif name in factory_of:
            entries.append((name, f"_factory{index}()"))
            scope[f"_factory{index}"] = factory_of[name]
        else:  # an immutable default (mutable ones have a factory): shared, as validation does
            entries.append((name, None))
            constants[name] = defaults[name]
    # Names that are no field follow, in their order (``trusted`` merges them the same way).
    entries.extend((name, f"v{index}") for index, name in enumerate(names) if name not in defaults)
    values = _values_source(entries, constants, scope)
    parameters = ", ".join(f"v{index}" for index in range(len(names)))
    if issubclass(model, _FieldsSetOwner):  # one set for every record made here
        scope["_given"], given = SharedFieldsSet(names), "_given"
    else:
        given = "{" + ", ".join(repr(name) for name in names) + "}" if names else "set()"
    source = (  # what _made does, inline: a call fewer per record
        f"def build({parameters}):\n"
        f"{values}"
        f"    made = _new(_model)\n"
        f"    _set_dict(made, values)\n"
        f"    _set_fields_set(made, {given})\n"
        f"    _set_extra(made, {'{}' if allows_extra else 'None'})\n"
        f"    _set_private(made, None)\n"
        f"    return made\n"
    )
    exec(source, scope)  # noqa: S102 - the source is made of field names and local names
    build: Callable[..., M] = scope["build"]
    build.__qualname__ = build.__name__ = f"build_{model.__name__}"
    return build


def _values_source(
    entries: list[tuple[str, str | None]], constants: dict[str, Any], scope: dict[str, Any]
) -> str:
    """The builder's lines making ``values``, the record's ``__dict__`` in ``entries``'
    order. When most fields are constants: a copy of a template holding them (a dict's
    copy is one block copied), then a store per other field; else one dict display."""
    computed = [(name, value) for name, value in entries if value is not None]
    if len(computed) * 4 <= len(entries) * 3:
        scope["_copy_template"] = {name: constants.get(name) for name, _ in entries}.copy
        stores = "".join(f"    values[{name!r}] = {value}\n" for name, value in computed)
        return f"    values = _copy_template()\n{stores}"
    shown = []
    for index, (name, value) in enumerate(entries):
        if value is None:
            value = f"_constant{index}"
            scope[value] = constants[name]
        shown.append(f"{name!r}: {value}")
    return f"    values = {{{', '.join(shown)}}}\n"


def _made(model: type[M], values: dict[str, Any], fields_set: set[str], allows_extra: bool) -> M:
    made = object.__new__(model)
    _SET_DICT(made, values)
    _SET_FIELDS_SET(made, fields_set)
    _SET_EXTRA(made, {} if allows_extra else None)
    _SET_PRIVATE(made, None)
    return made


def _template_of(model: type[BaseModel]) -> _Template:
    template = _TEMPLATES.get(model)
    if template is None:
        template = _TEMPLATES[model] = _template(model)
    return template


def _template(model: type[BaseModel]) -> _Template:
    defaults: dict[str, Any] = {}
    factories: list[tuple[str, Any]] = []
    for name, field in model.model_fields.items():
        default = None if field.default is PydanticUndefined else field.default
        defaults[name] = default
        if field.default_factory is not None:
            factories.append((name, field.default_factory))
        elif not isinstance(default, (str, int, float, bool, tuple, frozenset, type(None))):
            factories.append((name, functools.partial(copy.deepcopy, default)))  # as pydantic copies it
    return defaults, tuple(factories), model.model_config.get("extra") == "allow"


class _Record(_FieldsSetOwner, BaseModel):
    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)


class Example(_Record):
    """One row of a dataset: the inputs for the target and reference outputs."""

    id: uuid.UUID = Field(default_factory=new_id)
    dataset_id: uuid.UUID | None = None
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    created_at: datetime = Field(default_factory=utcnow)
    modified_at: datetime | None = None
    attachments: dict[str, Any] | None = None
    source_run_id: uuid.UUID | None = None


class Attachment(NamedTuple):
    """A file given with an example (or a traced call): its MIME type and its bytes, or
    the path of a file holding them (LangSmith's ``schemas.Attachment``)."""

    mime_type: str
    data: bytes | Path


Attachments = dict[str, tuple[str, bytes] | tuple[str, Path] | Attachment | dict[str, Any]]
"""An example's attachments as given: by name, ``(mime_type, bytes)``, ``(mime_type, path)``,
an ``Attachment`` or ``{"mime_type", "data"}``."""


@runtime_checkable
class BinaryIOLike(Protocol):
    """What an attachment's ``reader`` offers (a ``BytesIO`` does)."""

    def read(self, size: int = -1) -> bytes: ...

    def seek(self, offset: int, whence: int = 0) -> int: ...

    def getvalue(self) -> bytes: ...


class AttachmentInfo(TypedDict):
    """An attachment as an example read back holds it: ``reader`` (its bytes),
    ``mime_type``, and ``presigned_url`` (a ``data:`` URL of the bytes here: what a model
    API takes as an image URL, where LangSmith gives a link to its storage)."""

    presigned_url: str
    reader: BinaryIOLike
    mime_type: str | None


class AttachmentsOperations(BaseModel):
    """What an update does with the example's stored attachments: ``rename`` (old name
    -> new name) and ``retain`` (names kept as they are); any other is dropped."""

    rename: dict[str, str] = Field(default_factory=dict)
    retain: list[str] = Field(default_factory=list)


class ExampleCreate(BaseModel):
    """An example to add (LangSmith's ``ExampleCreate``); ``outputs`` is the older name
    of ``reference_outputs``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: uuid.UUID | None = None
    created_at: datetime = Field(default_factory=utcnow)
    inputs: dict[str, Any] | None = None
    reference_outputs: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    split: str | list[str] | None = None
    attachments: dict[str, Any] | None = None

    @model_validator(mode="before")
    @classmethod
    def _older_outputs(cls, data: Any) -> Any:
        if isinstance(data, dict) and "outputs" in data:
            if data.get("reference_outputs") is not None:
                raise ValueError("Cannot specify both 'reference_outputs' and 'outputs'.")
            data = {**data, "reference_outputs": data["outputs"]}
            del data["outputs"]
        return data

    @property
    def outputs(self) -> dict[str, Any] | None:
        return self.reference_outputs


ExampleUploadWithAttachments = ExampleCreate


class ExampleUpsertWithAttachments(ExampleCreate):
    """An example to add to the dataset ``dataset_id`` (``Client.upsert_examples_multipart``)."""

    dataset_id: uuid.UUID


class ExampleUpdate(BaseModel):
    """An edit of a stored example (``Client.update_examples``): the fields given replace
    the stored ones; ``attachments`` adds (or replaces, by name) files and
    ``attachments_operations`` says which stored ones stay."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    id: uuid.UUID
    dataset_id: uuid.UUID | None = None
    inputs: dict[str, Any] | None = None
    outputs: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    split: str | list[str] | None = None
    attachments: dict[str, Any] | None = None
    attachments_operations: AttachmentsOperations | None = None


ExampleUpdateWithAttachments = ExampleUpdate


class ExampleWithRuns(Example):
    """An example with the runs an experiment made of it (``Client.get_experiment_results``)."""

    runs: list[Run] = Field(default_factory=list)


class Dataset(_Record):
    """A named, versioned collection of examples."""

    id: uuid.UUID = Field(default_factory=new_id)
    name: str
    description: str | None = None
    created_at: datetime = Field(default_factory=utcnow)
    example_count: int = 0
    version: int = 0
    metadata: dict[str, Any] = Field(default_factory=dict)


class Run(_Record):
    """One execution of a target (or of a step inside it, as a child run)."""

    id: uuid.UUID = Field(default_factory=new_id)
    name: str = "target"
    run_type: str = "chain"
    inputs: dict[str, Any] = Field(default_factory=dict)
    outputs: dict[str, Any] | None = None
    error: str | None = None
    start_time: datetime = Field(default_factory=utcnow)
    end_time: datetime | None = None
    child_runs: list[Run] = Field(default_factory=list)
    parent_run_id: uuid.UUID | None = None
    trace_id: uuid.UUID | None = None
    events: list[dict[str, Any]] = Field(default_factory=list)
    extra: dict[str, Any] = Field(default_factory=dict)
    reference_example_id: uuid.UUID | None = None
    tags: list[str] | None = None
    session_id: uuid.UUID | None = None
    dotted_order: str | None = None
    attachments: dict[str, Any] | None = None

    @property
    def latency_ms(self) -> float | None:
        if self.end_time is None:
            return None
        return (self.end_time - self.start_time).total_seconds() * 1000.0

    @property
    def metadata(self) -> dict[str, Any]:
        """LangSmith keeps a run's metadata in ``extra["metadata"]``."""
        found = self.extra.get("metadata")
        return found if isinstance(found, dict) else {}

    @property
    def is_root(self) -> bool:
        return self.parent_run_id is None


_READ_BACK = "read_back"  # validation context of a result a store reads back


def stored_result(**fields: Any) -> EvaluationResult:
    """A result read back from a store: validated as any, without the warnings its maker saw."""
    return EvaluationResult.model_validate(fields, context={_READ_BACK: True})


class EvaluationResult(_FieldsSetOwner, BaseModel):
    """A single metric, with one of three outcomes:

    - a *score* (``score`` set, possibly 0): counted in the mean;
    - an *error* (``error`` set, ``score`` None): the evaluator itself failed; excluded
      from the mean, counted and shown;
    - *skipped* (``skipped`` True): the target failed and the evaluator needs its outputs,
      so it was not called; excluded from the mean, counted and shown.

    ``direction`` ("higher" or "lower" is better) and ``score_range`` ((low, high), None
    for unbounded) may be passed too; they are kept in ``evaluator_info``.
    """

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    key: str
    score: float | int | bool | None = None
    value: Any = None
    feedback: str | None = None
    comment: str | None = None
    correction: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    evaluator_info: dict[str, Any] = Field(default_factory=dict)
    source_run_id: uuid.UUID | None = None
    target_run_id: uuid.UUID | None = None
    feedback_config: dict[str, Any] | None = None
    error: str | None = None

    @field_validator("score")
    @classmethod
    def _finite(cls, score: Any) -> Any:
        if isinstance(score, float) and not math.isfinite(score):
            raise ValueError(f"score must be a finite number, got {score!r}")
        return score

    @model_validator(mode="before")
    @classmethod
    def _metric_info_in_evaluator_info(cls, data: Any) -> Any:
        if not isinstance(data, dict) or not ("direction" in data or "score_range" in data):
            return data
        data = dict(data)
        info = dict(data.get("evaluator_info") or {})
        direction, bounds = data.pop("direction", None), data.pop("score_range", None)
        if direction is not None:
            info["direction"] = check_direction(direction)
        if bounds is not None:
            info["score_range"] = list(check_range(bounds))
        data["evaluator_info"] = info
        return data

    @field_validator("metadata", "evaluator_info", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value

    @model_validator(mode="after")
    def _warn_numeric_value(self, info: ValidationInfo) -> EvaluationResult:
        """``value=5`` is a score given to the wrong field: averaged nowhere. Say so, as
        LangSmith does; once, when made, not each time a store reads it back."""
        read_back = bool(info.context and info.context.get(_READ_BACK))
        if not read_back and self.score is None and isinstance(self.value, (int, float)):
            _log.warning(
                "Numeric values should be provided in the 'score' field, not 'value'. Got: %s", self.value
            )
        return self

    @property
    def direction(self) -> Direction | None:
        """Which way is better, when declared."""
        info = MetricInfo.of(self.evaluator_info)
        return info.direction if "direction" in self.evaluator_info else None

    @property
    def score_range(self) -> Range | None:
        return MetricInfo.of(self.evaluator_info).score_range

    @property
    def skipped(self) -> bool:
        """Not called: the target failed and this evaluator needs the target's outputs."""
        return self.error is None and self.score is None and self.metadata.get("skipped") is True

    @property
    def outcome(self) -> str:
        """``"score"``, ``"error"``, ``"skipped"``, or ``"value"`` (no score, only a value)."""
        if self.error is not None:
            return "error"
        if self.score is not None:
            return "score"
        return "skipped" if self.skipped else "value"

    @property
    def numeric_score(self) -> float | None:
        """The score as a float, or None when absent or errored."""
        if self.error is not None or self.score is None:
            return None
        return float(self.score)


class EvaluationResults(BaseModel):
    """Several metrics from one evaluator call.

    LangSmith's ``EvaluationResults`` is a dict ``{"results": [...]}``, so this record
    also reads like one: ``returned["results"]``, ``returned.get("results")``.
    """

    results: list[EvaluationResult] = Field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        if key != "results":
            raise KeyError(key)
        return self.results

    def get(self, key: str, default: Any = None) -> Any:
        return self.results if key == "results" else default

    def __contains__(self, key: object) -> bool:
        return key == "results"

    def keys(self) -> list[str]:
        return ["results"]


class ComparisonEvaluationResult(BaseModel):
    """A comparative evaluator's verdict on several runs of one example: a score per run."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    key: str
    scores: dict[uuid.UUID | str, float | int | bool | None]
    source_run_id: uuid.UUID | str | None = None
    comment: str | dict[uuid.UUID | str, str] | None = None


class Feedback(_Record):
    """A score or note on a run from a person or a program (``Client.create_feedback``)."""

    id: uuid.UUID = Field(default_factory=new_id)
    run_id: uuid.UUID | None = None
    trace_id: uuid.UUID | None = None
    key: str
    score: float | int | bool | None = None
    value: Any = None
    comment: str | None = None
    correction: Any = None
    feedback_source: dict[str, Any] | None = None
    session_id: uuid.UUID | None = None
    created_at: datetime = Field(default_factory=utcnow)
    modified_at: datetime | None = None
    extra: dict[str, Any] | None = None


class TracerSession(_Record):
    """LangSmith's project; in assay every experiment is one (``Client.read_project``)."""

    id: uuid.UUID = Field(default_factory=new_id)
    name: str
    description: str | None = None
    start_time: datetime = Field(default_factory=utcnow)
    end_time: datetime | None = None
    reference_dataset_id: uuid.UUID | None = None
    extra: dict[str, Any] | None = None
    run_count: int | None = None

    @property
    def metadata(self) -> dict[str, Any]:
        found = (self.extra or {}).get("metadata")
        return found if isinstance(found, dict) else {}
