"""Models of what names versions beyond `name@N`: aliases (`prod`, `staging`) and their
history, and the sample strings each version stores with their expected ids (checked by
`tokreg verify`). Migration 0002 creates exactly these tables.

Alias history keeps version *numbers*, not row ids, so it still reads right after
`tokreg rm` has removed a version it mentions.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Optional

from sqlalchemy import JSON, DateTime, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from .models import Base


class Alias(Base):
    """`name@alias` -> one version of `name`. A version an alias points at cannot be removed."""

    __tablename__ = "aliases"
    __table_args__ = (UniqueConstraint("name", "alias"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    alias: Mapped[str] = mapped_column(String(100))
    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="RESTRICT"), index=True)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AliasEvent(Base):
    """One move of an alias: from version `old_version` (NULL: newly created) to `new_version`
    (NULL: deleted)."""

    __tablename__ = "alias_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200), index=True)
    alias: Mapped[str] = mapped_column(String(100))
    old_version: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)
    new_version: Mapped[Optional[int]] = mapped_column(Integer, nullable=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Sample(Base):
    """A fixed string encoded when the version was created, and the ids it gave then."""

    __tablename__ = "samples"

    version_id: Mapped[int] = mapped_column(ForeignKey("versions.id", ondelete="CASCADE"), primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=False)
    text: Mapped[str] = mapped_column(Text)
    ids: Mapped[list[Any]] = mapped_column(JSON)
