"""The registry's storage: SQLAlchemy models, the engine, and Alembic migrations."""
