"""The parts of LangSmith's ``Client`` about runs, projects and feedback, over the local
store. In assay every experiment is a project (a ``TracerSession``) and its rows' runs are
the project's runs."""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from assay.errors import NotFoundError
from assay.schemas import Feedback, Run, TracerSession, dotted_order_of
from assay.store import Store
from assay.store.records import ExperimentRecord

ID = uuid.UUID | str


def as_uuid(value: ID, parameter: str) -> uuid.UUID:
    if isinstance(value, uuid.UUID):
        return value
    try:
        return uuid.UUID(str(value))
    except ValueError:
        raise ValueError(f"{parameter}={value!r} is not a UUID") from None


class ProjectsRunsFeedback:
    """Mixed into ``Client``."""

    store: Store

    # projects (= experiments)
    def read_project(
        self,
        *,
        project_id: ID | None = None,
        project_name: str | None = None,
        include_stats: bool = False,
    ) -> TracerSession:
        return _session(self._experiment(project_id, project_name), self.store)

    def list_projects(
        self,
        project_ids: Sequence[ID] | None = None,
        name: str | None = None,
        name_contains: str | None = None,
        reference_dataset_id: ID | None = None,
        reference_dataset_name: str | None = None,
        limit: int | None = None,
        **ignored: Any,
    ) -> Iterator[TracerSession]:
        ids = {as_uuid(i, "project_ids") for i in project_ids} if project_ids is not None else None
        dataset_id = as_uuid(reference_dataset_id, "reference_dataset_id") if reference_dataset_id else None
        if reference_dataset_name is not None:
            dataset = self.store.get_dataset(name=reference_dataset_name)
            if dataset is None:
                return
            dataset_id = dataset.id
        found = 0
        for record in self.store.list_experiments():
            if (
                (ids is not None and record.id not in ids)
                or (name is not None and record.name != name)
                or (name_contains is not None and name_contains not in record.name)
                or (dataset_id is not None and record.dataset_id != dataset_id)
            ):
                continue
            if limit is not None and found >= limit:
                return
            found += 1
            yield _session(record, self.store)

    def create_project(
        self,
        project_name: str,
        *,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
        upsert: bool = False,
        reference_dataset_id: ID | None = None,
        project_extra: dict[str, Any] | None = None,
        **ignored: Any,
    ) -> TracerSession:
        """An empty experiment; ``upsert=True`` returns the existing one of that name.
        ``project_extra`` (LangSmith's) is kept with the metadata, under ``project_extra``."""
        existing = self.store.get_experiment(name=project_name)
        if existing is not None:
            if upsert:
                return _session(existing, self.store)
            raise ValueError(
                f"a project (experiment) named {project_name!r} already exists in {self.store.url}"
            )
        record = ExperimentRecord(
            name=project_name,
            description=description,
            metadata={**(metadata or {}), **({"project_extra": project_extra} if project_extra else {})},
            dataset_id=as_uuid(reference_dataset_id, "reference_dataset_id")
            if reference_dataset_id
            else None,
            status="completed",
        )
        self.store.create_experiment(record)
        return _session(record, self.store)

    def has_project(self, project_name: str, *, project_id: ID | None = None) -> bool:
        """Whether an experiment of that name (or id) exists."""
        if project_id is not None:
            return self.store.get_experiment(id=as_uuid(project_id, "project_id")) is not None
        return self.store.get_experiment(name=project_name) is not None

    def update_project(
        self,
        project_id: ID,
        *,
        name: str | None = None,
        description: str | None = None,
        metadata: dict[str, Any] | None = None,
        project_extra: dict[str, Any] | None = None,
        **ignored: Any,
    ) -> TracerSession:
        """Rename an experiment, or replace its description or metadata (``project_extra`` is
        kept in the metadata, as ``create_project`` keeps it)."""
        record = self._experiment(project_id, None)
        if name is not None and name != record.name and self.store.get_experiment(name=name) is not None:
            raise ValueError(f"a project (experiment) named {name!r} already exists in {self.store.url}")
        if project_extra is not None:
            metadata = {**(record.metadata if metadata is None else metadata), "project_extra": project_extra}
        self.store.update_experiment(record.id, name=name, description=description, metadata=metadata)
        return _session(self._experiment(record.id, None), self.store)

    def delete_project(self, *, project_name: str | None = None, project_id: ID | None = None) -> None:
        """Delete an experiment with its runs, results and feedback."""
        self.store.delete_experiment(self._experiment(project_id, project_name).id)

    def _experiment(self, project_id: ID | None, project_name: str | None) -> ExperimentRecord:
        if project_id is None and project_name is None:
            raise ValueError("pass project_name= or project_id=")
        if project_id is not None:
            record = self.store.get_experiment(id=as_uuid(project_id, "project_id"))
        else:
            record = self.store.get_experiment(name=project_name)
        if record is None:
            what = f"named {project_name!r}" if project_id is None else f"with id {project_id}"
            raise NotFoundError(f"no project (experiment) {what} in {self.store.url}")
        return record

    # runs
    def create_run(
        self,
        name: str,
        inputs: dict[str, Any],
        run_type: str,
        *,
        project_name: str | None = None,
        revision_id: str | None = None,
        dangerously_allow_filesystem: bool = False,
        **kwargs: Any,
    ) -> None:
        """Store a run with no example in a tracing project (LangSmith's ``create_run``):
        ``project_name``, else ``session_id``/``session_name``'s, else
        ``$LANGSMITH_PROJECT``, else ``"default"``, made on first use. ``kwargs`` are run
        fields (``id``, ``parent_run_id``, ``start_time``, ``outputs``, ``extra``, ...)."""
        from assay.client import _runs  # its codec loads on first use, not with assay

        _runs.create_run(
            self,  # type: ignore[arg-type]
            name,
            inputs,
            run_type,
            project_name=project_name,
            revision_id=revision_id,
            dangerously_allow_filesystem=dangerously_allow_filesystem,
            **kwargs,
        )

    def update_run(
        self,
        run_id: ID,
        *,
        name: str | None = None,
        run_type: str | None = None,
        start_time: datetime | None = None,
        end_time: datetime | None = None,
        error: str | None = None,
        inputs: dict[str, Any] | None = None,
        outputs: dict[str, Any] | None = None,
        events: list[dict[str, Any]] | None = None,
        extra: dict[str, Any] | None = None,
        tags: list[str] | None = None,
        attachments: dict[str, Any] | None = None,
        dangerously_allow_filesystem: bool = False,
        reference_example_id: ID | None = None,
        **kwargs: Any,
    ) -> None:
        """Change a run ``create_run`` stored (its end, outputs, error, ...); what is left
        out (None) keeps its value; ``extra["metadata"]`` is merged into the stored one."""
        from assay.client import _runs

        _runs.update_run(
            self,  # type: ignore[arg-type]
            run_id,
            name=name,
            run_type=run_type,
            start_time=start_time,
            end_time=end_time,
            error=error,
            inputs=inputs,
            outputs=outputs,
            events=events,
            extra=extra,
            tags=tags,
            attachments=attachments,
            dangerously_allow_filesystem=dangerously_allow_filesystem,
            reference_example_id=reference_example_id,
            **kwargs,
        )

    def list_runs(
        self,
        *,
        project_id: ID | Sequence[ID] | None = None,
        project_name: str | Sequence[str] | None = None,
        run_type: str | None = None,
        trace_id: ID | None = None,
        reference_example_id: ID | None = None,
        parent_run_id: ID | None = None,
        error: bool | None = None,
        run_ids: Sequence[ID] | None = None,
        is_root: bool | None = None,
        limit: int | None = None,
        **ignored: Any,
    ) -> Iterator[Run]:
        """The runs of the named experiments (root runs and their traced children), filtered
        as LangSmith does; ``trace_id`` is a root run's id."""
        wanted = _RunFilter(
            run_type=run_type,
            error=error,
            is_root=is_root,
            trace_id=as_uuid(trace_id, "trace_id") if trace_id else None,
            example_id=as_uuid(reference_example_id, "reference_example_id")
            if reference_example_id
            else None,
            parent_id=as_uuid(parent_run_id, "parent_run_id") if parent_run_id else None,
            ids={as_uuid(i, "run_ids") for i in run_ids} if run_ids is not None else None,
        )
        found = 0
        for run in self._runs_of(project_id, project_name, wanted.trace_id):
            if not wanted.accepts(run):
                continue
            if limit is not None and found >= limit:
                return
            found += 1
            yield run

    def _runs_of(
        self,
        project_id: ID | Sequence[ID] | None,
        project_name: str | Sequence[str] | None,
        trace_id: uuid.UUID | None,
    ) -> Iterator[Run]:
        """Each project's runs: its rows' runs with their traced children, then the runs
        ``create_run`` stored there (flat, oldest first). A trace alone needs no project."""
        if project_id is None and project_name is None and trace_id is not None:
            yield from self.store.iter_traced_runs(trace_id=trace_id)
            return
        for record in self._projects(project_id, project_name):
            for row in self.store.load_rows(record):
                yield from _walk(row.run, record.id, row.run.id)
            yield from self.store.iter_traced_runs(record.id)

    def read_run(self, run_id: ID, load_child_runs: bool = False, **ignored: Any) -> Run:
        wanted = as_uuid(run_id, "run_id")
        traced = self.store.get_traced_run(wanted)
        if traced is not None:  # stored by create_run: its children are runs of its trace
            if not load_child_runs:
                return traced
            return tree_of(traced, self.store.list_traced_runs(trace_id=traced.trace_id))
        located = self.store.find_run(wanted)
        if located is not None:
            experiment_id, root = located
            for run in _walk(root, experiment_id, root.id):
                if run.id == wanted:
                    return run if load_child_runs else run.model_copy(update={"child_runs": []})
        raise NotFoundError(f"no run with id {run_id} in {self.store.url}")

    def _projects(
        self, project_id: ID | Sequence[ID] | None, project_name: str | Sequence[str] | None
    ) -> list[ExperimentRecord]:
        if project_id is None and project_name is None:
            raise ValueError("list_runs needs project_name= or project_id= (an experiment), or trace_id=")
        ids = [project_id] if isinstance(project_id, (str, uuid.UUID)) else list(project_id or [])
        names = [project_name] if isinstance(project_name, str) else list(project_name or [])
        return [self._experiment(i, None) for i in ids] + [self._experiment(None, n) for n in names]

    # feedback
    def create_feedback(
        self,
        run_id: ID | None = None,
        key: str = "unnamed",
        *,
        score: float | int | bool | None = None,
        value: Any = None,
        trace_id: ID | None = None,
        correction: Any = None,
        comment: str | None = None,
        source_info: dict[str, Any] | None = None,
        feedback_source_type: Any = "api",
        feedback_id: ID | None = None,
        project_id: ID | None = None,
        extra: dict[str, Any] | None = None,
        **ignored: Any,
    ) -> Feedback:
        """Store a score or note on a run (shown on the run's row page, kept in exports)."""
        if run_id is None and trace_id is None:
            raise ValueError("create_feedback needs run_id= (or trace_id=), the run it is about")
        if score is not None and not isinstance(score, (int, float)):
            raise TypeError(f"score= must be a number or a bool, got {type(score).__name__}")
        target = as_uuid(run_id if run_id is not None else trace_id, "run_id")  # type: ignore[arg-type]
        located = self.store.find_run(target)
        traced = self.store.get_traced_run(target) if located is None else None
        if traced is not None and traced.session_id is not None and traced.trace_id is not None:
            located = (traced.session_id, traced.model_copy(update={"id": traced.trace_id}))
        source_type = str(getattr(feedback_source_type, "value", feedback_source_type))
        feedback = Feedback(
            run_id=target,
            trace_id=as_uuid(trace_id, "trace_id") if trace_id else (located[1].id if located else None),
            session_id=located[0] if located else (as_uuid(project_id, "project_id") if project_id else None),
            key=key,
            score=score,
            value=value,
            comment=comment,
            correction=correction,
            feedback_source={"type": source_type, "metadata": dict(source_info or {})},
            extra=extra,
        )
        if feedback_id is not None:
            feedback.id = as_uuid(feedback_id, "feedback_id")
        self.store.add_feedback(feedback)
        return feedback

    def read_feedback(self, feedback_id: ID) -> Feedback:
        """One piece of feedback by id: created with ``create_feedback``, or an evaluator's result."""
        wanted = as_uuid(feedback_id, "feedback_id")
        found = self.store.get_feedback(wanted)
        if found is None:  # an evaluator's result, listed as feedback
            found = next((f for f in self.store.list_feedback() if f.id == wanted), None)
        if found is None:
            raise NotFoundError(f"no feedback with id {wanted} in {self.store.url}")
        return found

    def update_feedback(
        self,
        feedback_id: ID,
        *,
        score: float | int | bool | None = None,
        value: Any = None,
        correction: Any = None,
        comment: str | None = None,
        **ignored: Any,
    ) -> None:
        """Change created feedback; the arguments left out (None) keep their values."""
        if score is not None and not isinstance(score, (int, float)):
            raise TypeError(f"score= must be a number or a bool, got {type(score).__name__}")
        fields = {"score": score, "value": value, "correction": correction, "comment": comment}
        self._change_feedback(feedback_id, "update", {k: v for k, v in fields.items() if v is not None})

    def delete_feedback(self, feedback_id: ID) -> None:
        """Delete created feedback (an evaluator's result goes with its experiment)."""
        self._change_feedback(feedback_id, "delete", {})

    def _change_feedback(self, feedback_id: ID, action: str, fields: dict[str, Any]) -> None:
        wanted = as_uuid(feedback_id, "feedback_id")
        store = self.store
        done = store.update_feedback(wanted, fields) if action == "update" else store.delete_feedback(wanted)
        if done:
            return
        if any(f.id == wanted for f in store.list_feedback()):
            raise ValueError(
                f"feedback {wanted} is an evaluator's result, kept with its experiment: re-score the "
                f"experiment (evaluate('<experiment>', evaluators=[...])) instead of {action}_feedback"
            )
        raise NotFoundError(f"no feedback with id {wanted} in {store.url}")

    def list_feedback(
        self,
        *,
        run_ids: Sequence[ID] | None = None,
        feedback_key: Sequence[str] | None = None,
        feedback_source_type: Sequence[Any] | None = None,
        limit: int | None = None,
        **ignored: Any,
    ) -> Iterator[Feedback]:
        """Feedback on the runs: what ``create_feedback`` stored, then the evaluators'
        results (``feedback_source["type"] == "evaluator"``)."""
        ids = [as_uuid(r, "run_ids") for r in run_ids] if run_ids is not None else None
        keys = [feedback_key] if isinstance(feedback_key, str) else feedback_key
        sources = (
            {str(getattr(s, "value", s)) for s in feedback_source_type} if feedback_source_type else None
        )
        found = 0
        for feedback in self.store.list_feedback(ids, list(keys) if keys is not None else None):
            if sources is not None and (feedback.feedback_source or {}).get("type") not in sources:
                continue
            if limit is not None and found >= limit:
                return
            found += 1
            yield feedback


