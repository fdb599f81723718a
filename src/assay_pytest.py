"""The assay pytest plugin: tests marked ``@pytest.mark.assay`` become an experiment.

LangSmith's ``@pytest.mark.langsmith`` is the same mark (unless LangSmith's own plugin is
installed too, which then keeps it), with its options: ``test_suite_name``,
``output_keys`` (parameters that are reference outputs, not inputs), ``metadata`` (the
example's) and ``experiment_metadata`` (also ``$ASSAY_EXPERIMENT_METADATA`` or
``$LANGSMITH_EXPERIMENT_METADATA``, JSON; the mark's wins).

A top-level module, so that loading it (pytest loads every installed plugin) does not
import assay: inert unless a collected test carries the mark (assay is imported, and the
store opened, only then). Each test
file is a dataset, each session an experiment per file (``<dataset>-<session id>``);
pass/fail is the test's (the ``pass`` metric), and what the test logs with
``assay.testing.log_*`` or checks with ``expect`` is stored with its row. Works under
pytest-xdist: the controller picks the session id and every worker writes one store.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from assay.testing._pytest_recorder import Recorder, Suite

__all__ = [
    "pytest_addoption",
    "pytest_collection_modifyitems",
    "pytest_configure",
    "pytest_configure_node",
    "pytest_runtest_makereport",
    "pytest_runtest_setup",
    "pytest_sessionfinish",
]

_RUN_ID = "assay_run_id"
_METADATA_ENV = ("ASSAY_EXPERIMENT_METADATA", "LANGSMITH_EXPERIMENT_METADATA")
_STATE = pytest.StashKey["_State"]()


class _State:
    def __init__(self, config: pytest.Config, run_id: str) -> None:
        self.config = config
        self.run_id = run_id
        self.suites: dict[str, Suite] = {}
        self.positions: dict[str, int] = {}
        self.options: dict[str, dict[str, Any]] = {}
        self.marks = ("assay",) if config.pluginmanager.has_plugin("langsmith_plugin") else _MARKS
        self._recorder: Recorder | None = None

    @property
    def recorder(self) -> Recorder:
        if self._recorder is None:
            from assay.store.open import open_store
            from assay.testing._pytest_recorder import Recorder

            self._recorder = Recorder(open_store(self.config.getoption("assay_db")), self.run_id)
        return self._recorder


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("assay", "record @pytest.mark.assay tests as assay experiments")
    group.addoption(
        "--assay-db",
        metavar="URL",
        default=None,
        help="store for the experiments (default: $ASSAY_DATABASE_URL or ./.assay/assay.db)",
    )
    group.addoption(
        "--assay-experiment-prefix",
        metavar="PREFIX",
        default=None,
        help="experiment names start with PREFIX instead of the dataset's name",
    )
    group.addoption(
        "--assay-off",
        action="store_true",
        default=False,
        help="run @pytest.mark.assay tests without recording them",
    )


_MARKS = ("assay", "langsmith")


def pytest_configure(config: pytest.Config) -> None:
    for mark in _MARKS:
        config.addinivalue_line(
            "markers",
            f"{mark}(test_suite_name=None, output_keys=None, metadata=None, experiment_metadata=None): "
            "record this test's inputs, outputs and feedback as a row of an assay experiment "
            "(one per test file and session)",
        )
    if config.getoption("assay_off"):
        return
    worker_input = getattr(config, "workerinput", None)
    run_id = worker_input.get(_RUN_ID) if worker_input else None
    config.stash[_STATE] = _State(config, run_id or uuid.uuid4().hex[:8])


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """pytest-xdist: every worker records into the controller's session."""
    state = node.config.stash.get(_STATE, None)
    if state is not None:
        node.workerinput[_RUN_ID] = state.run_id


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    by_suite: dict[str, list[pytest.Item]] = {}
    for item in items:
        marker = _marker(item, state.marks)
        if marker is not None:
            by_suite.setdefault(_suite_name(item, marker), []).append(item)
            state.options[item.nodeid] = dict(marker.kwargs)
    if not by_suite:
        return
    from assay.testing._pytest_recorder import Suite

    prefix = config.getoption("assay_experiment_prefix")
    from_env = _metadata_from_env()
    for name, members in by_suite.items():
        experiment = f"{prefix or name.replace('/', '.')}-{state.run_id}"
        metadata = {**from_env, **_experiment_metadata(members, state)}
        suite = Suite(dataset=name, experiment=experiment, size=len(members), metadata=metadata)
        for position, item in enumerate(members):
            state.suites[item.nodeid] = suite
            state.positions[item.nodeid] = position


def _marker(item: pytest.Item, marks: tuple[str, ...]) -> pytest.Mark | None:
    for name in marks:
        marker = item.get_closest_marker(name)
        if marker is not None:
            return marker
    return None


def _metadata_from_env() -> dict[str, Any]:
    for name in _METADATA_ENV:
        text = os.environ.get(name)
        if text:
            try:
                value = json.loads(text)
            except ValueError as error:
                raise pytest.UsageError(
                    f"${name} is not valid JSON ({error}): set it to a JSON object"
                ) from None
            if not isinstance(value, dict):
                raise pytest.UsageError(f'${name} must be a JSON object, e.g. \'{{"model": "v2"}}\'')
            return value
    return {}


def _experiment_metadata(members: list[pytest.Item], state: _State) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for item in members:
        given = state.options[item.nodeid].get("experiment_metadata")
        if given is not None and not isinstance(given, dict):
            raise pytest.UsageError(f"{item.nodeid}: experiment_metadata= must be a dict, got {given!r}")
        merged.update(given or {})
    return merged


def _suite_name(item: pytest.Item, marker: pytest.Mark) -> str:
    given = marker.kwargs.get("test_suite_name") or marker.kwargs.get("dataset")
    if given:
        return str(given)
    path = Path(str(item.path))
    try:
        path = path.relative_to(item.config.rootpath)
    except ValueError:
        pass
    return path.with_suffix("").as_posix()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    state = item.config.stash.get(_STATE, None)
    if state is not None and item.nodeid in state.suites:
        from assay.testing import _test_log

        _test_log.begin(item.nodeid)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    state = item.config.stash.get(_STATE, None)
    if state is None or item.nodeid not in state.suites:
        return
    done = (report.when == "call") or (report.when == "setup" and not report.passed)
    if not done:
        return
    from assay.testing import _test_log
    from assay.testing._pytest_recorder import Outcome

    record = _test_log.end()
    if record is None or report.skipped:
        return
    failure = None if report.passed else _short(report.longreprtext)
    params = getattr(getattr(item, "callspec", None), "params", {})
    state.recorder.write(
        state.suites[item.nodeid],
        record,
        Outcome(state.positions[item.nodeid], report.passed, failure),
        params,
        state.options[item.nodeid],
    )


def _short(text: str, limit: int = 2000) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None or hasattr(session.config, "workerinput"):
        return  # workers leave finishing to the controller
    if state._recorder is None and not _xdist_wrote(state):
        return
    status = "interrupted" if exitstatus == pytest.ExitCode.INTERRUPTED else "completed"
    state.recorder.finish(status)


def _xdist_wrote(state: _State) -> bool:
    """The xdist controller writes nothing itself; its workers may have (if a store exists)."""
    if not getattr(state.config.option, "numprocesses", None):
        return False
    from assay.store.open import store_exists

    return store_exists(state.config.getoption("assay_db"))
