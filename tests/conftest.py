"""Fixtures every part of the suite shares: no model, embeddings or tracing configuration
leaks in from the developer's environment, a fresh in-memory store on request, a client on a
SQLite file of its own, and one PostgreSQL server per session with a fresh, migrated
database per test that asks for one (``postgres_store_url``, ``store_url``)."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, settings

from assay import Client
from assay.store import Store, open_store
from assay.store.current import use_store


def _load_helper(module: str) -> ModuleType:
    """A helper module beside this file, e.g. ``_postgres`` (tests are not a package
    under importlib mode)."""
    name = f"assay_tests{module}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{module}.py"))
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[name] = loaded
        spec.loader.exec_module(loaded)
    return sys.modules[name]


# Property tests assert what holds, never how fast: no per-example deadline and no "input
# generation is slow" check, which a loaded CI worker failed (test_inline_import,
# test_row_fields) with inputs that pass when run again.
settings.register_profile("assay", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("assay")

pg = _load_helper("_postgres")
requirements = _load_helper("_requirements")  # the per-requirement markers (postgres, ray, ...)
scheduling = _load_helper("_scheduling")  # the parallel and the serial phase of scripts/test
sandbox_fixtures = _load_helper("_sandbox_fixtures")  # of tests/sandbox and tests/evaluators/code
_load_helper("_schema_history")  # a store set back to an earlier schema (migration tests)


def pytest_configure(config: pytest.Config) -> None:
    requirements.configure(config)
    scheduling.configure(config)
    config.pluginmanager.register(sandbox_fixtures, "assay_tests_sandbox_fixtures")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    requirements.mark(items)
    scheduling.mark(config, items, requirements.needs_of)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    return scheduling.ignored(collection_path)


def pytest_runtest_setup(item: pytest.Item) -> None:
    requirements.check(item)


@pytest.fixture
def assert_linear() -> object:
    """``assert_linear(parse, make, size)``: 10x the input costs at most 20x the time
    (tests/_linear.py)."""
    spec = importlib.util.spec_from_file_location(
        "assay_tests_linear", Path(__file__).with_name("_linear.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.assert_linear


#: what configures a judge model or an embeddings provider from the environment
MODEL_ENV = (
    "ASSAY_JUDGE_MODEL",
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ASSAY_JUDGE_CACHE",
    "ASSAY_JUDGE_MAX_CONCURRENCY",
    "ASSAY_EMBEDDINGS",
    # tracing on (traces stored in the default store) and its project
    "LANGSMITH_TRACING_V2",
    "LANGCHAIN_TRACING_V2",
    "LANGSMITH_TRACING",
    "LANGCHAIN_TRACING",
    "ASSAY_TRACING",
    "LANGSMITH_PROJECT",
    "LANGCHAIN_PROJECT",
)


@pytest.fixture(autouse=True)
def no_model_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in MODEL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def memory_store() -> Iterator[Store]:
    """A fresh in-memory store, current for the test (judge and embeddings caches live there)."""
    fresh = open_store("sqlite://")
    with use_store(fresh):
        yield fresh
    fresh.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    """A client on a real SQLite file of its own."""
    client = Client(str(tmp_path / "assay.db"))
    yield client
    client.close()


@pytest.fixture
def examples() -> list[dict]:
    return [{"inputs": {"x": i}, "outputs": {"y": 2 * i}, "metadata": {"parity": i % 2}} for i in range(6)]


# --- PostgreSQL -------------------------------------------------------------------------


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """URL of a PostgreSQL server (maintenance database) the tests may create databases on."""
    with pg.postgres_server() as url:
        yield url


@pytest.fixture(scope="session")
def postgres_store_template(postgres_server_url: str) -> Iterator[str]:
    """A database holding the store's schema, copied for each test (faster than migrating)."""
    url = pg.create_database(postgres_server_url, prefix="assay_template")
    open_store(url).close()
    try:
        yield str(url).rsplit("/", 1)[1]
    finally:
        pg.drop_database(postgres_server_url, url)


@pytest.fixture
def postgres_store_url(postgres_server_url: str, postgres_store_template: str) -> Iterator[str]:
    """URL of a fresh PostgreSQL store database of this test's own (dropped after it)."""
    url = pg.create_database(postgres_server_url, template=postgres_store_template)
    try:
        yield url
    finally:
        pg.drop_database(postgres_server_url, url)


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh store of the test's own, once on a SQLite file and once on PostgreSQL."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'assay.db'}"
    return str(request.getfixturevalue("postgres_store_url"))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def module_store_url(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """A store shared by a module's tests, once on a SQLite file and once on PostgreSQL:
    for modules whose tests only read what one fixture wrote (set-up once, not per test)."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('module_store') / 'assay.db'}"
        return
    server = request.getfixturevalue("postgres_server_url")
    url = pg.create_database(server, template=request.getfixturevalue("postgres_store_template"))
    try:
        yield url
    finally:
        pg.drop_database(server, url)


@pytest.fixture
def any_client(store_url: str) -> Iterator[Client]:
    """A client on ``store_url``: modules that test the store through a client opt in with
    ``client = any_client`` style overrides, to run against both backends."""
    client = Client(store_url)
    yield client
    client.close()


@pytest.fixture
def lock_waiters() -> Callable[[str], int]:
    """How many sessions of a PostgreSQL store's server wait for a lock now."""
    return pg.lock_waiters  # type: ignore[no-any-return]
