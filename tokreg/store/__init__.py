"""The registry's storage: SQLAlchemy models, the engine, and Alembic migrations."""

from . import models_versions  # noqa: F401  (aliases, alias history, samples: complete metadata)
