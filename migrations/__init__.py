"""tokreg's Alembic migrations (installed as `tokreg.migrations`)."""
