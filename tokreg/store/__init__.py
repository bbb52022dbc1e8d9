"""All of tokreg's SQL: the schema (schema.py), opening and migrating a registry (engine.py,
migrate.py), resolving refs (refs.py), reading versions back (reads.py), the one-transaction
writer (writer.py), aliases and history (aliases.py), read-only queries (readonly_sql.py), and
the lean read of one version from a SQLite file that `tokreg.load` uses (sqlite_read.py).
Nothing outside this package builds a query."""