class _RunFilter:
    def __init__(
        self,
        *,
        run_type: str | None,
        error: bool | None,
        is_root: bool | None,
        trace_id: uuid.UUID | None,
        example_id: uuid.UUID | None,
        parent_id: uuid.UUID | None,
        ids: set[uuid.UUID] | None,
    ) -> None:
        self.run_type, self.error, self.is_root = run_type, error, is_root
        self.trace_id, self.example_id, self.parent_id, self.ids = trace_id, example_id, parent_id, ids

    def accepts(self, run: Run) -> bool:
        return not (
            (self.run_type is not None and run.run_type != self.run_type)
            or (self.error is not None and (run.error is not None) != self.error)
            or (self.is_root is not None and (run.parent_run_id is None) != self.is_root)
            or (self.trace_id is not None and run.trace_id != self.trace_id)
            or (self.example_id is not None and run.reference_example_id != self.example_id)
            or (self.parent_id is not None and run.parent_run_id != self.parent_id)
            or (self.ids is not None and run.id not in self.ids)
        )


def tree_of(root: Run, runs: list[Run]) -> Run:
    """``root`` with its descendants among ``runs`` (flat, each naming its parent) as
    ``child_runs``, each level in start order."""
    children: dict[uuid.UUID, list[Run]] = {}
    for run in runs:
        if run.parent_run_id is not None:
            children.setdefault(run.parent_run_id, []).append(run)

    def built(run: Run, depth: int) -> Run:
        below = children.get(run.id, []) if depth < 1000 else []
        return run.model_copy(update={"child_runs": [built(child, depth + 1) for child in below]})

    return built(root, 0)


def _walk(run: Run, experiment_id: uuid.UUID, trace_id: uuid.UUID) -> Iterator[Run]:
    """The run, then its descendants, each knowing its experiment (session) and trace."""
    run.session_id = experiment_id
    run.trace_id = run.trace_id or trace_id
    if run.dotted_order is None and run.parent_run_id is None:
        run.dotted_order = dotted_order_of(run.start_time, run.id, None)
    yield run
    for child in run.child_runs:
        yield from _walk(child, experiment_id, trace_id)


def _session(record: ExperimentRecord, store: Store) -> TracerSession:
    return TracerSession(
        id=record.id,
        name=record.name,
        description=record.description,
        start_time=record.created_at,
        end_time=record.finished_at,
        reference_dataset_id=record.dataset_id,
        extra={"metadata": dict(record.metadata)},
        run_count=len(store.completed_keys(record.id)),
    )
