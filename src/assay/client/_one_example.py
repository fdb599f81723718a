"""``Client.create_example``'s LangSmith arguments: its order checked, reference outputs
under either name, and the inputs, outputs or files of a source run. Imported when first
called (``import assay`` loads a bounded set of modules)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from assay.errors import ExampleInputError
from assay.schemas import Run


def refuse_assay_order(dataset_id: Any, dataset_name: Any) -> None:
    """``create_example`` takes LangSmith's order, ``(inputs, dataset_id, dataset_name, ...)``:
    a dict second or third means code written for assay's older ``(inputs, outputs,
    metadata)`` order, which must not become a dataset's id or name."""
    if isinstance(dataset_id, Mapping) or isinstance(dataset_name, Mapping):
        raise TypeError(
            "create_example(inputs, dataset_id, dataset_name, created_at, reference_outputs, "
            "metadata, ...) takes LangSmith's order: pass the reference outputs as outputs= "
            "(or reference_outputs=) and the metadata as metadata="
        )


def reference_of(reference_outputs: Mapping[str, Any] | None, outputs: Mapping[str, Any] | None) -> Any:
    if reference_outputs is not None and outputs is not None:
        raise ValueError("create_example: pass reference_outputs= or outputs= (its older name), not both")
    return reference_outputs if reference_outputs is not None else outputs


def from_source_run(
    run: Run, fields: dict[str, Any], *, use_io: bool, attachment_names: Sequence[str] | None
) -> dict[str, Any]:
    """``fields`` with the source run's inputs and outputs (``use_io``) and the named files
    it was given (``attachment_names``); a name the run has no file for is an error."""
    fields = dict(fields)
    if use_io:
        fields["inputs"], fields["outputs"] = dict(run.inputs), dict(run.outputs or {}) or None
    if attachment_names:
        held = run.attachments or {}
        missing = [name for name in attachment_names if name not in held]
        if missing:
            raise ExampleInputError(
                f"use_source_run_attachments: run {run.id} has no attachment {missing} "
                f"(it has {sorted(held) or 'none'}); nothing was stored"
            )
        chosen = {name: held[name] for name in attachment_names}
        fields["attachments"] = {**(fields.get("attachments") or {}), **chosen}
    return fields


def source_run_id_of(
    source_run_id: Any, use_io: bool, attachment_names: Sequence[str] | None
) -> uuid.UUID | None:
    """The run to copy from; asking to copy without naming one is an error."""
    if source_run_id is None:
        if use_io or attachment_names:
            raise ValueError(
                "use_source_run_io / use_source_run_attachments need source_run_id= (the run to copy)"
            )
        return None
    from assay.client._projects import as_uuid

    return as_uuid(source_run_id, "source_run_id")
