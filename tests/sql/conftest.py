"""Fixtures for the SQL evaluator tests: the shop database in SQLite and in a real PostgreSQL.

PostgreSQL comes from ``ASSAY_TEST_POSTGRES_URL`` when set (a server where the
user may CREATE DATABASE); otherwise a private server is started from Debian's
binaries (``/usr/lib/postgresql/*/bin``) on a free loopback port, as the
``postgres`` user when running as root, and stopped at the end of the session.
Without either, the tests fail and say to install ``postgresql``: never skipped.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest

POSTGRES_URL_ENV = "ASSAY_TEST_POSTGRES_URL"
INSTALL_HINT = (
    "install the Debian package `postgresql` (apt-get install -y postgresql) so the tests can "
    f"start a private server, or set {POSTGRES_URL_ENV} to a server URL whose user may CREATE DATABASE"
)


def _load_local(name: str) -> ModuleType:
    """A helper module next to this file (tests are not a package under importlib mode)."""
    qualified = f"assay_tests_sql_{name}"
    if qualified not in sys.modules:
        spec = importlib.util.spec_from_file_location(qualified, Path(__file__).with_name(f"{name}.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[qualified] = module
        spec.loader.exec_module(module)
    return sys.modules[qualified]


sample_db = _load_local("sample_db")


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="session")
def shop_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shop database as a SQLite file (shared: tests must never change it)."""
    return sample_db.build_sqlite(tmp_path_factory.mktemp("shop") / "shop.db")


@pytest.fixture(scope="session")
def shop_sql() -> tuple[str, str]:
    """(schema, seed) SQL of the shop database, for per-example fixtures."""
    return sample_db.SCHEMA, sample_db.seed_sql()


# --- PostgreSQL --------------------------------------------------------------------------


