"""The schema revisions this tokreg knows, as plain constants: migrate.py upgrades to `HEAD`,
and the lean read of a SQLite registry (sqlite_read.py) compares a registry's revision with it
without importing SQLAlchemy or Alembic."""

#: The newest migration's revision id (tests/test_store.py checks it against the scripts).
HEAD = "0014"
#: Every revision this tokreg knows, oldest first.
KNOWN = (
    "0001", "0002", "0003", "0004", "0005", "0006", "0007",
    "0008", "0009", "0010", "0011", "0012", "0013", "0014",
)  # fmt: skip
