"""A throwaway PostgreSQL server for the tests, and fresh databases on it.

The server comes from ``ASSAY_TEST_POSTGRES_URL`` when set (a server where the user may
CREATE DATABASE); otherwise a private one is started from Debian's binaries
(``/usr/lib/postgresql/*/bin``) on a free loopback port, as the ``postgres`` user when
running as root, and stopped at the end of the session. Without either, the tests fail
and say to install ``postgresql``: never skipped. The root conftest turns this into
fixtures (``postgres_server_url``, ``postgres_store_url``).
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

POSTGRES_URL_ENV = "ASSAY_TEST_POSTGRES_URL"
INSTALL_HINT = (
    "install the Debian package `postgresql` (apt-get install -y postgresql) so the tests can "
    f"start a private server, or set {POSTGRES_URL_ENV} to a server URL whose user may CREATE DATABASE"
)


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


@contextmanager
def postgres_server() -> Iterator[str]:
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


def libpq_url(url: object) -> str:
    """A SQLAlchemy URL as libpq understands it (no ``+driver``)."""
    from sqlalchemy import URL

    assert isinstance(url, URL)
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def database_url(server_url: str, name: str) -> str:
    """The URL of database ``name`` on the server at ``server_url``."""
    from sqlalchemy import make_url

    return make_url(server_url).set(database=name).render_as_string(hide_password=False)


def create_database(server_url: str, *, template: str | None = None, prefix: str = "assay_test") -> str:
    """A new empty database (or a copy of ``template``); returns its URL."""
    import psycopg
    from sqlalchemy import make_url

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    server = make_url(server_url)
    try:
        admin = psycopg.connect(libpq_url(server), autocommit=True, connect_timeout=10)
    except psycopg.OperationalError as exc:
        pytest.fail(f"cannot connect to PostgreSQL at {server.render_as_string()}: {exc}; {INSTALL_HINT}")
    with admin:
        suffix = f' TEMPLATE "{template}"' if template else ""
        admin.execute(f'CREATE DATABASE "{name}"{suffix}')
    return database_url(server_url, name)


def drop_database(server_url: str, url: str) -> None:
    import psycopg
    from sqlalchemy import make_url

    name = make_url(url).database
    for attempt in range(3):
        # Once in a full suite run, the server closed this connection after 60 s of setting
        # it up (its authentication_timeout; cause not found): a cleanup of the test's own
        # database on a throwaway server tries again before it fails the test.
        try:
            admin = psycopg.connect(libpq_url(make_url(server_url)), autocommit=True, connect_timeout=20)
        except psycopg.OperationalError:
            if attempt == 2:
                raise
            continue
        with admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        return


def lock_waiters(url: str) -> int:
    """How many sessions of the server wait for a lock now (a blocked writer)."""
    import psycopg

    with psycopg.connect(url.replace("postgresql+psycopg://", "postgresql://"), autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM pg_locks WHERE NOT granted").fetchone()
    return int(row[0]) if row else 0


def examples_entries_read(admin: Any, inserted: int) -> int:
    """Entries of ``examples`` the server has read by scans (table and indexes), once its
    statistics hold ``inserted`` inserts: a session reports its work when it ends, so the
    count is read again until they do (120 s: a ceiling for a broken machine, not a
    measurement)."""
    deadline = time.monotonic() + 120
    while True:
        admin.execute("SELECT pg_stat_clear_snapshot()")
        seen, read = admin.execute(
            "SELECT t.n_tup_ins, COALESCE(t.seq_tup_read, 0) + COALESCE(SUM(i.idx_tup_read), 0) "
            "FROM pg_stat_user_tables t LEFT JOIN pg_stat_user_indexes i ON i.relid = t.relid "
            "WHERE t.relname = 'examples' GROUP BY t.n_tup_ins, t.seq_tup_read"
        ).fetchone()
        if seen >= inserted or time.monotonic() > deadline:
            assert seen == inserted, f"the server reported {seen} inserted examples, expected {inserted}"
            return int(read)
        time.sleep(0.1)
