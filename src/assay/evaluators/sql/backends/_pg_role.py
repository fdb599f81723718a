"""The PostgreSQL role evaluated queries run as, checked once per evaluator at connect time.

The read-only transaction stops writes, but not what a privileged role can do
from inside one: a superuser reads server files (``pg_read_file``), creates
replication slots or resets statistics; ``pg_signal_backend`` kills other
sessions. No parser can see every way to call those (``query_to_xml`` runs SQL
given as text), so the evaluator refuses a role that holds them, directly or
through a role it may ``SET ROLE`` to.
"""

from __future__ import annotations

from typing import Any

from assay.errors import PrivilegedRoleError

# Predefined roles whose members act on the server rather than read the database.
PRIVILEGED_ROLES = (
    "pg_read_server_files",
    "pg_write_server_files",
    "pg_execute_server_program",
    "pg_signal_backend",
    "pg_write_all_data",
    "pg_checkpoint",
    "pg_signal_autovacuum_worker",
)

_PRIVILEGES = """
SELECT r.rolname, r.rolsuper, r.rolreplication
FROM pg_catalog.pg_roles AS r
WHERE pg_catalog.pg_has_role(current_user, r.oid, 'MEMBER')
  AND (r.rolsuper OR r.rolreplication OR r.rolname = ANY(%s))
ORDER BY r.rolname
"""


def role_privileges(connection: Any) -> list[str]:
    """What the connected role (and every role it is a member of) may do beyond reading."""
    found: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        (user,) = cursor.fetchone()
        cursor.execute(_PRIVILEGES, (list(PRIVILEGED_ROLES),))
        for name, superuser, replication in cursor.fetchall():
            via = "" if name == user else f" (through membership in {name})"
            if superuser:
                found.append(f"superuser{via}")
            if replication:
                found.append(f"REPLICATION{via}")
            if name in PRIVILEGED_ROLES:
                found.append(f"member of {name}")
    connection.rollback()
    return found


def check_role(connection: Any, description: str) -> None:
    """Raise PrivilegedRoleError naming what the role may do, if it may do more than read."""
    privileges = role_privileges(connection)
    if privileges:
        raise PrivilegedRoleError(
            f"refusing to run evaluated SQL on {description} as role "
            f"{connection.info.user!r}: it is {', '.join(privileges)}. Connect as a role "
            "that may only read (docs/sql.md gives the SQL to create one), or pass "
            "unsafe_allow_privileged_role=True to SQLExecutionEvaluator to run as it anyway"
        )
