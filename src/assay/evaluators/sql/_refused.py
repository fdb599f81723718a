"""Functions the static check refuses, by why; docs/sql.md lists the same families.

The list is the first line only. On PostgreSQL the real guard is the role the
queries run as (checked at connect time, see ``backends/_pg_role.py``): a function
missing here can still do no more than that role may.
"""

from __future__ import annotations

SQLITE = frozenset({"load_extension", "readfile", "writefile", "edit", "fsdir"})

# Run a query given as a string: what they run is invisible to a parser.
RUN_QUERY_TEXT = frozenset(
    {
        "query_to_xml",
        "query_to_xmlschema",
        "query_to_xml_and_xmlschema",
        "cursor_to_xml",
        "cursor_to_xmlschema",
        "ts_stat",
        "ts_rewrite",
        "dblink",
        "dblink_exec",
        "dblink_connect",
        "dblink_connect_u",
        "dblink_open",
        "dblink_fetch",
        "dblink_send_query",
        "dblink_get_result",
        "dblink_build_sql_insert",
        "dblink_build_sql_update",
        "dblink_build_sql_delete",
    }
)

# Read or write the server's files, or large objects.
SERVER_FILES = frozenset(
    {
        "pg_read_file",
        "pg_read_binary_file",
        "pg_ls_dir",
        "pg_stat_file",
        "pg_ls_logdir",
        "pg_ls_waldir",
        "pg_ls_tmpdir",
        "pg_ls_archive_statusdir",
        "pg_file_write",
        "pg_file_rename",
        "pg_file_unlink",
        "lo_import",
        "lo_export",
        "lo_unlink",
        "lo_create",
        "lo_from_bytea",
        "lo_put",
    }
)

# Act on other sessions or on the server: signals, settings, WAL, backups.
SERVER_CONTROL = frozenset(
    {
        "pg_terminate_backend",
        "pg_cancel_backend",
        "pg_reload_conf",
        "pg_rotate_logfile",
        "pg_switch_wal",
        "pg_promote",
        "pg_create_restore_point",
        "pg_logical_emit_message",
        "pg_backup_start",
        "pg_backup_stop",
        "pg_start_backup",
        "pg_stop_backup",
        "pg_wal_replay_pause",
        "pg_wal_replay_resume",
        "pg_log_backend_memory_contexts",
        "pg_import_system_collations",
        "set_config",
        "pg_notify",
        "nextval",
        "setval",
    }
)

# State that outlives a rolled-back transaction: locks held by the session,
# replication slots and origins, reset statistics.
LASTING_STATE = frozenset(
    {
        "pg_advisory_lock",
        "pg_advisory_lock_shared",
        "pg_try_advisory_lock",
        "pg_try_advisory_lock_shared",
        "pg_advisory_xact_lock",
        "pg_advisory_xact_lock_shared",
        "pg_try_advisory_xact_lock",
        "pg_try_advisory_xact_lock_shared",
        "pg_create_physical_replication_slot",
        "pg_create_logical_replication_slot",
        "pg_drop_replication_slot",
        "pg_copy_physical_replication_slot",
        "pg_copy_logical_replication_slot",
        "pg_replication_slot_advance",
        "pg_logical_slot_get_changes",
        "pg_logical_slot_peek_changes",
        "pg_logical_slot_get_binary_changes",
        "pg_logical_slot_peek_binary_changes",
        "pg_replication_origin_create",
        "pg_replication_origin_drop",
        "pg_replication_origin_advance",
        "pg_replication_origin_session_setup",
        "pg_stat_reset",
        "pg_stat_reset_shared",
        "pg_stat_reset_single_table_counters",
        "pg_stat_reset_single_function_counters",
        "pg_stat_reset_slru",
        "pg_stat_reset_replication_slot",
        "pg_stat_reset_subscription_stats",
        "pg_stat_statements_reset",
    }
)

OTHER_ENGINES = frozenset({"load_file", "xp_cmdshell"})  # MySQL, SQL Server

REFUSED_FUNCTIONS = SQLITE | RUN_QUERY_TEXT | SERVER_FILES | SERVER_CONTROL | LASTING_STATE | OTHER_ENGINES