@dataclass
class PrivatePostgres:
    """A throwaway PostgreSQL cluster in a temporary directory."""

    bin_dir: Path
    base: Path
    port: int = 0

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def url(self) -> str:
        return f"postgresql://assay@127.0.0.1:{self.port}/postgres"

    def start(self) -> None:
        self._run("initdb", "-D", str(self.data), "-U", "assay", "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")  # fmt: skip
        last_error = ""
        for _attempt in range(3):  # a free port can be taken between probe and bind
            self.port = _free_port()
            options = (
                f"-h 127.0.0.1 -p {self.port} -k {self.base} -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off"
            )
            done = self._run("pg_ctl", "-D", str(self.data), "-l", str(self.base / "server.log"),
                             "-w", "-t", "60", "-o", options, "start", check=False)  # fmt: skip
            if done.returncode == 0:
                return
            last_error = done.stdout + done.stderr + self._log()
        pytest.fail(f"could not start a private PostgreSQL server: {last_error}")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop", check=False)
        shutil.rmtree(self.base, ignore_errors=True)

    def _log(self) -> str:
        log = self.base / "server.log"
        return log.read_text(errors="replace")[-2000:] if log.exists() else ""

    def _run(self, tool: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [str(self.bin_dir / tool), *args]
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            command = ["runuser", "-u", "postgres", "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
        if check and done.returncode != 0:
            pytest.fail(f"{tool} failed ({done.returncode}): {done.stdout}{done.stderr}")
        return done


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _postgres_bin_dir() -> Path | None:
    def version(initdb: Path) -> tuple[int, ...]:
        name = initdb.parent.parent.name
        return tuple(int(part) for part in name.split(".") if part.isdigit())

    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"), key=version)
    if found:
        return found[-1].parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _start_private_server() -> PrivatePostgres:
    bin_dir = _postgres_bin_dir()
    if bin_dir is None:
        pytest.fail(f"PostgreSQL server binaries (initdb, pg_ctl) not found: {INSTALL_HINT}")
    base = Path(tempfile.mkdtemp(prefix="assay-pg-"))
    if os.geteuid() == 0:
        try:
            user = pwd.getpwnam("postgres")
        except KeyError:
            pytest.fail(f"running as root but there is no `postgres` user: {INSTALL_HINT}")
        os.chown(base, user.pw_uid, user.pw_gid)
    server = PrivatePostgres(bin_dir=bin_dir, base=base)
    server.start()
    return server


@pytest.fixture(scope="session")
def postgres_server_url() -> Iterator[str]:
    """URL of a PostgreSQL server (maintenance database) the tests may create databases on."""
    configured = os.environ.get(POSTGRES_URL_ENV)
    if configured:
        yield configured
        return
    server = _start_private_server()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture(scope="session")
def shop_postgres_admin(postgres_server_url: str) -> Iterator[str]:
    """URL of a fresh database holding the shop data, as the server's superuser (dropped at the end)."""
    import psycopg
    from sqlalchemy import make_url

    name = f"assay_sql_test_{uuid.uuid4().hex[:10]}"
    server = make_url(postgres_server_url)
    try:
        admin = psycopg.connect(_libpq_url(server), autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        pytest.fail(f"cannot connect to PostgreSQL at {server.render_as_string()}: {exc}; {INSTALL_HINT}")
    with admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    database = server.set(database=name)
    with psycopg.connect(_libpq_url(database), autocommit=True) as connection:
        connection.execute(sample_db.SCHEMA + sample_db.seed_sql())
    try:
        yield database.render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq_url(server), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


DOCS_SQL = Path(__file__).parents[2] / "docs" / "sql.md"


def documented_role_sql() -> str:
    """The role-creation SQL of docs/sql.md, as a user would copy it."""
    text = DOCS_SQL.read_text()
    section = text[text.index("#### The role to create") :]
    return section.split("```sql\n", 1)[1].split("```", 1)[0]


@pytest.fixture(scope="session")
def shop_postgres(shop_postgres_admin: str, postgres_server_url: str) -> Iterator[str]:
    """URL of the shop database for a role created with docs/sql.md's SQL: read-only, unprivileged."""
    import psycopg
    from sqlalchemy import make_url

    admin_url = make_url(shop_postgres_admin)
    role = f"sql_eval_{uuid.uuid4().hex[:8]}"
    script = documented_role_sql().replace("sql_eval", role).replace("shop", str(admin_url.database))
    with psycopg.connect(_libpq_url(admin_url), autocommit=True) as admin:
        admin.execute(script)
    try:
        yield admin_url.set(username=role, password="change-me").render_as_string(hide_password=False)
    finally:
        with psycopg.connect(_libpq_url(admin_url), autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
            )
            admin.execute(f'REASSIGN OWNED BY "{role}" TO CURRENT_USER; DROP OWNED BY "{role}"')
        with psycopg.connect(_libpq_url(make_url(postgres_server_url)), autocommit=True) as admin:
            admin.execute(f'DROP ROLE IF EXISTS "{role}"')


def _libpq_url(url: object) -> str:
    """A SQLAlchemy URL as libpq understands it (no ``+driver``)."""
    from sqlalchemy import URL

    assert isinstance(url, URL)
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def postgres_snapshot(url: str) -> dict[str, str]:
    """Every shop table's rows, hashed in a stable order: equal snapshots mean unchanged data."""
    import psycopg
    from sqlalchemy import make_url

    snapshot = {}
    with psycopg.connect(_libpq_url(make_url(url))) as connection:
        tables = connection.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
        ).fetchall()
        for (table,) in tables:
            rows = connection.execute(f'SELECT * FROM "{table}" ORDER BY 1, 2').fetchall()
            snapshot[table] = hashlib.sha256(repr(rows).encode()).hexdigest()
    return snapshot


@pytest.fixture(scope="session")
def snapshot_postgres() -> object:
    """``snapshot(url)``: a hash per shop table, to prove a database unchanged."""
    return postgres_snapshot


@pytest.fixture(scope="session")
def sha256_of() -> object:
    """``sha256(path)``: a file's hash, to prove a SQLite file unchanged byte for byte."""
    return file_sha256
